// Lecture scenarios (assets/scenarios/*.json): a starting state, and a script
// of actions at given frames for headless runs, screenshots and tests.
//
//   {"name": "...", "description": "...",
//    "problem": {"batch": 1, "heads": 1, "seq": 1024, "head_dim": 64, "causal": false, "dtype": "fp16"},
//    "hardware": "A100-PCIe-80GB" | {"file": "profile.json"}, "sram": "96KiB" | null,
//    "tiles": "paper" | {"Br": 64, "Bc": 64}, "algorithms": ["fa1", "fa2"], "lockstep": "progress",
//    "cursor": {"fraction": 0.3} | {"position": 120} | {"block": [2, 3]},
//    "playing": false, "events_per_s": 8, "tab": "roofline", "concepts": false, "ui_scale": 1.5,
//    "results": "bench.json", "export_dir": "out", "plots_large": false, "hide_controls": false,
//    "window": {"width": 1600, "height": 1000},
//    "script": [{"frame": 10, "tab": "io-vs-n"}, {"frame": 20, "key": "right"}, ...]}
//
// Script steps take the same keys as the top level, plus "key" (space, left,
// right, home, end, plus, minus), "export_all": true, "screenshot": PATH and
// "export": {"chart": ID, "format": "svg"}. Unknown keys are errors.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "app_state.hpp"

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
};

// Throws std::runtime_error "FILE: reason" (missing, malformed, unknown key, bad value).
Scenario load_scenario(const std::string& path);

// Applies settings or one script step. Throws std::runtime_error on a bad value.
void apply_settings(AppState& s, const nlohmann::json& settings, const std::string& base_dir);

// Applies a pending cursor request once the model is valid.
void apply_cursor_request(AppState& s);

}  // namespace flashlab::gui
