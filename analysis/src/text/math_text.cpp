#include "flashlab/analysis/text/math_text.hpp"

#include <cstdint>

namespace flashlab::analysis {

namespace {

// ---- UTF-8 <-> code points ------------------------------------------------------

std::u32string decode(std::string_view s) {
  std::u32string out;
  for (size_t i = 0; i < s.size();) {
    const auto c = static_cast<unsigned char>(s[i]);
    char32_t cp = c;
    size_t n = 1;
    if (c >= 0xF0 && i + 3 < s.size() + 0) {
      cp = ((c & 0x07u) << 18) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 12) |
           ((static_cast<unsigned char>(s[i + 2]) & 0x3Fu) << 6) | (static_cast<unsigned char>(s[i + 3]) & 0x3Fu);
      n = 4;
    } else if (c >= 0xE0 && i + 2 < s.size()) {
      cp = ((c & 0x0Fu) << 12) | ((static_cast<unsigned char>(s[i + 1]) & 0x3Fu) << 6) |
           (static_cast<unsigned char>(s[i + 2]) & 0x3Fu);
      n = 3;
    } else if (c >= 0xC0 && i + 1 < s.size()) {
      cp = ((c & 0x1Fu) << 6) | (static_cast<unsigned char>(s[i + 1]) & 0x3Fu);
      n = 2;
    }
    out.push_back(cp);
    i += n;
  }
  return out;
}


constexpr char32_t kCombiningTilde = 0x0303;

bool is_combining(char32_t c) { return c >= 0x0300 && c <= 0x036F; }
bool is_ascii_alnum(char32_t c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool is_letter(char32_t c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= 0x0370 && c <= 0x03FF) || c == 0x2113;  // Greek, ℓ
}
bool is_upper(char32_t c) { return c >= 'A' && c <= 'Z'; }

// Sub- and superscripts sit this far from their parent's baseline, in ems of the parent.
constexpr double kSubDrop = 0.25, kSupRise = 0.42;

class Parser {
 public:
  explicit Parser(std::u32string s) : s_(std::move(s)) {}

  std::vector<MathRun> run() {
    seq(0, 0.0, 0);
    return std::move(out_);
  }

 private:
  // Index of the bracket closing the one at `open`, or npos.
  size_t matching(size_t open) const {
    const char32_t o = s_[open], c = o == '{' ? '}' : ')';
    int level = 0;
    for (size_t k = open; k < s_.size(); ++k) {
      if (s_[k] == o) ++level;
      else if (s_[k] == c && --level == 0) return k;
    }
    return std::u32string::npos;
  }

  // A '_' at i starts a subscript after a one-letter name (Q_i, ℓ_i, m̃_ij)
  // or a gradient's (dO_i), not inside a word (masked_fill).
  bool subscript_after_name(size_t i) const {
    size_t j = i;
    auto prev = [&](size_t k) {  // the letter before k, skipping combining marks; npos at the start
      while (k > 0) {
        --k;
        if (!is_combining(s_[k])) return k;
      }
      return std::u32string::npos;
    };
    const size_t last = prev(j);
    if (last == std::u32string::npos || !is_letter(s_[last])) return false;
    const size_t before = prev(last);
    if (before == std::u32string::npos || !(is_letter(s_[before]) || is_ascii_alnum(s_[before]) || s_[before] == '_'))
      return true;
    const size_t before2 = prev(before);
    const bool gradient = s_[before] == 'd' && is_upper(s_[last]) &&
                          (before2 == std::u32string::npos || !(is_letter(s_[before2]) || is_ascii_alnum(s_[before2])));
    if (gradient) return true;
    // A short name in capitals (LSE_i).
    size_t start = last, letters = 1;
    for (size_t k = prev(last); k != std::u32string::npos && is_upper(s_[k]); k = prev(k)) {
      start = k;
      ++letters;
    }
    const size_t before_name = prev(start);
    bool caps = letters <= 3;
    for (size_t k = start; caps && k <= last; ++k) caps = is_upper(s_[k]) || is_combining(s_[k]);
    return caps && (before_name == std::u32string::npos || !(is_letter(s_[before_name]) || is_ascii_alnum(s_[before_name])));
  }

  void emit(char32_t c, int depth, double rise, bool tilde = false) {
    if (out_.empty() || out_.back().depth != depth || out_.back().rise_em != rise || out_.back().tilde || tilde) {
      MathRun r;
      r.depth = depth;
      r.rise_em = rise;
      r.tilde = tilde;
      out_.push_back(r);
    }
    append_utf8(out_.back().text, c);
  }

  // The last emitted character gets a tilde over it: it moves to a run of its own.
  void tilde_last() {
    if (out_.empty() || out_.back().text.empty()) return;
    MathRun& last = out_.back();
    size_t cut = last.text.size() - 1;
    while (cut > 0 && (static_cast<unsigned char>(last.text[cut]) & 0xC0) == 0x80) --cut;
    MathRun t = last;
    t.text = last.text.substr(cut);
    t.tilde = true;
    last.text.erase(cut);
    if (last.text.empty()) out_.pop_back();
    out_.push_back(t);
  }

  void seq(int depth, double rise, char32_t close) {
    while (i_ < s_.size()) {
      const char32_t c = s_[i_];
      if (close != 0 && c == close) return;
      if (c == kCombiningTilde) {
        tilde_last();
        ++i_;
        continue;
      }
      if ((c == '_' || c == '^') && i_ + 1 < s_.size() && script(c == '_', depth, rise)) continue;
      emit(c, depth, rise);
      ++i_;
    }
  }

  // A script at i_; false (nothing consumed) when it is a plain character.
  bool script(bool sub, int depth, double rise) {
    const char32_t next = s_[i_ + 1];
    if (sub && next != '{' && !subscript_after_name(i_)) return false;
    const int d = depth + 1;
    const double r = rise + math_scale(depth) * (sub ? -kSubDrop : kSupRise);
    if (next == '{' || next == '(') {
      const size_t end = matching(i_ + 1);
      if (end == std::u32string::npos) return false;
      const bool keep_parens = next == '(';
      i_ += 2;
      if (keep_parens) emit('(', d, r);
      seq(d, r, keep_parens ? ')' : '}');
      if (keep_parens) emit(')', d, r);
      i_ = end + 1;
      return true;
    }
    if (!is_ascii_alnum(next)) return false;
    i_ += 1;
    while (i_ < s_.size() && is_ascii_alnum(s_[i_])) emit(s_[i_++], d, r);
    return true;
  }

  std::u32string s_;
  size_t i_ = 0;
  std::vector<MathRun> out_;
};

// The reals: "∈ R^" is set as "∈ ℝ^".
std::u32string with_reals(std::u32string s) {
  const std::u32string from = U"∈ R^", to = U"∈ ℝ^";
  for (size_t k = s.find(from); k != std::u32string::npos; k = s.find(from, k + to.size())) s.replace(k, from.size(), to);
  return s;
}

}  // namespace

double math_scale(int depth) { return depth <= 0 ? 1.0 : depth == 1 ? 0.72 : 0.6; }

std::vector<MathRun> parse_math(std::string_view s) { return Parser(with_reals(decode(s))).run(); }

std::string math_plain(std::string_view s) {
  std::string out;
  for (const MathRun& r : parse_math(s)) out += r.text;
  return out;
}

void append_utf8(std::string& out, char32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

}  // namespace flashlab::analysis
