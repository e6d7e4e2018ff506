// What the Hopper rungs (fa3_hopper.cu, fa3_hopper_bwd.cu) check on the host
// before a launch, written once: the build holds their sm_90a code, the device
// is compute capability 9.0, the configuration's shared memory fits the
// device's opt-in limit, the tensors are 16-byte aligned (tensor maps, vector
// accesses). Each throws Unsupported naming the rung and the limit.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <cstdint>
#include <string>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/rungs/fa3_hopper.hpp"
#include "flashlab/kernels/launch/launch.hpp"
#include "launch_checks.hpp"

namespace flashlab::kernels::detail {

// The current device, once it is known to run the rung's sm_90a code.
inline int require_hopper_device(const char* rung) {
  if (!fa3_hopper_compiled())
    throw Unsupported(std::string(rung) + ": this build has no sm_90a code (its nvcc cannot target sm_90a)");
  int dev = 0, major = 0, minor = 0;
  FLASHLAB_CUDA_CHECK(cudaGetDevice(&dev));
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, dev));
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, dev));
  if (major != 9 || minor != 0)
    throw Unsupported(std::string(rung) + " is sm_90a code (wgmma, setmaxnreg) and runs on compute capability 9.0 "
                      "only; this device has " + std::to_string(major) + "." + std::to_string(minor));
  return dev;
}

// The configuration for head dim d needs `smem` bytes of dynamic shared memory a block.
inline void require_hopper_smem(const LaunchArgs& a, int dev, const char* rung, int head_dim, std::size_t smem) {
  int limit = a.device_smem_optin;
  if (limit <= 0) FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  if (smem > static_cast<std::size_t>(limit))
    throw Unsupported(std::string(rung) + " (d=" + std::to_string(head_dim) + ") needs " + std::to_string(smem) +
                      " bytes of shared memory per block; the device allows " + std::to_string(limit) +
                      " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
}

}  // namespace flashlab::kernels::detail
