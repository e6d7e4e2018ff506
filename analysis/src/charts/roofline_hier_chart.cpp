// Charts of the roofline analyzer: the hierarchical roofline with measured runs
// on it, and the working-set bandwidth sweep of a measured profile.
#include <algorithm>
#include <cmath>
#include <limits>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/hierarchical_roofline.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

using sim::Level;

// HBM keeps the red of the plain roofline chart; L2 and SMEM take Okabe–Ito colours.
Color level_color(Level l) {
  switch (l) {
    case Level::HBM: return {200, 60, 40, 255};
    case Level::L2: return palette(0);
    case Level::SRAM: return palette(2);
    case Level::none: break;
  }
  return palette(6);
}

MarkerShape level_marker(Level l) {
  switch (l) {
    case Level::HBM: return MarkerShape::circle;
    case Level::L2: return MarkerShape::square;
    case Level::SRAM: return MarkerShape::diamond;
    case Level::none: break;
  }
  return MarkerShape::triangle;
}

std::string flops_text(double f) { return format_tick(f, TickFormat::si) + "FLOP/s"; }
std::string rate_text(const CeilingFlag& f) {
  if (f.compute) return flops_text(f.achieved) + " > " + flops_text(f.limit);
  return format_tick(f.achieved, TickFormat::si) + "B/s > " + format_tick(f.limit, TickFormat::si) + "B/s";
}

constexpr size_t kMaxFlagNotes = 6;
constexpr double kNearCeiling = 0.05;  // ceilings closer than this share one line's place  // more would push the plot off a projector slide

}  // namespace

ChartSpec hierarchical_roofline_chart(const HierarchicalCeilings& c, const Placement& placed, sim::DType dtype) {
  ChartSpec ch;
  ch.id = "roofline-hier";
  ch.title = "Hierarchical roofline — " + c.hardware;
  ch.subtitle = std::string(c.measured ? "measured ceilings (flashlab ceilings)" : "datasheet ceilings") +
                " · points: simulator FLOPs, bytes per level, measured time";
  ch.x = {"arithmetic intensity (FLOP/byte at each level)", Scale::log10, TickFormat::plain, {}, {}, false, "FLOP/byte"};
  ch.y = {"FLOP/s", Scale::log10, TickFormat::si, {}, {}, false, "FLOP/s"};
  ch.legend = LegendPos::bottom_right;
  const sim::ComputeUnit unit = sim::HardwareModel::default_unit(dtype);
  double top = 0, primary = c.peak(dtype, unit), max_bw = 0;
  for (const ComputeCeiling& k : c.compute) top = std::max(top, k.peak);
  for (const MemoryCeiling& m : c.memory) max_bw = std::max(max_bw, m.bandwidth);
  if (primary <= 0) primary = top;
  if (c.memory.empty() || top <= 0) {
    ch.notes.push_back(c.hardware + " has no memory or no compute ceiling: no roofline to draw");
    return ch;
  }

  // The chart's dtype in full (tensor, its mma.sync, CUDA cores) and FP32 CUDA
  // cores always; any other ceiling only when it is not within 5% of one drawn,
  // since near-equal lines print their labels over each other.
  std::vector<const ComputeCeiling*> drawn;
  for (const ComputeCeiling& k : c.compute)
    if (k.dtype == dtype || (k.dtype == sim::DType::fp32 && k.unit == sim::ComputeUnit::cuda_core)) drawn.push_back(&k);
  std::string left_out;
  int left_out_n = 0;
  for (const ComputeCeiling& k : c.compute) {
    if (std::find(drawn.begin(), drawn.end(), &k) != drawn.end()) continue;
    const bool near = std::any_of(drawn.begin(), drawn.end(), [&](const ComputeCeiling* d) {
      return std::abs(d->peak - k.peak) <= kNearCeiling * std::max(d->peak, k.peak);
    });
    if (!near) {
      drawn.push_back(&k);
    } else if (left_out_n++ == 0) {
      left_out = k.label;
    }
  }

  // Compute ceilings start where they meet the steepest (fastest) memory slope.
  for (const ComputeCeiling* kp : drawn) {
    const ComputeCeiling& k = *kp;
    RefLine l;
    l.value = k.peak;
    l.from_x = k.peak / max_bw;
    l.label = k.label;
    const bool is_primary = !k.secondary && k.dtype == dtype && k.unit == unit;
    l.color = is_primary ? Color{200, 60, 40, 255} : k.secondary ? palette(3) : Color{130, 130, 130, 255};
    l.dash = is_primary ? Dash::solid : k.secondary ? Dash::dotted : Dash::dashed;
    l.width = is_primary ? 2.5 : 1.2;
    ch.ref_lines.push_back(l);
  }

  double ai_lo = std::numeric_limits<double>::infinity(), ai_hi = 0;
  for (const MemoryCeiling& m : c.memory) {
    ai_lo = std::min(ai_lo, primary / m.bandwidth);
    ai_hi = std::max(ai_hi, primary / m.bandwidth);
  }
  for (const PlacedRun& r : placed.runs)
    for (const LevelPoint& p : r.levels)
      for (const double ai : {p.ai, p.model_ai})
        if (ai > 0) {
          ai_lo = std::min(ai_lo, ai);
          ai_hi = std::max(ai_hi, ai);
        }
  const double x0 = ai_lo / 8;

  for (const MemoryCeiling& m : c.memory) {
    Series s;
    s.name = m.label;
    s.x = {x0, top / m.bandwidth};
    s.y = {x0 * m.bandwidth, top};
    s.style = SeriesStyle::line;
    s.marker = MarkerShape::none;
    s.color = level_color(m.level);
    s.width = m.level == Level::HBM ? 2.5 : 2.0;
    ch.series.push_back(std::move(s));
  }

  // Each run is a row of points at one FLOP/s: a thin line ties the row together.
  for (const PlacedRun& r : placed.runs) {
    Series row;
    row.name = r.label;
    for (const LevelPoint& p : r.levels)
      if (p.ai > 0) {
        row.x.push_back(p.ai);
        row.y.push_back(r.achieved);
      }
    row.style = SeriesStyle::line;
    row.marker = MarkerShape::none;
    row.dash = Dash::dotted;
    row.width = 1.0;
    row.color = {150, 150, 150, 255};
    row.in_legend = false;
    if (row.x.size() > 1) ch.series.push_back(std::move(row));
  }
  for (const MemoryCeiling& m : c.memory) {
    Series meas, model;
    meas.name = "measured @ " + level_name(m.level);
    model.name = "model @ " + level_name(m.level);
    for (const PlacedRun& r : placed.runs)
      for (const LevelPoint& p : r.levels)
        if (p.level == m.level && p.ai > 0) {
          meas.x.push_back(p.ai);
          meas.y.push_back(r.achieved);
          meas.point_labels.push_back(m.level == Level::HBM ? r.label : "");
          model.x.push_back(p.model_ai);
          model.y.push_back(r.predicted);
        }
    if (meas.x.empty()) continue;
    meas.style = model.style = SeriesStyle::points;
    meas.marker = level_marker(m.level);
    model.marker = MarkerShape::cross;
    meas.color = level_color(m.level);
    model.color = with_alpha(level_color(m.level), 170);
    ch.series.push_back(std::move(meas));
    ch.series.push_back(std::move(model));
  }

  // Flags: marked on the plot and explained below it.
  size_t flags = 0;
  for (const PlacedRun& r : placed.runs)
    for (const CeilingFlag& f : r.flags) {
      Marker mk;
      mk.x = r.levels.empty() ? 1.0 : r.levels.front().ai;
      for (const LevelPoint& p : r.levels)
        if (level_name(p.level) == f.ceiling) mk.x = p.ai;
      mk.y = r.achieved;
      mk.label = "";  // the point's own label names the run; the note says what is wrong
      mk.shape = MarkerShape::cross;
      mk.size = 11;
      ch.markers.push_back(mk);
      if (flags++ < kMaxFlagNotes)
        ch.notes.push_back(r.label + ": above the " + f.ceiling + " ceiling (" + rate_text(f) + "), likely " + f.reason);
    }
  if (flags > kMaxFlagNotes)
    ch.notes.push_back("... and " + std::to_string(flags - kMaxFlagNotes) + " more point(s) above a ceiling");

  ch.x.min = x0;
  ch.x.max = ai_hi * 8;
  for (const std::string& n : c.notes) ch.notes.push_back(n);
  for (const std::string& n : placed.skipped) ch.notes.push_back("left out: " + n);
  if (placed.runs.empty())
    ch.notes.push_back(std::string(kNoRunPlaced) + " (" + why_none_placed(placed) + ")");
  if (left_out_n > 0)
    ch.notes.push_back(std::to_string(left_out_n) + " ceiling(s) within 5% of one drawn are not drawn, e.g. " + left_out);
  ch.notes.push_back("x: FLOPs / bytes per level (HBM: DRAM bytes, the counters' where the run has them, else the L2 "
                     "model's; L2: requests to global memory + the model's L2 re-reads; SMEM: the model's) · y: FLOPs "
                     "/ measured time · crosses: the model's bound at its own bytes");
  return ch;
}

ChartSpec bandwidth_sweep_chart(const sim::MeasuredProfile& p) {
  ChartSpec ch;
  ch.id = "bandwidth-sweep";
  ch.title = "Bandwidth vs working set — " + p.device.name;
  ch.subtitle = "ERT-style sweep by flashlab ceilings (" + (p.mode.empty() ? std::string("?") : p.mode) + ", " +
                (p.date.empty() ? std::string("undated") : p.date) + "): all SMs, 16-byte loads, many passes";
  ch.x = {"working set (bytes)", Scale::log2, TickFormat::binary, {}, {}, false, "bytes"};
  ch.y = {"bandwidth (bytes/s; 1T = 1 TB/s)", Scale::log10, TickFormat::si, {}, {}, false, "bytes/s"};
  ch.legend = LegendPos::bottom_left;
  if (p.sweep.empty()) {
    ch.notes.push_back("this profile has no bandwidth sweep (run `flashlab ceilings` to record one)");
    return ch;
  }
  int k = 0;
  for (const sim::SweepSeries& s : p.sweep) {
    Series ser;
    ser.name = s.loads == "ld.global.cg" ? "ld.global.cg (L2 only)" : s.loads == "ld.global" ? "ld.global (L1 + L2)"
                                                                                           : s.loads;
    for (const sim::SweepPoint& pt : s.points) {
      ser.x.push_back(static_cast<double>(pt.working_set_bytes));
      ser.y.push_back(pt.bandwidth);
    }
    ser.color = palette(k);
    ser.marker = k % 2 ? MarkerShape::square : MarkerShape::circle;
    ch.series.push_back(std::move(ser));
    ++k;
  }
  const Color grey{110, 110, 110, 255};
  if (p.hw.sm_count > 0 && p.hw.sram_bytes_per_sm > 0) {
    const double l1 = static_cast<double>(p.hw.sm_count * p.hw.sram_bytes_per_sm);
    // Unlabelled: on Hopper it sits next to the L2 line; the note names both.
    ch.ref_lines.push_back({true, l1, "", grey, Dash::dotted, 1.2, std::nullopt});
  }
  if (p.hw.l2_bytes > 0)
    ch.ref_lines.push_back({true, static_cast<double>(p.hw.l2_bytes),
                            "L2", grey, Dash::dashed, 1.2,
                            std::nullopt});
  auto ceiling = [&](double bw, const std::string& what, Color col) {
    if (bw > 0) ch.ref_lines.push_back({false, bw, what + " ceiling " + fixed(bw / 1e9, 0) + " GB/s", col, Dash::dashed,
                                        1.2, std::nullopt});
  };
  ceiling(p.hw.hbm_bandwidth, "HBM", level_color(Level::HBM));
  ceiling(p.hw.l2_bandwidth, "L2", level_color(Level::L2));
  ceiling(p.hw.sram_bandwidth, "SMEM", level_color(Level::SRAM));
  ch.notes.push_back("bandwidth: bytes the loads requested / median kernel time; each SM re-reads its share of the "
                     "working set");
  if (p.hw.sm_count > 0 && p.hw.l2_bytes > 0)
    ch.notes.push_back("dotted: SMs x L1 = " + std::to_string(p.hw.sm_count) + " x " +
                       sim::bytes_iec(static_cast<double>(p.hw.sram_bytes_per_sm)) + " (shared memory per SM); dashed: L2 = " +
                       sim::bytes_iec(static_cast<double>(p.hw.l2_bytes)));
  return ch;
}

}  // namespace flashlab::analysis
