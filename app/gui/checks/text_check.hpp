// What a person sees of the text on screen, read back from the frame's draw
// data: every glyph ImGui drew is a textured quad of the font atlas, so the
// quads give every run of text, its rectangle and the clip rectangle it was
// drawn in. A glyph that crosses its clip rectangle is text cut off at a
// panel's edge; two runs that cover each other are labels printed over each
// other. The GUI tests hold both at zero in the presenter's scenes.
//
// Each quad's atlas coordinates name its glyph, so a run reads back as the
// characters a person sees (a space where glyphs stand apart): the tests hold a
// scene's talking point against the text its stage shows.
#pragma once

#include <imgui.h>

#include <cstdint>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

namespace flashlab::gui {

struct TextRun {
  ImVec4 rect;         // x0, y0, x1, y1 in pixels
  std::string window;  // the draw list's owner
};

// A line of text as a person reads it, and the window that drew it.
struct TextLine {
  std::string window, text;
};

// The font atlas' glyphs by their top-left atlas coordinate: every font and
// size baked into the atlas, so a quad drawn from it reads back as its
// character. Rebuilt when the atlas is (a new UI scale).
class GlyphIndex {
 public:
  explicit GlyphIndex(const ImFontAtlas& atlas);
  struct Glyph {
    unsigned codepoint = 0;
    float y0 = 0, y1 = 0;    // the quad's offset below the line's top, at the baked size
    float font_size = 0;     // the baked size (a line's height)
  };
  // The glyph a quad was drawn from, null when it is not one of the atlas'.
  const Glyph* find(ImVec2 uv_top_left) const;

 private:
  static std::uint64_t key(ImVec2 uv);
  std::unordered_map<std::uint64_t, Glyph> by_uv_;
};

// A glyph ImGui drew: a quad of the font atlas (not its white pixel, which
// the quads of shapes use), where it went, the atlas coordinate of its top
// left (what GlyphIndex reads) and its colour.
struct GlyphQuad {
  ImVec4 rect;  // x0, y0, x1, y1 in pixels
  ImVec2 uv;
  ImU32 col = 0;
};
// Whether a draw command draws from the font atlas (`font_texture`): text,
// and shapes through the atlas' white pixel.
bool draws_from_atlas(const ImDrawCmd& cmd, ImTextureID font_texture);
// The glyphs of one draw command of `list`, in drawing order; none when the
// command does not draw from the font atlas.
std::vector<GlyphQuad> glyph_quads(const ImDrawList& list, const ImDrawCmd& cmd, ImTextureID font_texture, ImVec2 white_uv);

struct TextCheck {
  int runs = 0;
  int clipped_glyphs = 0;       // glyphs partly outside their clip rectangle
  int overlapping_runs = 0;     // pairs of runs covering each other
  std::string first_clipped, first_overlap;  // where, for the message of a failing test
  std::vector<TextLine> lines;  // the visible text line by line, as read through a GlyphIndex
};

// The text of one frame. `font_texture`: the font atlas' texture id;
// `white_uv`: its white pixel (the quads of shapes use it); `glyphs`: how to
// read the runs' characters (null: rectangles only). `scrolling`: the windows
// whose content scrolls up and down (a scrollbar shows there is more): a line
// cut at their top or bottom edge is half scrolled into view, as in any list,
// not text that cannot be reached; cut at their sides it still counts.
TextCheck check_text(const ImDrawData& dd, ImTextureID font_texture, ImVec2 white_uv, const GlyphIndex* glyphs = nullptr,
                     const std::unordered_set<std::string>* scrolling = nullptr);

// Whether `claim` is on screen: inside one line that a window whose name
// starts with `window_prefix` drew, or over that line and the next (a wrapped
// sentence), compared without white space (a gap between glyphs reads as a
// space only when it is wide).
bool text_shows(const std::vector<TextLine>& lines, const std::string& window_prefix, const std::string& claim);

}  // namespace flashlab::gui
