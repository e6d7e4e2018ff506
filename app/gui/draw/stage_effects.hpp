// What the presenter does to a stage after it is drawn, for a lecture hall:
// the light theme's colours on views drawn for the dark one, a 2× magnifier
// around the mouse pointer, a ring that shows the hall where the pointer is,
// and the clock. ImGui 1.86 has no transform for a draw list, so the
// magnifier moves the vertices and clip rectangles a window has built, once
// it has ended, about one point.
#pragma once

#include <imgui.h>

#include <string>

struct ImGuiWindow;

namespace flashlab::gui {

// The light theme: every child window of `window` (recursively) recoloured
// (theme_light.cpp: fills, told by the atlas' white pixel, and text each by
// its rule); the window's own list is left alone (its widgets follow the
// style). Nothing in the dark theme.
void recolour_for_theme(ImGuiWindow* window);

// `window` and its child windows magnified `factor`× about `centre`, their
// clip rectangles too, each cut to `bounds` (x0, y0, x1, y1): nothing drawn
// spills out of the stage. Vertices only: no text is laid out again.
void magnify_drawn(ImGuiWindow* window, ImVec2 centre, float factor, const ImVec4& bounds);

// A soft disc and a ring around `at`, on the foreground: where the lecturer points.
void draw_pointer_ring(ImDrawList* dl, ImVec2 at, float scale);

// "14:05 · 12:37 in": the wall clock, and the time since `started_s` at
// `now_s` (minutes:seconds, hours:minutes:seconds after an hour).
std::string clock_text(double started_s, double now_s);

}  // namespace flashlab::gui
