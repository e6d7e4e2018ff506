// How well the text and the data marks stand out, on the rendered frame: WCAG
// AA asks 4.5 : 1 of text against its background and 3 : 1 of lines and
// markers against theirs. Each run of glyphs of one colour (read from the
// draw data: its colour as drawn, its rectangle) is held against the colour
// the frame shows most around its glyphs; each recorded mark (draw/
// drawn_marks.hpp: a chart's series, ceilings and markers, the tiling view's
// highlights, a tilde) against the colour the frame shows beside it. Text a
// later window covers is not counted (the window over it is what shows).
#pragma once

#include <imgui.h>

#include <string>
#include <vector>

#include "draw/drawn_marks.hpp"
#include "screenshot.hpp"
#include "text_check.hpp"

namespace flashlab::gui {

constexpr double kTextContrast = 4.5;  // WCAG AA, text
constexpr double kMarkContrast = 3.0;  // WCAG AA, graphical objects (1.4.11)

struct ContrastCheck {
  int texts = 0, marks = 0;           // runs of text and marks held
  int low_texts = 0, low_marks = 0;   // below 4.5 : 1, below 3 : 1
  double worst_text = 21, worst_mark = 21;
  std::string worst_text_at, worst_mark_at;  // what, where, its colours
  std::vector<std::string> low;        // every one below its bar, one line each (at most 40)
};

// `frame`: the pixels of the frame `dd` drew (framebuffer pixels, `fb_scale`
// of them per display pixel); `glyphs`: to name the text in a message (null:
// rectangles only).
ContrastCheck check_contrast(const ImDrawData& dd, ImTextureID font_texture, ImVec2 white_uv, const Frame& frame,
                             float fb_scale, const std::vector<DrawnMark>& marks, const GlyphIndex* glyphs = nullptr);

}  // namespace flashlab::gui
