#include "flashlab/analysis/profiles/hardware_compare.hpp"

#include "flashlab/analysis/model/roofline.hpp"

namespace flashlab::analysis {

using sim::ComputeUnit;
using sim::DType;

std::vector<ComparisonRow> compare_hardware(const sim::HardwareModel& a, const sim::HardwareModel& b) {
  std::vector<ComparisonRow> rows;
  auto add = [&](const std::string& figure, const std::string& unit, double va, double vb) {
    if (va > 0 || vb > 0) rows.push_back({figure, unit, va, vb});
  };
  const double KiB = 1024.0, MiB = 1024.0 * 1024.0, GiB = MiB * 1024.0;
  add("SMs", "", static_cast<double>(a.sm_count), static_cast<double>(b.sm_count));
  add("SRAM per SM (M)", "KiB", a.sram_bytes_per_sm / KiB, b.sram_bytes_per_sm / KiB);
  add("shared memory per block", "KiB", a.max_smem_per_block_bytes / KiB, b.max_smem_per_block_bytes / KiB);
  add("L2", "MiB", a.l2_bytes / MiB, b.l2_bytes / MiB);
  add("HBM capacity", "GiB", a.hbm_bytes / GiB, b.hbm_bytes / GiB);
  add("SM clock", "MHz", a.clock_mhz, b.clock_mhz);
  add("HBM bandwidth", "GB/s", a.hbm_bandwidth / 1e9, b.hbm_bandwidth / 1e9);
  add("L2 bandwidth", "GB/s", a.l2_bandwidth / 1e9, b.l2_bandwidth / 1e9);
  add("SRAM bandwidth (all SMs)", "GB/s", a.sram_bandwidth / 1e9, b.sram_bandwidth / 1e9);
  for (DType d : {DType::fp16, DType::bf16, DType::fp32})
    for (ComputeUnit u : {ComputeUnit::tensor_core, ComputeUnit::cuda_core}) {
      std::string name = std::string(sim::to_string(d)) + " " + std::string(sim::to_string(u)) + " peak";
      if (d == DType::fp32 && u == ComputeUnit::tensor_core) name = "tf32 tensor peak";
      add(name, "TFLOP/s", a.peak(d, u) / 1e12, b.peak(d, u) / 1e12);
    }
  const auto ridge = [](const sim::HardwareModel& h, DType d, ComputeUnit u) {
    return ridge_point(h.peak(d, u), h.hbm_bandwidth);
  };
  add("ridge, fp16 tensor / HBM", "FLOP/B", ridge(a, DType::fp16, ComputeUnit::tensor_core),
      ridge(b, DType::fp16, ComputeUnit::tensor_core));
  add("ridge, fp32 cuda / HBM", "FLOP/B", ridge(a, DType::fp32, ComputeUnit::cuda_core),
      ridge(b, DType::fp32, ComputeUnit::cuda_core));
  return rows;
}

}  // namespace flashlab::analysis
