// The ring on one GPU: P virtual GPUs whose K/V (and dK/dV) packages travel by
// copies between their buffers (the local transport), so that the ring's own
// arithmetic — the layout, the online-softmax merge through the logsumexp,
// the causal chunk pairs skipped, grouped-query heads, the backward's dK, dV
// coming home — is checked on every device, against fp64 and against the
// single-GPU rung on the same inputs. Fresh inputs every run; outputs
// poisoned before each run and every element checked written (the runner
// does both). The NCCL transport between real GPUs: test_gpu_ring_multi.cpp.
#include <catch2/catch.hpp>

#include <cmath>

#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "gpu_support.hpp"
#include "ring_support.hpp"
#include "../support/problems.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

TEST_CASE("ring on virtual GPUs: O (and dQ, dK, dV) equal fp64 and the single-GPU rung") {
  struct Shape {
    int gpus;
    sim::RingLayout layout;
    bool causal;
    sim::i64 batch, heads, kv_heads, seq, d;
    sim::DType dtype;
    bool backward;
  };
  using L = sim::RingLayout;
  using T = sim::DType;
  // N not a multiple of the chunks or the tiles, a chunk of a few tokens,
  // every layout under the mask, grouped heads, both dtypes and head dims.
  const Shape shape = GENERATE(values<Shape>({
      {2, L::zigzag, true, 1, 2, 2, 1000, 64, T::bf16, true},
      {2, L::contiguous, true, 2, 2, 1, 257, 128, T::fp16, true},
      {3, L::zigzag, true, 1, 4, 2, 1001, 128, T::bf16, true},
      {3, L::contiguous, false, 1, 3, 3, 65, 64, T::fp16, true},
      {4, L::zigzag, false, 1, 2, 1, 200, 64, T::bf16, false},
      {4, L::contiguous, true, 1, 4, 4, 17, 64, T::fp16, false},
      {4, L::zigzag, true, 1, 2, 2, 8, 128, T::fp16, true},  // one token per chunk
      {1, L::zigzag, true, 1, 2, 1, 300, 64, T::bf16, true},   // one GPU, two chunks
      {2, L::zigzag, true, 1, 4, 2, 2048, 128, T::bf16, true},
  }));
  const sim::AttentionProblem p = flashlab::test::ring_problem(
      shape.gpus, shape.layout, shape.batch, shape.heads, shape.kv_heads, shape.seq, shape.d, shape.causal, shape.dtype,
      shape.backward ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd);
  // Both ways of launching a step: the rungs folding and accumulating
  // themselves, and the separate merge and sum kernels.
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const std::uint64_t seed = kernels::test::fresh_seed();
  INFO(ring_test::describe(p) << ", " << ring_steps_name(steps) << " steps, seed " << seed
                              << " (FLASHLAB_TEST_SEED replays it)");
  ring_test::check_against_one_gpu(p, RingTransport::local, seed, steps);
}

TEST_CASE("ring on virtual GPUs: every step of the timeline is there and in order") {
  const sim::AttentionProblem p = flashlab::test::ring_problem(3, sim::RingLayout::zigzag, 1, 4, 2, 3000, 64);
  RingOptions o;
  o.transport = RingTransport::local;
  o.repeats = 3;
  o.warmup = 1;
  o.check = CheckMode::off;
  o.seed = kernels::test::fresh_seed();
  const sim::MeasuredRun r = run_ring(p, o);
  INFO(r.reason);
  REQUIRE(r.status == sim::RunStatus::ok);
  CHECK(r.repeats == 3);
  REQUIRE(r.parallel_part().backward.has_value());
  // Forward: P steps per GPU, transfers on all but the last. Backward: P + 1
  // (the homecoming), transfers on every step but the first... and the first
  // carries K/V.
  CHECK(r.parallel_part().forward.steps.size() == 3u * 3u);
  CHECK(r.parallel_part().backward->timeline.steps.size() == 3u * 4u);
  for (const sim::MeasuredStep& s : r.parallel_part().forward.steps) {
    INFO("forward gpu " << s.gpu << " step " << s.step);
    CHECK(s.compute_end_ms >= s.compute_start_ms);
    CHECK(s.wait_ms >= 0);
    CHECK(s.kv_owner == sim::ring_kv_source(s.gpu, s.step, 3));
    if (s.step < 2) {
      CHECK(s.transfer_end_ms >= s.transfer_start_ms);
      CHECK(s.transfer_start_ms >= 0);
      // K and V of the next owner's two chunks, H_kv heads, bf16.
      CHECK(s.bytes_received > 0);
    } else {
      CHECK(s.transfer_start_ms < 0);
      CHECK(s.bytes_received == 0);
    }
    CHECK(s.compute_end_ms <= r.time_ms_max + 1e-3);
    // The rung's launches are a part of the step's compute, and every GPU's
    // step computes something under the zig-zag layout.
    CHECK(s.rung_ms > 0);
    CHECK(s.rung_ms <= s.compute_end_ms - s.compute_start_ms + 1e-3);
  }
  for (const sim::MeasuredStep& s : r.parallel_part().backward->timeline.steps) {
    INFO("backward gpu " << s.gpu << " step " << s.step);
    CHECK((s.transfer_start_ms >= 0) == true);  // every backward step moves K/V or dK/dV
    if (s.step < 3) CHECK(s.rung_ms > 0);
    else CHECK(s.rung_ms == 0);  // the homecoming launches nothing
  }
  CHECK(r.time_ms_min <= r.time_ms_median);
  CHECK(r.time_ms_median <= r.time_ms_max);
  CHECK(r.parallel_part().forward.comm_ms > 0);
  REQUIRE(r.parallel_part().peak_allocated_bytes.size() == 3u);
  for (sim::i64 b : r.parallel_part().peak_allocated_bytes) CHECK(b > 0);
}

TEST_CASE("ring: what cannot run says why") {
  // d = 96: no Hopper rung and no backward rung is compiled for it; fa2_tc is.
  sim::AttentionProblem p = flashlab::test::ring_problem(2, sim::RingLayout::zigzag, 1, 4, 4, 4096, 96);
  RingOptions o;
  o.transport = RingTransport::local;
  o.repeats = 0;
  // The forward alone runs on the mma.sync rung, on Hopper too.
  p.parallel_part().passes = sim::PassSelection::fwd;
  sim::MeasuredRun r = run_ring(p, o);
  CHECK(r.status == sim::RunStatus::ok);
  CHECK(r.kernel == "fa2_tc");
  // A training step needs a backward rung at d = 96: none, and the row says so.
  p.parallel_part().passes = sim::PassSelection::fwd_bwd;
  r = run_ring(p, o);
  CHECK(r.status == sim::RunStatus::skipped);
  CHECK_THAT(r.reason, Catch::Contains("96"));

  p.head_dim = 64;
  p.kv_heads = 3;  // 4 heads do not split into groups of 3
  r = run_ring(p, o);
  CHECK(r.status == sim::RunStatus::skipped);
  CHECK_FALSE(r.reason.empty());

  p.kv_heads = 4;
  o.mem_limit_bytes = 1 << 20;  // 1 MiB: far below Q, K, V of 4096 tokens
  r = run_ring(p, o);
  CHECK(r.status == sim::RunStatus::oom);
  CHECK_THAT(r.reason, Catch::Contains("GPU"));

  // NCCL never runs two ranks on one GPU.
  CHECK_THAT(ring_unavailable_reason(2, RingTransport::nccl, {0, 0}), Catch::Contains("named twice"));
  CHECK_THAT(ring_unavailable_reason(64, RingTransport::nccl), Catch::Contains("64 GPUs"));
}

TEST_CASE("ring over NCCL on one GPU: the communicator opens and the one-step ring is the rung") {
  const std::string why = ring_unavailable_reason(1, RingTransport::nccl);
  if (!why.empty()) {
    WARN("SKIPPED: " << why);
    return;
  }
  const sim::AttentionProblem p =
      flashlab::test::ring_problem(1, sim::RingLayout::contiguous, 1, 2, 2, 333, 64, true, sim::DType::fp16);
  const std::uint64_t seed = kernels::test::fresh_seed();
  INFO("seed " << seed);
  ring_test::check_against_one_gpu(p, RingTransport::nccl, seed);
}

// Small enough for compute-sanitizer (scripts/device-run.sh ring-sanitize): three
// virtual GPUs, the zig-zag under the mask, grouped heads, both passes, at both
// compiled head dims of the Hopper rung; fused steps (the rungs' folding
// epilogues and gradient accumulators) and pairwise ones (the K/V expansion,
// the merges and the fp32 sums of ring_merge.cu).
TEST_CASE("ring on virtual GPUs: a small ring for the sanitizers", "[ring-sanitize]") {
  const int d = GENERATE(64, 128);
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const sim::AttentionProblem p = flashlab::test::ring_problem(3, sim::RingLayout::zigzag, 1, 2, 1, 300, d);
  RingOptions o;
  o.transport = RingTransport::local;
  o.steps = steps;
  o.repeats = 1;
  o.warmup = 0;
  o.l2_flush = false;
  o.check = CheckMode::full;
  o.seed = kernels::test::fresh_seed();
  const sim::MeasuredRun r = run_ring(p, o);
  INFO(r.reason << " (d " << d << ", " << kernels::ring_steps_name(steps) << " steps)");
  REQUIRE(r.status == sim::RunStatus::ok);
  CHECK(r.rel_error < 2e-2);
  CHECK(r.parallel_part().rel_error_grads < 2e-2);
}
