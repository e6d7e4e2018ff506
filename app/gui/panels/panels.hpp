// The panels: free functions over AppState. None computes model numbers; they
// read s.model and edit s.inputs (the main loop recomputes on change).
#pragma once

#include <string>

#include "state/app_state.hpp"

struct ImVec2;  // imgui.h: the panels' callers in tests need no ImGui

namespace flashlab::gui {

// Places every window for the current display size (controls left, tiling
// middle, counters right, plot tabs below, status line at the bottom) and draws it.
void draw_frame(AppState& s);

void panel_controls(AppState& s);
void panel_tiling(AppState& s);
// The room left in the current window below the cursor, in pixels.
float room_left();
void panel_counters(AppState& s);
// The counters of the two algorithms shown, in columns with the ratio between them.
void counters_side_by_side(AppState& s);
void panel_plots(AppState& s);
void panel_bench(AppState& s);     // inside the plots' "Benchmarks" tab
void panel_concepts(AppState& s);  // floating window
void status_bar(AppState& s);
void transport_bar(AppState& s);
// The Hopper schedule of a view that has one, in a child as wide as the
// window and `height` pixels tall (panel_pipeline.cpp).
void draw_pipeline(const AppState& s, const AlgoView& v, float height);

// The multi-GPU view: ring attention over P GPUs (ring_model.hpp holds its model).
// The ring's controls (panel_ring_controls.cpp), under the workspace switch.
void panel_ring_controls(AppState& s);
// The two halves of the controls' top row: one GPU, or across GPUs (F6);
// `compact`: two buttons as wide as their text.
void workspace_switch(AppState& s, bool compact = false);
// Right of the controls: the timeline per GPU (simulated, the other layout,
// measured) with the totals, over the step-through (panel_ring.cpp).
void panel_ring(AppState& s);
// What a presenter's stage shows of it: both parts (as panel_ring), or one.
enum class RingParts { timeline_and_step, timeline, step };
void ring_stage(AppState& s, RingParts parts);
// The parts, each in a child of `size` (ring_timeline.cpp, ring_step.cpp).
void draw_ring_timeline(AppState& s, ImVec2 size);
// The height the timeline's rows take at a comfortable size (a line and a half each).
float ring_timeline_wanted_height(const AppState& s, float width);
// ... and the totals beside it, all their rows and notes.
float ring_totals_wanted_height(const AppState& s);
void draw_ring_totals(AppState& s, ImVec2 size);
void draw_ring_step(AppState& s, ImVec2 size);
// The step's transport: first, back, the slider, on, last (keys ←/→, Home/End).
void ring_transport(AppState& s);

// Space, ←/→, Home/End, +/-, F11, Ctrl+=/Ctrl+- (UI scale), F12 (screenshot).
void handle_keys(AppState& s);

// Exports (export_actions.cpp).
void export_chart_files(AppState& s, const analysis::ChartSpec& c, const char* ext_or_all);
void export_all(AppState& s);
void request_screenshot(AppState& s, const std::string& path);

// Results (panel_bench.cpp).
void open_results(AppState& s, const std::string& path);
// No results open: the bench charts say so, the roofline has no measured points.
void close_results(AppState& s);
// Takes finished results from the worker, then starts a pending run (a
// scenario's "bench"), or says in the status line why it cannot start.
void poll_bench_job(AppState& s);
// Whether a benchmark is pending, running, or finished and not yet taken.
bool bench_busy(AppState& s);

}  // namespace flashlab::gui
