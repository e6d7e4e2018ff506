// A build without CUDA: the ring says why it cannot run.
#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/kernels/runner/device.hpp"

namespace flashlab::kernels {

std::string ring_unavailable_reason(int, RingTransport, const std::vector<int>&) { return cuda_unavailable_reason(); }

sim::MeasuredRun run_ring(const sim::AttentionProblem& problem, const RingOptions& options, RingTensors*) {
  sim::MeasuredRun r;
  r.problem = problem;
  r.parallel_part().transport = std::string(ring_transport_name(options.transport));
  r.parallel_part().steps = std::string(ring_steps_name(options.steps));
  r.status = sim::RunStatus::skipped;
  r.reason = cuda_unavailable_reason();
  return r;
}

sim::RunMeta ring_meta(const RingOptions&, int, const RankEnvironment*) { throw NoDevice(cuda_unavailable_reason()); }

}  // namespace flashlab::kernels
