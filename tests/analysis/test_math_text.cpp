// The pseudocode's notation: scripts set small and shifted, tildes over their
// letter, ℝ; no markup left in any text FlashLab shows.
#include <catch2/catch.hpp>

#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/text/math_text.hpp"
#include "flashlab/sim.hpp"

using flashlab::analysis::MathRun;
using flashlab::analysis::parse_math;

namespace {

MathRun run(std::string text, int depth, double rise, bool tilde = false) {
  MathRun r;
  r.text = std::move(text);
  r.depth = depth;
  r.rise_em = rise;
  r.tilde = tilde;
  return r;
}

// A group left as text, or a script after a closing bracket ("(0)_N": the
// markup sets a script after a bracket only as a group, "(0)_{N}").
bool has_markup(const std::string& s) {
  for (const char* m : {"_{", "^{", ")_", ")^", "]_", "]^"})
    if (s.find(m) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("math text: subscripts after a name, superscripts, groups", "[math]") {
  CHECK(parse_math("S_ij = τ Q_i") ==
        std::vector<MathRun>{run("S", 0, 0), run("ij", 1, -0.25), run(" = τ Q", 0, 0), run("i", 1, -0.25)});
  // A group nests: the exponent's own subscripts sit lower, smaller, inside it.
  const auto e = parse_math("e^{m_i − m_i^new}");
  REQUIRE(e.size() == 6);
  CHECK(e[0] == run("e", 0, 0));
  CHECK(e[1] == run("m", 1, 0.42));
  CHECK(e[2].text == "i");
  CHECK(e[2].depth == 2);
  CHECK(e[2].rise_em == Approx(0.42 - 0.72 * 0.25));
  CHECK(e[3] == run(" − m", 1, 0.42));
  CHECK(e[5].text == "new");
  CHECK(e[5].rise_em == Approx(0.42 + 0.72 * 0.42));
  // Parenthesised superscripts keep their parentheses; the reals become ℝ.
  CHECK(parse_math("m_i^(j−1)") == std::vector<MathRun>{run("m", 0, 0), run("i", 1, -0.25), run("(j−1)", 1, 0.42)});
  const auto in_r = parse_math("∈ R^{B_r×B_c}");
  REQUIRE(!in_r.empty());
  CHECK(in_r[0].text == "∈ ℝ");
  CHECK(flashlab::analysis::math_plain("(0)_{N×d}") == "(0)N×d");
}

TEST_CASE("math text: a tilde goes over its letter, words with underscores stay words", "[math]") {
  CHECK(parse_math("m̃_ij") == std::vector<MathRun>{run("m", 0, 0, true), run("ij", 1, -0.25)});
  CHECK(parse_math("P̃_i^(j)") ==
        std::vector<MathRun>{run("P", 0, 0, true), run("i", 1, -0.25), run("(j)", 1, 0.42)});
  // Code keeps its identifiers; a gradient's name takes a subscript.
  CHECK(flashlab::analysis::math_plain("S = S.masked_fill(mask, -inf)") == "S = S.masked_fill(mask, -inf)");
  CHECK(flashlab::analysis::math_plain("dO_i, dK_j, T_c") == "dOi, dKj, Tc");
  CHECK(flashlab::analysis::math_plain("m_new") == "mnew");
  CHECK(flashlab::analysis::math_plain("LSE_i, D_i") == "LSEi, Di");
  CHECK(flashlab::analysis::math_plain("MAXLEN_i") == "MAXLEN_i");
  // An unclosed group is text, not a crash.
  CHECK(flashlab::analysis::math_plain("x^{y") == "x^{y");
}

TEST_CASE("no markup is left in the rendered text of any pseudocode line or chart", "[math]") {
  for (flashlab::sim::Algorithm a : flashlab::sim::all_algorithms()) {
    const auto& info = flashlab::sim::algorithm_info(a);
    for (const std::string& line : info.pseudocode) {
      INFO(info.key << ": " << line);
      for (const MathRun& r : parse_math(line)) CHECK_FALSE(has_markup(r.text));
    }
  }
  // The charts are drawn as plain text: none may carry markup.
  flashlab::analysis::ChartContext ctx;
  ctx.problem.seq_q = 2048;
  ctx.hw = flashlab::sim::load_hardware("A100-SXM4-40GB");
  for (const auto& e : flashlab::analysis::chart_table()) {
    if (e.needs_results) continue;
    const flashlab::analysis::ChartSpec c = flashlab::analysis::build_chart(std::string(e.id), ctx, nullptr);
    INFO(e.id);
    CHECK_FALSE(has_markup(c.title));
    CHECK_FALSE(has_markup(c.subtitle));
    CHECK_FALSE(has_markup(c.x.label));
    CHECK_FALSE(has_markup(c.y.label));
    for (const auto& s : c.series) CHECK_FALSE(has_markup(s.name));
    for (const std::string& n : c.notes) CHECK_FALSE(has_markup(n));
  }
}
