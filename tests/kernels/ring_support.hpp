// What the ring's GPU tests share: a run checked against fp64 (the runner's
// full check) and against the same inputs on one GPU (the ring with P = 1,
// contiguous: the rung alone on the whole sequence), with the tolerance rule
// of the kernel ladder taking the single-GPU run's error as the yardstick.
#pragma once

#include <catch2/catch.hpp>

#include <cmath>
#include <sstream>
#include <string>

#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "gpu_support.hpp"

namespace flashlab::kernels::ring_test {

inline std::string describe(const sim::AttentionProblem& p) {
  std::ostringstream s;
  s << "P=" << p.gpus() << " " << sim::ring_layout_name(p.layout()) << (p.causal ? " causal" : "") << " B=" << p.batch
    << " H=" << p.heads << " H_kv=" << p.h_kv() << " N=" << p.seq_q << " d=" << p.head_dim << " "
    << sim::to_string(p.dtype) << (p.backward() ? " fwd+bwd" : " fwd");
  return s.str();
}

// ‖a − b‖_F / ‖b‖_F over two gathered tensors of one dtype.
inline double relative_difference(const std::vector<std::uint16_t>& a, const std::vector<std::uint16_t>& b,
                                  sim::DType t) {
  REQUIRE(a.size() == b.size());
  const std::vector<double> x = to_doubles(a.data(), static_cast<sim::i64>(a.size()), t);
  const std::vector<double> y = to_doubles(b.data(), static_cast<sim::i64>(b.size()), t);
  return error_sums(x, y).relative();
}

inline void check_against_one_gpu(const sim::AttentionProblem& p, RingTransport transport, std::uint64_t seed,
                                  RingSteps steps = RingSteps::fused) {
  RingOptions o;
  o.transport = transport;
  o.steps = steps;
  o.repeats = 0;
  // Every row of every head while the fp64 gradients cost at most ~1.5e10
  // FLOPs on the CPU (12·N²·d per head); beyond, the runner's sampled rows.
  const double full_cost = 12.0 * static_cast<double>(p.seq_q) * static_cast<double>(p.seq_q) *
                           static_cast<double>(p.head_dim) * static_cast<double>(p.batch * p.heads);
  o.check = full_cost <= 1.5e10 ? CheckMode::full : CheckMode::sampled;
  o.check_flop_budget = 3e9;
  o.seed = seed;
  RingTensors ring, one;
  const sim::MeasuredRun r = run_ring(p, o, &ring);
  INFO("ring (" << ring_steps_name(steps) << " steps): " << sim::to_string(r.status) << " " << r.reason << " ("
                << r.parallel_part().check_note << ")");
  REQUIRE(r.status == sim::RunStatus::ok);
  CHECK(r.parallel_part().steps == ring_steps_name(steps));

  sim::AttentionProblem single = p;
  single.parallel_part().gpus = 1;
  single.parallel_part().layout = sim::RingLayout::contiguous;
  RingOptions o1 = o;
  o1.transport = RingTransport::local;
  const sim::MeasuredRun s = run_ring(single, o1, &one);
  INFO("one GPU: " << sim::to_string(s.status) << " " << s.reason);
  REQUIRE(s.status == sim::RunStatus::ok);

  // Against fp64: no worse than the ladder's rule with the one-GPU rung's
  // error as the yardstick (the merge rounds each partial O to the dtype once).
  REQUIRE(r.rel_error >= 0);
  REQUIRE(s.rel_error >= 0);
  INFO("error against fp64: ring " << r.rel_error << ", one GPU " << s.rel_error);
  CHECK(r.rel_error <= kernels::test::tolerance(p.dtype, s.rel_error));
  // The same inputs: the gathered Q, K, V are bit for bit the one-GPU run's.
  CHECK(ring.q == one.q);
  CHECK(ring.k == one.k);
  CHECK(ring.v == one.v);
  const double o_diff = relative_difference(ring.o, one.o, p.dtype);
  INFO("O: ring against one GPU " << o_diff);
  CHECK(o_diff <= kernels::test::tolerance(p.dtype, s.rel_error));
  // The logsumexp: the merge's against the rung's, to fp32 rounding of a few adds.
  REQUIRE(ring.lse.size() == one.lse.size());
  double worst = 0;
  for (std::size_t i = 0; i < ring.lse.size(); ++i)
    worst = std::max(worst, static_cast<double>(std::fabs(ring.lse[i] - one.lse[i])));
  CHECK(worst <= 1e-3);
  if (!p.backward()) return;
  REQUIRE(r.parallel_part().rel_error_grads >= 0);
  REQUIRE(s.parallel_part().rel_error_grads >= 0);
  INFO("gradients against fp64: ring " << r.parallel_part().rel_error_grads << ", one GPU " << s.parallel_part().rel_error_grads);
  CHECK(r.parallel_part().rel_error_grads <= kernels::test::tolerance(p.dtype, s.parallel_part().rel_error_grads));
  for (auto [name, a, b] : {std::tuple{"dQ", &ring.dq, &one.dq}, std::tuple{"dK", &ring.dk, &one.dk},
                            std::tuple{"dV", &ring.dv, &one.dv}}) {
    const double diff = relative_difference(*a, *b, p.dtype);
    INFO(name << ": ring against one GPU " << diff);
    CHECK(diff <= kernels::test::tolerance(p.dtype, s.parallel_part().rel_error_grads));
  }
}

}  // namespace flashlab::kernels::ring_test
