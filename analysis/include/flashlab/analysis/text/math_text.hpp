// The pseudocode's notation, read as the paper sets it: S_ij with ij set
// small and lowered, e^{m_i − m_i^new} with its exponent raised, m̃ with the
// tilde over the m, ∈ ℝ^{B_r×B_c}. The strings of the algorithms' records and
// the Concepts texts are written in this light TeX-like markup; parse_math
// turns one into runs that a renderer (the GUI's, the exporters') sets with
// smaller type and a shifted baseline. Nothing draws the markup itself.
//
//   x_{...}  x^{...}   a group as subscript / superscript (nested groups nest)
//   x^(j)    x_(...)   the parenthesised group, parentheses kept
//   Q_i  S_ij  dO_i    a subscript of letters and digits after a one-letter
//                      name (or a gradient's dX): "masked_fill" stays a word
//   x^new              a superscript of letters and digits
//   m̃  P̃             a letter followed by U+0303 COMBINING TILDE: tilde over it
//   ∈ R^               the reals: ∈ ℝ^
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace flashlab::analysis {

struct MathRun {
  std::string text;     // UTF-8, no markup left
  int depth = 0;        // 0: the base line; 1: a script; 2: a script's script
  double rise_em = 0;   // baseline shift from the base line, in ems of the base font (+ up)
  bool tilde = false;   // one letter with a tilde over it
  bool operator==(const MathRun& o) const {
    return text == o.text && depth == o.depth && rise_em == o.rise_em && tilde == o.tilde;
  }
};

// The runs of `s`, in order; adjacent text of the same depth, rise and tilde
// is merged. Malformed markup (an unclosed group) is kept as text.
std::vector<MathRun> parse_math(std::string_view s);

// The text with the markup removed and every run's text concatenated (for
// search, tooltips and tests): "S_ij = τ Q_i K_jᵀ" -> "Sij = τ Qi Kjᵀ".
std::string math_plain(std::string_view s);

// The size of a script of depth k relative to the base font (1 at depth 0).
double math_scale(int depth);

// One code point appended to `out` in UTF-8.
void append_utf8(std::string& out, char32_t cp);

}  // namespace flashlab::analysis
