// NVML, when the machine has it: the driver version and the clocks now. The
// one NVML loader of kernels/ (the device query and the ceilings' clock
// readings). Loaded at run time (dlopen of libnvidia-ml.so.1), so the binaries
// have no link dependency on it and run, without these readings, where it is
// absent. Plain C++; built with CUDA only.
#pragma once

#include <string>

namespace flashlab::kernels {

class Nvml {
 public:
  // pci_bus_id from cudaDeviceGetPCIBusId: NVML and CUDA may number devices differently.
  explicit Nvml(const std::string& pci_bus_id);
  ~Nvml();
  Nvml(const Nvml&) = delete;
  Nvml& operator=(const Nvml&) = delete;

  bool available() const { return device_ != nullptr; }
  std::string driver_version() const;  // "580.65.06"; empty without NVML
  double sm_clock_mhz() const;         // current SM clock; 0 without NVML
  double mem_clock_mhz() const;        // current memory clock; 0 without NVML

 private:
  double clock(int type) const;
  void* lib_ = nullptr;
  void* device_ = nullptr;  // nvmlDevice_t
  // The few entry points used, typed as NVML's public API declares them
  // (nvmlReturn_t is an int-sized enum; 0 is NVML_SUCCESS).
  int (*init_)() = nullptr;
  int (*shutdown_)() = nullptr;
  int (*by_pci_)(const char*, void**) = nullptr;
  int (*clock_info_)(void*, int, unsigned int*) = nullptr;
  int (*driver_)(char*, unsigned int) = nullptr;
};

}  // namespace flashlab::kernels
