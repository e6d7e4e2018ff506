// flashlab export: one chart, headless, from the same ChartSpec the GUI draws,
// to SVG, PNG, PDF or CSV (by the extension of --out), written atomically.
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/chart_table.hpp"
#include "flashlab/analysis/report.hpp"
#include "flashlab/export/chart_export.hpp"

namespace flashlab::cli {
namespace {

class ExportCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("export", "write one chart (the GUI's plots) as SVG, PNG, PDF or CSV, headless");
    app->add_option("--chart", chart_, analysis::chart_id_list("|"))->required();
    app->add_option("--out", out_, "output file; the extension picks the format: .svg .png .pdf .csv")->required();
    add_problem_flags(*app, flags_);
    app->add_option("--algos", algos_, "algorithms of the model charts: " + algorithms_help() + ", or all")
        ->capture_default_str();
    app->add_option("--results", results_, "measured results (JSON or CSV written by flashlab bench): bench charts, "
                                           "and measured points on the roofline");
    app->add_option("--kernel", kernel_, "bench-heatmap: the kernel to show (default: the first with a batch × seq grid)");
    app->add_option("--baseline", baseline_, "bench-speedup: the baseline kernel (default: torch_eager, naive_cublas or naive)");
    app->add_option("--filter", filter_, "bench charts: which configuration, e.g. batch=32,causal=yes (keys: batch, heads, "
                                         "head-dim, causal, dtype; default: the first value of each that varies)");
    app->add_option("--width", width_, "width in pixels (PNG; SVG/PDF keep the proportions)")->capture_default_str();
    app->add_option("--height", height_, "height in pixels")->capture_default_str();
    app->add_flag("--dark", dark_, "the GUI's dark theme instead of white paper");
  }

  int run() override {
    const auto format = analysis::export_format_of(out_);
    if (!format) throw UsageError("--out: '" + out_ + "' must end in .svg, .png, .pdf or .csv");
    if ((*format == analysis::ExportFormat::png || *format == analysis::ExportFormat::pdf) && !analysis::have_cairo())
      throw UsageError("--out: this build has no cairo, so it cannot write " + std::string(analysis::to_string(*format)) +
                       " (use .svg or .csv, or install libcairo2-dev and rebuild)");
    if (width_ < 64 || width_ > 16384 || height_ < 64 || height_ > 16384)
      throw UsageError("--width/--height: " + std::to_string(width_) + "×" + std::to_string(height_) +
                       " is out of range (64 to 16384)");
    const Resolved r = resolve(flags_);
    analysis::ChartContext ctx;
    ctx.problem = r.problem;
    ctx.hw = r.hw;
    ctx.profile = r.profile;
    ctx.options = r.options;
    ctx.algorithms = parse_algorithms(algos_);

    analysis::BenchResults results;
    const bool have_results = !results_.empty();
    if (have_results) results = load_results(results_);

    std::optional<analysis::BenchFilter> filter;
    if (!filter_.empty()) {
      try {
        filter = analysis::parse_bench_filter(filter_);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--filter: ") + e.what());
      }
    }
    analysis::ChartSpec chart;
    try {
      chart = analysis::build_chart(chart_, ctx, have_results ? &results : nullptr, kernel_, baseline_,
                                    filter ? &*filter : nullptr);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--chart: ") + e.what());
    }
    analysis::ExportOptions opt;
    opt.width_px = width_;
    opt.height_px = height_;
    opt.dark = dark_;
    try {
      analysis::export_chart(chart, out_, opt);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
    std::cout << "wrote " << chart_ << " (" << analysis::to_string(*format) << ", " << width_ << "×" << height_
              << ") to " << out_ << "\n";
    for (const std::string& n : chart.notes) std::cout << "note: " << n << "\n";
    return 0;
  }

 private:
  static analysis::BenchResults load_results(const std::string& path);

  ProblemFlags flags_;
  std::string chart_, out_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), results_, kernel_, baseline_, filter_;
  int width_ = 1200, height_ = 800;
  bool dark_ = false;
};

analysis::BenchResults ExportCommand::load_results(const std::string& path) {
  try {
    return analysis::bench_from_file(path);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--results: ") + e.what());
  }
}

}  // namespace

std::unique_ptr<Command> make_export_command() { return std::make_unique<ExportCommand>(); }

}  // namespace flashlab::cli
