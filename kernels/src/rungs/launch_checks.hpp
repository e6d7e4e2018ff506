// What the tensor-core and Hopper rungs check on the host before a launch,
// written once: a tensor's 16-byte alignment (16-byte copies, tensor maps,
// vector accesses) and the device's opt-in limit of shared memory per block.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/launch/launch.hpp"

namespace flashlab::kernels::detail {

inline bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

// The opt-in limit the caller filled in, else the current device's.
inline int smem_optin_limit(const LaunchArgs& a) {
  if (a.device_smem_optin > 0) return a.device_smem_optin;
  int dev = 0, limit = 0;
  FLASHLAB_CUDA_CHECK(cudaGetDevice(&dev));
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return limit;
}

}  // namespace flashlab::kernels::detail
