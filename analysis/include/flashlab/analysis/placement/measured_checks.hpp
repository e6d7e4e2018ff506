// Measured runs read against the model, one question at a time: which runs of
// a results file measured the problem being compared (and what their counters
// saw reach DRAM), and whether any run finished faster than the roofline of
// the GPU it ran on allows. Plain data; the CLI prints it, the tests hold it.
#pragma once

#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/problem/pass.hpp"

namespace flashlab::analysis {

// ---- the runs of one problem under one model --------------------------------------

// One kernel's run of a problem: its DRAM bytes as the counters saw them
// beside the model's prediction for the launch that ran (written back during
// the run, as the counters see it).
struct MeasuredDram {
  std::string kernel;
  sim::AttentionProblem problem;
  sim::Pass pass = sim::Pass::fwd;
  sim::TileShape tiles;      // what ran (0×0: not tiled, or not reported)
  bool measured = false;     // the row has counters
  i64 read_bytes = -1, write_bytes = -1;                      // measured
  i64 predicted_read_bytes = -1, predicted_write_bytes = -1;  // the model, for this launch (the row's predicted_dram_*)
  // The prediction the file itself holds for the run, when the row was placed
  // again with today's model (measured_runs); -1: none written, or not placed again.
  i64 file_predicted_read_bytes = -1, file_predicted_write_bytes = -1;
  double error = 0;          // (predicted − measured) / measured, when both
  bool has_error = false;
  std::string why_not;       // when not measured: the row's status and reason, or its counters note
  std::string note;          // an assumption of the prediction (dram_note: a field the file does not record)
  double time_ms = 0;        // the run's median time (0: not timed)

  i64 predicted_bytes() const;       // read + write; -1 when not predicted
  i64 file_predicted_bytes() const;  // read + write; -1 when the file has none
};

struct MeasuredLookup {
  std::vector<MeasuredDram> runs;  // every kernel whose model is the algorithm, in file order
  std::string why_none;            // when runs is empty: "no counters in FILE" or "no run of this problem"
};

// The forward runs of `results` (read from `origin`) of exactly problem `p`
// whose kernel's model is `a`. Several kernels may share a model (naive and
// naive_cublas: standard; fa2 and fa2_tc: fa2): each is its own entry. A file
// without any counter column gives no runs and why_none "no counters in
// ORIGIN"; a file with counters but no such run, "no run of this problem".
MeasuredLookup measured_dram(const BenchResults& results, const std::string& origin, const sim::AttentionProblem& p,
                             sim::Algorithm a);

// The first run with counters, null when none has them.
const MeasuredDram* first_measured(const MeasuredLookup& m);

// ---- every run of a pass selection, rung by rung ------------------------------

// A results file's rows as MeasuredDram, in file order: `placed` is the file
// placed again with today's model (replace_results, row for row), `written`
// the file as read, whose predictions become file_predicted_*. Rows without a
// model algorithm are left out.
std::vector<MeasuredDram> measured_runs(const BenchResults& written, const BenchResults& placed);

// How far a file's own predictions are from today's model's for the same runs.
struct PredictionDrift {
  int compared = 0;       // runs with both predictions
  int differ = 0;         // of those, the runs whose bytes are not equal
  double largest = 0;     // the largest |file − today| / today
};
PredictionDrift prediction_drift(const std::vector<MeasuredDram>& runs);

// A forward rung and the backward rung that runs after it (the registry's pairing).
struct RungPair {
  std::string forward, backward;
};

// One rung's run of one problem for a pass selection: the forward, the
// backward, or the training step (a backward run beside the run of its
// forward rung, summed). The bytes are given only when every part has
// counters; the predictions only when every part has one; the time only when
// every part was timed. A part that did not run is named with why.
struct RungDram {
  sim::AttentionProblem problem;
  std::vector<MeasuredDram> parts;  // the selection's passes, forward first
  bool measured = false;
  i64 measured_bytes = -1, predicted_bytes = -1, file_predicted_bytes = -1;
  double error = 0;  // (predicted − measured) / measured of the sum
  bool has_error = false;
  double time_ms = 0;
  std::string why_not;  // when not measured: which part lacks what
  std::string label() const;  // "fa2_tc + fa2_tc_bwd", or the one kernel
};

struct RungDramTable {
  std::vector<RungDram> rows;        // grouped by problem (first appearance), then in file order
  std::vector<std::string> left_out; // one line per kernel none of whose runs can be a row, with why
};

// The runs of `runs` for the selection: fwd or bwd, each run of the pass a
// row; fwd_bwd, each backward run beside the first run of its forward rung
// (`pairs`) on the same problem, and each forward run of a paired rung whose
// backward did not run that problem, beside an empty backward. A run a merge
// would drop (the same kernel, problem and tiles as an earlier run) is left out.
RungDramTable rung_dram(const std::vector<MeasuredDram>& runs, sim::PassSelection s, const std::vector<RungPair>& pairs);

// ---- no measured run above its roof ---------------------------------------------

// One timed forward run against the roofline of its GPU's datasheet preset:
// bound = max(FLOPs / peak, DRAM bytes / bandwidth), with the convention's
// FLOPs (4·B·H·N²·d, halved when causal: the matrix products any
// implementation computes; the exact count of the blocks a tiled kernel
// computes is larger) at the highest peak of the dtype (tensor cores), and the
// DRAM bytes the counters measured, or, without counters, the L2 model's
// prediction for the row's kernel and launch.
struct RoofRun {
  std::string kernel;
  sim::AttentionProblem problem;
  double time_s = 0;          // measured median
  double flops = 0;           // convention FLOPs
  double dram_bytes = 0;
  bool measured_dram = false; // from the counters (else predicted)
  double compute_s = 0, memory_s = 0;
  double bound_s = 0;         // max(compute_s, memory_s)
  bool above() const { return time_s < bound_s; }
  // bound / measured time: the fraction of the roof the run reached (above 1: above it).
  double roof_fraction() const { return time_s > 0 ? bound_s / time_s : 0; }
  // For a run above its roof: the bound again with the peak scaled to the SM
  // clock the file reports (equal to bound_s when no clock is reported), and
  // the likely cause in one sentence.
  double bound_at_run_clock_s = 0;
  std::string cause;
};

struct RoofCheck {
  std::string gpu;          // as the file names it
  std::string hardware;     // the datasheet preset used; empty when none matched
  std::string why_not;      // when no preset matched: one line
  std::vector<RoofRun> runs;         // every run checked
  std::vector<std::string> skipped;  // one line per kind of row left out, with its count
  int above = 0;
};

// Every timed forward run of `results` against the datasheet preset among
// `presets` that matches the file's GPU (match_datasheet: SM count and model
// name).
RoofCheck check_roof(const BenchResults& results, const std::vector<sim::HardwareModel>& presets);

}  // namespace flashlab::analysis
