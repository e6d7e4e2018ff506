// flashlab report: a lab report in one command — every chart the results
// support (PNG, SVG, PDF, CSV), the tables, the metadata and one document
// (Markdown and a multi-page PDF) with a caption under each chart. Without a
// results file: the model-only charts of the given problem.
#include <algorithm>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/datasheet.hpp"
#include "flashlab/analysis/measured_checks.hpp"
#include "flashlab/analysis/report.hpp"
#include "flashlab/export/report_bundle.hpp"
#include "flashlab/kernels/bench_grid.hpp"

namespace flashlab::cli {
namespace {

// The rows of `all` that belong to a named sweep's grid: its problems (and its
// kernels, when the sweep lists them; PyTorch's rows of those problems too).
analysis::ReportSection sweep_section(const analysis::BenchResults& all, const kernels::SweepFile& s) {
  analysis::ReportSection sec;
  sec.name = s.name;
  sec.title = s.title;
  sec.source = s.source;
  sec.results.meta = all.meta;
  const std::vector<sim::AttentionProblem> grid = kernels::expand_axes(s.axes);
  for (const analysis::BenchRow& row : all.rows) {
    const bool in_grid = std::any_of(grid.begin(), grid.end(),
                                     [&](const sim::AttentionProblem& p) { return p == row.problem; });
    const bool ours = kernels::find_kernel(row.kernel) != nullptr;
    const bool listed = s.axes.kernels.empty() || !ours ||
                        std::find(s.axes.kernels.begin(), s.axes.kernels.end(), row.kernel) != s.axes.kernels.end();
    if (in_grid && listed) sec.results.rows.push_back(row);
  }
  return sec;
}

class ReportCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("report", "a lab report in one command: every chart (PNG, SVG, PDF, CSV), the tables, "
                                        "the metadata, and report.md + report.pdf with a caption under each chart");
    app->add_option("--out", out_, "the folder to write (created if missing)")->required();
    app->add_option("--results", results_, "measured runs (JSON or CSV written by flashlab bench or "
                                           "scripts/torch_compare.py); without it, the model-only charts");
    app->add_option("--sweep", sweeps_, "a named sweep of assets/sweeps (or a JSON file): a section of its own with "
                                        "the runs of its grid (repeatable)");
    add_problem_flags(*app, flags_);
    app->add_option("--algos", algos_, "algorithms of the model charts: " + algorithms_help() + ", or all")
        ->capture_default_str();
    app->add_option("--width", width_, "chart width in pixels (PNG)")->capture_default_str();
    app->add_option("--height", height_, "chart height in pixels (PNG)")->capture_default_str();
  }

  int run() override {
    check_chart_size(width_, height_);
    if (!sweeps_.empty() && results_.empty()) throw UsageError("--sweep picks runs of a results file: give --results");
    Resolved r = resolve(flags_);
    analysis::ReportRequest req;
    req.command = "flashlab report --out " + out_ + (results_.empty() ? "" : " --results " + results_);
    for (const std::string& s : sweeps_) req.command += " --sweep " + s;
    req.chart_size.width_px = width_;
    req.chart_size.height_px = height_;
    if (!results_.empty()) {
      analysis::BenchResults all;
      try {
        all = analysis::bench_from_file(results_);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
      req.results_origin = results_;
      // The model charts on the GPU that ran, unless --hw names another.
      if (flags_.hw == ProblemFlags{}.hw)
        if (const auto hw = analysis::results_hardware(all.meta, analysis::datasheet_presets())) r.hw = *hw;
      if (sweeps_.empty()) {
        analysis::ReportSection sec;
        sec.name = "runs";
        sec.title = "The runs of " + results_;
        sec.results = all;
        req.sections.push_back(std::move(sec));
      }
      for (const std::string& name : sweeps_) {
        try {
          req.sections.push_back(sweep_section(all, kernels::load_sweep(name)));
        } catch (const std::exception& e) {
          throw UsageError("--sweep " + name + ": " + e.what());
        }
      }
    }
    req.model.problem = r.problem;
    req.model.hw = r.hw;
    req.model.options = r.options;
    req.model.algorithms = parse_algorithms(algos_);
    analysis::ReportBundle b;
    try {
      b = analysis::write_report(req, out_);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
    std::cout << "wrote " << b.files.size() << " files to " << out_ << ": report.md";
    if (std::find(b.files.begin(), b.files.end(), "report.pdf") != b.files.end()) std::cout << ", report.pdf";
    const auto charts = std::count_if(b.files.begin(), b.files.end(),
                                      [](const std::string& f) { return f.size() > 4 && f.rfind(".csv") == f.size() - 4 && f.rfind("charts/", 0) == 0; });
    std::cout << ", " << charts << " charts (charts/), tables/, metadata.json\n";
    for (const std::string& n : b.notes) std::cout << "note: " << n << "\n";
    return 0;
  }

 private:
  ProblemFlags flags_;
  std::string out_, results_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ",");
  std::vector<std::string> sweeps_;
  int width_ = 1200, height_ = 800;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace flashlab::cli
