// The controls' widgets, shared by the one-GPU controls (panel_controls.cpp)
// and the ring's (panel_ring_controls.cpp): a section heading, a typed value
// with its label in a column, a help marker. A value that does not parse, or
// that the model's error is about, is drawn red and kept as typed.
#pragma once

#include <string>

namespace flashlab::gui {

void section(const char* title);
// A typed size (parse_size: "16K") right of its label, which takes `width` pixels.
void size_field(const char* label, const char* id, std::string& value, const char* hint, float width, bool blamed = false);
// Any typed text right of its label; red when `bad`.
void text_field(const char* label, const char* id, std::string& value, const char* hint, float width, bool bad);
void help_marker(const char* text);

}  // namespace flashlab::gui
