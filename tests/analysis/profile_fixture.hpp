// A measured profile as an H100 SXM would give it, for the CPU tests: figures
// of the right order (never zero), two sweeps with L1, L2 and HBM plateaus.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::test {

inline sim::CeilingFigure figure(const std::string& id, double value_in_unit, double median_ms,
                                      double clock_mhz = 0) {
  const sim::FigureSpec* s = sim::find_figure_spec(id);
  sim::CeilingFigure f;
  f.id = id;
  f.value = value_in_unit * sim::unit_scale(s->quantity);
  f.median_ms = median_ms;
  f.min_ms = 0.97 * median_ms;
  f.max_ms = 1.05 * median_ms;
  f.repeats = 20;
  f.work = f.value * median_ms / 1e3;
  f.sm_clock_mhz = clock_mhz;
  f.method = "test fixture: " + id + ", \"quoted\", 16-byte accesses";
  return f;
}

inline sim::MeasuredProfile h100_like_profile() {
  sim::MeasuredProfile p;
  sim::DeviceFacts& d = p.device;
  d.name = "NVIDIA H100 80GB HBM3";
  d.compute_capability = 90;
  d.sm_count = 132;
  d.smem_per_sm_bytes = 233472;
  d.smem_optin_bytes = 232448;
  d.l2_bytes = 52428800;
  d.total_memory_bytes = 85520809984;
  d.max_sm_clock_mhz = 1980;
  d.mem_clock_mhz = 2619;
  d.mem_bus_bits = 5120;
  d.driver = "580.65.06";
  d.cuda_driver = "13.0";
  d.cuda_runtime = "13.0";
  p.figures = {
      figure("hbm_read", 3010, 0.357),        figure("hbm_write", 2900, 0.370),
      figure("hbm_copy", 2750, 0.781),        figure("memcpy_d2d", 2800, 0.767),
      figure("l2_read", 7400, 0.580),         figure("smem_read", 30100, 9.8),
      figure("fp32_fma", 58, 19.6, 1755),     figure("fp16_hfma2", 110, 19.8, 1740),
      figure("bf16_hfma2", 108, 19.9, 1740),  figure("fp16_mma", 570, 20.1, 1650),
      figure("bf16_mma", 560, 20.2, 1650),    figure("tf32_mma", 250, 20.0, 1680),
      figure("fp16_cublas", 770, 1.43, 1620), figure("bf16_cublas", 760, 1.45, 1620),
  };
  for (const char* loads : {"ld.global", "ld.global.cg"}) {
    sim::SweepSeries s;
    s.loads = loads;
    const bool l1 = std::string(loads) == "ld.global";
    for (int k = 10; k <= 32; ++k) {
      const sim::i64 w = sim::i64{1} << k;
      const double gbs = l1 && w <= (20ll << 20) ? 25000 : w <= (40ll << 20) ? 7000 : 3000;
      s.points.push_back({w, gbs * 1e9, 0.2 + 0.01 * k});
    }
    p.sweep.push_back(s);
  }
  p.mode = "full";
  p.date = "2025-11-22T03:00:00Z";
  p.wall_s = 41.5;
  p.commit = "abc123def456";
  p.notes = {"the sweep stopped at 4 GiB"};
  p.hw = sim::hardware_from_measurements(p.device, p.figures, p.date, p.mode);
  return p;
}

// The same GPU measured by a build with the wgmma figures (Hopper's tensor-core
// path): wgmma above cuBLAS, mma.sync well below both.
inline sim::MeasuredProfile hopper_profile_with_wgmma() {
  sim::MeasuredProfile p = h100_like_profile();
  std::vector<sim::CeilingFigure> figures;
  for (const sim::CeilingFigure& f : p.figures) {
    if (f.id == "fp16_cublas") {
      figures.push_back(figure("fp16_wgmma", 880, 20.3, 1650));
      figures.push_back(figure("bf16_wgmma", 870, 20.4, 1650));
    }
    figures.push_back(f);
  }
  p.figures = figures;
  p.hw = sim::hardware_from_measurements(p.device, p.figures, p.date, p.mode);
  return p;
}

}  // namespace flashlab::test
