// Where a measured run meets the model: the one place that turns a
// measurement (sim::MeasuredRun: times, tiles, the kernel's model) into the
// numbers people compare — TFLOP/s by the convention and exact, GB/s, the
// arithmetic intensity at each memory level, what bounds the model's
// prediction, and the points above a ceiling with their likely cause. The
// bench table, the flat roofline (the HBM slice of the hierarchical one) and
// the hierarchical roofline all read it; nothing else re-simulates a row.
#pragma once

#include <cmath>
#include <map>

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/model/roofline_ceilings.hpp"
#include "flashlab/sim/memory/simulate.hpp"

namespace flashlab::analysis {

// ---- the model of a measured run ------------------------------------------------

// The simulator's counts for a run: its model (the algorithm key the row
// carries) on its problem, with the tiles that ran. A row without tiles (0×0:
// the materialising rungs, PyTorch's kernels) takes the simulator's own choice
// on `hw` (the paper's rule, shrunk to fit M), so that the L2 and SMEM levels
// are those of a tiled model of it. HBM bytes and FLOPs of the materialising
// algorithms do not depend on tiles: when no tile set fits M for them (a head
// dim too large for even 1×1 tiles of FlashAttention-1's working set), they
// are counted with 1×1 tiles on an unbounded SRAM instead of being left out.
// Counts come from the closed forms (equal to the event stream by test).
struct RunModel {
  std::optional<sim::SimResult> result;  // set when the model counted the run
  std::string why_not;                   // otherwise, one line: why not
};
// slot_stagger: with the row's launch of several CTAs per SM, each SM's CTA
// slots walk apart by this fraction of a block's walk (sim::Launch::slot_stagger);
// 0, the prediction: in lockstep.
RunModel model_of(const sim::MeasuredRun& run, const sim::HardwareModel& hw, double slot_stagger = 0);

// The pass a run measured: its direction ("bwd": the backward, else the forward).
sim::Pass pass_of(const sim::MeasuredRun& run);

// ---- rates ----------------------------------------------------------------------

struct RunRates {
  double tflops = 0;        // convention FLOPs of the pass (analysis::convention_flops) / median time
  double tflops_exact = 0;  // the model's FLOPs / median time; 0 without a model count
  double gbps = 0;          // the model's DRAM bytes (after its L2) / median time; 0 without a model count
};
// Rates of a run timed `time_ms` (0 when not timed), the model's counts when given.
RunRates run_rates(const sim::AttentionProblem& p, sim::Pass pass, double time_ms, const sim::SimResult* model);

// A measured run as a bench row: the measurement, its rates from model_of(run,
// hw), and the model's device memory (sim::hbm_footprint_bytes) for every row
// that got past the support checks (not skipped). A timed ok row the model
// cannot count says so in its reason. A row with counters and several CTAs per
// SM is modelled a second time with the slots apart (slots_apart_stagger): its
// apart_dram_* are set when that state differs from lockstep by more than
// kTwoStatesApart.
BenchRow bench_row(const sim::MeasuredRun& run, const sim::HardwareModel& hw);

// A row's DRAM bytes, measured by the counters beside the L2 model's
// prediction. The target is the model's promise for the kind of kernel:
// within 5% for a kernel that writes S and P to memory (its traffic is
// streams of whole tensors), within 15% for a FlashAttention kernel (its
// traffic is L2 reuse between thread blocks).
struct DramCheck {
  bool available = false;      // both measured and predicted
  double measured = 0, predicted = 0;  // read + write bytes
  double error = 0;            // (predicted − measured) / measured
  double target = 0;           // 0.05 or 0.15
  bool within() const { return available && std::abs(error) <= target; }
};
DramCheck dram_check(const BenchRow& row);

// With several CTAs per SM, where the data a head's cohort walks outgrows the
// L2, a kernel settles in one of two states (docs/model.md §7b, "Two CTAs on an
// SM"): its CTA slots in lockstep (the model's prediction) or each SM's slots
// walking apart, slot s started s/c of a block's walk after slot 0 (c CTAs per
// SM: the slots evenly apart; half a walk for two). Which one is decided by the
// kernel's timing (build and shape), not by its launch: the validation scores
// such a row against the state its measurement is nearer.
inline double slots_apart_stagger(i64 ctas_per_sm) {
  return ctas_per_sm > 1 ? 1.0 / static_cast<double>(ctas_per_sm) : 0;
}
// The two states differ when |apart − lockstep| / lockstep (read + write) is above this.
constexpr double kTwoStatesApart = 0.05;
struct DramStates {
  DramCheck lockstep;  // dram_check(row): the prediction
  DramCheck apart;     // available only when the row has the second state (apart_dram_*)
  bool two() const { return lockstep.available && apart.available; }
  bool apart_nearer() const { return two() && std::abs(apart.error) < std::abs(lockstep.error); }
  const DramCheck& scored() const { return apart_nearer() ? apart : lockstep; }
};
DramStates dram_states(const BenchRow& row);
// The error the L2 model is held to: 5% where S and P go through memory, 15% for a flash kernel.
double dram_target(sim::Algorithm a);
BenchResults bench_results(const sim::MeasuredRuns& runs, const sim::HardwareModel& hw);
// A results file placed again against today's model: each row's measurement
// kept, its rates and DRAM prediction recomputed on `hw`.
BenchResults replace_results(const BenchResults& file, const sim::HardwareModel& hw);



// ---- placement on the ceilings --------------------------------------------------

// Bytes through each level for a simulated run. HBM is the DRAM the L2 model
// lets through (misses and written-back lines; the requests when the L2 is not
// modelled). L2 carries every request to global memory (the paper's "HBM
// accesses": on NVIDIA GPUs every global load and store goes through the L2)
// plus the re-reads the model sends to the L2 directly; SMEM is the model's
// tile-granular on-chip traffic.
struct LevelBytes {
  double hbm = 0, l2 = 0, smem = 0;
  double of(sim::Level l) const;
};
LevelBytes level_bytes(const sim::SimResult& r);

struct LevelPoint {
  sim::Level level = sim::Level::HBM;
  double bytes = 0;       // the run's bytes at this level: measured (HBM, with counters) or the model's
  double ai = 0;          // FLOPs / bytes at this level
  double roof = 0;        // min(peak, ai · bandwidth)
  double bandwidth = 0;   // the level's ceiling, bytes/s
  double achieved_bandwidth = 0;  // bytes / measured time
  bool measured = false;  // bytes counted by the GPU's DRAM counters, not predicted
  double model_bytes = 0; // the model's bytes at this level (= bytes unless measured)
  double model_ai = 0;    // FLOPs / model_bytes: where the model's prediction sits
};

// A point above a ceiling and the likely cause, in one sentence.
struct CeilingFlag {
  std::string ceiling;    // "HBM", "L2", "SMEM" or "fp16 tensor"
  bool compute = false;   // a compute ceiling (FLOP/s), else a memory level (bytes/s)
  double achieved = 0, limit = 0;
  std::string reason;     // the likely cause in a few words (chart notes)
  std::string cause;      // the same, explained in a sentence (CLI, GUI tooltips)
};

struct PlacedRun {
  std::string kernel;       // registry id
  std::string label;        // "fa2 N=4096 d=64"
  sim::AttentionProblem problem;
  sim::Algorithm algorithm = sim::Algorithm::fa2;
  sim::ComputeUnit unit = sim::ComputeUnit::tensor_core;
  double flops = 0;         // exact FLOPs of the simulated run (matmul + softmax)
  double time_s = 0;        // measured median
  double achieved = 0;      // flops / time_s
  RunRates rates;           // the row's rates (run_rates), as the bench table prints them
  double peak = 0;          // the unit's compute ceiling
  double predicted_time_s = 0;  // the model's lower bound: the slowest level or compute
  double predicted = 0;         // flops / predicted_time_s
  std::string bound;            // what binds the prediction: "HBM", "L2", "SMEM" or "compute"
  std::vector<LevelPoint> levels;  // one per memory ceiling
  std::vector<CeilingFlag> flags;  // every ceiling the run is above (above_ceiling)
  bool flagged() const { return !flags.empty(); }
  const LevelPoint* level(sim::Level l) const;  // null when the ceilings lack the level
  // Above the flat roofline: over the HBM slope or over the compute peak.
  bool above_flat_roof() const;
};

// One run on the ceilings. run_clock_mhz: the SM clock the run reported
// (BenchMeta), 0 when unknown; used to name clocks as a cause.
// measured_dram_bytes: DRAM read + write counted by the run's counters, when
// it has them (the point's HBM level then sits at the measured bytes; the
// model's prediction keeps its own).
PlacedRun place_run(const std::string& kernel, const sim::SimResult& r, double time_s, const HierarchicalCeilings& c,
                    double run_clock_mhz = 0, std::optional<double> measured_dram_bytes = std::nullopt);

struct Placement {
  std::vector<PlacedRun> runs;
  std::vector<std::string> skipped;  // one line per run left out, with the reason
  // Rows left out because they name no model (files written before rows
  // carried one), by kernel: each a one-line note of the charts.
  std::vector<std::string> without_model;
  int rows = 0;     // the rows looked at
  int untimed = 0;  // successful rows without a time: checked or counted, not timed
  std::map<std::string, int> not_ok;  // rows that did not run to the end, by status (OOM, skipped, failed)
};
// Every successful timed run of a result set, counted by model_of() on `hw`
// (a run whose model is an algorithm of its own pass); a run with DRAM
// counters is placed at its measured DRAM bytes.
Placement place_runs(const BenchResults& results, const sim::HardwareModel& hw, const HierarchicalCeilings& c);
// Why a placement holds no run, in words for a chart's note: what the rows
// lack ("no timed run: ... a dot on the roofline needs a time", "no timed run
// has a model: ..."), never a status they have.
std::string why_none_placed(const Placement& p);

}  // namespace flashlab::analysis
