// The table `flashlab bench` prints (the registry listing is the CLI's:
// tests/kernels/test_bench_cli.cpp).
#include <catch2/catch.hpp>

#include <algorithm>

#include "flashlab/analysis/placement/bench_table.hpp"
#include "support/problems.hpp"
#include "support/text_checks.hpp"

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
