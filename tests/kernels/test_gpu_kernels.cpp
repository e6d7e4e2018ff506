// Every registry kernel against fp64 on the shapes that break kernels: N not a
// multiple of any tile, N = 1, seq_kv ≠ seq_q, causal, every head dim and
// dtype it supports, odd tiles, and inputs ×30.
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

// fp64 check on every row up to N = 1000 and on ~240 rows of two heads above
// (first, last and tile-boundary rows included): the reference is the cost.
RunOptions check_options(std::uint64_t seed, ReferenceCache& cache) {
  RunOptions o;
  o.repeats = 0;
  o.check = CheckMode::sampled;
  o.check_flop_budget = 1.1e9;
  o.seed = seed;
  o.cache = &cache;
  o.max_rel_error = 1.0;  // the tests apply their own, tighter bounds
  return o;
}

// Runs naive, then every other built kernel that supports the problem, on the
// same inputs; checks each against the tolerance rule.
void check_all_kernels(const sim::AttentionProblem& p, const RunOptions& base) {
  const RunOptions& o = base;
  INFO(sim::describe(p) << ", " << kernels::test::describe_options(o));
  const sim::MeasuredRun naive = run_case(gpu(), *find_kernel("naive"), p, o);
  INFO("naive: " << sim::to_string(naive.status) << " " << naive.reason);
  REQUIRE(naive.status == RunStatus::ok);
  REQUIRE(naive.rel_error >= 0);
  CHECK(naive.rel_error <= kernels::test::tolerance(p.dtype, 1.0));  // naive itself: ≤ 2e-2, fp32 ≤ 1e-5
  const double tol = kernels::test::tolerance(p.dtype, naive.rel_error);
  for (const KernelInfo* kp : kernels_of(sim::PassSelection::fwd)) {  // the backward rungs: test_gpu_backward.cpp
    const KernelInfo& k = *kp;
    if (k.id == "naive" || !k.built() || !k.supports(p.dtype) || !k.supports_head_dim(p.head_dim)) continue;
    const sim::MeasuredRun row = run_case(gpu(), k, p, o);
    INFO(k.id << " tiles " << row.tiles.Br << "x" << row.tiles.Bc << ": " << sim::to_string(row.status) << " "
              << row.reason << "; error " << row.rel_error << ", naive " << naive.rel_error << ", bound " << tol);
    REQUIRE(row.status == RunStatus::ok);
    REQUIRE(row.rel_error >= 0);
    CHECK(row.rel_error <= tol);
  }
}

}  // namespace

TEST_CASE("every kernel matches fp64: N × head dim × causal × dtype", "[gpu][correctness]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(16, 32, 64, 96, 128, 256);
  const sim::i64 n = GENERATE(1, 2, 17, 63, 64, 65, 127, 128, 129, 1000, 2048);
  // Several heads (B·H = 6) while N is small, so head offsets are exercised;
  // two at large N, where the reference is the cost.
  const auto p = n < 1000 ? problem(2, 3, n, d, causal, dtype) : problem(1, 2, n, d, causal, dtype);
  ReferenceCache cache;
  check_all_kernels(p, check_options(kernels::test::fresh_seed(), cache));
}

TEST_CASE("every kernel matches fp64 with seq_kv ≠ seq_q (non-causal), N_q = 1 included", "[gpu][correctness]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const int d = GENERATE(64, 128);
  const auto shape = GENERATE(std::make_pair(1, 1), std::make_pair(1, 17), std::make_pair(1, 2048),
                              std::make_pair(65, 2048), std::make_pair(1000, 17), std::make_pair(129, 1),
                              std::make_pair(64, 63));
  const auto p = problem(2, 2, shape.first, d, false, dtype, shape.second);
  ReferenceCache cache;
  check_all_kernels(p, check_options(kernels::test::fresh_seed(), cache));
}

TEST_CASE("every kernel matches fp64 with grouped K/V heads: each query head reads its group's K, V",
          "[gpu][correctness][grouped]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(64, 128);
  const sim::i64 n = GENERATE(1, 17, 129, 1000);
  const sim::i64 kv_heads = GENERATE(1, 2, 3);  // of 6 query heads: groups of 6, 3 and 2
  auto p = problem(2, 6, n, d, causal, dtype);
  p.kv_heads = kv_heads;
  ReferenceCache cache;
  check_all_kernels(p, check_options(kernels::test::fresh_seed(), cache));
  if (causal) return;
  auto ragged = problem(2, 6, n, d, false, dtype, 300);  // N_kv ≠ N_q
  ragged.kv_heads = kv_heads;
  check_all_kernels(ragged, check_options(kernels::test::fresh_seed(), cache));
}

TEST_CASE("fa1 and fa2 match fp64 with any tiles the GUI may ask for", "[gpu][correctness][tiles]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16);
  const bool causal = GENERATE(false, true);
  const sim::TileShape tiles = GENERATE(sim::TileShape{1, 1}, sim::TileShape{7, 33}, sim::TileShape{33, 17},
                                        sim::TileShape{16, 128}, sim::TileShape{128, 16}, sim::TileShape{64, 64},
                                        sim::TileShape{100, 3});
  const int d = GENERATE(32, 128);
  const auto p = problem(1, 3, 300, d, causal, dtype);
  ReferenceCache cache;
  RunOptions o = check_options(kernels::test::fresh_seed(), cache);
  INFO(sim::describe(p) << " tiles " << tiles.Br << "x" << tiles.Bc << ", " << kernels::test::describe_options(o));
  const sim::MeasuredRun naive = run_case(gpu(), *find_kernel("naive"), p, o);
  REQUIRE(naive.status == RunStatus::ok);
  o.tiles = {TileRule::explicit_tiles, tiles};
  for (const char* id : {"fa1", "fa2"}) {
    const sim::MeasuredRun row = run_case(gpu(), *find_kernel(id), p, o);
    INFO(id << ": " << sim::to_string(row.status) << " " << row.reason << " error " << row.rel_error);
    if (row.status == RunStatus::skipped) {
      // Only a limit of the device or the compiled kernel may refuse tiles.
      CHECK_THAT(row.reason, Catch::Contains("threads per block") || Catch::Contains("shared memory"));
      continue;
    }
    REQUIRE(row.status == RunStatus::ok);
    CHECK(row.tiles == tiles);
    CHECK(row.rel_error <= kernels::test::tolerance(dtype, naive.rel_error));
  }
}

TEST_CASE("inputs ×30 stay finite in every kernel (softmax subtracts the maximum), backward rungs included",
          "[gpu][stability]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(64, 128, 256);
  const sim::i64 n = GENERATE(64, 1000);
  const auto p = problem(1, 2, n, d, causal, dtype);
  RunOptions o;
  o.repeats = 0;
  o.check = CheckMode::off;  // only finiteness is asked: the runner counts non-finite outputs
  o.input_scale = 30;
  o.seed = kernels::test::fresh_seed();
  for (const KernelInfo& k : registry()) {
    if (!k.built() || !k.supports(dtype) || !k.supports_head_dim(d)) continue;
    const sim::MeasuredRun row = run_case(gpu(), k, p, o);
    INFO(k.id << " " << sim::describe(p) << ", " << kernels::test::describe_options(o) << ": " << row.reason);
    CHECK(row.status == RunStatus::ok);
  }
}
