#include "flashlab/analysis/placement/placement.hpp"

#include <algorithm>
#include <limits>
#include <map>
#include <string_view>

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

using sim::Level;

namespace {

std::string short_label(const std::string& kernel, const sim::AttentionProblem& p) {
  std::string s = kernel + " N=" + sim::group_digits(p.seq_q) + " d=" + std::to_string(p.head_dim);
  if (p.causal) s += " causal";
  return s;
}

// Why a point can sit above a roof, per ceiling: the model's known gaps
// (docs/model.md, sections 7b and 8) first, the clock when the run was faster
// than the ceilings assume. At HBM the point's bytes are DRAM bytes: measured
// by the run's counters, or the L2 model's prediction for its launch.
std::string level_cause(Level l, bool measured) {
  switch (l) {
    case Level::HBM:
      return measured
                 ? "a time or a bandwidth that does not hold: the DRAM bytes are the GPU's own counters, so a run "
                   "above this ceiling ran faster than the ceiling's bandwidth (a clock or a memory faster than the "
                   "preset's, or a timing that misses part of the run)"
                 : "DRAM bytes the L2 model over-predicts: thread blocks of this launch share more through the L2 "
                   "than the model's lockstep cohorts do, or the GPU keeps lines its LRU evicts (docs/model.md, "
                   "section 7b lists the measured points where the model misses)";
    case Level::L2:
      return "L1 or register reuse the model does not count: bytes the model moves through L2 were served on chip";
    case Level::SRAM:
      return "registers: the model puts every on-chip tile in shared memory, but kernels keep S_ij, P_ij and the "
             "O_i accumulator in registers, so fewer bytes cross shared memory than the model counts";
    case Level::none: break;
  }
  return "unknown";
}

std::string level_reason(Level l, bool measured) {
  switch (l) {
    case Level::HBM: return measured ? "a bandwidth or time the ceiling does not allow" : "DRAM the L2 model over-predicts";
    case Level::L2: return "L1 or register reuse the model does not count";
    case Level::SRAM: return "tiles kept in registers, not in shared memory";
    case Level::none: break;
  }
  return "unknown";
}

bool faster_clock(double run_clock_mhz, double ceiling_clock_mhz) {
  return run_clock_mhz > 0 && ceiling_clock_mhz > 0 && above_ceiling(run_clock_mhz, ceiling_clock_mhz);
}

std::string clock_clause(double run_clock_mhz, double ceiling_clock_mhz) {
  if (faster_clock(run_clock_mhz, ceiling_clock_mhz))
    return "; clocks: the run's SM clock (" + fixed(run_clock_mhz, 0) + " MHz) is above the " +
           fixed(ceiling_clock_mhz, 0) + " MHz the ceilings assume";
  return "";
}

std::string first_error(const sim::SimResult& r) {
  return r.errors().empty() ? std::string("not simulated") : r.errors().front();
}

}  // namespace

// ---- the model of a measured run ---------------------------------------------------

namespace {
// Cache accesses the L2 model may spend on one measured run (a results file
// places dozens at once; the model still follows its minimum of heads).
constexpr i64 kPlacementL2AccessBudget = 150'000;
// The tiles a materialising kernel's GEMMs are modelled with: its requests do
// not depend on them; the L2 walk does, weakly.
constexpr sim::TileShape kMaterializingTiles{128, 128};
}  // namespace

sim::Pass pass_of(const sim::MeasuredRun& run) { return run.direction == "bwd" ? sim::Pass::bwd : sim::Pass::fwd; }

RunModel model_of(const sim::MeasuredRun& run, const sim::HardwareModel& hw, double slot_stagger) {
  RunModel m;
  const auto algo = sim::model_algorithm(run);
  if (!algo) {
    m.why_not = "no simulator algorithm for kernel '" + run.kernel + "': " +
                (run.model.empty() ? std::string("the row names no model (written before result rows carried one)")
                                   : "unknown model '" + run.model + "'");
    return m;
  }
  if (sim::algorithm_info(*algo).pass != pass_of(run)) {
    m.why_not = "a " + std::string(pass_of(run) == sim::Pass::bwd ? "backward" : "forward") + " run whose model '" +
                run.model + "' is a " + (pass_of(run) == sim::Pass::bwd ? "forward" : "backward") + " algorithm";
    return m;
  }
  sim::SimOptions opt;
  opt.stream_event_limit = 0;  // closed forms: equal to the event stream by test, and instant
  opt.l2_options.access_budget = kPlacementL2AccessBudget;
  if (run.tiles.Br > 0 && run.tiles.Bc > 0) {
    opt.tiles = run.tiles;
    opt.kernel_tiles = true;  // they ran: the kernel's on-chip storage is what they must fit
  }
  opt.storage = run.storage;
  // The launch that ran, when the row reports it: its occupancy and block order
  // on the hardware's SMs. Otherwise the model's own launch.
  if (run.ctas_per_sm > 0) {
    sim::Launch l;
    l.sm_count = std::max<i64>(1, hw.sm_count);
    l.ctas_per_sm = run.ctas_per_sm;
    l.heaviest_first = run.heaviest_first;
    l.slot_stagger = slot_stagger;
    l.source = run.kernel + "'s occupancy: " + std::to_string(l.sm_count) + " SMs × " + std::to_string(l.ctas_per_sm) +
               " CTA(s) per SM" + (l.heaviest_first ? ", heaviest row block of each head first" : "");
    opt.launch = l;
  }
  try {
    sim::SimResult r = sim::simulate(*algo, run.problem, hw, opt);
    if (!r.ok() && !opt.tiles && sim::algorithm_info(*algo).materializes_scores && sim::validate(run.problem).empty()) {
      // Not tiled in the model's sense: any tiles give the same requests and
      // FLOPs. A GEMM-sized tile keeps the L2 model's walk short.
      sim::SimOptions any = opt;
      any.tiles = kMaterializingTiles;
      any.sram_bytes = std::numeric_limits<sim::i64>::max();
      if (!any.launch) any.launch = sim::model_launch(hw, 0);
      r = sim::simulate(*algo, run.problem, hw, any);
    }
    if (r.ok()) m.result = std::move(r);
    else m.why_not = first_error(r);
  } catch (const std::exception& e) {
    m.why_not = e.what();
  }
  return m;
}

double dram_target(sim::Algorithm a) { return sim::algorithm_info(a).materializes_scores ? 0.05 : 0.15; }

namespace {
// A row's counters against one prediction of its DRAM bytes (-1: none).
DramCheck check_against(const BenchRow& row, i64 predicted_read, i64 predicted_write) {
  DramCheck c;
  const auto algo = sim::model_algorithm(row);
  c.target = algo ? dram_target(*algo) : 0.15;
  if (!row.has_counters() || predicted_read < 0 || predicted_write < 0) return c;
  c.measured = static_cast<double>(row.dram_read_bytes + row.dram_write_bytes);
  c.predicted = static_cast<double>(predicted_read + predicted_write);
  if (!(c.measured > 0)) return c;
  c.available = true;
  c.error = (c.predicted - c.measured) / c.measured;
  return c;
}
}  // namespace

DramCheck dram_check(const BenchRow& row) {
  return check_against(row, row.predicted_dram_read_bytes, row.predicted_dram_write_bytes);
}

DramStates dram_states(const BenchRow& row) {
  DramStates s;
  s.lockstep = dram_check(row);
  s.apart = check_against(row, row.apart_dram_read_bytes, row.apart_dram_write_bytes);
  return s;
}

// ---- rates ---------------------------------------------------------------------------

RunRates run_rates(const sim::AttentionProblem& p, sim::Pass pass, double time_ms, const sim::SimResult* model) {
  RunRates r;
  const double seconds = time_ms * 1e-3;
  if (!(seconds > 0)) return r;
  r.tflops = static_cast<double>(convention_flops(p, pass)) / seconds / 1e12;
  if (model) {
    r.tflops_exact = static_cast<double>(exact_flops(model->total)) / seconds / 1e12;
    r.gbps = static_cast<double>(model->dram_bytes()) / seconds / 1e9;
  }
  return r;
}

namespace {
// The reason a placement gives a row it cannot model; a file placed before
// holds it, and today's model says again whether it still holds.
constexpr std::string_view kNoModelReason = "no simulator count (";
}  // namespace

BenchRow bench_row(const sim::MeasuredRun& run, const sim::HardwareModel& hw) {
  BenchRow row;
  static_cast<sim::MeasuredRun&>(row) = run;
  if (row.reason.rfind(kNoModelReason, 0) == 0) row.reason.clear();
  if (run.status == RunStatus::skipped) return row;
  if (const auto algo = sim::model_algorithm(run)) {
    // What the run holds from its first launch to its last, in the rung's
    // storage types: a forward's HBM tensors; a backward's and those its
    // forward's run left, each once (sim::run_memory_bytes).
    try {
      row.predicted_memory_bytes = sim::run_memory_bytes(*algo, run.problem, run.storage);
    } catch (const std::exception&) {
      row.predicted_memory_bytes = 0;
    }
  }
  if (!(run.time_ms_median > 0) && !run.has_counters()) return row;
  const RunModel model = model_of(run, hw);
  if (model.result && model.result->l2.modelled) {
    const sim::TensorTraffic t = model.result->l2.total();
    row.predicted_dram_read_bytes = t.dram_read_bytes;
    row.predicted_dram_write_bytes = t.dram_write_bytes;
    // The slots apart: a second L2 run, only where a measurement can be placed against it.
    if (run.has_counters() && run.ctas_per_sm > 1) {
      const RunModel apart = model_of(run, hw, slots_apart_stagger(run.ctas_per_sm));
      if (apart.result && apart.result->l2.modelled) {
        const sim::TensorTraffic a = apart.result->l2.total();
        const double lockstep = static_cast<double>(t.dram_read_bytes + t.dram_write_bytes);
        const double other = static_cast<double>(a.dram_read_bytes + a.dram_write_bytes);
        if (lockstep > 0 && std::abs(other - lockstep) > kTwoStatesApart * lockstep) {
          row.apart_dram_read_bytes = a.dram_read_bytes;
          row.apart_dram_write_bytes = a.dram_write_bytes;
        }
      }
    }
  }
  if (!(run.time_ms_median > 0)) return row;
  try {
    const RunRates rates =
        run_rates(run.problem, pass_of(run), run.time_ms_median, model.result ? &*model.result : nullptr);
    row.tflops = rates.tflops;
    row.tflops_exact = rates.tflops_exact;
    row.gbps = rates.gbps;
  } catch (const sim::OverflowError&) {
    // A convention count beyond 64 bits: no rate to give.
  }
  if (!model.result && row.status == RunStatus::ok && row.reason.empty())
    row.reason = std::string(kNoModelReason) + model.why_not + "); GB/s and exact FLOPs not given";
  return row;
}

BenchResults bench_results(const sim::MeasuredRuns& runs, const sim::HardwareModel& hw) {
  BenchResults r;
  r.meta = runs.meta;
  r.rows.reserve(runs.runs.size());
  for (const sim::MeasuredRun& run : runs.runs) r.rows.push_back(bench_row(run, hw));
  return r;
}

BenchResults replace_results(const BenchResults& file, const sim::HardwareModel& hw) {
  sim::MeasuredRuns runs;
  runs.meta = file.meta;
  runs.runs.reserve(file.rows.size());
  for (const BenchRow& row : file.rows) runs.runs.push_back(static_cast<const sim::MeasuredRun&>(row));
  return bench_results(runs, hw);
}

// ---- bytes per level -------------------------------------------------------------------

double LevelBytes::of(Level l) const {
  switch (l) {
    case Level::HBM: return hbm;
    case Level::L2: return l2;
    case Level::SRAM: return smem;
    case Level::none: break;
  }
  return 0;
}

LevelBytes level_bytes(const sim::SimResult& r) {
  LevelBytes b;
  b.hbm = static_cast<double>(r.dram_bytes());
  b.l2 = static_cast<double>(r.total.level(Level::HBM).bytes()) + static_cast<double>(r.total.level(Level::L2).bytes());
  b.smem = static_cast<double>(r.total.level(Level::SRAM).bytes());
  return b;
}

// ---- placing runs ------------------------------------------------------------------------

const LevelPoint* PlacedRun::level(Level l) const {
  for (const LevelPoint& p : levels)
    if (p.level == l) return &p;
  return nullptr;
}

bool PlacedRun::above_flat_roof() const {
  const std::string hbm = level_name(Level::HBM);
  return std::any_of(flags.begin(), flags.end(), [&](const CeilingFlag& f) { return f.compute || f.ceiling == hbm; });
}

namespace {

// place_run with the time in both units as the caller has them: seconds for
// the FLOP/s on the chart, milliseconds (as files store it) for the rates.
PlacedRun place(const std::string& kernel, const sim::SimResult& r, double time_s, double time_ms,
                const HierarchicalCeilings& c, double run_clock_mhz, std::optional<double> measured_dram_bytes) {
  PlacedRun run;
  run.kernel = kernel;
  run.problem = r.problem;
  run.label = short_label(kernel, r.problem);
  run.algorithm = r.algorithm;
  run.unit = sim::HardwareModel::default_unit(r.problem.dtype);
  run.flops = static_cast<double>(exact_flops(r.total));
  run.time_s = time_s;
  run.achieved = time_s > 0 ? run.flops / time_s : 0;
  run.rates = run_rates(r.problem, sim::algorithm_info(r.algorithm).pass, time_ms, &r);
  run.peak = c.peak(r.problem.dtype, run.unit);

  const LevelBytes bytes = level_bytes(r);
  run.predicted_time_s = run.peak > 0 ? run.flops / run.peak : 0;
  run.bound = "compute";
  for (const MemoryCeiling& m : c.memory) {
    LevelPoint pt;
    pt.level = m.level;
    pt.model_bytes = bytes.of(m.level);
    pt.measured = m.level == Level::HBM && measured_dram_bytes && *measured_dram_bytes > 0;
    pt.bytes = pt.measured ? *measured_dram_bytes : pt.model_bytes;
    pt.ai = arithmetic_intensity(run.flops, pt.bytes);
    pt.model_ai = arithmetic_intensity(run.flops, pt.model_bytes);
    pt.bandwidth = m.bandwidth;
    pt.roof = run.peak > 0 ? attainable_flops(pt.ai, run.peak, m.bandwidth) : pt.ai * m.bandwidth;
    pt.achieved_bandwidth = time_s > 0 ? pt.bytes / time_s : 0;
    run.levels.push_back(pt);
    const double t = pt.model_bytes / m.bandwidth;
    if (t > run.predicted_time_s) {
      run.predicted_time_s = t;
      run.bound = level_name(m.level);
    }
    if (above_ceiling(pt.achieved_bandwidth, m.bandwidth))
      run.flags.push_back({level_name(m.level), false, pt.achieved_bandwidth, m.bandwidth,
                           level_reason(m.level, pt.measured),
                           level_cause(m.level, pt.measured) + clock_clause(run_clock_mhz, c.clock_mhz)});
  }
  run.predicted = run.predicted_time_s > 0 ? run.flops / run.predicted_time_s : 0;
  if (above_ceiling(run.achieved, run.peak)) {
    std::string cause = clock_clause(run_clock_mhz, c.clock_mhz);
    if (!cause.empty()) cause = cause.substr(2) + "; or ";  // clocks first when they explain it
    cause += "the FLOP count: the model counts " + sim::group_digits(static_cast<sim::i64>(run.flops)) +
             " exact FLOPs (matmul + softmax of every visited block); a kernel that does less work than that, "
             "or a timing that misses part of the run, lands above the roof";
    if (!c.measured && run_clock_mhz <= 0) cause += "; or clocks above the datasheet's " + fixed(c.clock_mhz, 0) + " MHz";
    run.flags.push_back({unit_label(r.problem.dtype, run.unit), true, run.achieved, run.peak,
                         faster_clock(run_clock_mhz, c.clock_mhz) ? "clocks above the ceilings'" : "the FLOP count",
                         cause});
  }
  return run;
}

}  // namespace

PlacedRun place_run(const std::string& kernel, const sim::SimResult& r, double time_s, const HierarchicalCeilings& c,
                    double run_clock_mhz, std::optional<double> measured_dram_bytes) {
  return place(kernel, r, time_s, time_s * 1e3, c, run_clock_mhz, measured_dram_bytes);
}

Placement place_runs(const BenchResults& results, const sim::HardwareModel& hw, const HierarchicalCeilings& c) {
  Placement out;
  out.rows = static_cast<int>(results.rows.size());
  for (const BenchRow& row : results.rows) {
    if (row.status != RunStatus::ok) {
      ++out.not_ok[std::string(to_string(row.status))];
      continue;
    }
    if (!(row.time_ms_median > 0)) {
      ++out.untimed;
      continue;
    }
    const std::string what = short_label(row.kernel, row.problem) + " " + row.direction;
    if (row.model.empty() &&
        std::find(out.without_model.begin(), out.without_model.end(), row.kernel) == out.without_model.end())
      out.without_model.push_back(row.kernel);
    const RunModel model = model_of(row, hw);
    if (!model.result) {
      out.skipped.push_back(what + ": " + model.why_not);
      continue;
    }
    std::optional<double> measured;
    if (row.has_counters()) measured = static_cast<double>(row.dram_read_bytes + row.dram_write_bytes);
    out.runs.push_back(place(row.kernel, *model.result, row.time_ms_median / 1e3, row.time_ms_median, c,
                             results.meta.sm_clock_mhz, measured));
  }
  if (out.untimed > 0)
    out.skipped.push_back(std::to_string(out.untimed) + " successful run(s) checked or counted, not timed: no time to place");
  for (const auto& [status, n] : out.not_ok)
    out.skipped.push_back(std::to_string(n) + " run(s) with status " + status + " have no time to place");
  return out;
}

std::string why_none_placed(const Placement& p) {
  if (!p.runs.empty()) return "no placed run has a FLOP rate to draw";
  if (p.rows == 0) return "the results hold no rows";
  int not_ok = 0;
  std::string statuses;  // "1 OOM, 11 skipped"
  for (const auto& [status, n] : p.not_ok) {
    not_ok += n;
    statuses += (statuses.empty() ? "" : ", ") + std::to_string(n) + " " + status;
  }
  // Every timed run was left out for want of a model: place_runs lists those reasons first.
  if (p.rows - p.untimed - not_ok > 0)
    return "no timed run has a model" + (p.skipped.empty() ? std::string() : ", e.g. " + p.skipped.front());
  if (p.untimed == 0) return "no timed run: no run succeeded (" + statuses + ")";
  return "no timed run: the results' " + std::to_string(p.untimed) +
         " successful run(s) were checked or counted, not timed, and a dot on the roofline needs a time" +
         (not_ok > 0 ? "; the other " + std::to_string(not_ok) + " did not run (" + statuses + ")" : std::string());
}

}  // namespace flashlab::analysis
