// A kernel's dynamic shared-memory opt-in, per device. cudaFuncSetAttribute
// (cudaFuncAttributeMaxDynamicSharedMemorySize) holds for the device that is
// current when it is called: a kernel opted in on GPU 0 launches on GPU 1 with
// the 48 KiB default and fails with cudaErrorInvalidValue. So the record of
// what was granted is keyed by (device, kernel), and every rung asks here
// before a launch above 48 KiB. Asked once per pair: host work between the
// timing events and a launch would be timed as GPU idle.
#pragma once

#include <cuda_runtime_api.h>

#include <cstddef>
#include <map>
#include <mutex>
#include <utility>

#include "cuda_check.hpp"

namespace flashlab::kernels::detail {

// The device the calling thread's CUDA calls go to.
inline int current_device() {
  int dev = 0;
  FLASHLAB_CUDA_CHECK(cudaGetDevice(&dev));
  return dev;
}

// Raises `kernel`'s dynamic shared-memory limit on the current device to at
// least `bytes` (nothing to do at or below the 48 KiB default).
inline void opt_in_dynamic_smem(const void* kernel, std::size_t bytes) {
  constexpr std::size_t kDefault = 48 * 1024;
  if (bytes <= kDefault) return;
  static std::mutex m;
  static std::map<std::pair<int, const void*>, std::size_t> granted;  // (device, kernel) → bytes
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(m);
  std::size_t& g = granted[{dev, kernel}];
  if (bytes <= g) return;
  FLASHLAB_CUDA_CHECK(cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(bytes)));
  g = bytes;
}

}  // namespace flashlab::kernels::detail
