// Inputs -> Model, and cursor moves -> snapshots. The only place the GUI asks
// the simulator and analysis for numbers; panels read the results.
#pragma once

#include "state/app_state.hpp"

namespace flashlab::gui {

// Parses and checks the inputs; on success simulates every selected
// algorithm, builds schedules, cursors and charts. On failure the model is
// cleared (no stale numbers) and errors say why. Keeps the cursor's relative
// position when only the problem changed.
void recompute(AppState& s);
// Whether an input of the one-GPU view changed since the last recompute (the ring's have their own: ring_model.hpp).
bool needs_recompute(const AppState& s);

// The window's problem fields parsed and checked, as recompute does first:
// one message per field it cannot take, none when the problem is valid.
std::vector<std::string> problem_errors(const Inputs& in);

// The algorithms the model charts draw: the lecture's, and whichever the user chose besides.
std::vector<sim::Algorithm> chart_algorithms(const Inputs& in);

// Rebuilds the bench charts from s.bench.results (after open, run or a picker
// change); the model charts are built again when next shown (the roofline's
// measured points).
void rebuild_bench_charts(AppState& s);

// A model chart of a valid model: built when a view shows it — from the chart
// cache when it was built before or ahead (a lecture's scenes), else now.
// True when it was not built before this call.
bool need_chart(AppState& s, const analysis::ChartEntry& e);
// Asks the chart cache's worker to build it ahead of time (never waits).
void chart_ahead(AppState& s, const analysis::ChartEntry& e);
// Every model chart built now (exports, tests).
void build_all_charts(AppState& s);
// What a model chart is built from, as a key of the chart cache: the inputs
// and the results open.
std::string chart_key(const Inputs& in, const BenchState& b);

// Moves the primary cursor (algos[0]) and brings the other along (lockstep),
// then refreshes both snapshots.
void seek_primary(AppState& s, i64 position);
void step_primary(AppState& s, i64 delta);
// Refreshes the derived snapshot of one algorithm after its cursor moved.
void refresh_snapshot(AppState& s, AlgoView& v);

// Carries on an online-softmax state left incomplete by its per-frame budget.
void continue_softmax(AppState& s);

// Playback: advances by the events owed for `dt_s` seconds; stops at the end.
void advance_playback(AppState& s, double dt_s);

// Whether a row block's online softmax is shown: the algorithm keeps running
// statistics (its description record says so).
bool shows_online_softmax(sim::Algorithm a);

}  // namespace flashlab::gui
