// A student's kernel graded from the rows of one run: right or wrong per
// shape, its speed against the fa2 rung of the same problem, its requests to
// global memory against the model of the loop nest and tiles it declares —
// a loop order that re-reads K and V is named — and the JSON an autograder
// reads, which is also a results file FlashLab reads back.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/student/kernel_grade.hpp"
#include "flashlab/sim/memory/simulate.hpp"
#include "measured_run_fixture.hpp"
#include "support/problems.hpp"
#include "support/text_checks.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::test::problem;
using sim::i64;

namespace {

// Checked against fp64 (a relative error of 1e-3), as a grade's shapes are.
sim::MeasuredRun timed(const std::string& kernel, const std::string& model, const sim::AttentionProblem& p,
                       sim::TileShape tiles, double ms) {
  sim::MeasuredRun r = flashlab::test::measured_run(kernel, model, p, tiles, ms);
  r.rel_error = 1e-3;
  return r;
}

// The model's requests (HBM and L2 levels) for fa1 with 64 × 64 tiles, as the grade computes them.
sim::Traffic fa1_requests(const sim::AttentionProblem& p, const sim::HardwareModel& hw) {
  sim::SimOptions o;
  o.tiles = sim::TileShape{64, 64};
  o.stream_event_limit = 0;
  const sim::SimResult r = sim::simulate(sim::Algorithm::fa1, p, hw, o);
  sim::Traffic t;
  for (int i = 0; i < sim::kGlobalTensorCount; ++i)
    for (const sim::Level l : {sim::Level::HBM, sim::Level::L2}) t += r.total.at(l, static_cast<sim::Tensor>(i));
  return t;
}

}  // namespace

TEST_CASE("kernel grade: right shapes, the speed against fa2, and requests within the tolerance",
          "[analysis][student]") {
  const sim::HardwareModel hw = sim::load_hardware("H100-SXM5-80GB");
  const auto p1 = problem(2, 4, 1000, 64), p2 = problem(2, 4, 1024, 64, true);
  sim::MeasuredRuns runs;
  runs.runs.push_back(timed("fa2", "fa2", p1, {128, 64}, 2.0));
  sim::MeasuredRun mine = timed("user:my_fa1", "fa1", p1, {64, 64}, 4.0);
  const sim::Traffic want = fa1_requests(p1, hw);
  mine.l2_read_bytes = want.read_bytes * 11 / 10;  // 10% over: within the 25%
  mine.l2_write_bytes = want.write_bytes;
  mine.dram_read_bytes = 1000;
  mine.dram_write_bytes = 1000;
  runs.runs.push_back(mine);
  runs.runs.push_back(timed("fa2", "fa2", p2, {128, 64}, 1.0));
  sim::MeasuredRun wrong = timed("user:my_fa1", "fa1", p2, {64, 64}, 0);
  wrong.status = sim::RunStatus::failed;
  wrong.reason = "wrong result: relative error 0.3";
  wrong.repeats = 0;
  runs.runs.push_back(wrong);

  const std::vector<KernelGrade> grades = grade_kernels(bench_results(runs, hw), hw);
  REQUIRE(grades.size() == 1);
  const KernelGrade& g = grades[0];
  CHECK(g.id == "user:my_fa1");
  CHECK(g.name == "my_fa1");
  CHECK(g.model == "fa1");
  CHECK(g.tiles == sim::TileShape{64, 64});
  CHECK(g.correct == 1);
  CHECK(g.wrong == 1);
  REQUIRE(g.shapes.size() == 2);
  CHECK(g.shapes[0].correct);
  CHECK(g.shapes[0].speed_vs_fa2 == Approx(0.5));
  CHECK(g.shapes[0].fa2_time_ms == 2.0);
  CHECK(g.shapes[0].requests.measured);
  CHECK(g.shapes[0].requests.read_ratio() == Approx(1.1).epsilon(1e-6));
  CHECK(g.shapes[0].requests.within());
  CHECK(g.shapes[0].verdict.empty());
  CHECK_FALSE(g.shapes[1].correct);
  CHECK(g.shapes[1].speed_vs_fa2 == 0);  // not timed: no ratio, not a zero one
  CHECK_FALSE(g.shapes[1].requests.measured);
  REQUIRE(g.median_speed_vs_fa2);
  CHECK(*g.median_speed_vs_fa2 == Approx(0.5));
  const std::string text = grades_text(grades);
  flashlab::test::check_contains_each(text, {
      "my_fa1 (your kernel) — declares fa1, 64 × 64 tiles: 1 of 2 shapes correct",
      "0.50× the fa2 rung's",
      "wrong result: relative error 0.3",
  });
}

TEST_CASE("kernel grade: a kernel whose requests are not its declared loop nest's is told so, with the K, V reads "
          "named",
          "[analysis][student]") {
  const sim::HardwareModel hw = sim::load_hardware("H100-SXM5-80GB");
  const auto p = problem(1, 2, 4096, 64);
  sim::MeasuredRun swapped = timed("user:fa1_swapped", "fa1", p, {64, 64}, 10.0);
  const sim::Traffic want = fa1_requests(p, hw);
  // K and V read once more per Q_i: T_r − 1 more times each.
  const i64 kv_once = 2 * p.batch * p.heads * p.seq_q * p.head_dim * 2;
  swapped.l2_read_bytes = want.read_bytes + kv_once * (4096 / 64 - 1);
  swapped.l2_write_bytes = want.write_bytes;
  sim::MeasuredRuns runs;
  runs.runs.push_back(swapped);
  const std::vector<KernelGrade> g = grade_kernels(bench_results(runs, hw), hw);
  REQUIRE(g.size() == 1);
  const ShapeGrade& s = g[0].shapes.at(0);
  CHECK_FALSE(s.requests.within());
  CHECK(s.requests.write_ratio() == Approx(1.0));
  CHECK_THAT(s.verdict, Catch::StartsWith("reads "));
  flashlab::test::check_contains_each(s.verdict, {
      "more bytes than fa1 with 64 × 64 tiles would",
      "is 63× all that fa1 with 64 × 64 tiles reads of K and V",
      "look at your loop order",
  });
  CHECK(g[0].notes == std::vector<std::string>{s.verdict});
}

TEST_CASE("kernel grade: the JSON an autograder reads is the results file with the grades beside the rows",
          "[analysis][student]") {
  const sim::HardwareModel hw = sim::load_hardware("H100-SXM5-80GB");
  sim::MeasuredRuns runs;
  runs.meta.gpu = "NVIDIA H100 80GB HBM3";
  runs.runs.push_back(timed("fa2", "fa2", problem(1, 2, 256, 64), {128, 64}, 0.5));
  runs.runs.push_back(timed("user:k", "fa2", problem(1, 2, 256, 64), {64, 64}, 1.0));
  sim::MeasuredRun skipped = timed("user:k", "fa2", problem(1, 2, 256, 32), {64, 64}, 0);
  skipped.status = sim::RunStatus::skipped;
  skipped.reason = "user:k is not compiled for head dim d=32";
  runs.runs.push_back(skipped);
  const BenchResults results = bench_results(runs, hw);
  const std::string text = bench_json_with_grades(results, grade_kernels(results, hw));
  const auto j = nlohmann::json::parse(text);
  REQUIRE(j["kernel_files"].size() == 1);
  const auto& k = j["kernel_files"][0];
  CHECK(k["id"] == "user:k");
  CHECK(k["shapes_correct"] == 1);
  CHECK(k["shapes_total"] == 2);
  CHECK(k["all_correct"] == false);
  CHECK(k["median_speed_vs_fa2"].get<double>() == Approx(0.5));
  CHECK(k["shapes"][0]["correct"] == true);
  CHECK(k["shapes"][0]["time_ms"].get<double>() == 1.0);
  CHECK(k["shapes"][0]["requests"]["measured"] == false);
  CHECK(k["shapes"][1]["status"] == "skipped");
  CHECK(k["shapes"][1]["time_ms"].is_null());  // missing is not zero
  CHECK(k["shapes"][1]["speed_vs_fa2"].is_null());
  // Still a results file.
  const BenchResults back = bench_from_text(text, "grade.json");
  CHECK(back.rows.size() == 3);
  CHECK(back.rows[1].kernel == "user:k");
}

TEST_CASE("kernel grade: a user kernel has its own name and a colour no rung takes", "[analysis][student][chart]") {
  CHECK(is_user_kernel("user:my_fa1"));
  CHECK_FALSE(is_user_kernel("user:"));
  CHECK_FALSE(is_user_kernel("fa1"));
  CHECK(implementation_name("user:my_fa1") == "my_fa1 (your kernel)");
  CHECK(run_name("user:my_fa1", "fwd") == "my_fa1 (your kernel)");
  CHECK(implementation_colour("user:my_fa1") == implementation_colour("user:my_fa1"));
  for (const Implementation& i : implementations())
    CHECK_FALSE(implementation_colour("user:my_fa1") == implementation_colour(std::string(i.id)));
  CHECK_FALSE(implementation_colour("user:my_fa1") == implementation_colour("mystery"));
  CHECK_FALSE(implementation_colour("user:a") == implementation_colour("user:b"));
}
