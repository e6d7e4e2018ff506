// The CUDA device as the host sees it: whether there is one, and what it is.
#include <cuda_runtime_api.h>
#include <dlfcn.h>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/nvml.hpp"

namespace flashlab::kernels {

bool built_with_cuda() { return true; }

std::string cuda_unavailable_reason() {
  int count = 0;
  const cudaError_t e = cudaGetDeviceCount(&count);
  if (e != cudaSuccess) {
    // Without any driver the runtime reports an "insufficient" one; say what is really missing.
    if (void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL)) {
      dlclose(driver);
    } else {
      return std::string("no CUDA device: no NVIDIA driver on this machine (libcuda.so.1 not found; "
                         "cudaGetDeviceCount returned ") +
             cudaGetErrorName(e) + ")";
    }
    return std::string("no CUDA device: cudaGetDeviceCount returned ") + cudaGetErrorName(e) + " (" +
           cudaGetErrorString(e) + ")";
  }
  if (count == 0) return "no CUDA device: cudaGetDeviceCount found 0 devices";
  return {};
}

namespace {

int attribute(cudaDeviceAttr a, int dev) {
  int v = 0;
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&v, a, dev));
  return v;
}

}  // namespace

int visible_gpu_count() {
  int n = 0;
  return cudaGetDeviceCount(&n) == cudaSuccess ? n : 0;
}

DeviceInfo query_device(int ordinal) {
  DeviceInfo info;
  cudaDeviceProp prop{};
  FLASHLAB_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  info.ordinal = ordinal;
  info.name = prop.name;
  info.compute_capability = prop.major * 10 + prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.max_threads_per_block = prop.maxThreadsPerBlock;
  info.smem_optin_bytes = attribute(cudaDevAttrMaxSharedMemoryPerBlockOptin, ordinal);
  info.smem_per_sm_bytes = attribute(cudaDevAttrMaxSharedMemoryPerMultiprocessor, ordinal);
  info.l2_bytes = attribute(cudaDevAttrL2CacheSize, ordinal);
  info.total_memory_bytes = static_cast<i64>(prop.totalGlobalMem);
  info.max_sm_clock_mhz = attribute(cudaDevAttrClockRate, ordinal) / 1000.0;
  info.mem_clock_mhz = attribute(cudaDevAttrMemoryClockRate, ordinal) / 1000.0;
  info.mem_bus_bits = attribute(cudaDevAttrGlobalMemoryBusWidth, ordinal);
  int driver = 0, runtime = 0;
  FLASHLAB_CUDA_CHECK(cudaDriverGetVersion(&driver));
  FLASHLAB_CUDA_CHECK(cudaRuntimeGetVersion(&runtime));
  info.cuda_driver = cuda_version_string(driver);
  info.runtime = cuda_version_string(runtime);
  char pci[64] = {};
  if (cudaDeviceGetPCIBusId(pci, sizeof pci, ordinal) == cudaSuccess) info.pci_bus_id = pci;
  // The NVIDIA driver's own version ("580.65.06"), which lab reports quote;
  // cudaDriverGetVersion only gives the CUDA version the driver supports.
  info.nvidia_driver = Nvml(info.pci_bus_id).driver_version();
  info.driver = info.nvidia_driver.empty() ? "CUDA " + info.cuda_driver
                                           : info.nvidia_driver + " (CUDA " + info.cuda_driver + ")";
  return info;
}

}  // namespace flashlab::kernels
