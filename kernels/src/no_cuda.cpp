// A build without CUDA: the registry lists the kernels, nothing can run them.
#include "flashlab/kernels/device.hpp"
#include "flashlab/kernels/link_bench.hpp"
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
int visible_gpu_count() { return 0; }

std::unique_ptr<Backend> open_cuda_backend(int) { throw NoDevice(kNoCuda); }

std::string ring_unavailable_reason(int, RingTransport, const std::vector<int>&) { return kNoCuda; }

sim::RingMeasuredRun run_ring(const sim::AttentionProblem& problem, const RingOptions& options, RingTensors*) {
  sim::RingMeasuredRun r;
  r.problem = problem;
  r.transport = std::string(ring_transport_name(options.transport));
  r.steps = std::string(ring_steps_name(options.steps));
  r.status = sim::RunStatus::skipped;
  r.reason = kNoCuda;
  return r;
}

sim::RingRunMeta ring_meta(const RingOptions&, int, const RankEnvironment*) { throw NoDevice(kNoCuda); }

std::string link_bench_unavailable_reason(const LinkBenchOptions&) { return kNoCuda; }

sim::LinkMeasurements run_link_bench(const LinkBenchOptions&, const LinkProgress&) { throw Unsupported(kNoCuda); }

}  // namespace flashlab::kernels
