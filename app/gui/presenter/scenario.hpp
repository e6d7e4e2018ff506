// Lecture scenarios (assets/scenarios/*.json): a starting state, and a script
// of actions at given frames for headless runs, screenshots and tests.
//
//   {"name": "...", "description": "...",
//    "problem": {"batch": 1, "heads": 1, "seq": 1024, "head_dim": 64, "causal": false, "dtype": "fp16"},
//    "hardware": "A100-PCIe-80GB" | {"file": "profile.json"}, "sram": "96KiB" | null,
//    "tiles": "paper" | "hopper" | {"Br": 64, "Bc": 64}, "algorithms": ["fa1", "fa2"], "lockstep": "progress",
//    "cursor": {"fraction": 0.3} | {"position": 120} | {"block": [2, 3]},
//    "playing": false, "events_per_s": 8, "tab": "roofline", "concepts": false, "ui_scale": 1.5,
//    "results": "bench.json", "export_dir": "out", "plots_large": false, "hide_controls": false,
//    "window": {"width": 1600, "height": 1000},
//    "script": [{"frame": 10, "tab": "io-vs-n"}, {"frame": 20, "key": "right"}, ...]}
//
//    "bench": {"sweep": "validate" | null, "kernels": ["fa2", "fa2_tc"], "repeats": 10, "counters": true, "pass": "bwd"},
//
// The multi-GPU view: "workspace": "one-gpu" | "ring" (what is right of the
// controls), "ring": {"model": "llama2-7b", "seq": "32K", "gpus": 8,
// "gpus_per_node": 8, "layout": "zigzag", "causal": true, "pass": "fwd",
// "intra": "nvlink4", "inter": "ib-ndr", "efficiency": 0.6, "compare_layouts":
// true, "step": 2, "run": 1, ...} (scenario_settings.cpp lists every key) and
// "ring_results": PATH (a "flashlab-ring-results/1" file: its run of the
// ring's problem is drawn under the simulation).
//
// A lecture adds "scenes": [{"title": T, "point": P, "stage": "tiling" |
// "counters" | CHART_ID | "ring" | "ring-timeline" | "ring-step", "state": {setting keys}}, ...] and "presenter": true
// | false (open on the stage; default true with scenes). Presenter mode
// (presenter.hpp) shows one scene at a time; presenter_stages.hpp holds the stages.
//
// The keys are tables: the settings (scenario_settings.hpp, with "problem"
// and "ring"), "bench" (bench_action.hpp), a script step's
// own keys (script_steps.hpp) and the keys it presses (script_keys.hpp).
// `flashlab gui --list-settings` prints them all (settings_list.cpp).
//
// Script steps take the same keys as the top level, plus "key" (space, left,
// right, home, end, plus, minus, pagedown, pageup, escape, f5), "scene": N
// (go to scene N, from 1), "export_all": true, "screenshot": PATH
// (a relative PATH is inside export_dir), "export": {"chart": ID, "format":
// "svg"} and "wait_bench": true | SECONDS. Unknown keys are errors.
//
// "bench" runs kernels as the Benchmarks tab does, once the model is up to
// date: a named sweep (assets/sweeps), or with "sweep": null (or absent) the
// current problem; "kernels" (default: the sweep's, or every kernel of the
// registry — the ladder), "repeats" (1–1000, default 10), "counters" (a CUPTI
// pass per case for the DRAM bytes, default false). Its results replace the
// open results, as a run from the tab does: the counters panel shows their
// measured DRAM, the roofline their points. When no run can start (no CUDA in
// this build, no device) the status line says why and the script goes on.
// "wait_bench" holds the script — its frame counter and the --frames count —
// until the run has finished, at most SECONDS (true: 600); past that the run
// is cancelled and the scenario fails with that message.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"
#include "bench/bench_action.hpp"
#include "scenario_settings.hpp"
#include "script_steps.hpp"

namespace flashlab::gui {

struct ScriptStep {
  int frame = 0;
  nlohmann::json action;
};

struct Scenario {
  std::string path, base_dir, name, description;
  nlohmann::json settings;
  std::vector<ScriptStep> script;  // sorted by frame
  std::optional<int> width, height;
  // A lecture: its scenes, and whether the window opens on the stage
  // ("presenter", default true when there are scenes).
  std::vector<Scene> scenes;
  bool presenter = false;
};

// A scene's own keys, as a table (the schema prints it).
struct SceneKeyRow {
  KeyDoc doc;
};
const std::vector<SceneKeyRow>& scene_key_rows();

// A scene of a scenario's "scenes": {"title": T, "point": P, "stage": S,
// "state": {setting keys}, "shows": [text, ...]}. Throws std::runtime_error
// naming what is wrong.
Scene parse_scene(const nlohmann::json& v);

// Throws std::runtime_error "FILE: reason" (missing, malformed, unknown key, bad value).
Scenario load_scenario(const std::string& path);

// Every scene entered in order, as paging through the lecture would (the
// scenario's settings, then the scene's state), on a scratch state: "" when
// all apply, else "scene N (TITLE): reason" for the first that does not —
// found when the file loads, not when the scene is reached in front of the hall.
std::string check_scene_states(const Scenario& sc);

}  // namespace flashlab::gui
