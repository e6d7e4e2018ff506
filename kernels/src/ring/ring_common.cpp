// The parts of the ring's interface that every build has, CUDA or not.
#include "flashlab/kernels/ring/ring.hpp"

#include "flashlab/sim/hopper/hopper_pipeline.hpp"

namespace flashlab::kernels {

std::string_view ring_transport_name(RingTransport t) { return t == RingTransport::local ? "local" : "nccl"; }

namespace {

// The Hopper rung when this is Hopper and the rung has the head dim, else the
// mma.sync rung; null when the one chosen is not built.
const KernelInfo* hopper_else(int compute_capability, bool hopper_has_head_dim, const char* hopper,
                              const char* otherwise) {
  if (compute_capability == 90 && hopper_has_head_dim)
    if (const KernelInfo* k = find_kernel(hopper); k && k->built()) return k;
  const KernelInfo* k = find_kernel(otherwise);
  return k && k->built() ? k : nullptr;
}

}  // namespace

const KernelInfo* default_ring_forward(int compute_capability, sim::i64 head_dim) {
  return hopper_else(compute_capability, sim::hopper_config(head_dim).has_value(), "fa3_hopper", "fa2_tc");
}

const KernelInfo* default_ring_backward(int compute_capability, sim::i64 head_dim, bool causal) {
  const bool served = sim::hopper_bwd_config(head_dim, false) && (!causal || sim::hopper_bwd_config(head_dim, true));
  return hopper_else(compute_capability, served, "fa3_hopper_bwd", "fa2_tc_bwd");
}

}  // namespace flashlab::kernels
