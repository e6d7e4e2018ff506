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
// The backward rungs: test_gpu_backward.cpp.
const kernels::test::LadderCheck ladder{sim::Pass::fwd, "naive", 1.1e9};

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
  ladder.every_rung(p, ladder.options(cache));
}

TEST_CASE("every kernel matches fp64 with seq_kv ≠ seq_q (non-causal), N_q = 1 included", "[gpu][correctness]") {
  const sim::DType dtype = GENERATE(sim::DType::fp32, sim::DType::fp16, sim::DType::bf16);
  const int d = GENERATE(64, 128);
  const auto shape = GENERATE(std::make_pair(1, 1), std::make_pair(1, 17), std::make_pair(1, 2048),
                              std::make_pair(65, 2048), std::make_pair(1000, 17), std::make_pair(129, 1),
                              std::make_pair(64, 63));
  const auto p = problem(2, 2, shape.first, d, false, dtype, shape.second);
  ReferenceCache cache;
  ladder.every_rung(p, ladder.options(cache));
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
  ladder.every_rung(p, ladder.options(cache));
  if (causal) return;
  auto ragged = problem(2, 6, n, d, false, dtype, 300);  // N_kv ≠ N_q
  ragged.kv_heads = kv_heads;
  ladder.every_rung(ragged, ladder.options(cache));
}

TEST_CASE("every kernel matches fp64 where a persistent block walks several tiles (more tiles than SMs)",
          "[gpu][correctness][persistent]") {
  // 36 heads: 144 tiles of 256 rows at d = 64, 288 of 128 at d = 128, so that the
  // Hopper rung's persistent blocks take two or three tiles each; the last head
  // (checked) is a block's second or third. At N = 900 the last row block's last
  // warpgroup has no row below N_q.
  const sim::DType dtype = GENERATE(sim::DType::fp16, sim::DType::bf16);
  const bool causal = GENERATE(false, true);
  const int d = GENERATE(64, 128);
  const sim::i64 n = GENERATE(900, 1024);
  const auto p = problem(4, 9, n, d, causal, dtype);
  ReferenceCache cache;
  ladder.every_rung(p, ladder.options(cache));
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
  ladder.explicit_tiles(p, ladder.options(cache), tiles, {"fa1", "fa2"});
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
