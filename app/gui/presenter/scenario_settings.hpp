// A scenario's settings: the keys a scenario's top level, a scene's "state"
// and a script step share, one row each — the form of its value, what it
// means, whether a scene may set it, and how it is applied. The "problem"
// object's keys have a table of their own here; "ring" (ring_settings.hpp)
// and "bench" (bench_action.hpp) too. The presenter applies a scene's state
// through apply_settings; a script step's own keys are script_steps.hpp's.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"
#include "state/scenario_values.hpp"

namespace flashlab::gui {

struct SettingRow {
  KeyDoc doc;
  bool in_scene;  // a scene's "state" may set it (a benchmark run and the UI scale are the whole lecture's)
  void (*apply)(AppState& s, const nlohmann::json& v, const std::string& base_dir);
};

const std::vector<SettingRow>& setting_rows();
const SettingRow* find_setting(std::string_view key);

struct ProblemKeyRow {
  KeyDoc doc;
  void (*apply)(Inputs& in, const nlohmann::json& v);
};
const std::vector<ProblemKeyRow>& problem_key_rows();

// Applies settings in the object's order. Throws std::runtime_error on a bad
// value, and "unknown key 'K'" on a key that is not a setting.
void apply_settings(AppState& s, const nlohmann::json& settings, const std::string& base_dir);

// Applies a pending cursor request once the model is valid: "" when done,
// else why not ("cursor.block: [40, 5] is outside the 16 × 16 blocks …"),
// said in the status line too; the cursor then stays where it was.
std::string apply_cursor_request(AppState& s);

}  // namespace flashlab::gui
