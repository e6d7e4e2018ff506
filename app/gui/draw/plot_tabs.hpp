// The plot tabs: one per chart of analysis::chart_table(), in its order, then
// the window's own panels — the Benchmarks panel, and the Counters, which join
// the tabs (drawn first) only on narrow layouts.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/charts/chart_table.hpp"

namespace flashlab::gui {

struct PlotTab {
  std::string_view id;     // "roofline", ..., "bench-heatmap", "bench", "counters"
  std::string_view label;  // the tab's text
  const analysis::ChartEntry* chart = nullptr;  // null: one of the window's panels
};

const std::vector<PlotTab>& plot_tabs();
const PlotTab* find_plot_tab(std::string_view id);  // nullptr when unknown
inline constexpr std::string_view kBenchPanelTab = "bench";
inline constexpr std::string_view kCountersTab = "counters";

}  // namespace flashlab::gui
