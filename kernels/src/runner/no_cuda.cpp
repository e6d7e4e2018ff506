// A build without CUDA: the registry lists the kernels, nothing can run them.
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/runner/runner.hpp"

namespace flashlab::kernels {

bool built_with_cuda() { return false; }

std::string cuda_unavailable_reason() {
  return "this build has no CUDA support (configure with nvcc installed, e.g. -DFLASHLAB_CUDA=ON); "
         "`flashlab sim` and `flashlab sweep` model the kernels without a GPU";
}

DeviceInfo query_device(int) { throw CudaError(cuda_unavailable_reason()); }
int visible_gpu_count() { return 0; }

std::unique_ptr<Backend> open_cuda_backend(int) { throw NoDevice(cuda_unavailable_reason()); }

}  // namespace flashlab::kernels
