#include "text_check.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "flashlab/analysis/text/math_text.hpp"

namespace flashlab::gui {

namespace {

std::string describe(const TextRun& r) {
  char buf[160];
  std::snprintf(buf, sizeof buf, "%s at (%.0f, %.0f)–(%.0f, %.0f)", r.window.c_str(), r.rect.x, r.rect.y, r.rect.z, r.rect.w);
  return buf;
}

std::string without_space(const std::string& s) {
  std::string out;
  for (char c : s)
    if (c != ' ' && c != '\t' && c != '\n') out += c;
  return out;
}

// The characters of the frame, line by line. A glyph's quad sits at its own
// offset below the line's top (a '.' low, an 'l' high), so glyphs are joined
// by the line they were laid out on: the quad's top less the glyph's offset.
struct LineReader {
  std::vector<TextLine> lines;
  std::string window, cur;
  float top = 0, height = 0, right = 0;
  bool open = false;

  void add(const GlyphIndex& index, ImVec2 uv, const ImVec4& quad) {
    const GlyphIndex::Glyph* g = index.find(uv);
    if (!g || g->y1 <= g->y0) return;
    const float scale = (quad.w - quad.y) / (g->y1 - g->y0);  // drawn size over baked size
    const float line_top = quad.y - g->y0 * scale, line_h = g->font_size * scale;
    const bool same = open && std::fabs(line_top - top) < 0.25f * line_h && quad.x - right < 1.2f * line_h &&
                      quad.x > right - 0.5f * line_h;
    if (!same) {
      end_line();
      top = line_top;
      height = line_h;
      right = quad.x;
      open = true;
    } else if (quad.x - right > 0.18f * line_h) {
      cur += ' ';  // glyphs standing apart: a space (or a table's gap) between them
    }
    analysis::append_utf8(cur, g->codepoint);
    right = std::max(right, quad.z);  // a combining mark (a tilde) lies over its letter, not after it
  }
  void end_line() {
    if (open && !cur.empty()) lines.push_back({window, cur});
    cur.clear();
    open = false;
  }
};

}  // namespace

GlyphIndex::GlyphIndex(const ImFontAtlas& atlas) {
  for (const ImFont* font : atlas.Fonts)
    for (const ImFontGlyph& g : font->Glyphs)
      if (g.Visible) by_uv_.emplace(key(ImVec2(g.U0, g.V0)), Glyph{g.Codepoint, g.Y0, g.Y1, font->FontSize});
}

std::uint64_t GlyphIndex::key(ImVec2 uv) {
  // Atlas coordinates are texel edges over a texture of at most a few
  // thousand texels: a 2^20 grid tells them apart.
  const auto q = [](float f) { return static_cast<std::uint64_t>(static_cast<std::int64_t>(f * 1048576.0f + 0.5f) & 0xFFFFFFFF); };
  return q(uv.x) << 32 | q(uv.y);
}

const GlyphIndex::Glyph* GlyphIndex::find(ImVec2 uv_top_left) const {
  const auto it = by_uv_.find(key(uv_top_left));
  return it == by_uv_.end() ? nullptr : &it->second;
}

bool text_shows(const std::vector<TextLine>& lines, const std::string& window_prefix, const std::string& claim) {
  const std::string want = without_space(claim);
  if (want.empty()) return true;
  // A claim may run over a wrapped line: each line is read with the next one
  // of its window joined on.
  const auto in_window = [&](const TextLine& l) { return l.window.rfind(window_prefix, 0) == 0; };
  for (size_t k = 0; k < lines.size(); ++k) {
    if (!in_window(lines[k])) continue;
    std::string text = without_space(lines[k].text);
    if (k + 1 < lines.size() && lines[k + 1].window == lines[k].window) text += without_space(lines[k + 1].text);
    if (text.find(want) != std::string::npos) return true;
  }
  return false;
}

bool draws_from_atlas(const ImDrawCmd& cmd, ImTextureID font_texture) {
  return cmd.UserCallback == nullptr && cmd.TextureId == font_texture;
}

std::vector<GlyphQuad> glyph_quads(const ImDrawList& list, const ImDrawCmd& cmd, ImTextureID font_texture, ImVec2 white_uv) {
  std::vector<GlyphQuad> out;
  if (!draws_from_atlas(cmd, font_texture)) return out;
  const ImDrawIdx* idx = list.IdxBuffer.Data + cmd.IdxOffset;
  const ImDrawVert* vtx = list.VtxBuffer.Data + cmd.VtxOffset;
  for (unsigned k = 0; k + 6 <= cmd.ElemCount; k += 6) {
    const ImDrawIdx a = idx[k];
    // A glyph: one quad (a, a+1, a+2), (a, a+2, a+3), textured from the atlas, not its white pixel.
    if (idx[k + 1] != a + 1 || idx[k + 2] != a + 2 || idx[k + 3] != a || idx[k + 4] != a + 2 || idx[k + 5] != a + 3)
      continue;
    const ImDrawVert& v0 = vtx[a];
    const ImDrawVert& v2 = vtx[a + 2];
    if (std::fabs(v0.uv.x - white_uv.x) < 1e-6f && std::fabs(v0.uv.y - white_uv.y) < 1e-6f) continue;
    if (std::fabs(v0.uv.x - v2.uv.x) < 1e-7f) continue;  // a shape's quad with one uv
    out.push_back({ImVec4(std::min(v0.pos.x, v2.pos.x), std::min(v0.pos.y, v2.pos.y), std::max(v0.pos.x, v2.pos.x),
                          std::max(v0.pos.y, v2.pos.y)),
                   v0.uv, v0.col});
  }
  return out;
}

TextCheck check_text(const ImDrawData& dd, ImTextureID font_texture, ImVec2 white_uv, const GlyphIndex* glyphs,
                     const std::unordered_set<std::string>* scrolling) {
  TextCheck out;
  std::vector<TextRun> runs;
  LineReader reader;
  for (int l = 0; l < dd.CmdListsCount; ++l) {
    const ImDrawList* list = dd.CmdLists[l];
    const std::string owner = list->_OwnerName ? list->_OwnerName : "?";
    const bool scrolls = scrolling != nullptr && scrolling->count(owner) > 0;
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (!draws_from_atlas(cmd, font_texture)) continue;
      const std::vector<GlyphQuad> quads = glyph_quads(*list, cmd, font_texture, white_uv);
      TextRun cur{ImVec4(0, 0, 0, 0), owner};
      reader.window = owner;
      bool open = false;
      for (const GlyphQuad& q : quads) {
        const ImVec4& g = q.rect;
        const ImVec4& c = cmd.ClipRect;
        // A glyph's side bearing may reach a pixel or two past where its text
        // starts: that is not text cut off.
        const float slack = std::max(1.5f, 0.12f * (g.w - g.y));
        const bool inside = g.x >= c.x - slack && g.z <= c.z + slack &&
                            (scrolls || (g.y >= c.y - 0.5f && g.w <= c.w + 0.5f));
        const bool visible = g.z > c.x && g.x < c.z && g.w > c.y && g.y < c.w;
        if (visible && !inside && out.clipped_glyphs++ == 0) out.first_clipped = describe(TextRun{g, owner});
        if (!visible) continue;
        // Glyphs of one line follow each other: same height band, small gap.
        const float h = g.w - g.y;
        const bool same_line = open && std::fabs(g.y - cur.rect.y) < 0.35f * h && g.x - cur.rect.z < 0.9f * h &&
                               g.x >= cur.rect.x - 0.5f;
        if (same_line) {
          cur.rect.z = std::max(cur.rect.z, g.z);
          cur.rect.w = std::max(cur.rect.w, g.w);
          cur.rect.y = std::min(cur.rect.y, g.y);
        } else {
          if (open) runs.push_back(cur);
          cur.rect = g;
          open = true;
        }
        if (glyphs) reader.add(*glyphs, q.uv, g);
      }
      if (open) runs.push_back(cur);
      reader.end_line();
    }
  }
  out.runs = static_cast<int>(runs.size());
  out.lines = std::move(reader.lines);
  // Two runs cover each other when they share most of the smaller one's height
  // and a real part of its width (touching neighbours do not count).
  std::sort(runs.begin(), runs.end(), [](const TextRun& a, const TextRun& b) { return a.rect.x < b.rect.x; });
  for (size_t i = 0; i < runs.size(); ++i)
    for (size_t j = i + 1; j < runs.size() && runs[j].rect.x < runs[i].rect.z; ++j) {
      const ImVec4 &a = runs[i].rect, &b = runs[j].rect;
      const float ox = std::min(a.z, b.z) - std::max(a.x, b.x), oy = std::min(a.w, b.w) - std::max(a.y, b.y);
      const float hmin = std::min(a.w - a.y, b.w - b.y), wmin = std::min(a.z - a.x, b.z - b.x);
      // A script beside its base touches it by a glyph's side bearing; a label
      // over another covers a real part of it.
      const float area_min = std::min((a.z - a.x) * (a.w - a.y), (b.z - b.x) * (b.w - b.y));
      if (ox > 0.3f * hmin && oy > 0.4f * hmin && ox * oy > 0.3f * std::max(1.0f, area_min) && wmin > 0) {
        if (out.overlapping_runs++ == 0) out.first_overlap = describe(runs[i]) + " and " + describe(runs[j]);
      }
    }
  return out;
}

}  // namespace flashlab::gui
