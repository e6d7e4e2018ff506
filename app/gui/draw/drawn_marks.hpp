// The lines and markers a view draws that carry data — a chart's series,
// ceilings and markers, the tiling view's highlights, a tilde over a letter —
// recorded as drawn while a headless check asks for them, so that the check
// can hold each against what lies around it on the rendered frame (WCAG's
// 3 : 1 for graphical objects; checks/contrast_check.hpp). A mark is the
// vertices it added to a draw list (their colour is the one drawn, after the
// light theme's recolouring) and its geometry (where its surroundings are).
// Nothing is recorded in a normal run.
#pragma once

#include <imgui.h>

#include <vector>

namespace flashlab::gui {

struct DrawnMark {
  const ImDrawList* list = nullptr;
  int vtx_begin = 0, vtx_end = 0;  // its vertices in list->VtxBuffer
  bool line = false;               // a line along `path`, `width` wide; else the area `rect`
  std::vector<ImVec2> path;
  float width = 1;
  ImVec4 rect;                     // x0, y0, x1, y1
  const char* what = "";           // what it is, for a failing check's message
};

// Recording on or off (a headless run's checks); off clears what was recorded.
void record_marks(bool on);
bool recording_marks();
// Called after drawing: the vertices from `vtx_begin` to the list's end are the mark.
void mark_line(const ImDrawList* dl, int vtx_begin, const ImVec2* points, int count, float width, const char* what);
void mark_area(const ImDrawList* dl, int vtx_begin, ImVec4 rect, const char* what);
// This frame's marks; cleared at the start of each frame.
const std::vector<DrawnMark>& drawn_marks();
void clear_drawn_marks();

}  // namespace flashlab::gui
