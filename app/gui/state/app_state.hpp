// The one state of the application: what the controls edit (Inputs), what the
// model made of them (Model, recomputed only when an input changes), where the
// step-through is (Playback and each algorithm's Cursor), and view settings.
// Panels are free functions taking AppState&.
#pragma once

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "bench_backend.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/sim/hardware/default_hardware.hpp"
#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim.hpp"
#include "flashlab/sim/schedule/online_softmax.hpp"
#include "inputs.hpp"
#include "ring_state.hpp"

namespace flashlab::gui {

using sim::i64;

// One recent event of the schedule, for the transfer log.
struct EventLine {
  i64 position = 0;  // 1-based index in the stream
  sim::TileEvent event;
};

// What the L2 model's trace of the first head says at the cursor (derived
// when the cursor moves, from SimResult::l2 and sim::TracedReads).
struct L2AtCursor {
  // Reads to the cursor, all heads: the first head's trace × B·H (TracedReads).
  bool has_reads = false;
  double request_read_bytes = 0, dram_read_bytes = 0;
  std::string reads_why_not;       // when has_reads is false
  // The current visit: what it reads, the part that came from DRAM, its wave.
  bool has_visit = false;
  float dram_fraction = 0;
  std::string reads;               // "K_j, V_j" (outer iteration's own loads included at its first visit)
  std::string visit_caption;       // "K_j, V_j: 100% from the L2"
  std::vector<std::pair<i64, i64>> wave_rows;  // blocks [first, last] of the CTAs of the visit's wave
  bool wave_columns = false;  // ... column blocks K_j (an outer loop over K_j, V_j), else row blocks Q_i
  std::string wave_caption;        // "wave 3 of 8: CTAs Q_8…Q_15 walk K_j, V_j together"
};

// What the tiling view needs about one cursor position, derived when the
// cursor moves (not while drawing).
// The Hopper schedule of the current row block at the cursor (derived when
// the cursor moves): the moment of the current event, the ring and the units then.
struct PipelineAtCursor {
  bool has = false;
  std::string why_not;    // when has is false and the view asked for it
  double t_ns = 0;        // the current event's moment in the CTA's timeline
  sim::PipelineState state;
  bool backward = false;        // the backward's CTA (AlgoView::bwd_pipeline) and its state
  sim::BwdPipelineState bwd_state;
  std::string caption;    // "row block i = 3 · t = 12.4 µs of 131 µs · ..."
};

struct TilingSnapshot {
  i64 position = -1;
  sim::Cursor::Where where;
  int phase = 0;                   // pass of the materialising algorithms
  i64 cur_i = -1, cur_j = -1;      // block being visited (-1: none)
  std::vector<i64> done_cols;      // per row block: visited column blocks finished (a prefix in j)
  std::vector<EventLine> recent;   // the last events up to the cursor, newest last
  sim::Counters cumulative;        // all heads, to the cursor
  bool cumulative_overflow = false;
  double ai_now = 0, time_bound_now_s = 0;  // of the cumulative counters (analysis/)
  analysis::Series ai_marker;  // (N, AI so far) over the AI-vs-N chart while stepping
  // Online softmax of the current row block (flash algorithms).
  bool has_softmax = false;
  sim::OnlineSoftmaxState softmax;
  i64 softmax_visits_total = 0;
  L2AtCursor l2;
  PipelineAtCursor pipeline;
};

struct AlgoView {
  sim::Algorithm algo = sim::Algorithm::fa2;
  sim::SimResult result;
  analysis::RooflineEstimate roof;
  std::unique_ptr<sim::Schedule> schedule;   // owned here: cursors keep a reference
  std::unique_ptr<sim::Cursor> cursor;
  std::unique_ptr<sim::Cursor> scratch;      // for the recent-event log
  std::unique_ptr<sim::OnlineSoftmax> softmax;
  sim::TracedReads traced;  // the first head's reads along the schedule, from the L2 trace
  // The Hopper rung's configuration when its schedule is drawn for this view,
  // and the schedule of the row block the cursor is in (rebuilt when i changes).
  std::optional<sim::HopperConfig> hopper;
  std::shared_ptr<const sim::HopperPipeline> pipeline;
  // The same for the backward rung (fa3_hopper_bwd, FlashAttention-2's
  // backward): the schedule of the column block the cursor is in.
  std::optional<sim::HopperBwdConfig> hopper_bwd;
  std::shared_ptr<const sim::HopperBwdPipeline> bwd_pipeline;
  bool shows_pipeline() const { return hopper.has_value() || hopper_bwd.has_value(); }
  TilingSnapshot snap;
};

// One chart per entry of analysis::chart_table(), in its order: built, or a
// placeholder with the entry's id and title (and a note saying why, once the
// model has tried). A model chart is built when a view shows it (model.hpp:
// need_chart), from the chart cache when it was built before or ahead of time.
struct Charts {
  Charts();
  std::vector<analysis::ChartSpec> specs;
  std::vector<char> built;  // per entry: specs[k] is the chart of this model (else a placeholder)
  analysis::ChartSpec& of(const analysis::ChartEntry& e);
  const analysis::ChartSpec& of(const analysis::ChartEntry& e) const;
  const analysis::ChartSpec& operator[](std::string_view id) const;  // an id of the table; throws otherwise
};

struct Model {
  bool valid = false;
  std::vector<std::string> errors;  // why nothing is shown (red status line)
  // The fields an error is about beyond those that do not parse (a size too
  // large for the counters, a head dim whose tiles cannot fit): drawn red.
  // Keys: "seq", "head_dim", "batch", "heads", "br", "bc", "sram".
  std::vector<std::string> bad_fields;
  std::vector<std::string> notes;   // findings that are not errors
  sim::AttentionProblem problem;
  sim::HardwareModel hw;
  // The measured profile behind hw when it is a profile's file: the charts draw its Ampere path.
  std::shared_ptr<const sim::MeasuredProfile> profile;
  sim::SimOptions options;
  i64 sram_bytes = 0;
  double theta_standard_bytes = 0, theta_flash_bytes = 0;  // the paper's bounds, constant 1
  i64 kv_head_bytes = 0;            // K and V of one head, beside the L2 (Concepts)
  std::vector<AlgoView> algos;      // 1, or 2 in compare mode
  Charts charts;
  // What the model charts are built from, and the key they are cached under
  // (the inputs and the open results: chart_cache.hpp).
  analysis::ChartContext chart_context;
  std::string chart_key;
  std::uint64_t generation = 0;     // bumps at every recompute
  double recompute_ms = 0;
};

struct Playback {
  bool playing = false;
  double events_per_s = 8;
  double carry = 0;  // fractional events owed from earlier frames
};

// A benchmark run on the worker thread; the UI reads it under the mutex.
struct BenchJob {
  std::thread worker;
  std::mutex mutex;
  std::atomic<bool> running{false}, cancel{false};
  size_t done = 0, total = 0;  // under mutex
  std::string status;          // under mutex
  analysis::BenchResults partial;  // under mutex
  bool finished = false;       // under mutex: results ready to take
};

struct BenchState {
  bool have_results = false;
  analysis::BenchResults results;
  std::uint64_t generation = 0;  // bumps when other results are taken (opened, run, closed)
  std::shared_ptr<const analysis::BenchResults> shared;  // a copy for the chart worker; null: none open
  std::string results_path = "bench.json";
  std::string kernel_file_path;  // a student's kernel file (.cu) to run beside the rungs
  std::string source;            // where the results came from
  std::string error;             // last open/run error
  std::vector<std::string> kernel_ids;  // for the heatmap/baseline pickers
  int heatmap_kernel = 0, baseline_kernel = -1;
  analysis::BenchFilter filter;     // which configuration the bench charts show
  analysis::BenchValues values;     // what the pickers offer
  int selected_sweep = 0;
  std::vector<BenchSweepEntry> sweeps;  // read once; "refresh" reads again
  bool sweeps_loaded = false;
  std::vector<size_t> order;     // results rows in table order
  bool order_dirty = true;
  BenchJob job;
  // A run asked for by a scenario, started once the model is up to date
  // (poll_bench_job); `on_current_problem`: the request's problem is the model's.
  bool counters = false;          // runs from the tab add a DRAM counter pass (CUPTI)
  int pass = 0;                   // runs from the tab: 0 forward rungs, 1 backward, 2 both
  std::string run_note;           // how the last run asked for ended when it gave no rows ("benchmark not run: ...")
  std::optional<BenchRunRequest> pending;
  bool pending_on_current_problem = false;
};

// What the window shows right of the controls: one GPU's tiling, counters
// and plots, or the ring of GPUs (ring attention's timeline and step-through).
enum class Workspace { one_gpu, ring };

// The window's colours: dark (the lab's), or light (dark text on near-white:
// what a projector in a lit hall shows best). theme.hpp applies it.
enum class Theme { dark, light };

struct ViewState {
  Workspace workspace = Workspace::one_gpu;
  double ui_scale = 1.0;
  Theme theme = Theme::dark;    // applied between frames (the style is rebuilt)
  double pending_ui_scale = 0;  // applied between frames (the font atlas is rebuilt)
  std::string tab = "roofline";  // id of the selected plot tab (plot_tabs.hpp)
  bool force_tab = false;       // select `tab` on the next frame (keyboard, scenario)
  bool show_concepts = false;
  bool counters_in_tabs = false;  // narrow layout (set by the layout each frame)
  // The hall layout (set by the layout each frame): the window is narrow for
  // its UI scale (a projector at 2×), so one view takes the stage — the
  // tiling view, or the plots (plots_large) — and the controls stay closed
  // until ☰ or F9 opens them (hall_controls).
  bool hall_layout = false;
  bool hall_controls = false;
  bool hall_ring_step = false;  // the hall layout's ring view: the step-through on the stage, else the timeline
  bool hide_controls = false;     // the lecturer's full-width view (F9)
  // The step-through's text gives the L2's caption (where a read was served
  // from, the wave walking K_j together) room before the online softmax.
  bool l2_first = false;
  bool plots_large = false;       // the plots take most of the height (a student's report)
  bool fullscreen = false;
  bool toggle_fullscreen = false;
  std::string export_dir = "flashlab-export";
  std::string status;           // last action's message (exports, screenshots)
  bool status_is_error = false;
  bool screenshot_requested = false;
  std::string screenshot_path;
  // Frames to wait before the screenshot (a menu that asked for it closes
  // first), and whether its line joins the status instead of replacing it.
  int screenshot_delay_frames = 0;
  bool screenshot_joins_status = false;
  std::string font_note;        // set when DejaVu could not be loaded
  // The mouse pointer a script placed (a headless run otherwise parks it off the window).
  bool script_mouse = false;
  float script_mouse_x = 0, script_mouse_y = 0;
};

// Counts every number the GUI formats that was not finite, so that a test can
// assert that no NaN or ∞ ever reached the screen.
struct ScreenChecks {
  i64 nonfinite = 0;
  std::string first_nonfinite;  // where it happened
};

// A cursor move asked for before the model exists (scenario files).
struct CursorRequest {
  enum class Kind { none, fraction, position, block } kind = Kind::none;
  double fraction = 0;
  i64 position = 0, i = 0, j = 0;
};

// A lecture as scenes (a scenario's "scenes"): each sets a state and puts one
// view on the stage, large, under a title readable from the back of the room.
struct Scene {
  std::string title;  // the scene's title bar
  std::string point;  // its one-line talking point
  // "tiling", "counters" (two algorithms side by side), a chart id, or the
  // ring's "ring" (timeline and step-through), "ring-timeline", "ring-step".
  std::string stage = "tiling";
  nlohmann::json state = nlohmann::json::object();  // scenario setting keys, applied on entering it
  // What the point promises is on screen: text the stage must show (a number,
  // a row's name, a ratio), checked against the frame's glyphs in the tests.
  std::vector<std::string> shows;
};

// What a scene starts from before its own "state" is applied: the scenario's
// settings over the window's defaults, taken when the lecture loads. A scene
// is whole: what it does not set comes from here, never from the scene shown
// before it (presenter/scene_base.hpp captures and restores it).
struct SceneBase {
  Inputs inputs;  // the ring's included
  int ring_step = 0;
  CursorRequest cursor;  // none: the schedule's start
  double events_per_s = 8;
  std::string tab;
  bool show_concepts = false, plots_large = false, hide_controls = false, hall_ring_step = false, l2_first = false;
  Workspace workspace = Workspace::one_gpu;
  std::string export_dir;
  std::string results, ring_results;  // the files open; empty: none
};

struct Presenter {
  bool on = false;             // the stage layout instead of the lab's panels
  std::vector<Scene> scenes;
  std::optional<SceneBase> base;  // the scenario's settings, under every scene's state
  int current = -1;            // index into scenes; -1 before the first
  std::string base_dir;        // where the scenario's relative paths start
  std::string error;           // a scene whose state could not be applied: said on the strip
  int scenes_entered = 0;      // for the stats
  bool blackout = false;       // the projector shows black (B, or a clicker's blank-screen key '.')
  bool show_keys = false;      // the keys of the current mode over the stage (? or F1)
  bool pointer = false;        // a ring around the mouse pointer, for the hall (P)
  bool zoom = false;           // the stage magnified 2× around the mouse pointer (Z)
  bool clock = false;          // the wall clock and the time since the lecture started, in the title bar (C)
  double started_s = -1;       // ImGui's clock when the stage was first drawn; -1: not yet
};

// A key pressed, as GLFW's key callback reported it: queued so that no press
// is lost however long a frame takes (a press and its release within one
// frame never show in the key-down state a frame polls).
struct KeyPress {
  int key = 0;        // GLFW_KEY_*
  int mods = 0;       // GLFW_MOD_*
  bool repeat = false;  // held down: the key repeating
};

// The model charts built so far, by what they were built from, and the
// worker that builds a lecture's charts ahead of its scenes (model/chart_cache.hpp).
class ChartCache;

struct AppState;
// Whether the controls are drawn, and ☰ / F9: hide_controls in the lab's
// layout, hall_controls in the hall layout (closed until opened).
bool controls_shown(const AppState& s);
void toggle_controls(AppState& s);

struct AppState {
  Inputs inputs;
  Presenter presenter;
  CursorRequest cursor_request;
  Inputs applied;        // what the one-GPU model was last computed from (its part of them)
  bool dirty = true;     // recompute before the next frame
  Model model;
  Playback playback;
  ViewState view;
  BenchState bench;
  RingState ring;        // the multi-GPU view (ring_model.hpp)
  std::vector<KeyPress> keys;  // pressed and not handled yet, oldest first
  std::shared_ptr<ChartCache> chart_cache;  // shared with the lecture's scratch states
  ScreenChecks checks;
  std::uint64_t frame = 0;
  // Panel rectangles of the last frame (screenshots of one panel, tests).
  struct PanelRect { float x = 0, y = 0, w = 0, h = 0; };
  PanelRect rect_controls, rect_tiling, rect_counters, rect_plots, rect_concepts, rect_ring, rect_ring_step;
  std::vector<std::string> tabs_visited;  // plot tabs drawn at least once
};

}  // namespace flashlab::gui
