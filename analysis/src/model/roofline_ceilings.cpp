#include "flashlab/analysis/model/roofline_ceilings.hpp"

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

using sim::ComputeUnit;
using sim::DType;
using sim::Level;

namespace {

std::string gbs(double bytes_per_s) { return sim::group_digits(static_cast<sim::i64>(bytes_per_s / 1e9 + 0.5)) + " GB/s"; }
std::string tflops(double flops) { return fixed(flops / 1e12, 1) + " TFLOP/s"; }

}  // namespace

bool above_ceiling(double achieved, double limit) { return limit > 0 && achieved > limit * (1 + kAboveCeilingTolerance); }

std::string level_name(Level l) { return l == Level::SRAM ? "SMEM" : std::string(sim::to_string(l)); }

std::string unit_label(DType d, ComputeUnit u) {
  if (d == DType::fp32 && u == ComputeUnit::tensor_core) return "tf32 tensor";
  return std::string(sim::to_string(d)) + " " + std::string(sim::to_string(u));
}

const MemoryCeiling* HierarchicalCeilings::memory_of(Level l) const {
  for (const MemoryCeiling& m : memory)
    if (m.level == l) return &m;
  return nullptr;
}

double HierarchicalCeilings::peak(DType d, ComputeUnit u) const {
  for (const ComputeCeiling& c : compute)
    if (!c.secondary && c.dtype == d && c.unit == u) return c.peak;
  return 0;
}

HierarchicalCeilings hierarchical_ceilings(const sim::HardwareModel& hw) {
  HierarchicalCeilings c;
  c.hardware = hw.display_name.empty() ? hw.name : hw.display_name;
  c.measured = hw.kind == "measured";
  c.clock_mhz = hw.clock_mhz;
  auto add_level = [&](Level l, double bw) {
    if (bw > 0) c.memory.push_back({l, bw, level_name(l) + " " + gbs(bw)});
  };
  add_level(Level::HBM, hw.hbm_bandwidth);
  add_level(Level::L2, hw.l2_bandwidth);
  add_level(Level::SRAM, hw.sram_bandwidth);
  if (hw.hbm_bandwidth <= 0) c.notes.push_back(hw.name + " gives no HBM bandwidth: no HBM ceiling");
  if (hw.l2_bandwidth <= 0)
    c.notes.push_back(hw.name + " gives no L2 bandwidth (datasheets do not): the L2 level is left out; "
                                "`flashlab ceilings` measures it");
  for (int d = 0; d < sim::kDTypeCount; ++d)
    for (int u = 0; u < sim::kUnitCount; ++u) {
      const double p = hw.peak_flops[static_cast<size_t>(d)][static_cast<size_t>(u)];
      if (p <= 0) continue;
      const auto dt = static_cast<DType>(d);
      const auto un = static_cast<ComputeUnit>(u);
      c.compute.push_back({dt, un, p, unit_label(dt, un) + " " + tflops(p), false});
    }
  return c;
}

namespace {

// The instruction or library behind a tensor-core figure, for the labels: "wgmma", "cuBLAS", "mma.sync".
std::string tensor_source(const std::string& id) {
  auto ends_with = [&](const char* tail) {
    const std::string t(tail);
    return id.size() >= t.size() && id.compare(id.size() - t.size(), t.size(), t) == 0;
  };
  if (ends_with("_wgmma")) return "wgmma";
  if (ends_with("_cublas")) return "cuBLAS";
  if (ends_with("_mma")) return "mma.sync";
  return id;
}

}  // namespace

HierarchicalCeilings hierarchical_ceilings(const sim::MeasuredProfile& p) {
  HierarchicalCeilings c = hierarchical_ceilings(p.hw);
  // A tensor-core roof names the figure that set it (wgmma or cuBLAS on Hopper).
  for (ComputeCeiling& k : c.compute) {
    if (k.unit != ComputeUnit::tensor_core) continue;
    for (const sim::CeilingFigure& f : p.figures) {
      const sim::FigureSpec* s = sim::find_figure_spec(f.id);
      if (s && s->quantity == sim::Quantity::flops && s->dtype == k.dtype && s->unit == k.unit && f.value == k.peak) {
        k.label += " (" + tensor_source(f.id) + ")";
        break;
      }
    }
  }
  // mma.sync, the Ampere path, under a faster roof: drawn beside it, no roof for the guards.
  for (const char* id : {"fp16_mma", "bf16_mma", "tf32_mma"}) {
    const sim::CeilingFigure* f = p.figure(id);
    const sim::FigureSpec* s = sim::find_figure_spec(id);
    if (!f || !s) continue;
    const double top = c.peak(s->dtype, s->unit);
    if (f->value < top * (1 - kAboveCeilingTolerance))
      c.compute.push_back({s->dtype, s->unit, f->value,
                           (s->dtype == DType::fp32 ? std::string("tf32") : std::string(sim::to_string(s->dtype))) +
                               " mma.sync " + tflops(f->value) + " (Ampere path)",
                           true});
  }
  return c;
}

std::shared_ptr<const sim::MeasuredProfile> measured_profile_of(const sim::HardwareModel& hw,
                                                                const std::string& name_or_path) {
  const bool is_path = name_or_path.find('/') != std::string::npos ||
                       (name_or_path.size() > 5 && name_or_path.compare(name_or_path.size() - 5, 5, ".json") == 0);
  if (hw.kind != "measured" || !is_path) return nullptr;
  try {
    return std::make_shared<const sim::MeasuredProfile>(sim::load_profile(name_or_path));
  } catch (const sim::HardwareError&) {
    return nullptr;  // a hardware file of the preset format: its peaks are all there is
  }
}

}  // namespace flashlab::analysis
