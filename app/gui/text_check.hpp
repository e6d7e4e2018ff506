// What a person sees of the text on screen, read back from the frame's draw
// data: every glyph ImGui drew is a textured quad of the font atlas, so the
// quads give every run of text, its rectangle and the clip rectangle it was
// drawn in. A glyph that crosses its clip rectangle is text cut off at a
// panel's edge; two runs that cover each other are labels printed over each
// other. The GUI tests hold both at zero in the presenter's scenes.
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

namespace flashlab::gui {

struct TextRun {
  ImVec4 rect;         // x0, y0, x1, y1 in pixels
  std::string window;  // the draw list's owner
};

struct TextCheck {
  int runs = 0;
  int clipped_glyphs = 0;       // glyphs partly outside their clip rectangle
  int overlapping_runs = 0;     // pairs of runs covering each other
  std::string first_clipped, first_overlap;  // where, for the message of a failing test
};

// The text of one frame. `font_texture`: the font atlas' texture id;
// `white_uv`: its white pixel (the quads of shapes use it).
TextCheck check_text(const ImDrawData& dd, ImTextureID font_texture, ImVec2 white_uv);

}  // namespace flashlab::gui
