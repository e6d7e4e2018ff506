// The CUDA device as the host sees it. Plain C++; without CUDA every query
// says so in one sentence.
#pragma once

#include <string>

#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::kernels {

struct DeviceInfo {
  int ordinal = 0;
  std::string name;            // "NVIDIA H100 80GB HBM3"
  int compute_capability = 0;  // 90
  int sm_count = 0;
  int max_threads_per_block = 0;
  i64 smem_optin_bytes = 0;    // cudaDevAttrMaxSharedMemoryPerBlockOptin
  i64 smem_per_sm_bytes = 0;   // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  i64 l2_bytes = 0;
  i64 total_memory_bytes = 0;
  double max_sm_clock_mhz = 0;  // cudaDevAttrClockRate (the peak, not observed)
  double mem_clock_mhz = 0;     // cudaDevAttrMemoryClockRate
  int mem_bus_bits = 0;         // cudaDevAttrGlobalMemoryBusWidth
  std::string driver;           // "580.65.06 (CUDA 13.0)": NVML when present, cudaDriverGetVersion
  std::string nvidia_driver;    // "580.65.06" (NVML); empty without NVML
  std::string cuda_driver;      // "13.0" (cudaDriverGetVersion)
  std::string runtime;          // "13.0" (cudaRuntimeGetVersion)
  std::string pci_bus_id;       // cudaDeviceGetPCIBusId: how NVML finds the same device

  DeviceLimits limits() const {
    return {compute_capability, smem_optin_bytes, smem_per_sm_bytes, max_threads_per_block};
  }
};

bool built_with_cuda();

// Empty when device 0 can be used; otherwise one line saying why, e.g.
// "this build has no CUDA support ...", "no CUDA device: no NVIDIA driver on
// this machine (...)" or "no CUDA device: cudaGetDeviceCount returned
// cudaErrorNoDevice (no CUDA-capable device is detected)".
std::string cuda_unavailable_reason();

// How many CUDA devices this process sees (CUDA_VISIBLE_DEVICES applied); 0
// without CUDA or a driver.
int visible_gpu_count();

// Device `ordinal` as the CUDA runtime and (when present) NVML describe it:
// the one device query of kernels/ (the runner's backend and the ceilings).
// Throws CudaError; a build without CUDA throws CudaError saying so.
DeviceInfo query_device(int ordinal);

// "13.0" from 13000.
std::string cuda_version_string(int v);

// `nvidia-smi topo -m` as it printed, terminal escapes removed; empty when
// nvidia-smi cannot run here (sim::parse_nvidia_smi_topo reads it). Needs no CUDA.
std::string nvidia_smi_topology();

// The device in the simulator's terms, for placing its runs (the analysis
// library's placement.hpp): M is the shared memory per SM, the capacities are the
// device's; it has no bandwidths or peaks (nothing was measured), so it
// checks tiles and counts bytes, and draws no roofline.
sim::HardwareModel simulator_hardware(const DeviceInfo& d);

}  // namespace flashlab::kernels
