#include "flashlab/analysis/profiles/profile_report.hpp"

#include <sstream>

#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/profiles/profile_targets.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

using sim::CeilingFigure;
using sim::DeviceFacts;
using sim::FigureSpec;
using sim::MeasuredProfile;
using sim::SweepSeries;

namespace {

std::string in_unit(const FigureSpec& s, double v) {
  return fixed(v / sim::unit_scale(s.quantity), sim::is_bandwidth(s.quantity) ? 0 : 1);
}

}  // namespace

std::string profile_report(const MeasuredProfile& p, const sim::HardwareModel* ds) {
  std::ostringstream out;
  const DeviceFacts& d = p.device;
  out << d.name << ": " << d.sm_count << " SMs, compute capability " << d.compute_capability_text() << ", driver "
      << (d.driver.empty() ? "?" : d.driver) << ", CUDA " << d.cuda_runtime << "; " << (p.mode.empty() ? "?" : p.mode)
      << " run " << p.date << "\n";
  TextTable figures({"figure", "measured", "unit", ds ? "datasheet (" + ds->name + ")" : "datasheet", "ratio",
                     "median ms", "runs", "SM MHz"});
  for (const CeilingFigure& f : p.figures) {
    const FigureSpec* s = sim::find_figure_spec(f.id);
    if (!s) continue;
    const double v = ds ? datasheet_value(*ds, *s).value_or(0.0) : 0.0;  // 0: no datasheet figure
    figures.add({f.id, in_unit(*s, f.value), std::string(sim::unit_of(s->quantity)), v > 0 ? in_unit(*s, v) : "-",
                 v > 0 ? fixed(f.value / v, 2) : "-", fixed(f.median_ms, 3), std::to_string(f.repeats),
                 f.sm_clock_mhz > 0 ? fixed(f.sm_clock_mhz, 0) : "-"});
  }
  out << figures.str();
  if (!ds) out << "no datasheet preset matches " << d.name << ": ratios left out\n";
  TextTable targets({"target", "ratio", "goal", "met", "reference"});
  for (const TargetCheck& c : check_targets(p, ds))
    targets.add({c.name, c.available ? fixed(c.ratio, 3) : "-", fixed(c.goal, 2),
                 c.available ? (c.met ? "yes" : "NO") : "n/a", c.detail});
  out << targets.str();
  if (!p.sweep.empty()) {
    std::vector<std::string> header{"working set"};
    for (const SweepSeries& s : p.sweep) header.push_back(s.loads + " GB/s");
    TextTable sweep(header);
    for (size_t k = 0; k < p.sweep.front().points.size(); ++k) {
      std::vector<std::string> row{
          sim::bytes_iec(static_cast<double>(p.sweep.front().points[k].working_set_bytes))};
      for (const SweepSeries& s : p.sweep) row.push_back(k < s.points.size() ? fixed(s.points[k].bandwidth / 1e9, 0) : "-");
      sweep.add(row);
    }
    out << sweep.str();
  }
  for (const std::string& n : p.notes) out << "note: " << n << "\n";
  return out.str();
}

}  // namespace flashlab::analysis
