// A scenario's "ring": the Across GPUs view's inputs, one row per key.
// Sizes as numbers or text; the ring's model judges them.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"
#include "state/scenario_values.hpp"

namespace flashlab::gui {

struct RingSettingRow {
  KeyDoc doc;
  void (*apply)(AppState& s, const nlohmann::json& v, const std::string& base_dir);
};

const std::vector<RingSettingRow>& ring_setting_rows();

// Applies {"model": ..., "gpus": ..., ...}. Throws std::runtime_error naming the key.
void apply_ring_settings(AppState& s, const nlohmann::json& r, const std::string& base_dir);

}  // namespace flashlab::gui
