// Export from the window: one chart in one or all formats, every chart into a
// report folder, a whole-window screenshot. Files are written atomically by
// the exporters; every outcome is a status line, never an exception.
#include <ctime>
#include <filesystem>

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/export/chart_export.hpp"
#include "flashlab/export/report_bundle.hpp"
#include "model/model.hpp"
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
  if (!s.model.valid) {
    s.view.status = "report: the inputs are invalid (" + (s.model.errors.empty() ? std::string("?") : s.model.errors.front()) +
                    "); fix them first";
    s.view.status_is_error = true;
    return;
  }
  // The bundle `flashlab report` writes: the model charts of the problem on
  // screen, and the loaded results as a section of their own.
  analysis::ReportRequest req;
  req.model.problem = s.model.problem;
  req.model.hw = s.model.hw;
  req.model.options = s.model.options;
  req.model.algorithms = chart_algorithms(s.inputs);
  req.command = "FlashLab's window, Export… → every chart";
  req.chart_size.width_px = 1600;
  req.chart_size.height_px = 1000;
  if (s.bench.have_results) {
    req.results_origin = s.bench.source.empty() ? s.bench.results_path : s.bench.source;
    analysis::ReportSection sec;
    sec.name = "runs";
    sec.title = "The runs of " + req.results_origin;
    sec.results = s.bench.results;
    req.sections.push_back(std::move(sec));
  }
  try {
    const analysis::ReportBundle b = analysis::write_report(req, dir);
    s.view.status = "report: " + std::to_string(b.files.size()) + " files in " + dir + " (report.md, report.pdf)";
    s.view.status_is_error = false;
    if (!b.notes.empty()) s.view.status += " · " + b.notes.front();
  } catch (const std::exception& e) {
    s.view.status = "report in " + dir + " is incomplete: " + e.what();
    s.view.status_is_error = true;
    return;
  }
  // The whole window too, once the menu that asked for the report has closed.
  request_screenshot(s, (std::filesystem::path(dir) / "window.png").string());
  s.view.screenshot_delay_frames = 2;
  s.view.screenshot_joins_status = true;
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
