// Checked CUDA runtime calls for host code (.cu, .cuh and .cpp alike), the one
// helper of kernels/: a failure throws CudaError (or, for the ceilings' driver,
// the error type it names) with file:line, the call and CUDA's own words.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "flashlab/kernels/launch/launch.hpp"

namespace flashlab::kernels::detail {

// "kernels/src/rungs/fa2.cu" rather than the absolute path of the build machine.
inline std::string short_path(const char* file) {
  const std::string f(file);
  const auto pos = f.rfind("kernels/");
  return pos == std::string::npos ? f : f.substr(pos);
}

// "kernels/src/rungs/fa2.cu:42: cudaMalloc(&p, n) failed: cudaErrorMemoryAllocation (out of memory)".
inline std::string failure_message(const char* call, const char* file, int line, const std::string& error) {
  return short_path(file) + ":" + std::to_string(line) + ": " + call + " failed: " + error;
}

template <class Error = CudaError>
inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  throw Error(failure_message(call, file, line, std::string(cudaGetErrorName(e)) + " (" + cudaGetErrorString(e) + ")"));
}

}  // namespace flashlab::kernels::detail

// Every runtime call goes through this.
#define FLASHLAB_CUDA_CHECK(call) ::flashlab::kernels::detail::check_cuda<>((call), #call, __FILE__, __LINE__)
// After every <<<...>>>: launch-configuration errors surface here, not at the
// next unrelated call.
#define FLASHLAB_LAUNCH_CHECK(name) \
  ::flashlab::kernels::detail::check_cuda<>(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
// The same checks throwing `Error` instead of CudaError.
#define FLASHLAB_CUDA_CHECK_AS(Error, call) \
  ::flashlab::kernels::detail::check_cuda<Error>((call), #call, __FILE__, __LINE__)
#define FLASHLAB_LAUNCH_CHECK_AS(Error, name) \
  ::flashlab::kernels::detail::check_cuda<Error>(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
