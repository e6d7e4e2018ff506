// The multi-GPU view's inputs -> model: the ring's problem, links and compute
// model checked by the simulator's own validate() functions (what `flashlab
// ring` says about the same mistake), simulate_ring(), the timeline's lanes,
// the chunk-pair matrix, a measured run matched to the problem and placed
// beside the prediction (analysis::place_ring_run). The only place the
// multi-GPU view asks sim/ and analysis/ for numbers; its panels read them.
#pragma once

#include "state/app_state.hpp"
#include "flashlab/sim/problem/attention_models.hpp"

namespace flashlab::gui {

// The hardware the ring uses: the app's current preset or profile file.
std::string ring_hardware_key(const Inputs& in);

// Whether an input, the hardware or the open results changed since the last recompute.
bool ring_needs_recompute(const AppState& s);

// Parses and checks the ring's inputs; on success simulates the ring (and the
// other layout when compared), builds the lanes and the matrix, matches and
// places a measured run. On failure the model is cleared and errors say why.
// Keeps the step (clamped to the new P).
void recompute_ring(AppState& s);

// Moves the step-through to step s (clamped to 0 … P − 1) and derives what it shows.
void ring_seek_step(AppState& s, int step);
void ring_step_by(AppState& s, int delta);
// Applies s.ring.step_request once the model is valid.
void apply_ring_step_request(AppState& s);

// Opens a ring results file ("flashlab-ring-results/1"); the status line says
// what happened and which run is shown: the run of the problem on screen when
// the file has one, else the run picked before (inputs.run_choice, a
// scenario's "run"), else the file's first (ring_run_to_open); the inputs
// become that run's. The model places it at its next recompute.
void open_ring_results(AppState& s, const std::string& path);
// No ring results open: the simulation alone (the inputs stay as they are).
void close_ring_results(AppState& s);

// The run of `runs` measured for exactly `p` (every field of the problem,
// passes included) with status ok, a run being its problem and its steps:
// `preferred` when it is one with `steps` (any steps when empty), else the
// first with `steps` (empty: fused), else the first of any steps; -1 when none.
int match_ring_run(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p, const std::string& steps = "",
                   int preferred = -1);
// The step modes of the ok runs of `p` in `runs`, fused first.
std::vector<std::string> ring_run_steps(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p);
// The run a file opens on when the problem on screen has none: its first ok
// run of more than one GPU with `steps` (empty: fused), else of any steps,
// else its first ok run; -1 when no run is ok.
int ring_run_to_open(const sim::MeasuredRuns& runs, const std::string& steps = "");

// Sets the inputs to a run's problem (the model preset whose shape it has, or custom).
void ring_inputs_from_problem(Inputs::Ring& in, const sim::AttentionProblem& p);
// ... and to the run itself: its problem, its steps, its index.
void ring_inputs_from_run(Inputs::Ring& in, const sim::MeasuredRuns& runs, int k);

// "run 3: LLaMA-2-7B, N 8K, 4 GPUs zig-zag, fwd+bwd, fused steps": what tells
// the runs of a file apart (the status of one not ok after it).
std::string ring_run_label(const sim::MeasuredRun& run, size_t k);
// "4× NVIDIA H200 (NVLink, 18 links between every pair: NV18)" (brief: "4×
// NVIDIA H200, NV18 links") or "2 virtual GPUs on one NVIDIA H100 80GB HBM3":
// where a run of the file was measured, from its meta (gpu_names, gpu_topology).
std::string ring_run_machine(const sim::MeasuredRuns& runs, const sim::MeasuredRun& run, bool brief = false);

// "LLaMA-2-7B (H 32, H_kv 32, d 128)": an attention_models() entry as the picker shows it.
std::string ring_model_label(const sim::AttentionModel& m);

}  // namespace flashlab::gui
