// A scenario's script: steps at given frames. A step takes every setting
// (scenario_settings.hpp) and the keys of this table, which only a step takes:
// its frame, a key press, a scene to go to, exports and screenshots, the wait
// for a benchmark.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"
#include "state/scenario_values.hpp"

namespace flashlab::gui {

struct StepKeyRow {
  KeyDoc doc;
  void (*apply)(AppState& s, const nlohmann::json& v, const std::string& base_dir);
};

const std::vector<StepKeyRow>& step_key_rows();
const StepKeyRow* find_step_key(std::string_view key);

// Applies one step's keys in the object's order: settings and the step's own.
// Throws std::runtime_error on a bad value or "unknown key 'K'".
void apply_script_step(AppState& s, const nlohmann::json& step, const std::string& base_dir);

}  // namespace flashlab::gui
