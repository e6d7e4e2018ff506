// flashlab export: one chart, headless, from the same ChartSpec the GUI draws,
// to SVG, PNG, PDF or CSV (by the extension of --out), written atomically.
#include <algorithm>
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/export/chart_export.hpp"
#include "flashlab/sim/core/closest_name.hpp"

namespace flashlab::cli {
namespace {

class ExportCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("export", "write one chart (the GUI's plots) as SVG, PNG, PDF or CSV, headless");
    app->add_option("--chart", chart_, analysis::chart_id_list("|"))->required();
    add_chart_output_flags(*app, out_, "output file");
    app->get_option("--out")->required();
    add_problem_flags(*app, flags_);
    app->add_option("--algos", algos_, "algorithms of the model charts: " + algorithms_help() + ", or all")
        ->capture_default_str();
    app->add_option("--results", results_, "measured results (JSON or CSV written by flashlab bench or "
                                           "scripts/torch_compare.py): bench charts, and measured points on the "
                                           "roofline; repeatable: the files are merged as flashlab report merges "
                                           "them, a run held twice kept from the first")
        ->take_all();
    app->add_option("--kernel", kernel_, "bench-heatmap: the kernel to show (default: the first with a batch × seq grid)");
    app->add_option("--baseline", baseline_, "bench-speedup: the baseline kernel (default: torch_eager, naive_cublas or naive)");
    app->add_option("--filter", filter_, "bench charts: which configuration, e.g. batch=32,causal=yes (keys: " +
                                             analysis::bench_filter_key_list() +
                                             "; default: the first value of each that varies)");
  }

  int run() override {
    check_chart_output(out_);
    const Resolved r = resolve(flags_);
    analysis::ChartContext ctx;
    ctx.problem = r.problem;
    ctx.hw = r.hw;
    ctx.profile = r.profile;
    ctx.options = r.options;
    ctx.algorithms = parse_algorithms(algos_);

    analysis::BenchResults results;
    std::vector<std::string> notes;
    const bool have_results = !results_.empty();
    if (have_results) results = read_results_files("--results", results_, notes);

    std::optional<analysis::BenchFilter> filter;
    if (!filter_.empty()) {
      filter = usage_errors_of<std::invalid_argument>("--filter", [&] { return analysis::parse_bench_filter(filter_); });
      if (have_results)
        if (const std::string why = analysis::filter_misses(results, *filter); !why.empty())
          throw UsageError("--filter: " + why);
    }
    if (have_results) {
      check_kernel_named("--kernel", kernel_, results);
      check_kernel_named("--baseline", baseline_, results);
    }
    analysis::ChartSpec chart;
    try {
      chart = analysis::build_chart(chart_, ctx, have_results ? &results : nullptr, kernel_, baseline_,
                                    filter ? &*filter : nullptr);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--chart: ") + e.what());
    }
    write_chart_output(chart, out_);
    for (const std::string& n : notes) std::cout << "note: " << n << "\n";
    return 0;
  }

 private:
  // A kernel named by a flag must have runs in the results: else one line with
  // the kernels there (and the nearest of them).
  static void check_kernel_named(const char* flag, const std::string& id, const analysis::BenchResults& r);

  ProblemFlags flags_;
  ChartOutput out_;
  std::string chart_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), kernel_, baseline_, filter_;
  std::vector<std::string> results_;
};

void ExportCommand::check_kernel_named(const char* flag, const std::string& id, const analysis::BenchResults& r) {
  if (id.empty()) return;
  std::vector<std::string> there;
  for (const analysis::BenchRow& row : r.rows)
    if (std::find(there.begin(), there.end(), row.kernel) == there.end()) there.push_back(row.kernel);
  if (std::find(there.begin(), there.end(), id) != there.end()) return;
  std::string list;
  for (const std::string& k : there) list += (list.empty() ? "" : ", ") + k;
  throw UsageError(std::string(flag) + ": no run of '" + id + "' in the results (kernels there: " + list + ")" +
                   sim::did_you_mean(id, there));
}

}  // namespace

std::unique_ptr<Command> make_export_command() { return std::make_unique<ExportCommand>(); }

}  // namespace flashlab::cli
