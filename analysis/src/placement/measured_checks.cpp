#include "flashlab/analysis/placement/measured_checks.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>
#include <map>

#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/placement/bench_table.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

// A row as MeasuredDram: its counters, and the prediction it carries.
MeasuredDram from_row(const BenchRow& row) {
  MeasuredDram m;
  m.kernel = row.kernel;
  m.problem = row.problem;
  m.pass = pass_of(row);
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
    m.note = dram_note(row);
  }
  return m;
}

i64 both(i64 read, i64 write) { return read >= 0 && write >= 0 ? read + write : -1; }

}  // namespace

i64 MeasuredDram::predicted_bytes() const { return both(predicted_read_bytes, predicted_write_bytes); }
i64 MeasuredDram::file_predicted_bytes() const { return both(file_predicted_read_bytes, file_predicted_write_bytes); }

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
    out.runs.push_back(from_row(row));
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

std::vector<MeasuredDram> measured_runs(const BenchResults& written, const BenchResults& placed) {
  if (written.rows.size() != placed.rows.size())
    throw std::invalid_argument("measured_runs: the placed file has " + std::to_string(placed.rows.size()) +
                                " rows, the written one " + std::to_string(written.rows.size()));
  std::vector<MeasuredDram> out;
  for (size_t i = 0; i < placed.rows.size(); ++i) {
    if (!sim::model_algorithm(placed.rows[i])) continue;
    MeasuredDram m = from_row(placed.rows[i]);
    m.file_predicted_read_bytes = written.rows[i].predicted_dram_read_bytes;
    m.file_predicted_write_bytes = written.rows[i].predicted_dram_write_bytes;
    out.push_back(std::move(m));
  }
  return out;
}

PredictionDrift prediction_drift(const std::vector<MeasuredDram>& runs) {
  PredictionDrift d;
  for (const MeasuredDram& m : runs) {
    const i64 today = m.predicted_bytes(), file = m.file_predicted_bytes();
    if (today < 0 || file < 0) continue;
    ++d.compared;
    if (today == file) continue;
    ++d.differ;
    if (today > 0)
      d.largest = std::max(d.largest, std::abs(static_cast<double>(file - today)) / static_cast<double>(today));
  }
  return d;
}

std::string RungDram::label() const {
  std::string out;
  for (const MeasuredDram& m : parts) out += (out.empty() ? "" : " + ") + m.kernel;
  return out;
}

namespace {

// The sums of a row whose parts are filled: bytes, predictions, error, time.
void sum_parts(RungDram& r) {
  r.measured = r.why_not.empty() && std::all_of(r.parts.begin(), r.parts.end(), [](const MeasuredDram& m) { return m.measured; });
  i64 measured = 0, predicted = 0, file = 0;
  double time_ms = 0;
  for (const MeasuredDram& m : r.parts) {
    measured = measured >= 0 && m.measured ? measured + m.read_bytes + m.write_bytes : -1;
    predicted = predicted >= 0 && m.predicted_bytes() >= 0 ? predicted + m.predicted_bytes() : -1;
    file = file >= 0 && m.file_predicted_bytes() >= 0 ? file + m.file_predicted_bytes() : -1;
    time_ms = time_ms >= 0 && m.time_ms > 0 ? time_ms + m.time_ms : -1;
  }
  if (r.measured) r.measured_bytes = measured;
  r.predicted_bytes = predicted;
  r.file_predicted_bytes = file;
  r.time_ms = time_ms > 0 ? time_ms : 0;
  if (r.measured && predicted >= 0 && measured > 0) {
    r.has_error = true;
    r.error = static_cast<double>(predicted - measured) / static_cast<double>(measured);
  }
  if (!r.measured && r.why_not.empty())
    for (const MeasuredDram& m : r.parts)
      if (!m.measured) {
        r.why_not = m.kernel + ": " + m.why_not;
        break;
      }
}

bool same_launch(const MeasuredDram& a, const MeasuredDram& b) {
  return a.kernel == b.kernel && a.pass == b.pass && a.problem == b.problem && a.tiles.Br == b.tiles.Br &&
         a.tiles.Bc == b.tiles.Bc;
}

}  // namespace

RungDramTable rung_dram(const std::vector<MeasuredDram>& all, sim::PassSelection s, const std::vector<RungPair>& pairs) {
  std::vector<MeasuredDram> runs;
  for (const MeasuredDram& m : all)
    if (std::none_of(runs.begin(), runs.end(), [&](const MeasuredDram& r) { return same_launch(r, m); }))
      runs.push_back(m);
  // Problems in order of first appearance: the rows are grouped by them.
  std::vector<sim::AttentionProblem> problems;
  for (const MeasuredDram& m : runs)
    if (std::find(problems.begin(), problems.end(), m.problem) == problems.end()) problems.push_back(m.problem);

  RungDramTable out;
  std::map<std::string, int> unpaired;  // kernel: runs left out
  std::vector<std::string> unpaired_order;
  auto leave_out = [&](const MeasuredDram& m) {
    if (!unpaired.count(m.kernel)) unpaired_order.push_back(m.kernel);
    ++unpaired[m.kernel];
  };
  for (const sim::AttentionProblem& p : problems) {
    for (const MeasuredDram& m : runs) {
      if (m.problem != p) continue;
      if (s != sim::PassSelection::fwd_bwd) {
        if (!includes(s, m.pass)) continue;
        RungDram r;
        r.problem = p;
        r.parts = {m};
        sum_parts(r);
        out.rows.push_back(std::move(r));
        continue;
      }
      const bool backward = m.pass == sim::Pass::bwd;
      const auto pair = std::find_if(pairs.begin(), pairs.end(), [&](const RungPair& x) {
        return (backward ? x.backward : x.forward) == m.kernel;
      });
      if (pair == pairs.end()) {
        leave_out(m);
        continue;
      }
      const std::string partner = backward ? pair->forward : pair->backward;
      const auto other = std::find_if(runs.begin(), runs.end(), [&](const MeasuredDram& r) {
        return r.kernel == partner && r.problem == p && r.pass != m.pass;
      });
      // A forward run with a backward run of the problem is its part of that row.
      if (!backward && other != runs.end()) continue;
      RungDram r;
      r.problem = p;
      MeasuredDram missing;
      missing.kernel = partner;
      missing.problem = p;
      missing.pass = backward ? sim::Pass::fwd : sim::Pass::bwd;
      missing.why_not = "no run of " + partner + " (the " + (backward ? "forward" : "backward") + ") of this problem";
      if (backward)
        r.parts = {other != runs.end() ? *other : missing, m};
      else
        r.parts = {m, missing};
      if (other == runs.end()) r.why_not = missing.why_not;
      sum_parts(r);
      out.rows.push_back(std::move(r));
    }
  }
  for (const std::string& k : unpaired_order) {
    const bool backward = std::any_of(runs.begin(), runs.end(),
                                      [&](const MeasuredDram& m) { return m.kernel == k && m.pass == sim::Pass::bwd; });
    out.left_out.push_back(k + ": " + (backward ? "no forward rung" : "no backward rung") + " (" +
                           std::to_string(unpaired[k]) + (unpaired[k] == 1 ? " run)" : " runs)"));
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
