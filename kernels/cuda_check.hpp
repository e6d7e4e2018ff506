// Checked CUDA runtime calls for host code (.cu and .cpp alike): a failure
// throws CudaError naming file:line and the call.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "flashlab/kernels/launch.hpp"

namespace flashlab::kernels::detail {

// "kernels/fa2.cu" rather than the absolute path of the build machine.
inline std::string short_path(const char* file) {
  const std::string f(file);
  const auto pos = f.rfind("kernels/");
  return pos == std::string::npos ? f : f.substr(pos);
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  throw CudaError(short_path(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cudaGetErrorName(e) +
                  " (" + cudaGetErrorString(e) + ")");
}

}  // namespace flashlab::kernels::detail

// Every runtime call goes through this.
#define FLASHLAB_CUDA_CHECK(call) ::flashlab::kernels::detail::check_cuda((call), #call, __FILE__, __LINE__)
// After every <<<...>>>: launch-configuration errors surface here, not at the
// next unrelated call.
#define FLASHLAB_LAUNCH_CHECK(name) \
  ::flashlab::kernels::detail::check_cuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
