// The ring over NCCL between real GPUs, both ways of driving them — one
// process with a communicator per GPU, and a rank per GPU (here threads, each
// with its own rendezvous connection and communicator): on every GPU the
// machine shows (at least 2), the output and the gradients equal the
// single-GPU result and fp64 — causal and not, both layouts, grouped-query
// heads, N not divisible by P, fused and pairwise steps. Without 2 GPUs the
// binary reports SKIPPED (exit 77).
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include <chrono>
#include <memory>
#include <thread>
#include <tuple>
#include <vector>

#include "../support/loopback.hpp"
#include "flashlab/kernels/ring/rendezvous.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "gpu_support.hpp"
#include "ring_support.hpp"
#include "../support/problems.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

namespace {
int gpu_count() {
  int n = 0;
  if (cudaGetDeviceCount(&n) != cudaSuccess) return 0;
  return n;
}
// The shapes both ways of driving the GPUs are tested on: causal and not, both
// layouts, grouped-query heads, N not divisible by P, both dtypes.
struct RingShape {
  sim::RingLayout layout;
  bool causal;
  sim::i64 heads, kv_heads, seq, d;
  sim::DType dtype;
  sim::i64 batch = 1;
};
const std::vector<RingShape> kRingShapes{
    {sim::RingLayout::zigzag, true, 4, 4, 4097, 128, sim::DType::bf16},
    {sim::RingLayout::contiguous, true, 4, 2, 1999, 64, sim::DType::bf16},
    {sim::RingLayout::zigzag, false, 3, 1, 1000, 64, sim::DType::fp16},
    {sim::RingLayout::contiguous, false, 2, 2, 515, 128, sim::DType::fp16},
    {sim::RingLayout::zigzag, true, 8, 2, 8192, 64, sim::DType::bf16},
};

// A training step (forward and backward) of `shape` over the machine's GPUs.
sim::AttentionProblem training_step(const RingShape& shape) {
  return flashlab::test::ring_problem(gpu_count(), shape.layout, shape.batch, shape.heads, shape.kv_heads, shape.seq,
                                      shape.d, shape.causal, shape.dtype);
}
}  // namespace

TEST_CASE("ring over NCCL: O, dQ, dK, dV on every GPU equal one GPU and fp64") {
  const sim::AttentionProblem p = training_step(GENERATE(from_range(kRingShapes)));
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const std::uint64_t seed = kernels::test::fresh_seed();
  INFO(ring_test::describe(p) << ", " << ring_steps_name(steps) << " steps, seed " << seed);
  ring_test::check_against_one_gpu(p, RingTransport::nccl, seed, steps);
}

TEST_CASE("ring over NCCL: the timed run's transfers overlap the compute") {
  sim::AttentionProblem p = flashlab::test::ring_problem(gpu_count(), sim::RingLayout::zigzag, 1, 32, 8, 32768, 128);
  RingOptions o;
  o.repeats = 3;
  o.check = CheckMode::sampled;
  o.seed = kernels::test::fresh_seed();
  const sim::MeasuredRun r = run_ring(p, o);
  INFO(r.reason);
  REQUIRE(r.status == sim::RunStatus::ok);
  CHECK(r.parallel_part().transport == "nccl");
  CHECK(r.rel_error < 2e-2);
  CHECK(r.parallel_part().rel_error_grads < 2e-2);
  // At 32K tokens a GPU's step computes for milliseconds while its K/V
  // package (2·8 heads·16K tokens·128·2 bytes = 64 MiB) crosses NVLink in a
  // fraction of one: were the transfers not overlapped, the compute would wait
  // for all of them (exposed = comm).
  INFO("forward: comm " << r.parallel_part().forward.comm_ms << " ms, exposed " << r.parallel_part().forward.exposed_comm_ms << " ms of "
                        << r.time_ms_median);
  CHECK(r.parallel_part().forward.comm_ms > 0);
  CHECK(r.parallel_part().forward.exposed_comm_ms <= 0.5 * r.parallel_part().forward.comm_ms);
  REQUIRE(r.parallel_part().backward.has_value());
  for (const sim::MeasuredStep& s : r.parallel_part().forward.steps)
    if (s.transfer_start_ms >= 0) {
      // The transfer of step s runs beside the compute of step s.
      INFO("gpu " << s.gpu << " step " << s.step);
      CHECK(s.transfer_start_ms < s.compute_end_ms);
    }
}

// A process per GPU, as a job's ranks run it (RingOptions::group): here the
// ranks are threads of this process, each with its own rendezvous connection
// and NCCL communicator (ncclCommInitRank), so the ranked code runs on the
// real GPUs in every test run; scripts/device-run.sh ranks starts real
// processes with torchrun. Every rank returns the same row; the forward's
// outputs are bit for bit those of one process driving every GPU, the
// gradients equal them to the rounding of the rung's fp32 atomics.
TEST_CASE("ring over NCCL, a process per GPU (ranks as threads): the same row on every rank, the outputs of one "
          "process") {
  // The one-process tests' shapes, and a batch of two over grouped heads.
  std::vector<RingShape> shapes = kRingShapes;
  shapes.push_back({sim::RingLayout::zigzag, true, 8, 2, 4099, 128, sim::DType::bf16, 2});
  const sim::AttentionProblem p = training_step(GENERATE_COPY(from_range(shapes)));
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const int P = p.gpus();
  RingOptions o;
  o.repeats = 3;
  o.check = CheckMode::sampled;
  o.steps = steps;
  o.seed = kernels::test::fresh_seed();
  INFO(ring_test::describe(p) << ", " << ring_steps_name(steps) << " steps, seed " << o.seed);

  RingTensors one;
  const sim::MeasuredRun single = run_ring(p, o, &one);
  INFO("one process: " << sim::to_string(single.status) << " " << single.reason);
  REQUIRE(single.status == sim::RunStatus::ok);

  const flashlab::test::HeldLoopbackPort held;  // until every rank has joined
  const int port = held.port();
  std::vector<sim::MeasuredRun> rows(static_cast<std::size_t>(P));
  std::vector<RingTensors> tensors(static_cast<std::size_t>(P));
  std::vector<std::string> errors(static_cast<std::size_t>(P));
  std::vector<std::thread> ranks;
  for (int r = 0; r < P; ++r)
    ranks.emplace_back([&, r] {
      try {
        std::unique_ptr<RankGroup> g = RankGroup::join(r, P, "127.0.0.1", port, std::chrono::seconds(60));
        RingOptions mine = o;
        mine.group = g.get();
        mine.devices = {r};
        rows[static_cast<std::size_t>(r)] = run_ring(p, mine, &tensors[static_cast<std::size_t>(r)]);
      } catch (const std::exception& e) {
        errors[static_cast<std::size_t>(r)] = e.what();
      }
    });
  for (std::thread& t : ranks) t.join();
  for (int r = 0; r < P; ++r) {
    const sim::MeasuredRun& row = rows[static_cast<std::size_t>(r)];
    INFO("rank " << r << ": " << errors[static_cast<std::size_t>(r)] << sim::to_string(row.status) << " "
                 << row.reason);
    REQUIRE(errors[static_cast<std::size_t>(r)].empty());
    REQUIRE(row.status == sim::RunStatus::ok);
    // The same row on every rank: the errors, the check, every GPU's steps and memory.
    CHECK(row.rel_error == single.rel_error);
    CHECK(row.parallel_part().check_note == single.parallel_part().check_note);
    CHECK(row.rel_error == rows[0].rel_error);
    CHECK(row.parallel_part().rel_error_grads == rows[0].parallel_part().rel_error_grads);
    CHECK(row.time_ms_median == rows[0].time_ms_median);
    REQUIRE(row.parallel_part().backward.has_value());
    CHECK(row.parallel_part().backward->time_ms_median == rows[0].parallel_part().backward->time_ms_median);
    CHECK(row.parallel_part().forward.steps.size() == single.parallel_part().forward.steps.size());
    CHECK(row.parallel_part().backward->timeline.steps.size() == single.parallel_part().backward->timeline.steps.size());
    CHECK(row.parallel_part().peak_allocated_bytes == single.parallel_part().peak_allocated_bytes);
    CHECK(row.parallel_part().peak_device_used_bytes.size() == static_cast<std::size_t>(P));
    // The forward's bits are one process's (comparisons as booleans: a
    // mismatch of a million elements is not printed).
    const RingTensors& t = tensors[static_cast<std::size_t>(r)];
    CHECK((t.q == one.q));
    CHECK((t.k == one.k));
    CHECK((t.o == one.o));
    CHECK((t.lse == one.lse));
    // The backward rung adds dQ (and the ring's dK, dV packages) with fp32
    // atomics, whose order differs from run to run, in one process too: the
    // gradients agree to their rounding, not bit for bit.
    INFO("gradients against fp64: ranks " << row.parallel_part().rel_error_grads << ", one process " << single.parallel_part().rel_error_grads);
    CHECK(row.parallel_part().rel_error_grads == Approx(single.parallel_part().rel_error_grads).epsilon(0.01));
    for (auto [name, a, b] : {std::tuple{"dQ", &t.dq, &one.dq}, std::tuple{"dK", &t.dk, &one.dk},
                              std::tuple{"dV", &t.dv, &one.dv}}) {
      const double diff = ring_test::relative_difference(*a, *b, p.dtype);
      INFO(name << ": ranks against one process " << diff);
      CHECK(diff <= kernels::test::tolerance(p.dtype, single.parallel_part().rel_error_grads));
    }
  }
  for (std::size_t k = 0; k < rows[0].parallel_part().forward.steps.size(); ++k) {
    const sim::MeasuredStep& s = rows[0].parallel_part().forward.steps[k];
    INFO("forward step " << s.step << " of GPU " << s.gpu);
    CHECK(s.gpu == single.parallel_part().forward.steps[k].gpu);
    CHECK(s.step == single.parallel_part().forward.steps[k].step);
    CHECK(s.bytes_received == single.parallel_part().forward.steps[k].bytes_received);
    CHECK(s.compute_end_ms > s.compute_start_ms);
  }
  INFO("forward " << single.time_ms_median << " ms in one process, " << rows[0].time_ms_median
                  << " ms as ranks");
  CHECK(rows[0].time_ms_median > 0);
}
