#include "math_view.hpp"

#include <cfloat>
#include <cmath>
#include <cstdarg>
#include <cstdio>
#include <vector>

#include "flashlab/analysis/text/math_text.hpp"

namespace flashlab::gui {

namespace {

// One piece of a run between break points, at its size and baseline shift.
struct Piece {
  std::string text;
  float size = 0, rise = 0, width = 0;
  bool tilde = false, space = false;  // a space at the base line: where a line may break
};

// A piece cut into one piece per character (a word wider than the line is
// broken between characters rather than drawn past the edge).
std::vector<Piece> characters_of(const Piece& p, ImFont* font) {
  std::vector<Piece> out;
  for (size_t k = 0; k < p.text.size();) {
    size_t n = 1;
    while (k + n < p.text.size() && (static_cast<unsigned char>(p.text[k + n]) & 0xC0) == 0x80) ++n;
    Piece c = p;
    c.text = p.text.substr(k, n);
    c.width = font->CalcTextSizeA(p.size, FLT_MAX, 0, c.text.c_str()).x;
    out.push_back(std::move(c));
    k += n;
  }
  return out;
}

std::vector<Piece> pieces_of(const std::string& text, ImFont* font, float base) {
  std::vector<Piece> out;
  for (const analysis::MathRun& r : analysis::parse_math(text)) {
    const float size = base * static_cast<float>(analysis::math_scale(r.depth));
    const float rise = base * static_cast<float>(r.rise_em);
    auto push = [&](std::string t, bool space) {
      if (t.empty()) return;
      Piece p;
      p.size = size;
      p.rise = rise;
      p.tilde = r.tilde;
      p.space = space;
      p.width = font->CalcTextSizeA(size, FLT_MAX, 0, t.c_str()).x;
      p.text = std::move(t);
      out.push_back(std::move(p));
    };
    if (r.depth > 0) {  // scripts never break
      push(r.text, false);
      continue;
    }
    std::string word;
    for (char ch : r.text) {
      if (ch == ' ') {
        push(word, false);
        word.clear();
        push(" ", true);
      } else {
        word += ch;
      }
    }
    push(word, false);
  }
  return out;
}

// A tilde over a letter: the font's combining tilde (U+0303), centred over
// the piece and raised above a capital's height where the letter is one. As
// a glyph it is text to everything that reads text: the light theme inks it
// as it inks the letter, the text checks read "P̃" and hold its contrast.
void draw_tilde(ImDrawList* dl, ImFont* font, const Piece& pc, float x, float baseline, ImU32 color) {
  const ImFontGlyph* tilde = font->FindGlyphNoFallback(0x0303);
  const ImFontGlyph* letter = pc.text.empty() ? nullptr : font->FindGlyphNoFallback(static_cast<ImWchar>(pc.text[0]));
  if (tilde == nullptr || letter == nullptr) return;
  const float k = pc.size / font->FontSize;
  const float line_top = baseline - pc.rise - font->Ascent * k;
  // Its bottom a little above the letter's top; its middle over the piece's.
  const float bottom = line_top + letter->Y0 * k - pc.size * 0.04f;
  const ImVec2 at(x + pc.width * 0.5f - (tilde->X0 + tilde->X1) * 0.5f * k, bottom - tilde->Y1 * k);
  dl->AddText(font, pc.size, at, color, "\xCC\x83");
}

struct Placed {
  const Piece* piece;
  float x;
  int line;
};

// Greedy wrap at spaces: returns each piece's place and the widest line.
std::vector<Placed> layout(std::vector<Piece>& pieces, float wrap, float& widest, int& lines) {
  // A word wider than the whole line is broken into characters first.
  for (size_t k = 0; k < pieces.size();) {
    size_t end = k;
    float w = 0;
    while (end < pieces.size() && !pieces[end].space) w += pieces[end++].width;
    if (w > wrap && end > k) {
      std::vector<Piece> chars;
      for (size_t q = k; q < end; ++q)
        for (Piece& c : characters_of(pieces[q], ImGui::GetFont())) {
          c.space = false;
          chars.push_back(std::move(c));
        }
      // Each character a word of its own: mark breaks between them.
      std::vector<Piece> with_breaks;
      for (size_t q = 0; q < chars.size(); ++q) {
        if (q > 0) {
          Piece br = chars[q];
          br.text.clear();
          br.width = 0;
          br.space = true;
          with_breaks.push_back(br);
        }
        with_breaks.push_back(chars[q]);
      }
      pieces.erase(pieces.begin() + static_cast<std::ptrdiff_t>(k), pieces.begin() + static_cast<std::ptrdiff_t>(end));
      pieces.insert(pieces.begin() + static_cast<std::ptrdiff_t>(k), with_breaks.begin(), with_breaks.end());
      end = k + with_breaks.size();
    }
    k = end + 1;
  }
  std::vector<Placed> out;
  float x = 0;
  int line = 0;
  widest = 0;
  for (size_t k = 0; k < pieces.size();) {
    if (pieces[k].space) {
      if (x > 0 && pieces[k].width > 0) out.push_back({&pieces[k], x, line}), x += pieces[k].width;
      ++k;
      continue;
    }
    size_t end = k;  // a word: pieces up to the next space
    float w = 0;
    while (end < pieces.size() && !pieces[end].space) w += pieces[end++].width;
    if (x > 0 && x + w > wrap) {
      while (!out.empty() && out.back().piece->space && out.back().line == line) out.pop_back();  // no trailing space
      ++line;
      x = 0;
    }
    for (; k < end; ++k) {
      out.push_back({&pieces[k], x, line});
      x += pieces[k].width;
      widest = std::max(widest, x);
    }
  }
  lines = line + 1;
  return out;
}

float wrap_width_or_avail(float wrap_width) {
  return wrap_width > 0 ? wrap_width : std::max(1.0f, ImGui::GetContentRegionAvail().x);
}

}  // namespace

float math_line_height() { return std::ceil(ImGui::GetTextLineHeight() * 1.3f); }

ImVec2 math_text_size(const std::string& text, float wrap_width) {
  std::vector<Piece> pieces = pieces_of(text, ImGui::GetFont(), ImGui::GetFontSize());
  float widest = 0;
  int lines = 1;
  layout(pieces, wrap_width_or_avail(wrap_width), widest, lines);
  return ImVec2(widest, static_cast<float>(lines) * math_line_height());
}

ImVec2 math_text(const std::string& text, ImU32 color, float wrap_width) {
  ImFont* font = ImGui::GetFont();
  const float base = ImGui::GetFontSize();
  std::vector<Piece> pieces = pieces_of(text, font, base);
  float widest = 0;
  int lines = 1;
  const std::vector<Placed> placed = layout(pieces, wrap_width_or_avail(wrap_width), widest, lines);
  const float lh = math_line_height();
  const ImVec2 origin = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float ascent = font->Ascent * base / font->FontSize;
  const float top_pad = (lh - ImGui::GetTextLineHeight()) * 0.5f;
  for (const Placed& p : placed) {
    const Piece& pc = *p.piece;
    if (pc.space) continue;
    const float asc = font->Ascent * pc.size / font->FontSize;
    const float baseline = origin.y + static_cast<float>(p.line) * lh + top_pad + ascent;
    const ImVec2 at(origin.x + p.x, baseline - pc.rise - asc);
    dl->AddText(font, pc.size, at, color, pc.text.c_str());
    if (pc.tilde) draw_tilde(dl, font, pc, at.x, baseline, color);
  }
  const ImVec2 size(widest, static_cast<float>(lines) * lh);
  ImGui::Dummy(ImVec2(std::max(1.0f, size.x), size.y));
  return size;
}

ImVec2 math_label_size(const std::string& text) {
  float w = 0;
  for (const Piece& p : pieces_of(text, ImGui::GetFont(), ImGui::GetFontSize())) w += p.width;
  return ImVec2(w, ImGui::GetTextLineHeight());
}

void math_label(ImDrawList* dl, ImVec2 pos, const std::string& text, ImU32 color) {
  ImFont* font = ImGui::GetFont();
  const float base = ImGui::GetFontSize();
  const float ascent = font->Ascent * base / font->FontSize;
  float x = pos.x;
  for (const Piece& pc : pieces_of(text, font, base)) {
    const float asc = font->Ascent * pc.size / font->FontSize;
    dl->AddText(font, pc.size, ImVec2(x, pos.y + ascent - pc.rise - asc), color, pc.text.c_str());
    if (pc.tilde) draw_tilde(dl, font, pc, x, pos.y + ascent, color);
    x += pc.width;
  }
}

ImVec2 math_text(const std::string& text, const ImVec4& color, float wrap_width) {
  return math_text(text, ImGui::ColorConvertFloat4ToU32(color), wrap_width);
}

ImVec2 math_textf(const ImVec4& color, const char* fmt, ...) {
  char buf[1024];
  va_list args;
  va_start(args, fmt);
  std::vsnprintf(buf, sizeof buf, fmt, args);
  va_end(args);
  return math_text(buf, color);
}

}  // namespace flashlab::gui
