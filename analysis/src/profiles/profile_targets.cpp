#include "flashlab/analysis/profiles/profile_targets.hpp"

#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/model/report.hpp"

namespace flashlab::analysis {

using sim::CeilingFigure;
using sim::ComputeUnit;
using sim::DType;
using sim::MeasuredProfile;

namespace {

std::string mhz(double v) { return fixed(v, 0) + " MHz"; }

// FP32 FMA lanes per SM by compute capability (CUDA C++ Programming Guide,
// "Arithmetic Instructions" throughput table), for a GPU without a datasheet preset.
int fp32_lanes_per_sm(int cc) {
  if (cc == 60 || (cc >= 70 && cc < 80) || cc == 80) return 64;
  return 128;
}

TargetCheck ratio_check(const std::string& name, const CeilingFigure* m, double reference, double goal,
                        const std::string& detail) {
  TargetCheck t;
  t.name = name;
  t.goal = goal;
  t.detail = detail;
  if (!m || !(reference > 0)) return t;
  t.measured = m->value;
  t.reference = reference;
  t.ratio = m->value / reference;
  t.available = true;
  t.met = t.ratio >= goal;
  return t;
}

}  // namespace

std::vector<TargetCheck> check_targets(const MeasuredProfile& p, const sim::HardwareModel* datasheet) {
  std::vector<TargetCheck> out;
  const CeilingFigure* memcpy = p.figure("memcpy_d2d");
  out.push_back(ratio_check("HBM copy / cudaMemcpy D2D", p.figure("hbm_copy"), memcpy ? memcpy->value : 0,
                            kCopyVsMemcpyGoal, memcpy ? "same run, read + write bytes for both" : "no cudaMemcpy figure"));
  // The tensor-core micro-benchmark against cuBLAS: wgmma where the profile has
  // it (Hopper, the instruction cuBLAS uses there), else mma.sync (the tensor
  // cores' own path before Hopper, and the only one a build without sm_90a has).
  const CeilingFigure* cublas = p.figure("bf16_cublas");
  const CeilingFigure* wgmma = p.figure("bf16_wgmma");
  const std::string same_run = cublas ? "same run" : "no cuBLAS figure";
  if (wgmma)
    out.push_back(ratio_check("bf16 wgmma / cuBLAS bf16 GEMM 8192^3", wgmma, cublas ? cublas->value : 0,
                              kWgmmaVsCublasGoal, same_run));
  else
    out.push_back(ratio_check("bf16 mma.sync / cuBLAS bf16 GEMM 8192^3", p.figure("bf16_mma"),
                              cublas ? cublas->value : 0, kMmaVsCublasGoal,
                              same_run + (p.device.compute_capability == 90 ? "; no wgmma figure in this profile" : "")));
  const CeilingFigure* fma = p.figure("fp32_fma");
  double at_clock = 0;
  std::string detail = "no FMA figure";
  if (fma) {
    const double clock = fma->sm_clock_mhz > 0 ? fma->sm_clock_mhz : p.device.max_sm_clock_mhz;
    const std::string clock_note = fma->sm_clock_mhz > 0 ? "observed" : "max (not observed)";
    const double ds_peak = datasheet ? datasheet->peak(DType::fp32, ComputeUnit::cuda_core) : 0;
    if (ds_peak > 0 && datasheet->clock_mhz > 0) {
      at_clock = rate_at_clock(ds_peak, datasheet->clock_mhz, clock);
      detail = datasheet->name + " " + fixed(ds_peak / 1e12, 1) + " TFLOP/s at " + mhz(datasheet->clock_mhz) +
               ", scaled to the " + clock_note + " " + mhz(clock);
    } else if (p.device.sm_count > 0 && clock > 0) {
      const int lanes = fp32_lanes_per_sm(p.device.compute_capability);
      at_clock = 2.0 * lanes * static_cast<double>(p.device.sm_count) * clock * 1e6;
      detail = std::to_string(p.device.sm_count) + " SMs x " + std::to_string(lanes) + " FP32 lanes x 2 FLOP x " +
               clock_note + " " + mhz(clock) + " (no datasheet preset for this GPU)";
    } else {
      detail = "no clock and no datasheet preset to compare with";
    }
  }
  out.push_back(ratio_check("FP32 FMA / datasheet at the observed clock", fma, at_clock, kFmaVsDatasheetGoal, detail));
  return out;
}

}  // namespace flashlab::analysis
