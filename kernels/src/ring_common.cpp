// The parts of the ring's interface that every build has, CUDA or not.
#include "flashlab/kernels/ring.hpp"

namespace flashlab::kernels {

std::string_view ring_transport_name(RingTransport t) { return t == RingTransport::local ? "local" : "nccl"; }

const KernelInfo* default_ring_forward(int compute_capability) {
  if (compute_capability == 90)
    if (const KernelInfo* k = find_kernel("fa3_hopper"); k && k->built()) return k;
  const KernelInfo* k = find_kernel("fa2_tc");
  return k && k->built() ? k : nullptr;
}

const KernelInfo* default_ring_backward() {
  const KernelInfo* k = find_kernel("fa2_tc_bwd");
  return k && k->built() ? k : nullptr;
}

}  // namespace flashlab::kernels
