// A build without CUDA: the links' benchmark says why it cannot run.
#include "flashlab/kernels/links/link_bench.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/runner/runner.hpp"

namespace flashlab::kernels {

std::string link_bench_unavailable_reason(const LinkBenchOptions&) { return cuda_unavailable_reason(); }

sim::LinkMeasurements run_link_bench(const LinkBenchOptions&, const LinkProgress&) {
  throw Unsupported(cuda_unavailable_reason());
}

}  // namespace flashlab::kernels
