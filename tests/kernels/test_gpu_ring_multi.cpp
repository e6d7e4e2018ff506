// The ring over NCCL between real GPUs (one communicator per GPU, one
// process): on every GPU the machine shows (at least 2), the output and the
// gradients equal the single-GPU result and fp64 — causal and not, both
// layouts, grouped-query heads, N not divisible by P. Without 2 GPUs the
// binary reports SKIPPED (exit 77).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include "flashlab/kernels/ring.hpp"
#include "gpu_support.hpp"
#include "ring_support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

namespace {
int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}
}  // namespace

TEST_CASE("ring over NCCL: O, dQ, dK, dV on every GPU equal one GPU and fp64") {
  struct Shape {
    sim::RingLayout layout;
    bool causal;
    sim::i64 heads, kv_heads, seq, d;
    sim::DType dtype;
  };
  using L = sim::RingLayout;
  using T = sim::DType;
  const Shape shape = GENERATE(values<Shape>({
      {L::zigzag, true, 4, 4, 4097, 128, T::bf16},
      {L::contiguous, true, 4, 2, 1999, 64, T::bf16},
      {L::zigzag, false, 3, 1, 1000, 64, T::fp16},
      {L::contiguous, false, 2, 2, 515, 128, T::fp16},
      {L::zigzag, true, 8, 2, 8192, 64, T::bf16},
  }));
  sim::AttentionProblem p = sim::default_ring_problem();
  p.parallel_part().gpus = gpu_count();
  p.parallel_part().layout = shape.layout;
  p.causal = shape.causal;
  p.batch = 1;
  p.heads = shape.heads;
  p.kv_heads = shape.kv_heads;
  p.seq_q = shape.seq;
  p.head_dim = shape.d;
  p.dtype = shape.dtype;
  p.parallel_part().backward = true;
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const std::uint64_t seed = kernels::test::fresh_seed();
  INFO(ring_test::describe(p) << ", " << ring_steps_name(steps) << " steps, seed " << seed);
  ring_test::check_against_one_gpu(p, RingTransport::nccl, seed, steps);
}

TEST_CASE("ring over NCCL: the timed run's transfers overlap the compute") {
  sim::AttentionProblem p = sim::default_ring_problem();
  p.parallel_part().gpus = gpu_count();
  p.parallel_part().layout = sim::RingLayout::zigzag;
  p.causal = true;
  p.batch = 1;
  p.heads = 32;
  p.kv_heads = 8;
  p.seq_q = 32768;
  p.head_dim = 128;
  p.dtype = sim::DType::bf16;
  p.parallel_part().backward = true;
  RingOptions o;
  o.repeats = 3;
  o.check = CheckMode::sampled;
  o.seed = kernels::test::fresh_seed();
  const sim::RingMeasuredRun r = run_ring(p, o);
  INFO(r.reason);
  REQUIRE(r.status == sim::RunStatus::ok);
  CHECK(r.transport == "nccl");
  CHECK(r.rel_error < 2e-2);
  CHECK(r.rel_error_grads < 2e-2);
  // At 32K tokens a GPU's step computes for milliseconds while its K/V
  // package (2·8 heads·16K tokens·128·2 bytes = 64 MiB) crosses NVLink in a
  // fraction of one: were the transfers not overlapped, the compute would wait
  // for all of them (exposed = comm).
  INFO("forward: comm " << r.forward.comm_ms << " ms, exposed " << r.forward.exposed_comm_ms << " ms of "
                        << r.forward.time_ms_median);
  CHECK(r.forward.comm_ms > 0);
  CHECK(r.forward.exposed_comm_ms <= 0.5 * r.forward.comm_ms);
  REQUIRE(r.backward.has_value());
  for (const sim::RingMeasuredStep& s : r.forward.steps)
    if (s.transfer_start_ms >= 0) {
      // The transfer of step s runs beside the compute of step s.
      INFO("gpu " << s.gpu << " step " << s.step);
      CHECK(s.transfer_start_ms < s.compute_end_ms);
    }
}
