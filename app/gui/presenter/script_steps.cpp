#include "script_steps.hpp"

#include <filesystem>
#include <stdexcept>

#include "bench/bench_action.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "presenter.hpp"
#include "scenario_settings.hpp"
#include "script_keys.hpp"

namespace flashlab::gui {

namespace {

using nlohmann::json;

// A relative path is inside the export folder (created if needed).
void screenshot(AppState& s, const json& v, const std::string&) {
  std::string path = text_of(v, "screenshot");
  if (path.empty()) throw std::runtime_error("screenshot must be a file name (PNG, or BMP ending in .bmp)");
  if (!std::filesystem::path(path).is_absolute() && !s.view.export_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(s.view.export_dir, ec);
    if (ec) throw std::runtime_error("screenshot: cannot create the export folder '" + s.view.export_dir + "': " + ec.message());
    path = (std::filesystem::path(s.view.export_dir) / path).string();
  }
  request_screenshot(s, path);
}

void export_chart(AppState& s, const json& v, const std::string&) {
  if (!v.is_object() || !v.contains("chart") || !v.contains("format"))
    throw std::runtime_error("export must be {\"chart\": ID, \"format\": png|svg|pdf|csv|all}");
  const std::string id = text_of(v["chart"], "export.chart"), fmt = text_of(v["format"], "export.format");
  const analysis::ChartEntry* chart = analysis::find_chart(id);
  if (!chart) throw std::runtime_error("unknown chart '" + id + "' (" + analysis::chart_id_list() + ")");
  need_chart(s, *chart);
  export_chart_files(s, s.model.charts.of(*chart), fmt.c_str());
}

// The pointer of a headless run, placed for the pointer's ring and the magnifier.
void place_mouse(AppState& s, const json& v, const std::string&) {
  if (v.is_null()) {
    s.view.script_mouse = false;
    return;
  }
  if (!v.is_array() || v.size() != 2) throw std::runtime_error("mouse must be [x, y] in pixels, or null");
  const double x = number_of(v[0], "mouse"), y = number_of(v[1], "mouse");
  if (!(x >= 0 && y >= 0 && x <= 1e5 && y <= 1e5)) throw std::runtime_error("mouse must be [x, y] in pixels from the window's top left");
  s.view.script_mouse = true;
  s.view.script_mouse_x = static_cast<float>(x);
  s.view.script_mouse_y = static_cast<float>(y);
}

void go_to_scene(AppState& s, const json& v, const std::string&) {
  const double n = number_of(v, "scene");
  const int count = static_cast<int>(s.presenter.scenes.size());
  if (count == 0) throw std::runtime_error("scene: this scenario has no scenes");
  if (!(n >= 1 && n <= count)) throw std::runtime_error("scene must be 1 to " + std::to_string(count));
  s.presenter.on = true;
  enter_scene(s, static_cast<int>(n) - 1);
}

}  // namespace

const std::vector<StepKeyRow>& step_key_rows() {
  static const std::vector<StepKeyRow> rows{
      {{"frame", "integer", "the frame the step runs at (every step has one)"}, [](AppState&, const json&, const std::string&) {}},
      {{"key", "key name", "a key pressed as the keyboard does (names below)"},
       [](AppState& s, const json& v, const std::string&) { press_key(s, text_of(v, "key")); }},
      {{"export_all", "bool", "every chart written to export_dir"},
       [](AppState& s, const json& v, const std::string&) {
         if (bool_of(v, "export_all")) export_all(s);
       }},
      {{"screenshot", "PATH", "the window written as PNG (BMP when PATH ends in .bmp: uncompressed, quicker) after this frame (a relative PATH is inside export_dir)"}, screenshot},
      {{"export", "{\"chart\": ID, \"format\": png | svg | pdf | csv | all}", "one chart written to export_dir"}, export_chart},
      {{"wait_bench", "true | seconds", "hold the script until the benchmark has finished (true: 600 s)"},
       [](AppState&, const json& v, const std::string&) { parse_wait_bench(v); }},  // the probe holds the script (probe.cpp)
      {{"wait_prepared", "bool", "hold the script until every scene's chart is built ahead of the hall reaching it"},
       [](AppState&, const json& v, const std::string&) { bool_of(v, "wait_prepared"); }},  // the probe holds the script (probe.cpp)
      {{"scene", "number", "go to the presenter's scene N, from 1"}, go_to_scene},
      {{"mouse", "[x, y] | null", "the mouse pointer at x, y pixels from this frame on (null: off the window, as a headless run starts)"},
       place_mouse},
  };
  return rows;
}

const StepKeyRow* find_step_key(std::string_view key) { return find_key(step_key_rows(), key); }

void apply_script_step(AppState& s, const json& step, const std::string& base_dir) {
  for (auto it = step.begin(); it != step.end(); ++it) {
    if (const SettingRow* setting = find_setting(it.key())) setting->apply(s, *it, base_dir);
    else if (const StepKeyRow* own = find_step_key(it.key())) own->apply(s, *it, base_dir);
    else throw std::runtime_error("unknown key '" + it.key() + "'");
  }
}

}  // namespace flashlab::gui
