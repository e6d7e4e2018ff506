// flashlab report: a lab report in one command — every chart the results
// support (PNG, SVG, PDF, CSV), the tables, the metadata and one document
// (Markdown and a multi-page PDF) with a caption under each chart. Without a
// results file: the model-only charts of the given problem.
#include <algorithm>
#include <iostream>
#include <set>

#include "commands.hpp"
#include "common.hpp"
#include <filesystem>

#include "flashlab/analysis/results/bench_filter.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/analysis/student/lab.hpp"
#include "flashlab/analysis/placement/measured_checks.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/export/report_bundle.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/sim/core/assets.hpp"

namespace flashlab::cli {
namespace {

// Whether any row records an allocation limit (files written before rows
// carried one record none: their sweeps' limits cannot be told apart).
bool records_limits(const analysis::BenchResults& r) {
  return std::any_of(r.rows.begin(), r.rows.end(), [](const analysis::BenchRow& x) { return x.mem_limit_bytes > 0; });
}

// The rows of `all` that belong to a named sweep's grid: its problems (and its
// kernels, when the sweep lists them; PyTorch's rows of those problems too),
// measured under the sweep's allocation limit where the rows record one.
analysis::ReportSection sweep_section(const analysis::BenchResults& all, const kernels::SweepFile& s) {
  analysis::ReportSection sec;
  sec.name = s.name;
  sec.title = s.title;
  sec.source = s.source;
  sec.results.meta = all.meta;
  sec.results.sources = all.sources;
  const std::vector<sim::AttentionProblem> grid = kernels::expand_axes(s.axes);
  for (const analysis::BenchRow& row : all.rows) {
    const bool in_grid = std::any_of(grid.begin(), grid.end(),
                                     [&](const sim::AttentionProblem& p) { return p == row.problem; });
    const bool ours = kernels::find_kernel(row.kernel) != nullptr;
    const bool listed = s.axes.kernels.empty() || !ours ||
                        std::find(s.axes.kernels.begin(), s.axes.kernels.end(), row.kernel) != s.axes.kernels.end();
    const bool same_limit = !records_limits(all) || row.mem_limit_bytes == s.mem_limit_bytes.value_or(0);
    if (in_grid && listed && same_limit) sec.results.rows.push_back(row);
  }
  // PyTorch's rows of the grid's problems in the passes the grid's own rungs ran
  // (its backward rows belong to a backward grid of the same problems).
  std::set<std::string> passes;
  for (const analysis::BenchRow& row : sec.results.rows)
    if (!analysis::is_pytorch(row.kernel)) passes.insert(row.direction);
  auto& rows = sec.results.rows;
  rows.erase(std::remove_if(rows.begin(), rows.end(),
                            [&](const analysis::BenchRow& r) {
                              return analysis::is_pytorch(r.kernel) && !passes.empty() && !passes.count(r.direction);
                            }),
             rows.end());
  return sec;
}

// Why the measured runs cannot be drawn on a roofline, "" when they can: the
// GPU they name matches no hardware preset, or they name none.
std::string roof_refusal(const analysis::BenchResults& all, bool matched, bool hw_given) {
  if (matched || hw_given) return "";
  if (all.meta.gpu.empty())
    return "the results do not record their GPU, so no roof is theirs; give --hw with the preset (flashlab hw list) or a "
           "measured profile of the GPU that ran them";
  return "the results were measured on " + all.meta.gpu + ", which no hardware preset matches (flashlab hw list); give "
         "--hw with a preset or a measured profile of that GPU";
}

// A lab's committed results, relative to the assets folder.
std::vector<std::string> lab_results(const analysis::Lab& lab) {
  std::vector<std::string> out;
  for (const std::string& f : lab.results) {
    const std::filesystem::path p = std::filesystem::path(sim::assets_dir()) / f;
    if (!std::filesystem::exists(p))
      throw UsageError("--lab " + lab.name + ": its results " + p.lexically_normal().string() +
                       " are not here; give --results (scripts/run-lab.sh measures them on a GPU)");
    out.push_back(p.lexically_normal().string());
  }
  if (out.empty()) throw UsageError("--lab " + lab.name + ": the lab names no results: give --results");
  return out;
}

std::string joined(const std::vector<std::string>& v, const std::string& sep) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// One figure of a lab: its sweep's rows, of the implementations it names, drawn as its chart.
analysis::ReportFigure lab_figure(const analysis::LabFigure& fig, const analysis::BenchResults& all,
                                  const analysis::ChartContext& ctx) {
  analysis::ReportFigure f;
  f.item = fig.item;
  f.note = fig.note;
  f.chart_id = fig.chart;
  f.sweep = fig.sweep;
  kernels::SweepFile sweep;
  try {
    sweep = kernels::load_sweep(fig.sweep);
    f.runs = sweep_section(all, sweep).results;
  } catch (const std::exception& e) {
    throw UsageError("the figure '" + fig.item + "': sweep " + fig.sweep + ": " + e.what());
  }
  if (!fig.kernels.empty())
    f.runs.rows.erase(std::remove_if(f.runs.rows.begin(), f.runs.rows.end(),
                                     [&](const analysis::BenchRow& r) {
                                       return std::find(fig.kernels.begin(), fig.kernels.end(), r.kernel) ==
                                              fig.kernels.end();
                                     }),
                      f.runs.rows.end());
  // The figure's filter as written: "" draws every row of its grid (the lab file
  // fixes what the figure holds; no default picks a slice of it).
  const analysis::BenchFilter filter = analysis::parse_bench_filter(fig.filter);
  // The grid's problems the figure draws that no run of its implementations
  // holds: not measured yet, said in the chart and the report, never drawn as 0.
  for (const sim::AttentionProblem& p : kernels::expand_axes(sweep.axes)) {
    analysis::BenchRow probe;
    probe.problem = p;
    if (!filter.matches(probe)) continue;
    if (std::none_of(f.runs.rows.begin(), f.runs.rows.end(), [&](const analysis::BenchRow& r) { return r.problem == p; }))
      f.unmeasured.push_back(sim::describe(p));
  }
  f.chart = analysis::build_chart(fig.chart, ctx, &f.runs, fig.kernel, fig.baseline, &filter);
  if (!f.unmeasured.empty() && !f.chart.empty())
    f.chart.notes.push_back("not in these results: " + joined(f.unmeasured, "; ") + " (the sweep " + fig.sweep + ")");
  return f;
}

analysis::LabReport lab_report(const analysis::Lab& lab, const analysis::BenchResults& all, const analysis::ChartContext& ctx) {
  analysis::LabReport out;
  out.name = lab.name;
  out.title = lab.title;
  out.measured = lab.measured;
  out.differences = lab.differences;
  out.runs.meta = all.meta;
  out.runs.sources = all.sources;
  for (const analysis::LabFigure& fig : lab.figures) {
    out.figures.push_back(lab_figure(fig, all, ctx));
    for (const analysis::BenchRow& row : out.figures.back().runs.rows)
      if (std::none_of(out.runs.rows.begin(), out.runs.rows.end(),
                       [&](const analysis::BenchRow& o) { return analysis::same_run(o, row); }))
        out.runs.rows.push_back(row);
  }
  return out;
}

class ReportCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("report", "a lab report in one command: every chart (PNG, SVG, PDF, CSV), the tables, "
                                        "the metadata, and report.md + report.pdf with a caption under each chart");
    app->add_option("--out", out_, "the folder to write (created if missing)");
    app->add_option("--results", results_, "measured runs (JSON or CSV written by flashlab bench or "
                                           "scripts/torch_compare.py; repeatable: the files are merged, a run held "
                                           "twice kept from the first); without it, the model-only charts")
        ->take_all();
    app->add_option("--lab", lab_, "a lab's report: every figure of assets/labs/NAME.json, from its committed "
                                   "results unless --results gives others (" + joined(analysis::lab_names(), ", ") + ")");
    app->add_flag("--print-sweeps", print_sweeps_, "with --lab: print the sweeps the lab's figures draw, one per line, "
                                                   "and stop (what scripts/run-lab.sh measures)");
    app->add_option("--sweep", sweeps_, "a named sweep of assets/sweeps (or a JSON file): a section of its own with "
                                        "the runs of its grid (repeatable)");
    add_problem_flags(*app, flags_);
    app->add_option("--algos", algos_, "algorithms of the model charts: " + algorithms_help() + ", or all")
        ->capture_default_str();
    app->add_option("--width", width_, "chart width in pixels (PNG)")->capture_default_str();
    app->add_option("--height", height_, "chart height in pixels (PNG)")->capture_default_str();
  }

  int run() override {
    std::optional<analysis::Lab> lab;
    if (!lab_.empty()) {
      lab = usage_errors_of<std::exception>("--lab", [&] { return analysis::load_lab(lab_); });
      if (!sweeps_.empty()) throw UsageError("--lab draws the lab's own sweeps: leave out --sweep");
    }
    if (print_sweeps_) {
      if (!lab) throw UsageError("--print-sweeps prints a lab's sweeps: give --lab");
      for (const std::string& s : analysis::lab_sweeps(*lab)) std::cout << s << "\n";
      return 0;
    }
    if (out_.empty()) throw UsageError("--out is required: the folder to write");
    check_chart_size(width_, height_);
    if (!sweeps_.empty() && results_.empty()) throw UsageError("--sweep picks runs of a results file: give --results");
    if (lab && results_.empty()) results_ = lab_results(*lab);
    Resolved r = resolve(flags_);
    analysis::ReportRequest req;
    req.command = "flashlab report --out " + out_ + (lab ? " --lab " + lab_ : "");
    for (const std::string& f : results_) req.command += " --results " + f;
    for (const std::string& s : sweeps_) req.command += " --sweep " + s;
    req.chart_size.width_px = width_;
    req.chart_size.height_px = height_;
    std::vector<std::string> notes;
    if (!results_.empty()) {
      const analysis::BenchResults all = read_results_files("--results", results_, notes);
      req.results_notes = notes;
      req.results_origin = joined(results_, ", ");
      // The charts on the GPU that ran, unless --hw names another.
      const bool hw_given = flags_.hw != ProblemFlags{}.hw;
      bool matched = false;
      if (!hw_given)
        if (const auto hw = analysis::results_hardware(all.meta, analysis::datasheet_presets())) {
          r.hw = *hw;
          matched = true;
        }
      req.roof_refusal = roof_refusal(all, matched, hw_given);
      if (lab) {
        req.model.problem = r.problem;
        req.model.hw = r.hw;
        req.model.options = r.options;
        req.model.algorithms = parse_algorithms(algos_);
        req.lab = lab_report(*lab, all, req.model);
      } else if (sweeps_.empty()) {
        analysis::ReportSection sec;
        sec.name = "runs";
        sec.title = "The runs of " + req.results_origin;
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
    for (const std::string& n : notes) std::cout << "note: " << n << "\n";
    for (const std::string& n : b.notes) std::cout << "note: " << n << "\n";
    return 0;
  }

 private:
  ProblemFlags flags_;
  std::string out_, lab_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ",");
  std::vector<std::string> results_, sweeps_;
  bool print_sweeps_ = false;
  int width_ = 1200, height_ = 800;
};

}  // namespace

std::unique_ptr<Command> make_report_command() { return std::make_unique<ReportCommand>(); }

}  // namespace flashlab::cli
