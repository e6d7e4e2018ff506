// The multi-GPU view's part of AppState: sequence-parallel ring attention over
// P GPUs (sim/ring/ring_schedule.hpp). Its controls edit Inputs::ring
// (inputs.hpp); this is what the ring's simulator made of
// them (RingModel, recomputed only when an input, the hardware or the open
// results file changed: ring_model.cpp), the step-through at step s (derived
// when the step moves), and a measured ring results file beside it.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "inputs.hpp"

namespace flashlab::gui {

// The largest ring the view draws (one row per GPU).
inline constexpr int kRingMaxGpus = 64;

// One bar of a timeline row, simulated or measured (seconds from the first pass's start).
// posted: a simulated transfer's receiving GPU has posted its receive and the
// sender's matching call has not come (the measured events count it as transfer
// time, the simulation as the sender's lateness).
enum class RingBarKind { compute, transfer, posted, wait, idle };
struct RingBar {
  int gpu = 0;
  int step = 0;          // a backward's homecoming transfer: P
  sim::Pass pass = sim::Pass::fwd;
  RingBarKind kind = RingBarKind::compute;
  double start_s = 0, end_s = 0;
  int kv_owner = 0;      // whose K, V (dK, dV) chunks
  int peer = -1;         // transfer: the GPU it comes from (-1: a measured step's send and receive)
  bool gradients = false;
  bool crosses_nodes = false;
  sim::i64 bytes = 0;
  sim::i64 pairs = 0;    // compute: visible (query, key) pairs
  // A measured bar's placement beside the prediction (place_ring_run): the
  // predicted duration of the same (gpu, step) and the relative error; NaN when none.
  double predicted_s = 0, error = 0;
  bool placed = false;
};

// A group of rows on the timeline: one per GPU.
struct RingLane {
  std::string title;     // "simulated: zig-zag, 8 GPUs"
  bool measured = false;
  bool example = false;  // a run whose transport is not a measurement of GPUs over links
  int gpus = 0;
  double end_s = 0;
  double backward_start_s = -1;  // where the backward pass begins (-1: forward only)
  std::vector<RingBar> bars;     // sorted by gpu, then start
  std::vector<size_t> first_bar; // gpus + 1 entries: bars of GPU r are [first_bar[r], first_bar[r + 1])
};

// A (query chunk, key chunk) pair of the step-through's matrix: which GPU
// computes it, at which step, and how the mask sees it.
struct RingPairCell {
  int gpu = -1;    // the GPU holding the query chunk
  int step = -1;   // the step at which it holds the key chunk
  sim::ChunkVisibility visibility = sim::ChunkVisibility::none;
  sim::i64 pairs = 0;
};

// The step-through at step s (derived when the step moves, not while drawing).
struct RingStepState {
  int step = 0;
  sim::RingStepView view;
  std::vector<sim::i64> pairs_so_far;   // per GPU: visible pairs computed in steps 0 … s
  std::vector<int> blocks_so_far;       // per GPU: chunk pairs computed in steps 0 … s
  std::vector<int> skipped_so_far;      // per GPU: chunk pairs met and skipped (the mask hides them)
  double time_s = 0;                    // when the slowest GPU has finished step s (simulated forward)
};

// The measured run beside the simulation.
struct RingMeasuredView {
  int run = -1;                        // index in the open file; -1: none shown
  std::string why_none;                // when run is -1 and a file is open: why no run is shown
  std::optional<analysis::RingPlacement> placement;
  std::string label;                   // "fa3_hopper / fa2_tc_bwd over NCCL on 8× NVIDIA H200"
  std::string warning;                 // transport "local" or a hand-written example, said plainly
  // The file's P = 1 run of the same attention (analysis::ring_single_gpu_run):
  // its passes' median times summed, and that over P × the run's (as the
  // simulation's scaling_efficiency); -1 when the file has none.
  double single_gpu_ms = -1, scaling_efficiency = -1;
  // Per pass: the worst per-step errors (compute, transfer) and where they are.
  struct PassErrors {
    sim::Pass pass = sim::Pass::fwd;
    double median_compute_error = 0, worst_compute_error = 0;
    int worst_compute_gpu = -1, worst_compute_step = -1;
    double median_transfer_error = 0, worst_transfer_error = 0;
    int worst_transfer_gpu = -1, worst_transfer_step = -1;
    int placed_steps = 0;
  };
  std::vector<PassErrors> errors;
};

struct RingModel {
  bool valid = false;
  std::vector<std::string> errors;      // why nothing is shown
  // Fields an error is about (drawn red): "model", "heads", "kv_heads",
  // "head_dim", "batch", "seq", "gpus", "gpus_per_node", "intra", "inter", "efficiency".
  std::vector<std::string> bad_fields;
  std::vector<std::string> notes;
  sim::AttentionProblem problem = sim::default_ring_problem();
  sim::RingTopology topology;
  sim::RingComputeModel compute;
  std::string efficiency_note;          // where the drawn prediction's efficiency comes from
  sim::RingSimulation simulation;       // the one drawn first (a measured run's calibrated prediction when shown)
  std::optional<sim::RingSimulation> other_layout;  // compare_layouts
  std::vector<RingLane> lanes;          // simulated, the other layout, measured
  double axis_end_s = 0;                // the timeline's shared time axis: [0, axis_end_s]
  int chunks = 0;                       // C
  std::vector<RingPairCell> cells;      // C × C, query-chunk-major
  std::vector<sim::i64> pairs_total;    // per GPU, the whole forward
  std::vector<int> blocks_total;        // per GPU: chunk pairs computed in the whole forward
  RingStepState step;
  RingMeasuredView measured;
  std::uint64_t generation = 0;
  double recompute_ms = 0;
};

struct RingResults {
  bool have = false;
  sim::MeasuredRuns runs;
  std::string path = "ring-results.json";  // the field's text
  std::string source;                      // the file opened
  std::string error;                       // the last open's failure
  std::uint64_t generation = 0;            // bumps at every open: the model matches again
  // The rungs' launch model fitted on the runs' GPU (assets/rungs), if any:
  // what a calibrated prediction times its chunk pairs with.
  std::optional<sim::RungTimingSet> rungs;
  // The model's score on every run of the file ("pass time: mean 5.9 %, worst
  // −18.8 % …"), as flashlab ring --results ends; empty when not computed.
  std::string score_text;
};

struct RingState {
  Inputs::Ring applied;                 // what the model was last computed from
  std::string applied_hardware;         // ... on which hardware
  std::uint64_t applied_results = 0;    // ... and which open file
  bool dirty = true;
  RingModel model;
  RingResults results;
  int step_request = -1;                // a step asked for (scenario, keys) before the model exists
};

}  // namespace flashlab::gui
