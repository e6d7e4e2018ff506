// flashlab check: a student's own measurements (a lab report's table as CSV)
// checked against the FLOP convention, the GPU's roofline and the size of the
// tensors: the table, a summary, and with --out the rows as CSV and on the
// roofline. Exit 0 when every row is consistent, 1 when any is flagged, 2 on
// bad input.
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis/student/student_check.hpp"
#include "flashlab/export/chart_export.hpp"

namespace flashlab::cli {
namespace {

std::optional<std::string> given(const std::string& v) {
  return v.empty() ? std::nullopt : std::optional<std::string>(v);
}

std::string read_table_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw UsageError(path + ": cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// "10" or "10%": a percentage above 0, as a fraction.
double parse_percent(const std::string& flag, const std::string& text) {
  std::string t = text;
  if (!t.empty() && t.back() == '%') t.pop_back();
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (t.empty() || end != t.c_str() + t.size() || !std::isfinite(v) || v <= 0 || v >= 1000)
    throw UsageError(flag + ": '" + text + "' is not a percentage above 0 (e.g. 10)");
  return v / 100;
}

class CheckCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    std::string columns;
    for (const std::string& c : analysis::student_column_names()) columns += "\n  " + c;
    app = root.add_subcommand("check", "a student's own measurements (CSV or tab-separated) checked: TFLOP/s against "
                                       "its own time, the GPU's roof, memory against the tensors. Exit 0: every row "
                                       "consistent; 1: a row flagged; 2: bad input");
    app->footer("Columns, matched by name (case-insensitive):" + columns);
    app->add_option("file", file_, "the measurements: a header line, then one run per line")->required();
    app->add_option("-b,--batch", batch_, "batch size B of every row (when the file has no batch column)");
    app->add_option("-n,--seq", seq_, "sequence length N of every row");
    app->add_option("--heads", heads_, "heads H of every row");
    app->add_option("-d,--head-dim", head_dim_, "head dimension d of every row");
    app->add_option("--emb-dim", emb_dim_, "embedding dimension of every row (d = emb-dim / heads)");
    app->add_flag("--causal", causal_, "every row is causal (when the file has no causal column)");
    app->add_option("--dtype", dtype_, "fp16 | bf16 | fp32 of every row (default fp16)");
    app->add_option("--pass", pass_, "forward | backward of every row (default: the time column's word, else forward)");
    app->add_option("--hw", hw_, "the GPU: hardware preset (flashlab hw list) or a JSON file")->capture_default_str();
    app->add_option("--tolerance", tolerance_, "percent by which a reported TFLOP/s may differ from its time's")
        ->capture_default_str();
    app->add_option("--spread", spread_, "percent by which the times of one configuration timed more than once may "
                                         "spread, (max − min) / min")
        ->capture_default_str();
    app->add_option("--out", out_, "folder for check.csv and check-roofline.svg (and .png with cairo); created if "
                                   "missing");
    app->add_option("--results", results_, "FlashLab's own measured runs (flashlab bench JSON or CSV) drawn beside "
                                           "yours on the roofline (with --out)");
  }

  int run() override {
    const double tolerance = parse_percent("--tolerance", tolerance_);
    const double spread = parse_percent("--spread", spread_);
    if (!results_.empty() && out_.empty()) throw UsageError("--results draws FlashLab's runs on the chart: give --out");
    if (!out_.empty()) require_output_dir("--out", out_);
    analysis::StudentDefaults defaults;
    defaults.batch = given(batch_);
    defaults.seq = given(seq_);
    defaults.heads = given(heads_);
    defaults.head_dim = given(head_dim_);
    defaults.emb_dim = given(emb_dim_);
    defaults.dtype = given(dtype_);
    defaults.pass = given(pass_);
    if (causal_) defaults.causal = "true";
    const sim::HardwareModel hw = load_hw(hw_);
    analysis::BenchResults runs;
    if (!results_.empty()) runs = load_results(results_);

    analysis::StudentTable table;
    try {
      table = analysis::read_student_table(read_table_file(file_), defaults);
    } catch (const analysis::StudentTableError& e) {
      throw UsageError(file_ + ": " + e.what());
    }
    const analysis::StudentCheck check = analysis::check_student_table(table, hw, {tolerance, spread});
    std::cout << analysis::student_check_text(check, file_);
    if (!out_.empty()) write_outputs(check, hw, results_.empty() ? nullptr : &runs);
    return check.flagged() > 0 ? 1 : 0;
  }

 private:
  static analysis::BenchResults load_results(const std::string& path) {
    return usage_errors_of<std::exception>("--results", [&] { return analysis::bench_from_file(path); });
  }

  void write_outputs(const analysis::StudentCheck& check, const sim::HardwareModel& hw,
                     const analysis::BenchResults* runs) const {
    const std::filesystem::path dir(out_);  // made by run(), before the table
    const std::string csv = (dir / "check.csv").string();
    write_output("--out", csv, analysis::student_check_csv(check));
    std::cout << "wrote " << csv << "\n";
    const analysis::ChartSpec chart = analysis::student_roofline_chart(check, hw, runs);
    for (const char* ext : {".svg", ".png"}) {
      if (std::string(ext) == ".png" && !analysis::have_cairo()) continue;
      const std::string path = (dir / ("check-roofline" + std::string(ext))).string();
      try {
        analysis::export_chart(chart, path);
      } catch (const std::runtime_error& e) {
        throw UsageError(std::string("--out: ") + e.what());
      }
      std::cout << "wrote " << path << "\n";
    }
  }

  std::string file_, hw_ = ProblemFlags{}.hw, tolerance_ = "10", spread_ = "10", out_, results_;
  std::string batch_, seq_, heads_, head_dim_, emb_dim_, dtype_, pass_;
  bool causal_ = false;
};

}  // namespace

std::unique_ptr<Command> make_check_command() { return std::make_unique<CheckCommand>(); }

}  // namespace flashlab::cli
