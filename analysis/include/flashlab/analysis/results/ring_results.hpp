// Ring attention over P GPUs as measured (sim/measurement/measurement.hpp: runs
// with their parallel part): the results file (JSON, "flashlab-ring-results/1"),
// the rows people read (CSV, the table `flashlab bench --gpus` prints: times,
// communication, TFLOP/s per GPU by the convention, memory, the scaling
// efficiency against the P = 1 run of the same problem) and the placement of a
// run beside the ring's simulation (sim/ring/ring_schedule.hpp): step by step,
// GPU by GPU, predicted and measured with the error.
#pragma once

#include <cstddef>
#include <array>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::analysis {

using sim::i64;

inline constexpr const char* kRingResultsFormat = "flashlab-ring-results/1";

// ---- the file ----------------------------------------------------------------------

std::string ring_results_to_json(const sim::MeasuredRuns& r);
// Throws std::runtime_error "ORIGIN: FIELD: why" (FIELD like
// "runs[2].forward.steps[5].gpu") for anything missing or malformed.
sim::MeasuredRuns ring_results_from_json(const std::string& text, const std::string& origin);
sim::MeasuredRuns ring_results_from_file(const std::string& path);

// A ring problem as the file writes it: batch, heads, kv_heads, seq, head_dim,
// causal, dtype, gpus, layout, backward.
nlohmann::json ring_problem_json(const sim::AttentionProblem& p);

// ---- what the rows derive ----------------------------------------------------------------

// The id of the attention_models() entry with this H, H_kv and d; "" when none.
std::string ring_model_id(const sim::AttentionProblem& p);
// Visible (query, key) pairs of the whole problem: N² or, causal, N(N+1)/2.
i64 ring_total_pairs(const sim::AttentionProblem& p);
// The convention's FLOPs of a pass (all GPUs): 4·B·H·pairs·d forward, 2.5× backward.
double ring_pass_flops(const sim::AttentionProblem& p, sim::Pass pass);
// The P = 1 run of the same attention in `runs` that measured `pass` (status
// ok), the same layout preferred; nullptr when there is none.
const sim::MeasuredRun* ring_single_gpu_run(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p,
                                                sim::Pass pass);

// One (run, pass) as the CSV and the table show it.
struct RingRow {
  std::size_t run = 0;                 // index into MeasuredRuns::runs
  sim::Pass pass = sim::Pass::fwd;
  std::string model;                   // ring_model_id
  bool measured = false;               // status ok and the pass was timed
  double time_ms = 0, time_ms_min = 0, time_ms_max = 0;
  int repeats = 0;
  double compute_ms = 0, comm_ms = 0, exposed_comm_ms = 0;
  double rung_ms = -1;                 // the busiest GPU's time inside the rung's launches (-1: not recorded)
  double overlap = 1;                  // 1 − exposed / comm (1 when nothing travelled)
  double tflops_per_gpu = 0;           // ring_pass_flops / time / P
  i64 peak_allocated_bytes = 0;        // the largest GPU's
  i64 peak_device_used_bytes = 0;
  std::optional<double> scaling_efficiency;  // t(P = 1) / (P · t), when the file has that run
  double rel_error = -1;               // O (forward), the worst of dQ, dK, dV (backward)
};
// Every run's forward, then its backward when it ran, in file order.
std::vector<RingRow> ring_rows(const sim::MeasuredRuns& r);

std::vector<std::string> ring_csv_header();
// "# format" and "# key: value" metadata lines, the header, one row per RingRow.
std::string ring_results_csv(const sim::MeasuredRuns& r);
// The text table `flashlab bench --gpus` prints (with the FLOP convention under it).
std::string ring_table(const sim::MeasuredRuns& r);

// ---- a run beside the simulation ----------------------------------------------------------

struct RingStepPlacement {
  int gpu = 0;
  int step = 0;               // P: the backward's homecoming transfer
  sim::Pass pass = sim::Pass::fwd;
  int kv_owner = 0;
  // Durations; starts are from the pass's start. NaN where a side has none
  // (no compute at the homecoming step, no transfer at the last step).
  double predicted_compute_ms = 0, measured_compute_ms = 0;
  double predicted_compute_start_ms = 0, measured_compute_start_ms = 0;
  double predicted_transfer_ms = 0, measured_transfer_ms = 0;  // the span of the step's sends and receives
  double predicted_wait_ms = 0, measured_wait_ms = 0;
  double compute_error = 0, transfer_error = 0;  // (predicted − measured) / measured; NaN when undefined
};

struct RingPassPlacement {
  sim::Pass pass = sim::Pass::fwd;
  double predicted_time_ms = 0, measured_time_ms = 0, time_error = 0;
  double predicted_compute_ms = 0, measured_compute_ms = 0, compute_error = 0;
  double predicted_comm_ms = 0, measured_comm_ms = 0, comm_error = 0;
  double predicted_exposed_ms = 0, measured_exposed_ms = 0;
  std::vector<RingStepPlacement> steps;  // sorted by gpu, then step
};

// Where the prediction's compute efficiency comes from.
struct RingCalibration {
  double forward = 1.0;
  std::optional<double> backward;
  bool from_single_gpu_run = false;
  bool launch_model = false;  // the rungs' launch model fitted on one GPU (no efficiency)
  std::string note;  // "calibrated from the P = 1 run (...)" or "as given (no P = 1 run ...)"
};
// From the P = 1 run of the same attention in `runs`: its measured time over
// the simulation's bound (efficiency 1) per pass, capped at 1 (a note says so);
// else `given`'s efficiencies.
RingCalibration calibrate_ring_efficiency(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p,
                                          const sim::RingTopology& topo, const sim::RingComputeModel& given);

struct RingPlacement {
  sim::MeasuredRun run;
  sim::RingSimulation simulation;
  RingCalibration calibration;
  std::vector<RingPassPlacement> passes;  // forward, then backward when both have it
  std::vector<std::string> notes;
  // Each pass's rung time under the GPU's power limit in the median and the
  // fastest of the run's timed series (zero without a capped rung).
  sim::RingSeriesShares power_shares;
};

// The run beside simulate_ring_timed(run.problem, topo, cm, its passes'
// series) with cm as given: each pass timed as the run was, warm-ups and
// repeats back to back, under the power limit where its rung has one.
// Throws std::invalid_argument when the run is not ok or cannot be simulated.
RingPlacement place_ring_run(const sim::MeasuredRun& run, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm);
// runs.runs[index] with the efficiency calibrated from the file's P = 1 run.
// Where the compute model comes from, in this order: the rungs' launch model
// (`rungs`, when it has the run's forward and backward rung at its head dim:
// fitted on one GPU, no run of the file used), else the efficiency calibrated
// from the file's P = 1 run of the same attention, else `cm` as given.
RingPlacement place_ring_run(const sim::MeasuredRuns& runs, std::size_t index, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm, const sim::RungTimingSet* rungs = nullptr);

// A measured link between GPUs of the runs' kind (assets/interconnects/measured):
// the one measured on as many GPUs as the file used, else the one on the most;
// nullopt when none.
std::optional<sim::InterconnectModel> measured_link_for(const sim::RunMeta& m);
// `link` as given, or — a measured link without the host's issuing — with the
// host of another measured link between GPUs of the same kind, its source
// saying so; unchanged when there is none.
sim::InterconnectModel with_measured_host(sim::InterconnectModel link);

std::string ring_placement_text(const RingPlacement& p, bool per_step = true);

// How well the model did on a file's multi-GPU runs: per measure, the mean
// and the worst of |predicted − measured| / measured over the passes placed
// (P ≥ 2; the P = 1 runs calibrate and are left out), overall and split at
// 16K tokens; the exposed communication, which is often near zero, as the
// mean and worst absolute difference in ms.
struct RingErrorStat {
  int count = 0;
  double mean_abs = 0;   // mean |error| (a fraction; ms for the exposed time)
  double worst = 0;      // the error of largest magnitude, signed
  std::string worst_at;  // "run 3 (P=4, 8K, causal), forward"
};
struct RingScore {
  RingErrorStat time, time_long, time_short;  // every pass; N ≥ 16K; N < 16K
  RingErrorStat time_one_gpu;                  // P = 1 passes the model did not calibrate on
  RingErrorStat compute, comm, exposed_ms;
  // Where the compute model came from: the multi-GPU runs calibrated on their
  // problem's P = 1 run, the range of efficiencies that gave; the other runs' notes.
  int from_single_gpu_runs = 0;
  std::array<double, 2> forward_efficiency{1e9, -1e9}, backward_efficiency{1e9, -1e9};
  std::vector<std::string> calibrations;
};
RingScore score_ring_placements(const std::vector<RingPlacement>& placed, const std::vector<std::size_t>& run_index);
// The model a file's runs are placed with: the machine, the compute model and
// the launch model fitted on a GPU (none: the efficiency of the file's P = 1 runs).
struct RingFileModel {
  sim::RingTopology topology;
  sim::RingComputeModel compute;
  std::optional<sim::RungTimingSet> rungs;
};
// What a file gives when nothing else is chosen: the datasheet preset of the
// GPU it ran on (`take.hw`), the link measured between such GPUs (`take.link`)
// and the launch model fitted on that GPU (`take.rungs`), each over `m`'s own
// where the file has one; and the host's issuing the file measured in the
// same call (`take.host`): the host's prices belong to the machine, which a
// preset of another machine of the same GPUs need not share. `flashlab ring --results` and the GUI place with it.
struct RingFileTakes {
  bool hw = true, link = true, rungs = true;
  bool host = true;  // the host's issuing the file measured in its own call, over the link's
};
RingFileModel ring_file_model(const sim::MeasuredRuns& runs, RingFileModel m, RingFileTakes take = {});
// The same over the simulator's own defaults (the default ring topology, the
// datasheet NVLink, the ring's default hardware where the file names no known
// GPU), as `flashlab ring --results FILE` without flags.
RingFileModel ring_file_model(const sim::MeasuredRuns& runs);
// Every run of the file that ran, placed with `m` and scored. Throws
// std::invalid_argument as place_ring_run does.
RingScore score_ring_file(const sim::MeasuredRuns& runs, const RingFileModel& m);
std::string ring_score_text(const RingScore& s);
// One line of it for a panel: the multi-GPU pass times' mean and worst error
// (and how many), and from 16K tokens.
std::string ring_score_summary(const RingScore& s);
nlohmann::json ring_score_json(const RingScore& s);
nlohmann::json ring_placement_json(const RingPlacement& p);
std::vector<std::string> ring_placement_csv_header();
std::vector<std::vector<std::string>> ring_placement_csv_rows(const RingPlacement& p);  // one per step placement

}  // namespace flashlab::analysis
