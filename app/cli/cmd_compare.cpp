// flashlab compare: the lecture's comparison of standard attention,
// FlashAttention-1 and FlashAttention-2 on one problem (the headless main job).
#include <iostream>
#include <optional>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"
#include "flashlab/analysis/bench_results.hpp"
#include "flashlab/analysis/datasheet.hpp"
#include "flashlab/analysis/measured_checks.hpp"

namespace flashlab::cli {
namespace {

// Where `flashlab compare` and `flashlab` without a display write by default.
constexpr const char* kDefaultCsv = "flashlab-comparison.csv";

struct Row {
  std::string label;
  sim::SimResult result;
  analysis::RooflineEstimate roof;
};

// Each algorithm with the tiles its own loop order wants (the simulator's rule
// for it), unless --br/--bc fix them for all.
std::vector<Row> compare(const Resolved& r, const std::vector<sim::Algorithm>& algos) {
  std::vector<Row> rows;
  for (sim::Algorithm a : algos) {
    const sim::AlgorithmInfo& info = sim::algorithm_info(a);
    Row row{std::string(info.key), sim::simulate(a, r.problem, r.hw, r.options), {}};
    if (!row.result.ok()) throw UsageError(std::string(info.key) + ": " + row.result.errors().front());
    row.roof = analysis::roofline(row.result, r.hw);
    rows.push_back(row);
  }
  return rows;
}

std::string gb_cell(double bytes) { return analysis::fixed(bytes / 1e9, 2) + " GB"; }

// The measured runs of each compared algorithm, when a results file is given.
struct Measured {
  std::string origin;  // the file, as given
  analysis::BenchResults results;
};

std::string kernel_tiles(const sim::TileShape& t) {
  return t.Br > 0 && t.Bc > 0 ? std::to_string(t.Br) + "×" + std::to_string(t.Bc) : "-";
}

std::vector<std::string> compare_csv_header() {
  std::vector<std::string> h = analysis::result_csv_header();
  for (const char* c : {"kernel", "kernel_Br", "kernel_Bc", "measured_dram_read_bytes", "measured_dram_write_bytes",
                        "kernel_predicted_dram_read_bytes", "kernel_predicted_dram_write_bytes", "measured_note"})
    h.emplace_back(c);
  return h;
}

int print_and_write(const Resolved& r, const std::vector<Row>& rows, const std::string& csv_path,
                    const std::optional<Measured>& measured) {
  const sim::HardwareModel& hw = r.hw;
  std::cout << "FlashLab — standard attention vs FlashAttention, simulated\n";
  std::cout << "problem  " << sim::describe(r.problem) << "\n";
  const double peak = hw.peak(r.problem.dtype, sim::HardwareModel::default_unit(r.problem.dtype));
  std::cout << "hardware " << hw.display_name << ": M = "
            << sim::bytes_iec(static_cast<double>(r.options.sram_bytes > 0 ? r.options.sram_bytes : hw.sram_bytes_per_sm))
            << " SRAM/SM, " << analysis::fixed(hw.hbm_bandwidth / 1e9, 0) << " GB/s HBM, "
            << analysis::fixed(peak / 1e12, 0) << " TFLOP/s -> ridge "
            << analysis::fixed(analysis::ridge_point(peak, hw.hbm_bandwidth), 1) << " FLOP/B\n";
  if (measured) {
    const sim::RunMeta& m = measured->results.meta;
    std::cout << "measured " << measured->origin << ": " << (m.gpu.empty() ? "unknown GPU" : m.gpu)
              << (m.commit.empty() ? "" : ", commit " + m.commit) << "\n";
    const auto ds = analysis::match_datasheet(m.gpu, m.sm_count, analysis::datasheet_presets());
    if (!ds || ds->name != hw.name)
      std::cout << "note: the runs were measured on " << (m.gpu.empty() ? "an unknown GPU" : m.gpu)
                << ", the model rows are for " << hw.display_name << " (--hw)\n";
  }
  std::cout << "\n";
  const double std_bytes = static_cast<double>(rows.front().result.total.level(sim::Level::HBM).bytes());
  analysis::TextTable t({"algorithm", "B_r×B_c", "requests read", "requests write", "requests total",
                         "vs " + rows.front().label, "DRAM predicted", "DRAM measured", "GFLOP", "AI FLOP/B", "≥ ms",
                         "bound"});
  std::string csv = analysis::csv_row(compare_csv_header());
  size_t csv_rows = 0;
  for (const Row& row : rows) {
    const sim::SimResult& s = row.result;
    const sim::Traffic hbm = s.total.level(sim::Level::HBM);
    analysis::MeasuredLookup runs;
    if (measured) runs = analysis::measured_dram(measured->results, measured->origin, r.problem, s.algorithm);
    const std::string measured_cell = !measured ? "-" : !runs.runs.empty() ? "per kernel below" : runs.why_none;
    t.add({row.label, std::to_string(s.tiles.Br) + "×" + std::to_string(s.tiles.Bc), gb_cell(static_cast<double>(hbm.read_bytes)),
           gb_cell(static_cast<double>(hbm.write_bytes)), gb_cell(static_cast<double>(hbm.bytes())),
           analysis::fixed(static_cast<double>(hbm.bytes()) / std_bytes, 3) + "×", gb_cell(row.roof.dram_bytes),
           measured_cell, analysis::fixed(static_cast<double>(s.total.flops()) / 1e9, 1), analysis::fixed(row.roof.ai, 1),
           analysis::fixed(row.roof.time_s * 1e3, 3), row.roof.memory_bound ? "memory" : "compute"});
    const std::vector<std::string> fields =
        analysis::result_csv_fields(s, row.roof, "compare", 0, analysis::theta_standard_bytes(r.problem),
                                    analysis::theta_flash_bytes(r.problem, s.sram_capacity_bytes));
    auto i64s = [](sim::i64 v) { return v >= 0 ? std::to_string(v) : std::string(); };
    if (runs.runs.empty()) {
      std::vector<std::string> line = fields;
      for (int k = 0; k < 7; ++k) line.emplace_back();
      line.push_back(measured ? runs.why_none : "");
      csv += analysis::csv_row(line);
      ++csv_rows;
    }
    for (const analysis::MeasuredDram& k : runs.runs) {
      const bool predicted = k.predicted_read_bytes >= 0 && k.predicted_write_bytes >= 0;
      std::string cell = k.why_not;
      if (k.measured) {
        cell = gb_cell(static_cast<double>(k.read_bytes + k.write_bytes));
        if (k.has_error) {
          std::string e = analysis::fixed(100 * k.error, 1);
          if (e == "-0.0") e = "0.0";
          cell += " (model " + std::string(e[0] == '-' ? "" : "+") + e + "%)";
        }
      }
      t.add({"  " + k.kernel, kernel_tiles(k.tiles), "", "", "", "",
             predicted ? gb_cell(static_cast<double>(k.predicted_read_bytes + k.predicted_write_bytes)) : "-", cell, "",
             "", "", ""});
      std::vector<std::string> line = fields;
      line.push_back(k.kernel);
      line.push_back(k.tiles.Br > 0 ? std::to_string(k.tiles.Br) : "");
      line.push_back(k.tiles.Bc > 0 ? std::to_string(k.tiles.Bc) : "");
      line.push_back(i64s(k.read_bytes));
      line.push_back(i64s(k.write_bytes));
      line.push_back(i64s(k.predicted_read_bytes));
      line.push_back(i64s(k.predicted_write_bytes));
      line.push_back(k.why_not);
      csv += analysis::csv_row(line);
      ++csv_rows;
    }
  }
  std::cout << t.str() << "\n";
  std::cout << "GFLOP is the exact count of the blocks computed (matmul + softmax); the benchmark convention "
               "4·B·H·N²·d"
            << (r.problem.causal ? "/2" : "") << " is "
            << analysis::fixed(static_cast<double>(analysis::convention_flops(r.problem)) / 1e9, 1)
            << " GFLOP.\n"
               "Requests are reads and writes to global memory: the paper's HBM accesses. DRAM predicted is what "
               "the L2 model lets through to DRAM (dirty data left in the L2 at the end included). AI and ≥ ms (the "
               "roofline lower bound max(FLOPs/peak, DRAM bytes/bandwidth)) use it; docs/model.md.\n";
  if (measured)
    std::cout << "Kernel lines: every kernel of the file whose model is the algorithm, each on its own line, with the "
                 "DRAM bytes its counters measured and the model's prediction for the launch that ran (written back "
                 "during the run, as the counters see it); the error is (model − measured) / measured.\n";
  for (const Row& row : rows)
    for (const std::string& m : row.result.messages()) std::cout << "note (" << row.label << "): " << m << "\n";

  try {
    analysis::write_file_atomic(csv_path, csv);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--csv: ") + e.what());
  }
  std::cout << "\nwrote " << csv_rows << " rows to " << csv_path << "\n";
  return 0;
}

class CompareCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("compare", "standard vs FlashAttention-1 vs FlashAttention-2 on one problem "
                                         "(default: GPT-2 medium on an A100, as in the FlashAttention paper)");
    app->add_option("--algos", algos_, algorithms_help())->capture_default_str();
    add_problem_flags(*app, flags_);
    app->add_option("--csv", csv_, "CSV output file")->capture_default_str();
    app->add_option("--results", results_, "measured runs (JSON or CSV written by flashlab bench --counters or "
                                           "validate): their DRAM bytes beside the model's");
  }
  int run() override {
    const Resolved r = resolve(flags_);
    std::optional<Measured> measured;
    if (!results_.empty()) {
      try {
        measured = Measured{results_, analysis::bench_from_file(results_)};
      } catch (const std::exception& e) {
        throw UsageError(std::string("--results: ") + e.what());
      }
    }
    return print_and_write(r, compare(r, parse_algorithms(algos_)), csv_, measured);
  }

 private:
  ProblemFlags flags_;
  std::string algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), csv_ = kDefaultCsv, results_;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

int run_default_comparison() {
  ProblemFlags f;
  const Resolved r = resolve(f);
  return print_and_write(r, compare(r, analysis::default_algorithms()), kDefaultCsv, std::nullopt);
}

}  // namespace flashlab::cli
