// The table `flashlab bench` prints (the registry listing is the CLI's:
// tests/kernels/test_bench_cli.cpp).
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "flashlab/analysis/placement/bench_table.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "support/problems.hpp"
#include "support/text_checks.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_bench_table_cases {

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::test::problem;

namespace {

analysis::BenchResults sample() {
  analysis::BenchResults r;
  r.meta.gpu = "NVIDIA H100 80GB HBM3";
  r.meta.sm_count = 132;
  r.meta.sm_clock_mhz = 1755.4;
  r.meta.mem_clock_mhz = 2619;
  r.meta.driver = "13.0";
  r.meta.cuda_runtime = "13.0";
  r.meta.commit = "0123456789ab";
  r.meta.flop_convention = "4·B·H·N_q·N_kv·d";
  BenchRow ok;
  ok.kernel = "fa2";
  ok.problem = problem(16, 32, 1024, 64, true);
  ok.tiles = {128, 64};
  ok.time_ms_median = 1.23456;
  ok.time_ms_min = 1.2;
  ok.time_ms_max = 1.5;
  ok.repeats = 20;
  ok.tflops = 22.04;
  ok.tflops_exact = 25.5;
  ok.gbps = 310.2;
  ok.peak_memory_bytes = 268435456;
  ok.predicted_memory_bytes = 264241152;
  ok.rel_error = 2.5e-4;
  BenchRow oom;
  oom.kernel = "naive";
  oom.problem = problem(64, 32, 2048, 64, false, sim::DType::bf16, 1000);
  oom.status = RunStatus::oom;
  oom.reason = "out of memory: the workspace (S and P) needs 17,179,869,184 B";
  oom.predicted_memory_bytes = 35433480192;
  BenchRow skipped;
  skipped.kernel = "fa2_tc";
  skipped.problem = problem(1, 1, 64, 32);
  skipped.status = RunStatus::skipped;
  skipped.reason = "fa2_tc is not compiled for head dim d=32";
  r.rows = {ok, oom, skipped};
  return r;
}

}  // namespace

TEST_CASE("the bench table shows metadata, numbers and reasons", "[analysis][bench_table]") {
  const std::string t = bench_table(sample());
  flashlab::test::check_contains_each(t, {
      "GPU NVIDIA H100 80GB HBM3 (132 SMs, SM clock observed 1755 MHz, memory clock 2619 MHz)",
      "driver 13.0, CUDA runtime 13.0, commit 0123456789ab",
      "L2 flushed before every timed run",
  });
  for (const char* col : {"kernel", "B_r×B_c", "status", "TFLOP/s", "GB/s", "peak MiB", "model MiB", "rel err"})
    CHECK_THAT(t, Catch::Contains(col));
  // The ok row: time, range, rates, memory, error.
  flashlab::test::check_contains_each(t, {
      "128×64", "1.235", "1.200-1.500", "22.0", "25.5", "310", "256.0", "2.5e-04",
      // The OOM and skipped rows: status and reason, no numbers pretending to be measured.
      "OOM", "17,179,869,184 B", "2048/1000",
      "33792.0",  // the model's memory stays: that is why it ran out
      "skipped", "d=32",
  });
  // One line per row after the two metadata lines, the header and its rule.
  CHECK(std::count(t.begin(), t.end(), '\n') == 2 + 2 + 3);
}

namespace {

// A forward fa2_tc row with counters on an H200: 128 × 64 tiles, two CTAs per
// SM, fp16, placed on the H200 preset as `flashlab bench --results` places it.
BenchRow two_cta_row(sim::i64 B, sim::i64 N, sim::i64 ctas_per_sm) {
  BenchRow row;
  row.kernel = "fa2_tc";
  row.model = "fa2";
  row.problem = problem(B, 8, N, 64);
  row.tiles = {128, 64};
  row.ctas_per_sm = ctas_per_sm;
  row.dram_read_bytes = 400'000'000;  // replaced below by what the test needs
  row.dram_write_bytes = 130'000'000;
  return row;
}

BenchResults h200(std::vector<BenchRow> rows) {
  BenchResults r;
  r.meta.gpu = "NVIDIA H200";
  r.meta.sm_count = 132;
  r.rows = std::move(rows);
  const auto hw = results_hardware(r.meta, datasheet_presets());
  REQUIRE(hw);
  return replace_results(r, *hw);
}

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace

TEST_CASE("a launch of two CTAs per SM: the DRAM table shows both states where they differ and scores the nearer",
          "[analysis][bench_table][l2]") {
  // B 2, H 8, N 64K, d 64: a head's K and V (16 MiB) with the other heads'
  // cohorts beyond the L2's reach, where the slots apart read less than the
  // lockstep cohorts. B 32, N 4096: every head's K and V fit, both states agree.
  BenchResults r = h200({two_cta_row(2, 65536, 2), two_cta_row(32, 4096, 2), two_cta_row(2, 65536, 1)});
  BenchRow& two = r.rows[0];
  const BenchRow& one = r.rows[1];
  REQUIRE(two.predicted_dram_read_bytes > 0);
  REQUIRE(two.apart_dram_read_bytes > 0);
  const double lockstep = static_cast<double>(two.predicted_dram_read_bytes + two.predicted_dram_write_bytes);
  const double apart = static_cast<double>(two.apart_dram_read_bytes + two.apart_dram_write_bytes);
  CHECK(std::abs(apart - lockstep) > kTwoStatesApart * lockstep);
  CHECK(two.apart_dram_write_bytes > 0);
  // The row that agrees, and the one-CTA launch, have no second state.
  CHECK(one.predicted_dram_read_bytes > 0);
  CHECK(one.apart_dram_read_bytes == -1);
  CHECK(one.apart_dram_write_bytes == -1);
  CHECK(r.rows[2].apart_dram_read_bytes == -1);

  // Measured exactly as the slots apart predict: scored against them (0 %),
  // the lockstep line keeps its own error.
  two.dram_read_bytes = two.apart_dram_read_bytes;
  two.dram_write_bytes = two.apart_dram_write_bytes;
  const DramStates s = dram_states(two);
  REQUIRE(s.two());
  CHECK(s.apart_nearer());
  CHECK(s.scored().error == 0);
  CHECK(s.lockstep.error == Approx((lockstep - apart) / apart));

  const BenchResults only_two{r.meta, {two}, {}};
  const std::vector<std::string> t = lines_of(bench_table(only_two));
  const auto at = std::find_if(t.begin(), t.end(), [](const std::string& l) {
    return l.rfind("fa2_tc ", 0) == 0 && l.find("in lockstep") != std::string::npos;
  });
  REQUIRE(at != t.end());
  REQUIRE(at + 1 != t.end());
  const std::string& second = *(at + 1);
  char gb[32];
  std::snprintf(gb, sizeof gb, "%.3f", static_cast<double>(two.apart_dram_read_bytes) / 1e9);
  CHECK_THAT(second, Catch::Contains(gb) && Catch::Contains("0.0%") && Catch::Contains("within 15%") &&
                         Catch::Contains("slots apart (nearer: scored)"));
  std::snprintf(gb, sizeof gb, "%.3f", static_cast<double>(two.predicted_dram_read_bytes) / 1e9);
  CHECK_THAT(*at, Catch::Contains(gb));
  CHECK(second.rfind("      ", 0) == 0);  // no kernel, no problem: the same point's other state
  CHECK_THAT(bench_table(only_two), Catch::Contains("fa2_tc: median |error| 0.0%, largest 0.0%, 1 of 1 points within "
                                                    "the target (1 scored with the slots apart)"));
  const std::string points = dram_points(only_two);
  CHECK_THAT(points, Catch::Contains("error   +0.0%  nearer: slots apart"));

  // The row whose states agree: one line, as without the second state, and the
  // summary without it.
  const BenchResults only_one{r.meta, {one}, {}};
  const std::string t1 = bench_table(only_one);
  const std::vector<std::string> l1 = lines_of(t1);
  const auto dram =
      std::find_if(l1.begin(), l1.end(), [](const std::string& l) { return l.rfind("DRAM bytes:", 0) == 0; });
  REQUIRE(dram != l1.end());
  CHECK(l1.end() - dram == 1 + 2 + 1 + 1);  // the title, header and rule, the row, the summary
  CHECK_THAT(t1, !Catch::Contains("slots apart") && !Catch::Contains("lockstep") && !Catch::Contains("Two lines"));
  CHECK_THAT(dram_points(only_one), !Catch::Contains("slots apart"));
}

}  // namespace test_bench_table_cases
