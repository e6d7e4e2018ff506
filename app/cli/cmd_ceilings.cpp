// flashlab ceilings [--quick] --out PROFILE.json: measures the ceilings of the
// GPU at hand (kernels/ceilings) and writes them as a hardware profile that
// loads wherever a preset does (--hw PROFILE.json).
// flashlab ceilings chart --hw PRESET|PROFILE [--results FILE] --out FILE:
// the hierarchical roofline with measured runs on it, or a profile's
// working-set sweep, as SVG/PNG/PDF/CSV. Needs no GPU.
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/charts/hierarchical_roofline.hpp"
#include "flashlab/analysis/profiles/measured_profile.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/fits/power_cap_fit.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/analysis/fits/rung_timing_fit.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "flashlab/ceilings/ceilings.hpp"
#include "flashlab/export/chart_export.hpp"

namespace flashlab::cli {
namespace {

using analysis::fixed;

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError("--hw: cannot read '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

sim::HardwareModel load_datasheet(const std::string& name) {
  return usage_errors_of<sim::HardwareError>("--datasheet", [&] { return sim::load_hardware(name); });
}

class CeilingsCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("ceilings", "measure this GPU's ceilings (bandwidths, peaks) into a hardware profile");
    app->require_subcommand(0, 1);
    app->add_option("--out", out_, "write the measured profile (JSON, a hardware preset of kind \"measured\") to FILE");
    app->add_flag("--quick", quick_, "fewer repeats, a coarser sweep: under 20 s");
    app->add_option("--repeats", repeats_, "timed runs per figure, at least 10 (default 20; --quick 10)");
    app->add_option("--datasheet", datasheet_, "the preset to compare with (default: the one matching this GPU)");
    app->add_flag("--quiet", quiet_, "no progress lines on stderr");

    report_ = app->add_subcommand("report", "print a measured profile's figures, targets and sweep again");
    report_->add_option("profile", report_profile_, "a profile written by flashlab ceilings --out")->required();
    report_->add_option("--datasheet", report_datasheet_, "the preset to compare with (default: the one matching)");

    rungs_ = app->add_subcommand("rungs", "fit the rungs' launch model (per launch, per CTA, per tile) to one-GPU "
                                          "runs of a results file; no GPU needed");
    rungs_->add_option("--results", rungs_results_, "results files of flashlab bench (repeat the flag): the rungs' "
                                                    "runs on one GPU, e.g. --sweep rung-timing of fa3_hopper, fa2_tc, "
                                                    "fa3_hopper_bwd, fa2_tc_bwd")
        ->required();
    rungs_->add_option("--power", rungs_power_, "ring results files of one-GPU runs timed as the ring's bench "
                                                "times them (the sweep ring-power-cap; repeat the flag, one GPU): fit "
                                                "each rung's rate under the GPU's power limit and the rung time before "
                                                "the limit holds");
    rungs_->add_option("--out", rungs_out_, "write the fitted constants (flashlab-rung-timing/1) to FILE");

    chart_ = app->add_subcommand("chart", "draw the hierarchical roofline (or a profile's bandwidth sweep); no GPU needed");
    chart_->add_option("--hw", hw_, "hardware preset or profile (a measured profile adds its mma.sync ceilings)")
        ->required();
    chart_->add_option("--results", results_, "measured runs (JSON or CSV written by flashlab bench) to place");
    chart_->add_option("--chart", kind_, "roofline-hier | bandwidth-sweep")->capture_default_str();
    chart_->add_option("--dtype", dtype_, "whose compute ceiling is drawn solid: fp16 | bf16 | fp32 "
                                          "(default: the first placed run's, else fp16)");
    chart_->add_option("--out", chart_out_, "FILE.svg, .png, .pdf or .csv")->required();
  }

  int run() override {
    if (chart_->parsed()) return draw();
    if (rungs_->parsed()) return fit_rungs();
    if (report_->parsed()) return report();
    return measure();
  }

 private:
  // ---- the rungs' launch model ----

  int fit_rungs() {
    std::vector<std::pair<std::string, analysis::BenchResults>> files;
    std::string origin;
    for (const std::string& path : rungs_results_) {
      try {
        files.emplace_back(path, analysis::bench_from_file(path));
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
      origin += (origin.empty() ? "" : " + ") + std::filesystem::path(path).filename().string();
    }
    if (!rungs_out_.empty()) require_output_folder("--out", rungs_out_);
    analysis::BenchResults merged;
    try {
      merged = analysis::merge_results(files).results;
    } catch (const std::exception& e) {
      throw UsageError(std::string("--results: ") + e.what());
    }
    // The power files read and checked before the fits: a wrong one is said at once.
    std::optional<PowerRuns> power;
    if (!rungs_power_.empty()) power = read_power(merged.meta.gpu);
    analysis::RungTimingFits fits;
    try {
      fits = analysis::fit_rung_timings(merged, origin);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--results: ") + e.what());
    }
    if (fits.fits.empty())
      throw UsageError("--results: no rung with 3 or more successful one-GPU runs at one head dim (fa3_hopper, fa2_tc, "
                       "fa3_hopper_bwd, fa2_tc_bwd) in " + origin);
    std::cout << analysis::rung_timing_fits_text(fits);
    if (power) fits.set = fit_power(*power, fits.set);
    if (!rungs_out_.empty()) {
      try {
        analysis::write_file_atomic(rungs_out_, sim::to_rung_timing_json(fits.set));
      } catch (const std::runtime_error& e) {
        throw UsageError(std::string("--out: ") + e.what());
      }
      std::cout << "wrote " << rungs_out_ << " (" << fits.set.rungs.size()
                << " rungs); flashlab ring --rung-timing " << rungs_out_ << " uses it\n";
    }
    return 0;
  }

  // The --power files' runs in one set: one GPU, the first file's description of it.
  struct PowerRuns {
    sim::MeasuredRuns runs;
    std::string origin;
    sim::HardwareModel hw;
  };
  // Throws UsageError: a file that cannot be read, files of two GPUs, a GPU
  // without a datasheet preset, or another GPU than the launch model's
  // (`launch_gpu`, the --results files').
  PowerRuns read_power(const std::string& launch_gpu) const {
    sim::MeasuredRuns runs;
    std::string origin;
    for (const std::string& path : rungs_power_) {
      sim::MeasuredRuns file;
      try {
        file = analysis::ring_results_from_file(path);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--power: ") + e.what());
      }
      if (origin.empty()) {
        runs.meta = file.meta;
      } else if (file.meta.gpu != runs.meta.gpu) {
        throw UsageError("--power: " + path + " was measured on " + file.meta.gpu + ", " + rungs_power_.front() +
                         " on " + runs.meta.gpu + ": the power limit is fitted for one GPU");
      }
      runs.runs.insert(runs.runs.end(), file.runs.begin(), file.runs.end());
      origin += (origin.empty() ? "" : " + ") + std::filesystem::path(path).filename().string();
    }
    const std::optional<sim::HardwareModel> hw = analysis::results_hardware(runs.meta, analysis::datasheet_presets());
    if (!hw)
      throw UsageError("--power: " + origin + ": no datasheet preset matches its GPU '" + runs.meta.gpu +
                       "' (flashlab hw list)");
    if (!launch_gpu.empty() && !runs.meta.gpu.empty() && launch_gpu != runs.meta.gpu)
      throw UsageError("--power: " + origin + " was measured on " + runs.meta.gpu +
                       ", the launch model on " + launch_gpu + ": both belong to one GPU");
    return {std::move(runs), origin, *hw};
  }

  // The power limit's constants over the launch model's set (--power).
  sim::RungTimingSet fit_power(const PowerRuns& p, const sim::RungTimingSet& launch) const {
    analysis::PowerCapFit fit;
    try {
      fit = analysis::fit_power_cap(p.runs, launch, p.hw, p.origin);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--power: ") + e.what());
    }
    std::cout << "\n" << analysis::power_cap_fit_text(fit);
    return fit.set;
  }

  // ---- measuring ----

  int measure() {
    if (out_.empty()) throw UsageError("ceilings: give --out PROFILE.json (where the measured profile goes)");
    if (!repeats_.empty() && parse_positive("--repeats", repeats_) < 10)
      throw UsageError("--repeats: at least 10 (the figures are medians of at least 10 runs)");
    require_output_folder("--out", out_);
    std::optional<sim::HardwareModel> datasheet;
    if (!datasheet_.empty()) datasheet = load_datasheet(datasheet_);
    if (const std::string why = ceilings::unavailable_reason(); !why.empty()) throw UsageError("ceilings: " + why);

    ceilings::Options o;
    o.quick = quick_;
    o.repeats = repeats_.empty() ? 0 : static_cast<int>(parse_positive("--repeats", repeats_));
    sim::MeasuredProfile p = usage_errors_of<ceilings::Unavailable, ceilings::MeasureError, sim::HardwareError>("ceilings", [&] {
      return ceilings::measure_all(o, [&](const std::string& line) {
        if (!quiet_) std::cerr << "ceilings: " << line << std::endl;
      });
    });
    if (!datasheet) datasheet = analysis::match_datasheet(p.device.name, p.device.sm_count, analysis::datasheet_presets());
    std::cout << analysis::profile_report(p, datasheet ? &*datasheet : nullptr);
    try {
      analysis::write_file_atomic(out_, sim::profile_to_json(p));
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
    std::cout << "wrote " << out_ << " (" << p.hw.name << ", kind measured, " << p.figures.size() << " figures, "
              << p.mode << " run in " << fixed(p.wall_s, 1) << " s); use it as --hw " << out_ << "\n";
    return 0;
  }

  // ---- a stored profile, printed again ----

  int report() {
    sim::MeasuredProfile p;
    try {
      p = sim::load_profile(report_profile_);
    } catch (const sim::HardwareError& e) {
      throw UsageError(std::string("ceilings report: ") + e.what());
    }
    std::optional<sim::HardwareModel> ds;
    if (!report_datasheet_.empty())
      ds = load_datasheet(report_datasheet_);
    else
      ds = analysis::match_datasheet(p.device.name, p.device.sm_count, analysis::datasheet_presets());
    std::cout << analysis::profile_report(p, ds ? &*ds : nullptr);
    return 0;
  }

  // ---- drawing ----

  int draw() {
    const auto format = analysis::export_format_of(chart_out_);
    if (!format) throw UsageError("--out: '" + chart_out_ + "' must end in .svg, .png, .pdf or .csv");
    std::optional<sim::MeasuredProfile> profile;
    sim::HardwareModel hw;
    const bool is_file =
        hw_.find('/') != std::string::npos || (hw_.size() > 5 && hw_.substr(hw_.size() - 5) == ".json");
    if (is_file && sim::looks_measured(read_text(hw_))) {
      try {
        profile = sim::load_profile(hw_);
      } catch (const sim::HardwareError& e) {
        throw UsageError(std::string("--hw: ") + e.what());
      }
      hw = profile->hw;
    } else {
      hw = load_hw(hw_);
    }

    analysis::ChartSpec chart;
    if (kind_ == "bandwidth-sweep") {
      if (!profile) throw UsageError("--chart bandwidth-sweep: --hw must be a measured profile (flashlab ceilings --out)");
      if (!results_.empty()) throw UsageError("--results: the bandwidth sweep places no runs");
      chart = analysis::bandwidth_sweep_chart(*profile);
    } else if (kind_ == "roofline-hier") {
      const analysis::HierarchicalCeilings c = profile ? analysis::hierarchical_ceilings(*profile)
                                                       : analysis::hierarchical_ceilings(hw);
      analysis::Placement placed;
      if (!results_.empty()) {
        analysis::BenchResults r;
        try {
          r = analysis::bench_from_file(results_);
        } catch (const std::exception& e) {
          throw UsageError(std::string("--results: ") + e.what());
        }
        placed = analysis::place_runs(r, hw, c);
      }
      sim::DType dt = placed.runs.empty() ? sim::DType::fp16 : placed.runs.front().problem.dtype;
      if (!dtype_.empty()) {
        const auto parsed = sim::parse_dtype(dtype_);
        if (!parsed) throw UsageError("--dtype: unknown dtype '" + dtype_ + "' (expected fp16, bf16 or fp32)");
        dt = *parsed;
      }
      chart = analysis::hierarchical_roofline_chart(c, placed, dt);
      print_placement(placed);
    } else {
      throw UsageError("--chart: unknown chart '" + kind_ + "' (expected roofline-hier or bandwidth-sweep)");
    }
    try {
      analysis::export_chart(chart, chart_out_);
    } catch (const std::runtime_error& e) {
      throw UsageError(std::string("--out: ") + e.what());
    }
    std::cout << "wrote " << chart_out_ << " (" << chart.id << ", " << chart.series.size() << " series)\n";
    return 0;
  }

  static void print_placement(const analysis::Placement& placed) {
    if (placed.runs.empty()) return;
    analysis::TextTable t({"run", "TFLOP/s", "model TFLOP/s", "bound", "AI HBM", "AI L2", "AI SMEM", "flags"});
    for (const analysis::PlacedRun& r : placed.runs) {
      std::vector<std::string> row{r.label, fixed(r.achieved / 1e12, 1), fixed(r.predicted / 1e12, 1), r.bound};
      for (sim::Level l : {sim::Level::HBM, sim::Level::L2, sim::Level::SRAM}) {
        std::string v = "-";
        for (const analysis::LevelPoint& p : r.levels)
          if (p.level == l) v = fixed(p.ai, 1);
        row.push_back(v);
      }
      std::string flags;
      for (const analysis::CeilingFlag& f : r.flags) flags += (flags.empty() ? "above " : ", ") + f.ceiling;
      row.push_back(flags.empty() ? "-" : flags);
      t.add(row);
    }
    std::cout << t.str();
    for (const analysis::PlacedRun& r : placed.runs)
      for (const analysis::CeilingFlag& f : r.flags) std::cout << "flag: " << r.label << ": above " << f.ceiling << ": " << f.cause << "\n";
    for (const std::string& s : placed.skipped) std::cout << "left out: " << s << "\n";
  }

  CLI::App* rungs_ = nullptr;
  std::vector<std::string> rungs_results_;
  std::string rungs_out_;
  std::vector<std::string> rungs_power_;
  CLI::App* chart_ = nullptr;
  CLI::App* report_ = nullptr;
  std::string report_profile_, report_datasheet_;
  std::string out_, repeats_, datasheet_;
  bool quick_ = false, quiet_ = false;
  std::string hw_, results_, kind_ = "roofline-hier", dtype_, chart_out_;
};

}  // namespace

std::unique_ptr<Command> make_ceilings_command() { return std::make_unique<CeilingsCommand>(); }

}  // namespace flashlab::cli
