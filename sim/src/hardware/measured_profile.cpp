// The figures `flashlab ceilings` measures, and the hardware model they give.
#include "flashlab/sim/hardware/measured_profile.hpp"

#include <algorithm>
#include <cctype>
#include <sstream>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::sim {

// ---- the figures ----------------------------------------------------------------

const std::vector<FigureSpec>& figure_specs() {
  using Q = Quantity;
  static const std::vector<FigureSpec> specs{
      {"hbm_read", "HBM read", Q::hbm_bandwidth},
      {"hbm_write", "HBM write", Q::hbm_bandwidth},
      {"hbm_copy", "HBM copy (read + write bytes)", Q::hbm_bandwidth},
      {"memcpy_d2d", "cudaMemcpy device to device (read + write bytes)", Q::hbm_bandwidth, DType::fp32,
       ComputeUnit::cuda_core, true},
      {"l2_read", "L2 read (ld.global.cg, warm)", Q::l2_bandwidth},
      {"smem_read", "shared memory read (ld.shared.v4, all SMs)", Q::smem_bandwidth},
      {"fp32_fma", "FP32 FMA, CUDA cores", Q::flops, DType::fp32, ComputeUnit::cuda_core},
      {"fp16_hfma2", "FP16 HFMA2, CUDA cores", Q::flops, DType::fp16, ComputeUnit::cuda_core},
      {"bf16_hfma2", "BF16 HFMA2, CUDA cores", Q::flops, DType::bf16, ComputeUnit::cuda_core},
      {"fp16_mma", "FP16 mma.sync m16n8k16, tensor cores", Q::flops, DType::fp16, ComputeUnit::tensor_core},
      {"bf16_mma", "BF16 mma.sync m16n8k16, tensor cores", Q::flops, DType::bf16, ComputeUnit::tensor_core},
      {"tf32_mma", "TF32 mma.sync m16n8k8, tensor cores", Q::flops, DType::fp32, ComputeUnit::tensor_core},
      // Hopper's own tensor-core path (sm_90a); not measured elsewhere (the profile says why).
      {"fp16_wgmma", "FP16 wgmma m64n256k16, tensor cores (sm_90a)", Q::flops, DType::fp16, ComputeUnit::tensor_core},
      {"bf16_wgmma", "BF16 wgmma m64n256k16, tensor cores (sm_90a)", Q::flops, DType::bf16, ComputeUnit::tensor_core},
      {"fp16_cublas", "cuBLAS GEMM 8192^3 fp16 (fp32 accumulate)", Q::flops, DType::fp16, ComputeUnit::tensor_core,
       true},
      {"bf16_cublas", "cuBLAS GEMM 8192^3 bf16 (fp32 accumulate)", Q::flops, DType::bf16, ComputeUnit::tensor_core,
       true},
  };
  return specs;
}

const FigureSpec* find_figure_spec(std::string_view id) {
  for (const FigureSpec& s : figure_specs())
    if (s.id == id) return &s;
  return nullptr;
}

bool is_bandwidth(Quantity q) { return q != Quantity::flops; }
std::string_view unit_of(Quantity q) { return is_bandwidth(q) ? "GB/s" : "TFLOP/s"; }
double unit_scale(Quantity q) { return is_bandwidth(q) ? 1e9 : 1e12; }

const CeilingFigure* MeasuredProfile::figure(std::string_view id) const {
  for (const CeilingFigure& f : figures)
    if (f.id == id) return &f;
  return nullptr;
}

double DeviceFacts::theoretical_hbm_bandwidth() const {
  // HBM and GDDR transfer on both clock edges: 2 × clock × bus width.
  return mem_clock_mhz > 0 && mem_bus_bits > 0 ? 2.0 * mem_clock_mhz * 1e6 * mem_bus_bits / 8.0 : 0.0;
}

std::string DeviceFacts::compute_capability_text() const {
  return std::to_string(compute_capability / 10) + "." + std::to_string(compute_capability % 10);
}

// ---- a HardwareModel from figures ---------------------------------------------------

namespace {

std::string mhz(double v) { return fixed(v, 0) + " MHz"; }

std::string figure_value(const FigureSpec& s, double v) {
  return fixed(v / unit_scale(s.quantity), is_bandwidth(s.quantity) ? 0 : 1) + " " + std::string(unit_of(s.quantity));
}

// The best figure for one ceiling and the sentence saying where it came from.
struct Best {
  double value = 0;
  std::string id;
  std::vector<std::string> candidates;
};

template <class Pred>
Best best_of(const std::vector<CeilingFigure>& figures, Pred matches) {
  Best b;
  for (const CeilingFigure& f : figures) {
    const FigureSpec* s = find_figure_spec(f.id);
    if (!s || !matches(*s) || !(f.value > 0)) continue;
    b.candidates.push_back(f.id);
    if (f.value > b.value) {
      b.value = f.value;
      b.id = f.id;
    }
  }
  return b;
}

std::string source_line(const std::string& what, const Best& b, const FigureSpec& s) {
  std::string from;
  for (const std::string& c : b.candidates) from += (from.empty() ? "" : ", ") + c;
  return what + " " + figure_value(s, b.value) + " = " + b.id +
         (b.candidates.size() > 1 ? " (the best of " + from + ")" : "");
}

}  // namespace

std::string measured_profile_name(const std::string& gpu_name) {
  std::string out = "measured-";
  bool dash = false;
  for (unsigned char c : gpu_name) {
    if (std::isalnum(c)) {
      if (dash && out.back() != '-') out += '-';
      out += static_cast<char>(c);
      dash = false;
    } else {
      dash = true;
    }
  }
  if (out == "measured-") out += "GPU";
  return out;
}

HardwareModel hardware_from_measurements(const DeviceFacts& d, const std::vector<CeilingFigure>& figures,
                                              const std::string& date, const std::string& mode) {
  const std::string origin = "measured profile of " + (d.name.empty() ? std::string("this GPU") : d.name);
  if (d.sm_count < 1 || d.smem_per_sm_bytes < 1 || d.l2_bytes < 1)
    throw HardwareError(origin + ": the device facts lack the SM count, shared memory per SM or L2 size");
  HardwareModel hw;
  hw.name = measured_profile_name(d.name);
  hw.display_name = d.name + " (measured)";
  hw.kind = "measured";
  hw.sm_count = d.sm_count;
  hw.sram_bytes_per_sm = d.smem_per_sm_bytes;
  hw.max_smem_per_block_bytes = d.smem_optin_bytes;
  hw.l2_bytes = d.l2_bytes;
  hw.l2_partitions = l2_partitions_of(d.compute_capability);
  hw.hbm_bytes = d.total_memory_bytes;

  hw.sources.push_back("measured by flashlab ceilings (" + mode + ") on " + d.name + ", " + date +
                       "; capacities (SMs, shared memory per SM and per block, L2, memory) from the CUDA runtime");
  auto level = [&](Quantity q, const char* what, double& field, bool required) {
    const Best b = best_of(figures, [q](const FigureSpec& s) { return s.quantity == q; });
    if (b.value <= 0) {
      if (required) throw HardwareError(origin + ": no figure measures the " + what);
      return;
    }
    field = b.value;
    hw.sources.push_back(source_line(what, b, *find_figure_spec(b.id)));
  };
  level(Quantity::hbm_bandwidth, "HBM bandwidth", hw.hbm_bandwidth, true);
  level(Quantity::l2_bandwidth, "L2 bandwidth", hw.l2_bandwidth, false);
  level(Quantity::smem_bandwidth, "shared-memory bandwidth (all SMs)", hw.sram_bandwidth, true);

  bool any_peak = false;
  for (int dt = 0; dt < kDTypeCount; ++dt)
    for (int u = 0; u < kUnitCount; ++u) {
      const auto dtype = static_cast<DType>(dt);
      const auto unit = static_cast<ComputeUnit>(u);
      const Best b = best_of(figures, [&](const FigureSpec& s) {
        return s.quantity == Quantity::flops && s.dtype == dtype && s.unit == unit;
      });
      if (b.value <= 0) continue;
      hw.peak_flops[static_cast<size_t>(dt)][static_cast<size_t>(u)] = b.value;
      any_peak = true;
      std::string what = std::string(to_string(dtype)) + " " + std::string(to_string(unit)) + " peak";
      if (dtype == DType::fp32 && unit == ComputeUnit::tensor_core) what = "tf32 tensor peak";
      hw.sources.push_back(source_line(what, b, *find_figure_spec(b.id)));
    }
  if (!any_peak) throw HardwareError(origin + ": no figure measures a compute peak");

  // The clock the compute ceilings held: the FP32 FMA run's, else the highest seen.
  double clock = 0;
  for (const CeilingFigure& f : figures)
    if (f.id == "fp32_fma" && f.sm_clock_mhz > 0) clock = f.sm_clock_mhz;
  if (clock <= 0)
    for (const CeilingFigure& f : figures) clock = std::max(clock, f.sm_clock_mhz);
  hw.clock_mhz = clock > 0 ? clock : d.max_sm_clock_mhz;

  std::ostringstream prov;
  prov << d.name << ", compute capability " << d.compute_capability_text() << ", " << d.sm_count << " SMs; SM clock "
       << (clock > 0 ? mhz(clock) + " observed during the FMA run" : std::string("not observed")) << " (max "
       << mhz(d.max_sm_clock_mhz) << "), memory clock " << mhz(d.mem_clock_mhz) << "; driver "
       << (d.driver.empty() ? std::string("?") : d.driver) << " (CUDA " << d.cuda_driver << "), runtime "
       << d.cuda_runtime << "; flashlab ceilings (" << mode << ") " << date;
  hw.provenance = prov.str();
  return hw;
}

}  // namespace flashlab::sim
