// The presenter's stages: what a scene's "stage" may name, and for each what
// the stage draws, what → and ← step before they move between scenes, the
// lab's view Esc leaves for, and the keys the strip names. One table, read by
// the scenario loader (is the name known?), the presenter (draw, keys, strip)
// and `flashlab gui --list-settings`.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "state/app_state.hpp"

namespace flashlab::gui {

struct PresenterStage {
  // As a scene's "stage" writes it. The chart stage has no name of its own:
  // a chart id of analysis::chart_table() names it (kChartStageName in lists).
  std::string_view name;
  std::string_view meaning;    // one line, for --list-settings and the docs
  Workspace workspace;         // the lab's view Esc shows, and whose inputs the strip's status describes
  bool opens_plot_tab;         // Esc shows the lab on the plot tab of the stage's name
  // → (+1) and ← (−1) inside the stage: true when it moved, false at its ends
  // or where there is nothing to step; then the arrows change scenes.
  bool (*step)(AppState& s, int direction);
  std::string_view key_hints;  // the strip's line of keys
  // Draws the stage in the current window; `name` is the scene's stage (the chart's id on the chart stage).
  void (*draw)(AppState& s, const std::string& name);
};

inline constexpr std::string_view kChartStageName = "CHART_ID";

const std::vector<PresenterStage>& presenter_stages();

// The stage a scene's "stage" names: one of the table's names, else a chart
// id (the chart stage); nullptr when neither.
const PresenterStage* find_stage(std::string_view name);

// The error for a name find_stage does not know: "stage must be tiling,
// counters or a chart (roofline, ...), or the ring's ring, ring-timeline,
// ring-step, not 'NAME'".
std::string unknown_stage_message(std::string_view name);

}  // namespace flashlab::gui
