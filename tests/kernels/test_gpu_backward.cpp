// Every backward rung against the fp64 gradients on the shapes that break
// kernels (N not a multiple of any tile, N = 1, N_q ≠ N_kv, causal, every dtype
// and head dim it supports, odd tiles), inputs ×30 finite, and the runner's
// backward rows: direction, the worst of dQ/dK/dV, the case's peak memory, OOM.
// Each case: fresh inputs, the forward rung run first, dQ, dK and dV poisoned
// with NaN and every element checked written (the CUDA backend does both).
#include <catch2/catch.hpp>

#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "gpu_support.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using sim::RunStatus;
using kernels::test::gpu;
using kernels::test::problem;

namespace {

// Whole heads (dQ, dK, dV) checked up to N = 1000 at d = 128.
const kernels::test::LadderCheck ladder{sim::Pass::bwd, "naive_bwd", 3e9};

}  // namespace

TEST_CASE("every backward rung matches the fp64 gradients: N × head dim × causal × dtype", "[gpu][bwd][correctness]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(16, 32, 64, 96, 128, 256);
  const sim::i64 n = GENERATE(1, 17, 63, 64, 65, 129, 1000);
  if (n == 1000 && d != 64 && d != 128) return;  // the fp64 gradients cost seconds there
  const auto p = n < 1000 ? problem(2, 3, n, d, causal, dtype) : problem(1, 1, n, d, causal, dtype);
  ReferenceCache cache;
  ladder.every_rung(p, ladder.options(cache));
}

TEST_CASE("every backward rung matches fp64 with seq_kv ≠ seq_q (non-causal), a single key included",
          "[gpu][bwd][correctness]") {
  const sim::DType dtype = GENERATE(sim::DType::fp16, sim::DType::bf16, sim::DType::fp32);
  const int d = GENERATE(64, 128);
  const auto shape = GENERATE(std::make_pair(1, 1), std::make_pair(1, 17), std::make_pair(65, 300),
                              std::make_pair(300, 65), std::make_pair(1000, 1), std::make_pair(64, 63),
                              std::make_pair(4097, 300));  // ragged at every B_r: 52 row blocks of 80
  // One head at N_q = 4097: its whole fp64 gradients (dK, dV too) within the check's budget.
  const auto p = shape.first > 1000 ? problem(1, 1, shape.first, d, false, dtype, shape.second)
                                    : problem(2, 2, shape.first, d, false, dtype, shape.second);
  ReferenceCache cache;
  ladder.every_rung(p, ladder.options(cache));
}

TEST_CASE("every backward rung matches fp64 with grouped K/V heads: dK, dV summed over each group",
          "[gpu][bwd][correctness][grouped]") {
  const sim::DType dtype = GENERATE(sim::DType::fp16, sim::DType::bf16, sim::DType::fp32);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(64, 128);
  const sim::i64 n = GENERATE(1, 17, 65, 129, 300);
  const sim::i64 kv_heads = GENERATE(1, 2, 3);  // of 6 query heads: groups of 6, 3 and 2
  auto p = problem(2, 6, n, d, causal, dtype);
  p.kv_heads = kv_heads;
  ReferenceCache cache;
  const RunOptions o = ladder.options(cache);
  REQUIRE(plan_check_backward(p, o.check_flop_budget, false).keys);  // dK and dV checked, not only dQ
  ladder.every_rung(p, o);
  if (causal) return;
  auto ragged = problem(2, 6, n, d, false, dtype, 65);  // N_kv ≠ N_q
  ragged.kv_heads = kv_heads;
  ladder.every_rung(ragged, ladder.options(cache));
}

TEST_CASE("fa2_bwd matches fp64 with any tiles the GUI may ask for", "[gpu][bwd][correctness][tiles]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16);
  const bool causal = GENERATE(false, true);
  const sim::TileShape tiles = GENERATE(sim::TileShape{1, 1}, sim::TileShape{7, 33}, sim::TileShape{33, 17},
                                        sim::TileShape{16, 64}, sim::TileShape{64, 16}, sim::TileShape{100, 3});
  const int d = GENERATE(32, 128);
  const auto p = problem(1, 3, 300, d, causal, dtype);
  ReferenceCache cache;
  ladder.explicit_tiles(p, ladder.options(cache), tiles, {"fa2_bwd"});
}

TEST_CASE("backward rows: direction, the worst of dQ/dK/dV, the case's peak memory, timing", "[gpu][bwd][runner]") {
  RunOptions o;
  o.repeats = 10;
  o.seed = kernels::test::fresh_seed();
  const auto p = problem(2, 8, 1024, 64, true);
  const sim::i64 t = 2 * 8 * 1024 * 64 * 2;  // one of Q, K, V, O, dO, dQ, dK, dV
  for (const KernelInfo* k : kernels_of(sim::PassSelection::bwd)) {
    if (!k->built() || !k->supports(p.dtype) || !k->supports_head_dim(p.head_dim)) continue;
    const sim::MeasuredRun row = run_case(gpu(), *k, p, o);
    INFO(k->id << ": " << row.reason);
    REQUIRE(row.status == RunStatus::ok);
    CHECK(row.direction == "bwd");
    CHECK(row.model == sim::to_string(k->model));
    CHECK(row.repeats >= 10);
    CHECK(row.time_ms_min > 0);
    CHECK(row.time_ms_min <= row.time_ms_median);
    CHECK(row.time_ms_median <= row.time_ms_max);
    CHECK(row.rel_error >= 0);
    CHECK(row.rel_error <= 2e-2);
    // Every buffer of the case, the forward's workspace (naive_cublas's S and P) included.
    sim::i64 floor = 8 * t + k->workspace_bytes(p, row.tiles);
    if (const KernelInfo* f = forward_rung(*k)) floor += f->workspace_bytes(p, resolve_tiles(*f, p, {}, gpu().device().limits()));
    CHECK(row.peak_memory_bytes >= floor);
  }
  CHECK(gpu().sticky_error().empty());
}

TEST_CASE("a backward case out of memory is a row, nothing leaks, the next case runs", "[gpu][bwd][oom]") {
  const KernelInfo& naive = *find_kernel("naive_bwd");
  RunOptions o;
  o.repeats = 0;
  o.seed = kernels::test::fresh_seed();
  const sim::i64 before = gpu().device_used_bytes();
  const sim::MeasuredRun oom = run_case(gpu(), naive, problem(64, 64, 32768, 64), o);
  CHECK(oom.status == RunStatus::oom);
  CHECK(oom.direction == "bwd");
  CHECK_THAT(oom.reason, Catch::Contains("out of memory"));
  CHECK(gpu().device_used_bytes() <= before + (2 << 20));
  const sim::MeasuredRun after = run_case(gpu(), naive, problem(1, 2, 257, 64), o);
  CHECK(after.status == RunStatus::ok);
  CHECK(gpu().sticky_error().empty());
}
