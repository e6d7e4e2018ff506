// The runner on the device: limits named, OOM as a row without leaks, timing
// that makes sense, every element written.
#include <catch2/catch.hpp>

#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "gpu_support.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using sim::MeasuredRun;
using sim::RunStatus;
using kernels::test::gpu;
using kernels::test::problem;

TEST_CASE("a launch with tiles beyond the device's shared memory is refused, naming the limit", "[gpu][limits]") {
  const auto p = problem(1, 1, 256, 128);
  const sim::TileShape t{64, 4096};
  for (const char* id : {"fa1", "fa2"}) {
    const KernelInfo& k = *find_kernel(id);
    // Through the runner: a skipped row, nothing allocated.
    RunOptions o;
    o.repeats = 0;
    o.tiles = {TileRule::explicit_tiles, t};
    const MeasuredRun row = run_case(gpu(), k, p, o);
    CHECK(row.status == RunStatus::skipped);
    CHECK_THAT(row.reason, Catch::Contains("cudaDevAttrMaxSharedMemoryPerBlockOptin"));
    // And the launch itself, called directly: Unsupported, not a silent failure.
    DeviceArena arena(gpu().allocator());
    const sim::i64 bytes = 256 * 128 * 2;
    LaunchArgs a;
    a.problem = p;
    a.tiles = t;
    a.softmax_scale = 0.125f;
    a.q = arena.allocate(bytes, "Q");
    a.k = arena.allocate(bytes, "K");
    a.v = arena.allocate(bytes, "V");
    a.o = arena.allocate(bytes, "O");
    a.lse = static_cast<float*>(arena.allocate(256 * 4, "lse"));
    a.workspace_bytes = static_cast<std::size_t>(layout::fa1_workspace_bytes(p));
    a.workspace = arena.allocate(static_cast<sim::i64>(a.workspace_bytes), "workspace");
    a.device_smem_optin = static_cast<int>(gpu().device().smem_optin_bytes);
    CHECK_THROWS_AS(k.launch(a), Unsupported);
    try {
      k.launch(a);
    } catch (const Unsupported& e) {
      CHECK_THAT(e.what(), Catch::Contains("cudaDevAttrMaxSharedMemoryPerBlockOptin") &&
                               Catch::Contains(std::to_string(gpu().device().smem_optin_bytes)));
    }
  }
  CHECK(gpu().sticky_error().empty());
}

TEST_CASE("out of memory is a row: the bytes asked for, nothing leaks, the sweep goes on", "[gpu][oom]") {
  const KernelInfo& naive = *find_kernel("naive_cublas");
  const KernelInfo& fa2 = *find_kernel("fa2");
  // S alone: 64 · 64 · 32768² · 2 B = 8 TiB, more than any GPU.
  const auto huge = problem(64, 64, 32768, 64);
  const auto small = problem(2, 4, 257, 64);
  RunOptions o;
  o.repeats = 0;
  o.seed = kernels::test::fresh_seed();
  const sim::i64 before = gpu().device_used_bytes();
  const MeasuredRun oom = run_case(gpu(), naive, huge, o);
  CHECK(oom.status == RunStatus::oom);
  CHECK_THAT(oom.reason, Catch::Contains("out of memory") && Catch::Contains("S and P"));
  CHECK(gpu().device_used_bytes() <= before + (2 << 20));  // everything given back (2 MiB of driver slack)
  const auto after = run_bench(gpu(), {&naive, &fa2}, {small}, o);
  for (const auto& row : after.runs) {
    INFO(row.kernel << ": " << row.reason);
    CHECK(row.status == RunStatus::ok);
  }
  CHECK(gpu().sticky_error().empty());

  // The allocation limit on the device: the same path, on purpose.
  RunOptions limited = o;
  limited.mem_limit_bytes = 1 << 20;
  const MeasuredRun capped = run_case(gpu(), fa2, problem(1, 1, 4096, 64), limited);
  CHECK(capped.status == RunStatus::oom);
  CHECK_THAT(capped.reason, Catch::Contains("allocation limit"));
  CHECK(gpu().device_used_bytes() <= before + (2 << 20));
}

TEST_CASE("timing: warm-up, at least 10 repeats, median within min and max, rates from the model",
          "[gpu][timing]") {
  RunOptions o;
  o.repeats = 10;
  o.seed = kernels::test::fresh_seed();
  const auto p = problem(4, 8, 1024, 64, true);
  const sim::HardwareModel device = simulator_hardware(gpu().device());
  for (const KernelInfo* kp : kernels_of(sim::PassSelection::fwd)) {  // the backward rungs: test_gpu_backward.cpp
    const KernelInfo& k = *kp;
    if (!k.built() || !k.supports(p.dtype) || !k.supports_head_dim(p.head_dim)) continue;
    // The measurement, with the rates analysis places beside the model.
    const analysis::BenchRow row = analysis::bench_row(run_case(gpu(), k, p, o), device);
    INFO(k.id << ": " << row.reason);
    REQUIRE(row.status == RunStatus::ok);
    CHECK(row.repeats >= 10);
    CHECK(row.time_ms_min > 0);
    CHECK(row.time_ms_min <= row.time_ms_median);
    CHECK(row.time_ms_median <= row.time_ms_max);
    CHECK(row.tflops == Approx(static_cast<double>(analysis::convention_flops(p)) / (row.time_ms_median * 1e-3) / 1e12));
    CHECK(row.tflops_exact > row.tflops);  // causal: the executed FLOPs exceed the convention's half
    CHECK(row.gbps > 0);
    CHECK(row.peak_memory_bytes >= 4 * 4 * 8 * 1024 * 64 * 2);
    CHECK(row.predicted_memory_bytes > 0);
    CHECK(row.rel_error >= 0);
  }
}

TEST_CASE("metadata names the device and an observed clock", "[gpu][meta]") {
  RunOptions o;
  const sim::RunMeta m = bench_meta(gpu(), o);
  CHECK_FALSE(m.gpu.empty());
  CHECK(m.sm_count > 0);
  CHECK(m.sm_clock_mhz > 100);
  CHECK(m.sm_clock_mhz < 5000);
  CHECK_FALSE(m.driver.empty());
  CHECK_FALSE(m.cuda_runtime.empty());
}
