#include "flashlab/kernels/runner/device.hpp"

#include <cstdio>

#include "flashlab/sim/hardware/gpu_topology.hpp"

namespace flashlab::kernels {

std::string cuda_version_string(int v) {
  return std::to_string(v / 1000) + "." + std::to_string((v % 1000) / 10);
}

std::string nvidia_smi_topology() {
  std::string text;
  if (FILE* f = ::popen("nvidia-smi topo -m 2>/dev/null", "r")) {
    char buf[512];
    while (std::fgets(buf, sizeof buf, f)) text += buf;
    ::pclose(f);
  }
  return sim::strip_terminal_escapes(text);
}

sim::HardwareModel simulator_hardware(const DeviceInfo& d) {
  sim::HardwareModel hw;
  hw.name = d.name.empty() ? "device" : d.name;
  hw.display_name = hw.name;
  hw.kind = "measured";
  hw.sram_bytes_per_sm = d.smem_per_sm_bytes > 0 ? d.smem_per_sm_bytes : 228 * 1024;
  hw.max_smem_per_block_bytes = d.smem_optin_bytes;
  hw.sm_count = d.sm_count;
  hw.l2_bytes = d.l2_bytes;
  hw.l2_partitions = sim::l2_partitions_of(d.compute_capability);
  hw.hbm_bytes = d.total_memory_bytes;
  return hw;
}

}  // namespace flashlab::kernels
