#include "flashlab/kernels/device/nvml.hpp"

#include <dlfcn.h>

namespace flashlab::kernels {

namespace {
constexpr int kNvmlSuccess = 0;
constexpr int kClockSm = 1;   // NVML_CLOCK_SM
constexpr int kClockMem = 2;  // NVML_CLOCK_MEM

template <class F>
bool bind(void* lib, const char* name, F& fn) {
  fn = reinterpret_cast<F>(dlsym(lib, name));
  return fn != nullptr;
}
}  // namespace

Nvml::Nvml(const std::string& pci_bus_id) {
  lib_ = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib_) return;  // no libnvidia-ml.so.1
  if (!bind(lib_, "nvmlInit_v2", init_) || !bind(lib_, "nvmlShutdown", shutdown_) ||
      !bind(lib_, "nvmlDeviceGetHandleByPciBusId_v2", by_pci_) || !bind(lib_, "nvmlDeviceGetClockInfo", clock_info_) ||
      !bind(lib_, "nvmlSystemGetDriverVersion", driver_))
    return;  // a library without the entry points used
  if (init_() != kNvmlSuccess) {
    init_ = nullptr;
    return;
  }
  void* dev = nullptr;
  if (by_pci_(pci_bus_id.c_str(), &dev) != kNvmlSuccess || dev == nullptr) return;  // NVML does not know the device
  device_ = dev;
}

Nvml::~Nvml() {
  if (init_ && shutdown_) shutdown_();
  if (lib_) dlclose(lib_);
}

std::string Nvml::driver_version() const {
  if (!init_ || !driver_) return {};
  char buf[96] = {};
  return driver_(buf, sizeof buf) == kNvmlSuccess ? std::string(buf) : std::string();
}

double Nvml::clock(int type) const {
  if (!device_) return 0;
  unsigned int mhz = 0;
  return clock_info_(device_, type, &mhz) == kNvmlSuccess ? static_cast<double>(mhz) : 0.0;
}

double Nvml::sm_clock_mhz() const { return clock(kClockSm); }
double Nvml::mem_clock_mhz() const { return clock(kClockMem); }

}  // namespace flashlab::kernels
