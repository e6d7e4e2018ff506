// The one settings table: every key a scenario's top level, a scene's "state"
// and a script step share, and the keys of its "problem" (the one-GPU view's
// problem) and "ring" (the Across GPUs view's inputs) objects, one row each —
// the form of its value, what it means, whether a scene may set it, how it is
// read into the window's state, and how the random walk draws a value of it.
// Scenario files, `flashlab gui --list-settings` and the random walk all go
// through it. "bench" (bench_action.hpp) is a run's request with keys of its
// own; a script step's own keys are script_steps.hpp's.
#pragma once

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"
#include "state/scenario_values.hpp"

namespace flashlab::gui {

// A value of a setting for the random walk, drawn with its generator: one the
// setting takes when `valid`, else possibly one it refuses or the model rejects.
using SettingSample = nlohmann::json (*)(std::mt19937_64& rng, bool valid);

struct SettingRow {
  std::string_view object;  // "": a top-level key; "problem", "ring": a key of that object
  KeyDoc doc;
  bool in_scene;  // a scene's "state" may set it (a benchmark run and the UI scale are the whole lecture's)
  void (*apply)(AppState& s, const nlohmann::json& v, const std::string& base_dir);
  // null: the random walk leaves it to its own moves (files, runs, the view as a user looks around)
  SettingSample sample = nullptr;
};

const std::vector<SettingRow>& setting_rows();
// The row of `key` in `object` ("": the top level), or nullptr.
const SettingRow* find_setting(std::string_view key, std::string_view object = "");
// The rows of `object` ("": the top level), in the table's order.
std::vector<const SettingRow*> settings_of(std::string_view object);
// The objects whose keys are rows of their own ("problem", "ring"), in the table's order.
std::vector<std::string_view> setting_objects();

// Applies settings in the object's order. Throws std::runtime_error on a bad
// value, and "unknown key 'K'" on a key that is not a setting.
void apply_settings(AppState& s, const nlohmann::json& settings, const std::string& base_dir);

// Applies a pending cursor request once the model is valid: "" when done,
// else why not ("cursor.block: [40, 5] is outside the 16 × 16 blocks …"),
// said in the status line too; the cursor then stays where it was.
std::string apply_cursor_request(AppState& s);

}  // namespace flashlab::gui
