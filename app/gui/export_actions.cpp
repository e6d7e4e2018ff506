// Export from the window: one chart in one or all formats, every chart into a
// report folder, a whole-window screenshot. Files are written atomically by
// the exporters; every outcome is a status line, never an exception.
#include <ctime>
#include <filesystem>

#include "flashlab/analysis/report.hpp"
#include "flashlab/analysis/csv.hpp"
#include "flashlab/export/chart_export.hpp"
#include "model.hpp"
#include "panels.hpp"

namespace flashlab::gui {

namespace {

std::string timestamp() {
  const std::time_t t = std::time(nullptr);
  char buf[32];
  std::tm tm{};
  localtime_r(&t, &tm);
  std::strftime(buf, sizeof buf, "%Y%m%d-%H%M%S", &tm);
  return buf;
}

bool ensure_dir(AppState& s, const std::string& dir) {
  std::error_code ec;
  if (dir.empty()) {
    s.view.status = "export: the folder name is empty";
    s.view.status_is_error = true;
    return false;
  }
  std::filesystem::create_directories(dir, ec);
  if (ec || !std::filesystem::is_directory(dir, ec)) {
    s.view.status = "export: cannot create folder '" + dir + "': " + (ec ? ec.message() : "not a folder");
    s.view.status_is_error = true;
    return false;
  }
  return true;
}

// Writes c in the given formats; returns how many files were written.
int write_chart(AppState& s, const analysis::ChartSpec& c, const std::string& dir, const std::vector<std::string>& exts,
                std::string& first_error) {
  int n = 0;
  analysis::ExportOptions o;
  o.width_px = 1600;
  o.height_px = 1000;
  for (const std::string& ext : exts) {
    if ((ext == "png" || ext == "pdf") && !analysis::have_cairo()) {
      if (first_error.empty()) first_error = "this build has no cairo: " + ext + " export is unavailable";
      continue;
    }
    const std::string path = (std::filesystem::path(dir) / (c.id + "." + ext)).string();
    try {
      analysis::export_chart(c, path, o);
      ++n;
    } catch (const std::exception& e) {
      if (first_error.empty()) first_error = e.what();
    }
  }
  (void)s;
  return n;
}

}  // namespace

void export_chart_files(AppState& s, const analysis::ChartSpec& c, const char* ext_or_all) {
  if (!ensure_dir(s, s.view.export_dir)) return;
  const std::string which = ext_or_all;
  const std::vector<std::string> exts = which == "all" ? std::vector<std::string>{"png", "svg", "pdf", "csv"}
                                                       : std::vector<std::string>{which};
  std::string err;
  const int n = write_chart(s, c, s.view.export_dir, exts, err);
  s.view.status_is_error = !err.empty();
  s.view.status = err.empty() ? "wrote " + std::to_string(n) + " file(s): " + s.view.export_dir + "/" + c.id + "." +
                                    (which == "all" ? "{png,svg,pdf,csv}" : which)
                              : "export failed: " + err;
}

void export_all(AppState& s) {
  const std::string dir = (std::filesystem::path(s.view.export_dir) / ("report-" + timestamp())).string();
  if (!ensure_dir(s, dir)) return;
  // Every chart of the table; those of measured results when some are loaded.
  std::vector<const analysis::ChartSpec*> charts;
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (!e.needs_results || s.bench.have_results) charts.push_back(&s.model.charts.of(e));
  int n = 0;
  std::string err;
  std::string index = "# FlashLab report " + timestamp() + "\n\n";
  if (s.model.valid) {
    index += "Problem: " + sim::describe(s.model.problem) + " on " + s.model.hw.name + ", M = " +
             sim::bytes_iec(static_cast<double>(s.model.sram_bytes)) + "\n\n";
    nlohmann::json j = nlohmann::json::array();
    for (const AlgoView& v : s.model.algos) j.push_back(analysis::sim_json(v.result, s.model.hw));
    try {
      analysis::write_file_atomic((std::filesystem::path(dir) / "simulation.json").string(), j.dump(2) + "\n");
      ++n;
    } catch (const std::exception& e) {
      err = e.what();
    }
  } else {
    index += "The inputs were invalid: " + (s.model.errors.empty() ? std::string("?") : s.model.errors.front()) + "\n\n";
  }
  for (const analysis::ChartSpec* ch : charts) {
    n += write_chart(s, *ch, dir, {"png", "svg", "pdf", "csv"}, err);
    index += "- " + ch->title + ": `" + ch->id + ".png`, `.svg`, `.pdf`, `.csv`\n";
  }
  index += "- the whole window: `window.png`\n";
  try {
    analysis::write_file_atomic((std::filesystem::path(dir) / "README.md").string(), index);
    ++n;
  } catch (const std::exception& e) {
    if (err.empty()) err = e.what();
  }
  request_screenshot(s, (std::filesystem::path(dir) / "window.png").string());
  s.view.status_is_error = !err.empty();
  s.view.status = err.empty() ? "report: " + std::to_string(n + 1) + " files in " + dir
                              : "report in " + dir + " is incomplete: " + err;
}

void request_screenshot(AppState& s, const std::string& path) {
  std::string p = path;
  if (p.empty()) {
    if (!ensure_dir(s, s.view.export_dir)) return;
    p = (std::filesystem::path(s.view.export_dir) / ("screenshot-" + timestamp() + ".png")).string();
  }
  s.view.screenshot_requested = true;
  s.view.screenshot_path = p;
}

}  // namespace flashlab::gui
