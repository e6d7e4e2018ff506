#include "contrast_check.hpp"

#include <imgui_internal.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>

#include "draw/theme.hpp"
#include "flashlab/analysis/text/math_text.hpp"

namespace flashlab::gui {

namespace {

// WCAG's ratio of two 0xRRGGBB colours (theme.hpp's, on ImGui's packing).
double ratio_of(unsigned a, unsigned b) {
  const auto im = [](unsigned c) { return IM_COL32((c >> 16) & 0xFF, (c >> 8) & 0xFF, c & 0xFF, 255); };
  return contrast_ratio(im(a), im(b));
}

unsigned rgb_of(ImU32 c) {
  return ((c >> IM_COL32_R_SHIFT) & 0xFF) << 16 | ((c >> IM_COL32_G_SHIFT) & 0xFF) << 8 | ((c >> IM_COL32_B_SHIFT) & 0xFF);
}

unsigned alpha_of(ImU32 c) { return (c >> IM_COL32_A_SHIFT) & 0xFF; }

// `c` drawn over `under` with its alpha, as the rasteriser blends it.
unsigned over(ImU32 c, unsigned under) {
  const unsigned a = alpha_of(c), fg = rgb_of(c);
  unsigned out = 0;
  for (int shift : {16, 8, 0}) {
    const unsigned f = (fg >> shift) & 0xFF, b = (under >> shift) & 0xFF;
    out |= ((f * a + b * (255 - a) + 127) / 255) << shift;
  }
  return out;
}

// A pixel of the colour itself, or nearly (a glyph's core, the mark's own
// body, a neighbour of its series), not what lies around it.
bool same_colour(unsigned a, unsigned b) {
  for (int shift : {16, 8, 0})
    if (std::abs(static_cast<int>((a >> shift) & 0xFF) - static_cast<int>((b >> shift) & 0xFF)) > 24) return false;
  return true;
}

// What lies around a run of text or a mark: the commonest colour of the
// pixels `px` beside it that are not of its own colour `own`, counted in
// steps of 16 a channel (anti-aliased edges fall in with the ground they fade
// into), given as the commonest exact colour of that step; `own` when nothing
// else is there (a mark on its own colour does not stand out).
unsigned commonest(std::vector<unsigned>& px, unsigned own) {
  px.erase(std::remove_if(px.begin(), px.end(), [&](unsigned p) { return same_colour(p, own); }), px.end());
  if (px.empty()) return own;
  // The pixels counted per step (16 × 16 × 16 of them); the commonest step, the
  // lowest on a tie; within it the commonest exact colour, the lowest on a tie.
  const auto step = [](unsigned p) { return (p >> 12 & 0xF00) | (p >> 8 & 0xF0) | (p >> 4 & 0xF); };
  static thread_local std::array<unsigned, 4096> count{};
  unsigned best_step = step(px[0]);
  for (unsigned p : px) {
    const unsigned k = step(p);
    if (++count[k] > count[best_step] || (count[k] == count[best_step] && k < best_step)) best_step = k;
  }
  // Within a step a colour is its low four bits a channel, in the same order
  // as the colours themselves: counted the same way.
  const auto low = [](unsigned p) { return (p >> 8 & 0xF00) | (p >> 4 & 0xF0) | (p & 0xF); };
  static thread_local std::array<unsigned, 4096> in_step{};
  unsigned best_low = 4096;
  for (unsigned p : px) {
    count[step(p)] = 0;
    if (step(p) != best_step) continue;
    const unsigned k = low(p);
    ++in_step[k];
    if (best_low == 4096 || in_step[k] > in_step[best_low] || (in_step[k] == in_step[best_low] && k < best_low))
      best_low = k;
  }
  for (unsigned p : px) in_step[low(p)] = 0;
  const auto spread = [](unsigned s) { return (s & 0xF00) << 8 | (s & 0xF0) << 4 | (s & 0xF); };
  return spread(best_step) << 4 | spread(best_low);
}

std::string hex(unsigned rgb) {
  char b[8];
  std::snprintf(b, sizeof b, "#%06X", rgb & 0xFFFFFF);
  return b;
}

void note(ContrastCheck& out, bool text, double ratio, const std::string& what) {
  const double bar = text ? kTextContrast : kMarkContrast;
  if (text) {
    ++out.texts;
    if (ratio < out.worst_text) out.worst_text = ratio, out.worst_text_at = what;
  } else {
    ++out.marks;
    if (ratio < out.worst_mark) out.worst_mark = ratio, out.worst_mark_at = what;
  }
  if (ratio < bar) {
    (text ? out.low_texts : out.low_marks)++;
    if (out.low.size() < 40) out.low.push_back(what);
  }
}

std::string describe(const std::string& what, const char* window, unsigned fg, unsigned bg, double ratio, ImVec2 at) {
  char buf[96];
  std::snprintf(buf, sizeof buf, ": %.2f : 1 at (%.0f, %.0f)", ratio, at.x, at.y);
  return what + " in " + (window ? window : "?") + ", " + hex(fg) + " on " + hex(bg) + buf;
}

// The root windows drawn after list `k` that cover `r`: text under them does not show.
bool covered_later(const ImDrawData& dd, int k, const ImVec4& r) {
  const ImDrawList* list = dd.CmdLists[k];
  ImGuiWindow* own = list->_OwnerName ? ImGui::FindWindowByName(list->_OwnerName) : nullptr;
  ImGuiWindow* root = own ? own->RootWindow : nullptr;
  for (int j = k + 1; j < dd.CmdListsCount; ++j) {
    const ImDrawList* later = dd.CmdLists[j];
    ImGuiWindow* w = later->_OwnerName ? ImGui::FindWindowByName(later->_OwnerName) : nullptr;
    if (!w || w->RootWindow == root || w->RootWindow != w || !w->WasActive) continue;
    const ImRect wr = w->Rect();
    if (r.x < wr.Max.x && wr.Min.x < r.z && r.y < wr.Max.y && wr.Min.y < r.w) return true;
  }
  return false;
}

// Whether display point `p` lies on mark `m` (within two pixels of it).
bool on_mark(const DrawnMark& m, ImVec2 p) {
  if (!m.line) return p.x >= m.rect.x - 2 && p.x <= m.rect.z + 2 && p.y >= m.rect.y - 2 && p.y <= m.rect.w + 2;
  const float reach = m.width * 0.5f + 2;  // its anti-aliased edge too
  for (size_t k = 1; k < m.path.size(); ++k) {
    const ImVec2 a = m.path[k - 1], b = m.path[k];
    const float dx = b.x - a.x, dy = b.y - a.y, len2 = dx * dx + dy * dy;
    const float t = len2 > 0 ? std::clamp(((p.x - a.x) * dx + (p.y - a.y) * dy) / len2, 0.0f, 1.0f) : 0.0f;
    const float ex = a.x + dx * t - p.x, ey = a.y + dy * t - p.y;
    if (ex * ex + ey * ey <= reach * reach) return true;
  }
  return false;
}

ImVec4 bounds_of(const DrawnMark& m) {
  if (!m.line) return m.rect;
  ImVec4 b(1e30f, 1e30f, -1e30f, -1e30f);
  for (const ImVec2& p : m.path) b = ImVec4(std::min(b.x, p.x), std::min(b.y, p.y), std::max(b.z, p.x), std::max(b.w, p.y));
  const float r = m.width * 0.5f + 2;
  return ImVec4(b.x - r, b.y - r, b.z + r, b.w + r);
}

// One line of glyphs of one colour.
struct Run {
  ImVec4 box{0, 0, 0, 0}, clip{0, 0, 0, 0};
  ImU32 colour = 0;
  std::string text;
  bool open = false;
};

}  // namespace

ContrastCheck check_contrast(const ImDrawData& dd, ImTextureID font_texture, ImVec2 white_uv, const Frame& frame,
                             float fb_scale, const std::vector<DrawnMark>& marks, const GlyphIndex* glyphs) {
  ContrastCheck out;
  if (frame.w <= 0 || frame.h <= 0) return out;
  const auto inside = [&](float x, float y) {
    const int px = static_cast<int>(x * fb_scale), py = static_cast<int>(y * fb_scale);
    return px >= 0 && py >= 0 && px < frame.w && py < frame.h;
  };
  const auto pixel = [&](float x, float y) { return frame.px(static_cast<int>(x * fb_scale), static_cast<int>(y * fb_scale)); };
  std::vector<unsigned> px;

  // ---- text: each run of one colour against the commonest colour in its box ----
  for (int l = 0; l < dd.CmdListsCount; ++l) {
    const ImDrawList* list = dd.CmdLists[l];
    Run run;
    const auto finish = [&] {
      if (!run.open) return;
      run.open = false;
      const ImVec4 b(std::max(run.box.x - 1, run.clip.x), std::max(run.box.y - 1, run.clip.y),
                     std::min(run.box.z + 1, run.clip.z), std::min(run.box.w + 1, run.clip.w));
      if (b.z <= b.x || b.w <= b.y || covered_later(dd, l, b)) return;
      px.clear();
      for (float y = std::floor(b.y) + 0.5f; y < b.w; y += 1)
        for (float x = std::floor(b.x) + 0.5f; x < b.z; x += 1)
          if (inside(x, y)) px.push_back(pixel(x, y));
      if (px.empty()) return;
      const unsigned bg = commonest(px, rgb_of(run.colour));
      const unsigned fg = over(run.colour, bg);
      const double ratio = ratio_of(fg, bg);
      note(out, true, ratio,
           describe("text '" + (run.text.size() > 60 ? run.text.substr(0, 57) + "..." : run.text) + "'", list->_OwnerName,
                    fg, bg, ratio, ImVec2(run.box.x, run.box.y)));
    };
    for (const ImDrawCmd& cmd : list->CmdBuffer) {
      if (!draws_from_atlas(cmd, font_texture)) continue;
      const std::vector<GlyphQuad> quads = glyph_quads(*list, cmd, font_texture, white_uv);
      for (const GlyphQuad& q : quads) {
        const ImVec4& g = q.rect;
        const ImVec4& c = cmd.ClipRect;
        if (!(g.z > c.x && g.x < c.z && g.w > c.y && g.y < c.w) || alpha_of(q.col) == 0) continue;
        // One line: the glyph shares most of its height with the run's band and follows it closely.
        const float h = std::max(g.w - g.y, run.box.w - run.box.y);
        const float shared = std::min(g.w, run.box.w) - std::max(g.y, run.box.y);
        const bool same = run.open && q.col == run.colour && shared > 0.5f * std::min(g.w - g.y, run.box.w - run.box.y) &&
                          g.x - run.box.z < 0.9f * h && g.x >= run.box.x - 0.5f;
        if (same) {
          if (g.x - run.box.z > 0.4f * h) run.text += ' ';
          run.box = ImVec4(run.box.x, std::min(run.box.y, g.y), std::max(run.box.z, g.z), std::max(run.box.w, g.w));
        } else {
          finish();
          run = Run{g, c, q.col, "", true};
        }
        if (glyphs)
          if (const GlyphIndex::Glyph* gl = glyphs->find(q.uv)) analysis::append_utf8(run.text, gl->codepoint);
      }
      finish();
    }
  }

  // ---- marks: each against the commonest colour beside it, other marks left
  // out (a model point on its roof line, a bar beside the next, a cross in a
  // cluster of its series lie on data, not on their ground) ----
  std::vector<ImVec4> bounds;
  for (const DrawnMark& m : marks) bounds.push_back(bounds_of(m));
  const auto on_other_mark = [&](size_t self, ImVec2 p) {
    for (size_t k = 0; k < marks.size(); ++k)
      if (k != self && p.x >= bounds[k].x && p.x <= bounds[k].z && p.y >= bounds[k].y && p.y <= bounds[k].w &&
          marks[k].list == marks[self].list && on_mark(marks[k], p))
        return true;
    return false;
  };
  for (size_t mi = 0; mi < marks.size(); ++mi) {
    const DrawnMark& m = marks[mi];
    if (!m.list || m.vtx_end > m.list->VtxBuffer.Size) continue;
    ImU32 col = 0;
    for (int k = m.vtx_begin; k < m.vtx_end; ++k)
      if (alpha_of(m.list->VtxBuffer[k].col) > alpha_of(col)) col = m.list->VtxBuffer[k].col;
    if (alpha_of(col) == 0) continue;
    px.clear();
    size_t sampled = 0;
    ImVec2 at;
    if (m.line) {
      at = m.path.front();
      const float off = m.width * 0.5f + 1.5f;
      for (size_t k = 1; k < m.path.size(); ++k) {
        const ImVec2 a = m.path[k - 1], b = m.path[k];
        const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
        if (!(len > 0)) continue;
        const float nx = -dy / len, ny = dx / len;
        const int n = std::max(2, static_cast<int>(len / 6));
        for (int q = 0; q < n; ++q) {
          const float t = (static_cast<float>(q) + 0.5f) / static_cast<float>(n);
          const float x = a.x + dx * t, y = a.y + dy * t;
          for (float side : {-1.0f, 1.0f})
            for (float d : {off, off + 3, off + 6}) {
              const ImVec2 at_side(x + side * nx * d, y + side * ny * d);
              if (!inside(at_side.x, at_side.y)) continue;
              ++sampled;
              if (!on_other_mark(mi, at_side)) px.push_back(pixel(at_side.x, at_side.y));
            }
        }
      }
    } else {
      at = ImVec2(m.rect.x, m.rect.y);
      const auto sample = [&](float x, float y) {
        if (!inside(x, y)) return;
        ++sampled;
        if (!on_other_mark(mi, ImVec2(x, y))) px.push_back(pixel(x, y));
      };
      // Two rings: beside its edge, and a little further (a grid line through one is not its ground).
      for (float o : {2.5f, 5.5f}) {
        const ImVec4 r(m.rect.x - o, m.rect.y - o, m.rect.z + o, m.rect.w + o);
        for (float x = r.x; x <= r.z; x += 2)
          for (float y : {r.y, r.w}) sample(x, y);
        for (float y = r.y; y <= r.w; y += 2)
          for (float x : {r.x, r.z}) sample(x, y);
      }
    }
    // Mostly among other marks (a cross in a cluster of its series, a point on
    // its curve beside another's): too little of its own ground shows to hold.
    if (px.empty() || 4 * px.size() < sampled) continue;
    const unsigned bg = commonest(px, rgb_of(col));
    const unsigned fg = over(col, bg);
    const double ratio = ratio_of(fg, bg);
    note(out, false, ratio, describe(std::string(m.what), m.list->_OwnerName, fg, bg, ratio, at));
  }
  return out;
}

}  // namespace flashlab::gui
