// The plot tabs: model charts (roofline, HBM vs N/M/d, AI vs N), bench charts,
// the benchmark panel; an export toolbar over each chart.
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <optional>

#include "model/model.hpp"
#include "panels.hpp"
#include "draw/plot.hpp"
#include "draw/plot_tabs.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

bool kernel_combo(const char* label, const std::vector<std::string>& ids, int& index, const char* none) {
  bool changed = false;
  const char* cur = index >= 0 && static_cast<size_t>(index) < ids.size() ? ids[static_cast<size_t>(index)].c_str() : none;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 9);
  if (ImGui::BeginCombo(label, cur)) {
    if (ImGui::Selectable(none, index < 0)) {
      index = -1;
      changed = true;
    }
    for (size_t k = 0; k < ids.size(); ++k)
      if (ImGui::Selectable(ids[k].c_str(), static_cast<int>(k) == index)) {
        index = static_cast<int>(k);
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

// A picker per parameter that varies in the results: one value, or all.
template <class T, class Label>
bool value_picker(const char* name, const std::vector<T>& values, std::optional<T>& chosen, Label label) {
  if (values.size() < 2) return false;
  bool changed = false;
  ImGui::SameLine();
  const std::string cur = chosen ? label(*chosen) : std::string("all");
  ImGui::SetNextItemWidth(ImGui::CalcTextSize("non-causal").x + ImGui::GetFrameHeight() * 1.6f);
  if (ImGui::BeginCombo(name, cur.c_str())) {
    if (ImGui::Selectable("all", !chosen)) {
      chosen.reset();
      changed = true;
    }
    for (const T& v : values)
      if (ImGui::Selectable(label(v).c_str(), chosen && *chosen == v)) {
        chosen = v;
        changed = true;
      }
    ImGui::EndCombo();
  }
  return changed;
}

bool filter_pickers(AppState& s, bool heatmap) {
  analysis::BenchFilter& f = s.bench.filter;
  const analysis::BenchValues& v = s.bench.values;
  auto num = [](sim::i64 x) { return std::to_string(x); };
  bool changed = false;
  if (!heatmap) changed |= value_picker("batch", v.batch, f.batch, num);
  changed |= value_picker("heads", v.heads, f.heads, num);
  changed |= value_picker("d", v.head_dim, f.head_dim, num);
  changed |= value_picker("##causal", v.causal, f.causal, [](bool c) { return std::string(c ? "causal" : "non-causal"); });
  changed |= value_picker("dtype", v.dtype, f.dtype, [](sim::DType d) { return std::string(sim::to_string(d)); });
  return changed;
}

void toolbar(AppState& s, const analysis::ChartSpec& c, const analysis::ChartEntry& e) {
  if (!s.view.hall_layout) {  // the hall layout's row above has "▼ tiling"
    if (ImGui::SmallButton(s.view.plots_large ? "▼ smaller" : "▲ larger")) s.view.plots_large = !s.view.plots_large;
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("give the plots most of the window's height, or give it back");
    ImGui::SameLine();
  }
  // One button, one menu: the row stays short at any UI scale.
  if (ImGui::SmallButton("Export…")) ImGui::OpenPopup("export");
  if (ImGui::BeginPopup("export")) {
    ImGui::TextColored(color_dim(), "%s", c.title.c_str());
    for (const char* ext : {"png", "svg", "pdf", "csv"}) {
      const std::string item = std::string("this chart as ") + ext;
      if (ImGui::MenuItem(item.c_str())) export_chart_files(s, c, ext);
    }
    if (ImGui::MenuItem("this chart in all four formats")) export_chart_files(s, c, "all");
    ImGui::Separator();
    if (ImGui::MenuItem("every chart: a report folder")) export_all(s);
    if (ImGui::MenuItem("screenshot of the window", "F12")) request_screenshot(s, "");
    ImGui::Separator();
    ImGui::TextUnformatted("folder");
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 14);
    ImGui::InputText("##dir", &s.view.export_dir);
    ImGui::EndPopup();
  }
  if (!e.needs_results) {
    ImGui::SameLine();
    ImGui::TextColored(color_dim(), "wheel: zoom · drag: pan · double-click: fit · hover: values");
  }
  if (e.needs_results && s.bench.have_results && filter_pickers(s, e.batch_is_axis)) rebuild_bench_charts(s);
  if (e.picks_baseline && !s.bench.kernel_ids.empty()) {
    ImGui::SameLine();
    if (kernel_combo("baseline", s.bench.kernel_ids, s.bench.baseline_kernel, "auto")) rebuild_bench_charts(s);
  }
  if (e.picks_kernel && !s.bench.kernel_ids.empty()) {
    ImGui::SameLine();
    if (kernel_combo("kernel", s.bench.kernel_ids, s.bench.heatmap_kernel, "auto")) rebuild_bench_charts(s);
  }
}

}  // namespace

namespace {

// What a tab shows: the counters, the benchmarks panel, or its chart.
void draw_plot_tab(AppState& s, const PlotTab& t) {
  const std::string id(t.id);
  if (std::find(s.tabs_visited.begin(), s.tabs_visited.end(), id) == s.tabs_visited.end()) s.tabs_visited.push_back(id);
  if (t.id == kCountersTab) {
    ImGui::BeginChild("counters_tab");
    panel_counters(s);
    ImGui::EndChild();
  } else if (t.id == kBenchPanelTab) {
    panel_bench(s);
  } else if (t.chart) {
    const analysis::ChartSpec& c = s.model.charts.of(*t.chart);
    toolbar(s, c, *t.chart);
    const ImVec2 avail = ImGui::GetContentRegionAvail();
    if (plot::BeginPlot(id.c_str(), c, ImVec2(avail.x, std::max(avail.y, 60.0f)), s.view.ui_scale)) {
      // Where each algorithm's intensity stands at the cursor (it climbs as
      // the schedule runs: loads first, FLOPs later).
      if (t.chart->shows_ai_at_cursor && s.model.valid)
        for (const AlgoView& v : s.model.algos) plot::PlotSeries(v.snap.ai_marker);
      plot::EndPlot();
    }
  }
}

// The hall layout's plots: the tabs as one drop-down (a row of tabs at UI
// scale 2 would scroll and cut its last one), the chosen one below.
void hall_plots(AppState& s) {
  const PlotTab* shown = find_plot_tab(s.view.tab);
  if (!shown) shown = &plot_tabs().front();
  if (ImGui::Button("▼ tiling")) s.view.plots_large = false;  // one view at a time: back to the tiling view
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the tiling view on the stage again");
  ImGui::SameLine();
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 16);
  if (ImGui::BeginCombo("##plot", std::string(shown->label).c_str())) {
    for (const PlotTab& t : plot_tabs())
      if (ImGui::Selectable(std::string(t.label).c_str(), &t == shown)) {
        s.view.tab = std::string(t.id);
        shown = &t;
      }
    ImGui::EndCombo();
  }
  s.view.force_tab = false;
  draw_plot_tab(s, *shown);
}

}  // namespace

void panel_plots(AppState& s) {
  if (s.view.hall_layout && !s.view.plots_large) {
    // The hall layout's strip under the tiling view: one button to the plots.
    const PlotTab* shown = nullptr;
    for (const PlotTab& t : plot_tabs())
      if (t.id == s.view.tab) shown = &t;
    const std::string label = "▲ the plots" + (shown ? ": " + std::string(shown->label) : std::string());
    if (ImGui::SmallButton(label.c_str())) s.view.plots_large = true;
    ImGui::SameLine();
    ImGui::TextColored(color_dim(), "one view at a time at this UI scale");
    return;
  }
  if (s.view.hall_layout) {
    hall_plots(s);
    return;
  }
  if (!ImGui::BeginTabBar("plots", ImGuiTabBarFlags_FittingPolicyScroll)) return;
  const std::vector<PlotTab>& tabs = plot_tabs();
  const int count = static_cast<int>(tabs.size());
  for (int n = 0; n < count; ++n) {
    // Counters first, and only when the layout moved them here.
    const int k = s.view.counters_in_tabs ? (n == 0 ? count - 1 : n - 1) : n;
    const PlotTab& t = tabs[static_cast<size_t>(k)];
    if (t.id == kCountersTab && !s.view.counters_in_tabs) continue;
    const ImGuiTabItemFlags flags = s.view.force_tab && s.view.tab == t.id ? ImGuiTabItemFlags_SetSelected : 0;
    const std::string id(t.id);
    const std::string title = std::string(t.label) + "###" + id;
    if (!ImGui::BeginTabItem(title.c_str(), nullptr, flags)) continue;
    if (!s.view.force_tab) s.view.tab = id;
    draw_plot_tab(s, t);
    ImGui::EndTabItem();
  }
  s.view.force_tab = false;
  ImGui::EndTabBar();
}

}  // namespace flashlab::gui
