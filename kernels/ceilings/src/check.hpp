// Checked CUDA and cuBLAS calls for the ceilings: a failure throws MeasureError
// naming file:line and the call, so `flashlab ceilings` prints one line and
// exits 2 instead of crashing.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "flashlab/ceilings/ceilings.hpp"

namespace flashlab::ceilings::detail {

// "kernels/ceilings/src/session.cpp" rather than the build machine's absolute path.
inline std::string short_path(const char* file) {
  const std::string f(file);
  const auto pos = f.rfind("kernels/ceilings/");
  return pos == std::string::npos ? f : f.substr(pos);
}

inline void check_cuda(cudaError_t e, const char* call, const char* file, int line) {
  if (e == cudaSuccess) return;
  throw MeasureError(short_path(file) + ":" + std::to_string(line) + ": " + call + " failed: " + cudaGetErrorName(e) +
                     " (" + cudaGetErrorString(e) + ")");
}

}  // namespace flashlab::ceilings::detail

#define CEILINGS_CHECK(call) ::flashlab::ceilings::detail::check_cuda((call), #call, __FILE__, __LINE__)
// After every <<<...>>>: a bad launch configuration surfaces here, at its own line.
#define CEILINGS_LAUNCH_CHECK(name) \
  ::flashlab::ceilings::detail::check_cuda(cudaGetLastError(), "launch of " name, __FILE__, __LINE__)
