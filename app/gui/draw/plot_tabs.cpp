#include "plot_tabs.hpp"

namespace flashlab::gui {

const std::vector<PlotTab>& plot_tabs() {
  static const std::vector<PlotTab> tabs = [] {
    std::vector<PlotTab> t;
    for (const analysis::ChartEntry& e : analysis::chart_table()) t.push_back({e.id, e.tab, &e});
    t.push_back({kBenchPanelTab, "Benchmarks", nullptr});
    t.push_back({kCountersTab, "Counters", nullptr});
    return t;
  }();
  return tabs;
}

const PlotTab* find_plot_tab(std::string_view id) {
  for (const PlotTab& t : plot_tabs())
    if (t.id == id) return &t;
  return nullptr;
}

}  // namespace flashlab::gui
