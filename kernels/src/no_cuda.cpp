// A build without CUDA: the registry lists the kernels, nothing can run them.
#include "flashlab/kernels/device.hpp"
#include "flashlab/kernels/ring.hpp"
#include "flashlab/kernels/runner.hpp"

namespace flashlab::kernels {

namespace {
const char* const kNoCuda =
    "this build has no CUDA support (configure with nvcc installed, e.g. -DFLASHLAB_CUDA=ON); "
    "`flashlab sim` and `flashlab sweep` model the kernels without a GPU";
}

bool built_with_cuda() { return false; }

std::string cuda_unavailable_reason() { return kNoCuda; }

DeviceInfo query_device(int) { throw CudaError(kNoCuda); }

std::unique_ptr<Backend> open_cuda_backend() { throw NoDevice(kNoCuda); }

std::string ring_unavailable_reason(int, RingTransport, const std::vector<int>&) { return kNoCuda; }

sim::RingMeasuredRun run_ring(const sim::RingProblem& problem, const RingOptions& options, RingTensors*) {
  sim::RingMeasuredRun r;
  r.problem = problem;
  r.transport = std::string(ring_transport_name(options.transport));
  r.status = sim::RunStatus::skipped;
  r.reason = kNoCuda;
  return r;
}

sim::RingRunMeta ring_meta(const RingOptions&, int) { throw NoDevice(kNoCuda); }

}  // namespace flashlab::kernels
