#include "flashlab/analysis/hierarchical_roofline.hpp"

#include <algorithm>
#include <map>

#include "flashlab/analysis/chart_builders.hpp"
#include "flashlab/analysis/report.hpp"
#include "flashlab/analysis/roofline.hpp"
#include "flashlab/sim/format.hpp"

namespace flashlab::analysis {

using sim::ComputeUnit;
using sim::DType;
using sim::Level;

namespace {

std::string level_name(Level l) { return l == Level::SRAM ? "SMEM" : std::string(sim::to_string(l)); }

std::string unit_label(DType d, ComputeUnit u) {
  if (d == DType::fp32 && u == ComputeUnit::tensor_core) return "tf32 tensor";
  return std::string(sim::to_string(d)) + " " + std::string(sim::to_string(u));
}

std::string gbs(double bytes_per_s) { return sim::group_digits(static_cast<sim::i64>(bytes_per_s / 1e9 + 0.5)) + " GB/s"; }
std::string tflops(double flops) { return fixed(flops / 1e12, 1) + " TFLOP/s"; }

bool above(double achieved, double limit) { return limit > 0 && achieved > limit * (1 + kAboveCeilingTolerance); }

std::string short_label(const std::string& kernel, const sim::AttentionProblem& p) {
  std::string s = kernel + " N=" + sim::group_digits(p.seq_q) + " d=" + std::to_string(p.head_dim);
  if (p.causal) s += " causal";
  return s;
}

// Why a point can sit above a roof, per ceiling: the model's known gaps
// (docs/model.md §8) first, the clock when the run was faster than the ceilings assume.
std::string level_cause(Level l) {
  switch (l) {
    case Level::HBM:
      return "L2 hits the model does not count: the simulator sends every re-read of K_j, V_j (and of Q_i, O_i in "
             "FA1) to HBM, but thread blocks running at the same time share them through L2 (docs/model.md, section 8)";
    case Level::L2:
      return "L1 or register reuse the model does not count: bytes the model moves through L2 were served on chip";
    case Level::SRAM:
      return "registers: the model puts every on-chip tile in shared memory, but kernels keep S_ij, P_ij and the "
             "O_i accumulator in registers, so fewer bytes cross shared memory than the model counts";
    case Level::none: break;
  }
  return "unknown";
}

std::string level_reason(Level l) {
  switch (l) {
    case Level::HBM: return "L2 hits the model does not count";
    case Level::L2: return "L1 or register reuse the model does not count";
    case Level::SRAM: return "tiles kept in registers, not in shared memory";
    case Level::none: break;
  }
  return "unknown";
}

bool faster_clock(double run_clock_mhz, double ceiling_clock_mhz) {
  return run_clock_mhz > 0 && ceiling_clock_mhz > 0 && run_clock_mhz > ceiling_clock_mhz * (1 + kAboveCeilingTolerance);
}

std::string clock_clause(double run_clock_mhz, double ceiling_clock_mhz) {
  if (faster_clock(run_clock_mhz, ceiling_clock_mhz))
    return "; clocks: the run's SM clock (" + fixed(run_clock_mhz, 0) + " MHz) is above the " +
           fixed(ceiling_clock_mhz, 0) + " MHz the ceilings assume";
  return "";
}

}  // namespace

// ---- ceilings ------------------------------------------------------------------------

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

HierarchicalCeilings hierarchical_ceilings(const MeasuredProfile& p) {
  HierarchicalCeilings c = hierarchical_ceilings(p.hw);
  for (const char* id : {"fp16_mma", "bf16_mma", "tf32_mma"}) {
    const CeilingFigure* f = p.figure(id);
    const FigureSpec* s = find_figure_spec(id);
    if (!f || !s) continue;
    const double top = c.peak(s->dtype, s->unit);
    if (f->value < top * (1 - kAboveCeilingTolerance))
      c.compute.push_back({s->dtype, s->unit, f->value,
                           (s->dtype == DType::fp32 ? std::string("tf32") : std::string(sim::to_string(s->dtype))) +
                               " mma.sync " + tflops(f->value),
                           true});
  }
  return c;
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

LevelBytes level_bytes(const sim::Counters& total) {
  LevelBytes b;
  b.hbm = static_cast<double>(total.level(Level::HBM).bytes());
  b.l2 = b.hbm + static_cast<double>(total.level(Level::L2).bytes());
  b.smem = static_cast<double>(total.level(Level::SRAM).bytes());
  return b;
}

// ---- placing runs ------------------------------------------------------------------------

PlacedRun place_run(const std::string& kernel, const sim::SimResult& r, double time_s, const HierarchicalCeilings& c,
                    double run_clock_mhz) {
  PlacedRun run;
  run.kernel = kernel;
  run.problem = r.problem;
  run.label = short_label(kernel, r.problem);
  run.algorithm = r.algorithm;
  run.unit = sim::HardwareModel::default_unit(r.problem.dtype);
  run.flops = static_cast<double>(exact_flops(r.total));
  run.time_s = time_s;
  run.achieved = time_s > 0 ? run.flops / time_s : 0;
  run.peak = c.peak(r.problem.dtype, run.unit);

  const LevelBytes bytes = level_bytes(r.total);
  run.predicted_time_s = run.peak > 0 ? run.flops / run.peak : 0;
  run.bound = "compute";
  for (const MemoryCeiling& m : c.memory) {
    LevelPoint pt;
    pt.level = m.level;
    pt.bytes = bytes.of(m.level);
    pt.ai = arithmetic_intensity(run.flops, pt.bytes);
    pt.bandwidth = m.bandwidth;
    pt.roof = run.peak > 0 ? attainable_flops(pt.ai, run.peak, m.bandwidth) : pt.ai * m.bandwidth;
    pt.achieved_bandwidth = time_s > 0 ? pt.bytes / time_s : 0;
    run.levels.push_back(pt);
    const double t = pt.bytes / m.bandwidth;
    if (t > run.predicted_time_s) {
      run.predicted_time_s = t;
      run.bound = level_name(m.level);
    }
    if (above(pt.achieved_bandwidth, m.bandwidth))
      run.flags.push_back({level_name(m.level), false, pt.achieved_bandwidth, m.bandwidth, level_reason(m.level),
                           level_cause(m.level) + clock_clause(run_clock_mhz, c.clock_mhz)});
  }
  run.predicted = run.predicted_time_s > 0 ? run.flops / run.predicted_time_s : 0;
  if (above(run.achieved, run.peak)) {
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

Placement place_runs(const BenchResults& results, const sim::HardwareModel& hw, const HierarchicalCeilings& c) {
  Placement out;
  std::map<std::string, int> not_ok;
  for (const BenchRow& row : results.rows) {
    if (row.status != RunStatus::ok || !(row.time_ms_median > 0)) {
      ++not_ok[std::string(to_string(row.status))];
      continue;
    }
    const std::string what = short_label(row.kernel, row.problem) + " " + row.direction;
    if (row.direction != "fwd") {
      out.skipped.push_back(what + ": the simulator models the forward pass only");
      continue;
    }
    const auto algo = algorithm_of_kernel(row.kernel);
    if (!algo) {
      out.skipped.push_back(what + ": no simulator algorithm for kernel '" + row.kernel + "'");
      continue;
    }
    sim::SimOptions opt;
    if (row.tiles.Br > 0 && row.tiles.Bc > 0) opt.tiles = row.tiles;
    sim::SimResult r;
    try {
      r = sim::simulate(*algo, row.problem, hw, opt);
    } catch (const std::exception& e) {
      out.skipped.push_back(what + ": " + e.what());
      continue;
    }
    if (!r.ok()) {
      out.skipped.push_back(what + ": " + (r.errors().empty() ? std::string("not simulated") : r.errors().front()));
      continue;
    }
    out.runs.push_back(place_run(row.kernel, r, row.time_ms_median / 1e3, c, results.meta.sm_clock_mhz));
  }
  for (const auto& [status, n] : not_ok)
    out.skipped.push_back(std::to_string(n) + " run(s) with status " + status + " have no time to place");
  return out;
}

}  // namespace flashlab::analysis
