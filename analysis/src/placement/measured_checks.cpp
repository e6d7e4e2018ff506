#include "flashlab/analysis/placement/measured_checks.hpp"

#include <algorithm>
#include <map>

#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

MeasuredLookup measured_dram(const BenchResults& results, const std::string& origin, const sim::AttentionProblem& p,
                             sim::Algorithm a) {
  MeasuredLookup out;
  const bool any_counters =
      std::any_of(results.rows.begin(), results.rows.end(), [](const BenchRow& r) { return r.has_counters(); });
  std::string note;  // the first counters note of a matching run: why it has none
  for (const BenchRow& row : results.rows) {
    if (pass_of(row) != sim::algorithm_info(a).pass || row.problem != p) continue;
    const auto model = sim::model_algorithm(row);
    if (!model || *model != a) continue;
    if (note.empty() && !row.has_counters() && !row.counters_note.empty()) note = row.kernel + ": " + row.counters_note;
    if (!any_counters) continue;
    MeasuredDram m;
    m.kernel = row.kernel;
    m.tiles = row.tiles;
    m.predicted_read_bytes = row.predicted_dram_read_bytes;
    m.predicted_write_bytes = row.predicted_dram_write_bytes;
    if (row.status == RunStatus::ok && row.time_ms_median > 0) m.time_ms = row.time_ms_median;
    if (row.status != RunStatus::ok) {
      m.why_not = std::string(to_string(row.status)) + (row.reason.empty() ? "" : ": " + row.reason);
    } else if (!row.has_counters()) {
      m.why_not = row.counters_note.empty() ? "no counters in this run" : "no counters: " + row.counters_note;
    } else {
      m.measured = true;
      m.read_bytes = row.dram_read_bytes;
      m.write_bytes = row.dram_write_bytes;
      const DramCheck c = dram_check(row);
      m.has_error = c.available;
      m.error = c.error;
    }
    out.runs.push_back(std::move(m));
  }
  if (!any_counters)
    out.why_none = note.empty() ? "no counters in " + origin : "no counters in " + origin + " (" + note + ")";
  else if (out.runs.empty())
    out.why_none = "no run of this problem";
  return out;
}

const MeasuredDram* first_measured(const MeasuredLookup& m) {
  for (const MeasuredDram& r : m.runs)
    if (r.measured) return &r;
  return nullptr;
}

std::vector<TrainingStepDram> training_step_dram(const MeasuredLookup& forward, const MeasuredLookup& backward,
                                                 const std::function<std::string(const std::string&)>& forward_of) {
  std::vector<TrainingStepDram> out;
  for (const MeasuredDram& b : backward.runs) {
    TrainingStepDram step;
    step.backward = b;
    const std::string partner = forward_of(b.kernel);
    const auto f = std::find_if(forward.runs.begin(), forward.runs.end(),
                                [&](const MeasuredDram& m) { return m.kernel == partner; });
    if (partner.empty()) {
      step.why_not = b.kernel + " has no forward rung";
    } else if (f == forward.runs.end()) {
      step.forward.kernel = partner;
      step.why_not = "no run of " + partner + " (the forward) of this problem";
    } else {
      step.forward = *f;
      if (!f->measured) step.why_not = partner + ": " + f->why_not;
      else if (!b.measured) step.why_not = b.kernel + ": " + b.why_not;
    }
    if (step.why_not.empty()) {
      step.measured = true;
      step.measured_bytes = step.forward.read_bytes + step.forward.write_bytes + b.read_bytes + b.write_bytes;
      const bool predicted = step.forward.predicted_read_bytes >= 0 && step.forward.predicted_write_bytes >= 0 &&
                             b.predicted_read_bytes >= 0 && b.predicted_write_bytes >= 0;
      if (predicted) {
        step.predicted_bytes = step.forward.predicted_read_bytes + step.forward.predicted_write_bytes +
                               b.predicted_read_bytes + b.predicted_write_bytes;
        if (step.measured_bytes > 0) {
          step.has_error = true;
          step.error = static_cast<double>(step.predicted_bytes - step.measured_bytes) /
                       static_cast<double>(step.measured_bytes);
        }
      }
    }
    if (step.forward.time_ms > 0 && b.time_ms > 0) step.time_ms = step.forward.time_ms + b.time_ms;
    out.push_back(std::move(step));
  }
  return out;
}

namespace {

std::string tb_s(double bytes_per_s) { return fixed(bytes_per_s / 1e12, 2) + " TB/s"; }
std::string tflop_s(double f) { return fixed(f / 1e12, 1) + " TFLOP/s"; }

}  // namespace

RoofCheck check_roof(const BenchResults& results, const std::vector<sim::HardwareModel>& presets) {
  RoofCheck out;
  out.gpu = results.meta.gpu;
  const auto hw = results_hardware(results.meta, presets);
  if (!hw) {
    out.why_not = "no datasheet preset matches the GPU '" + results.meta.gpu + "' (" +
                  std::to_string(results.meta.sm_count) + " SMs)";
    return out;
  }
  out.hardware = hw->name;
  const double clock = results.meta.sm_clock_mhz;
  std::map<std::string, int> skipped;
  for (const BenchRow& row : results.rows) {
    if (row.status != RunStatus::ok) {
      ++skipped["not run (" + std::string(to_string(row.status)) + ")"];
      continue;
    }
    if (row.repeats <= 0 || !(row.time_ms_median > 0)) {
      ++skipped["checked only, not timed"];
      continue;
    }
    RoofRun r;
    r.kernel = row.kernel;
    r.problem = row.problem;
    r.time_s = row.time_ms_median * 1e-3;
    r.flops = static_cast<double>(convention_flops(row.problem, pass_of(row)));
    if (row.has_counters()) {
      r.measured_dram = true;
      r.dram_bytes = static_cast<double>(row.dram_read_bytes + row.dram_write_bytes);
    } else {
      const RunModel m = model_of(row, *hw);
      if (!m.result) {
        ++skipped["no counters and no model count (" + m.why_not + ")"];
        continue;
      }
      r.dram_bytes = static_cast<double>(m.result->dram_bytes());
    }
    const double peak = highest_peak(*hw, row.problem.dtype);
    if (!(peak > 0) || !(hw->hbm_bandwidth > 0)) {
      ++skipped["the preset has no " + std::string(sim::to_string(row.problem.dtype)) + " peak or no bandwidth"];
      continue;
    }
    r.compute_s = r.flops / peak;
    r.memory_s = r.dram_bytes / hw->hbm_bandwidth;
    r.bound_s = std::max(r.compute_s, r.memory_s);
    const double peak_at_clock = rate_at_clock(peak, hw->clock_mhz, clock);
    r.bound_at_run_clock_s = std::max(r.flops / std::max(peak, peak_at_clock), r.memory_s);
    if (r.above()) {
      ++out.above;
      const bool compute = r.compute_s >= r.memory_s;
      if (compute) {
        r.cause = tflop_s(r.flops / r.time_s) + " by the convention's FLOPs, above the " + tflop_s(peak) + " peak";
        if (clock > hw->clock_mhz && r.time_s >= r.bound_at_run_clock_s)
          r.cause += ": within the peak at the reported " + fixed(clock, 0) + " MHz SM clock (datasheet " +
                     fixed(hw->clock_mhz, 0) + " MHz)";
        else
          r.cause += ": a FLOP count the kernel does not do, or a peak that is wrong for this GPU";
      } else {
        r.cause = tb_s(r.dram_bytes / r.time_s) + " of " + (r.measured_dram ? "measured" : "predicted") +
                  " DRAM traffic, above the " + tb_s(hw->hbm_bandwidth) + " datasheet bandwidth" +
                  (r.measured_dram ? ": counters that miss traffic, or a bandwidth above the datasheet's"
                                   : ": the model predicts more DRAM bytes than the kernel moves (no counters)");
      }
    }
    out.runs.push_back(std::move(r));
  }
  for (const auto& [why, n] : skipped) out.skipped.push_back(std::to_string(n) + " row(s) left out: " + why);
  return out;
}

}  // namespace flashlab::analysis
