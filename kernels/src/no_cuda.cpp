// A build without CUDA: the registry lists the kernels, nothing can run them.
#include "flashlab/kernels/device.hpp"
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

}  // namespace flashlab::kernels
