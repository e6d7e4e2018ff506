// What the tensor-core and Hopper rungs check on the host before a launch,
// written once: a tensor's 16-byte alignment (16-byte copies, tensor maps,
// vector accesses), the device's opt-in limit of shared memory per block, and
// the preparation of a configuration compiled with its tiles.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/cuda_check.hpp"
#include "device/smem_opt_in.hpp"
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

// A compiled configuration in messages: "fa2_tc (d=64, B_r=128, B_c=64)".
template <class Cfg>
std::string config_name(const char* rung) {
  return std::string(rung) + " (d=" + std::to_string(Cfg::kHeadDim) + ", B_r=" + std::to_string(Cfg::kBr) +
         ", B_c=" + std::to_string(Cfg::kBc) + ")";
}

// Before launching `kernel`, compiled for Cfg (its kThreads, kSmemBytes of
// dynamic shared memory): refuse, naming the limit, a device whose opt-in is
// smaller, opt in (per device), and count the resident blocks per SM when the
// caller asks for them.
template <class Cfg, class Kernel>
void prepare_compiled_launch(const LaunchArgs& a, Kernel* kernel, const std::string& who) {
  const std::size_t smem = Cfg::kSmemBytes;
  const int limit = smem_optin_limit(a);
  if (smem > static_cast<std::size_t>(limit))
    throw Unsupported(who + " needs " + std::to_string(smem) + " bytes of shared memory per block; the device allows " +
                      std::to_string(limit) + " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
  opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);  // per device
  if (a.ctas_per_sm != nullptr)
    FLASHLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(a.ctas_per_sm, kernel, Cfg::kThreads, smem));
}

}  // namespace flashlab::kernels::detail
