// flashlab compare: the lecture's comparison of standard attention,
// FlashAttention-1 and FlashAttention-2 on one problem (the headless main job).
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"

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

int print_and_write(const Resolved& r, const std::vector<Row>& rows, const std::string& csv_path) {
  const sim::HardwareModel& hw = r.hw;
  std::cout << "FlashLab — standard attention vs FlashAttention, simulated\n";
  std::cout << "problem  " << sim::describe(r.problem) << "\n";
  const double peak = hw.peak(r.problem.dtype, sim::HardwareModel::default_unit(r.problem.dtype));
  std::cout << "hardware " << hw.display_name << ": M = "
            << sim::bytes_iec(static_cast<double>(r.options.sram_bytes > 0 ? r.options.sram_bytes : hw.sram_bytes_per_sm))
            << " SRAM/SM, " << analysis::fixed(hw.hbm_bandwidth / 1e9, 0) << " GB/s HBM, "
            << analysis::fixed(peak / 1e12, 0) << " TFLOP/s -> ridge "
            << analysis::fixed(analysis::ridge_point(peak, hw.hbm_bandwidth), 1) << " FLOP/B\n\n";
  const double std_bytes = static_cast<double>(rows.front().result.total.level(sim::Level::HBM).bytes());
  analysis::TextTable t({"algorithm", "B_r×B_c", "HBM read", "HBM write", "HBM total", "vs " + rows.front().label, "DRAM (L2)",
                         "GFLOP", "AI FLOP/B", "≥ ms", "bound"});
  for (const Row& row : rows) {
    const sim::SimResult& s = row.result;
    const sim::Traffic hbm = s.total.level(sim::Level::HBM);
    t.add({row.label, std::to_string(s.tiles.Br) + "×" + std::to_string(s.tiles.Bc),
           analysis::fixed(static_cast<double>(hbm.read_bytes) / 1e9, 2) + " GB",
           analysis::fixed(static_cast<double>(hbm.write_bytes) / 1e9, 2) + " GB",
           analysis::fixed(static_cast<double>(hbm.bytes()) / 1e9, 2) + " GB",
           analysis::fixed(static_cast<double>(hbm.bytes()) / std_bytes, 3) + "×",
           analysis::fixed(row.roof.dram_bytes / 1e9, 2) + " GB",
           analysis::fixed(static_cast<double>(s.total.flops()) / 1e9, 1), analysis::fixed(row.roof.ai, 1),
           analysis::fixed(row.roof.time_s * 1e3, 3), row.roof.memory_bound ? "memory" : "compute"});
  }
  std::cout << t.str() << "\n";
  std::cout << "GFLOP is the exact count of the blocks computed (matmul + softmax); the benchmark convention "
               "4·B·H·N²·d"
            << (r.problem.causal ? "/2" : "") << " is "
            << analysis::fixed(static_cast<double>(analysis::convention_flops(r.problem)) / 1e9, 1)
            << " GFLOP.\n"
               "HBM columns are requests to global memory (the paper's HBM accesses); DRAM (L2) is what the L2 "
               "model lets through to DRAM. AI and ≥ ms (the roofline lower bound max(FLOPs/peak, "
               "DRAM bytes/bandwidth)) use DRAM; docs/model.md.\n";
  for (const Row& row : rows)
    for (const std::string& m : row.result.messages()) std::cout << "note (" << row.label << "): " << m << "\n";

  std::string csv = analysis::csv_row(analysis::result_csv_header());
  for (const Row& row : rows)
    csv += analysis::csv_row(analysis::result_csv_fields(row.result, row.roof, "compare", 0,
                                                         analysis::theta_standard_bytes(r.problem),
                                                         analysis::theta_flash_bytes(r.problem, row.result.sram_capacity_bytes)));
  try {
    analysis::write_file_atomic(csv_path, csv);
  } catch (const std::exception& e) {
    throw UsageError(std::string("--csv: ") + e.what());
  }
  std::cout << "\nwrote " << rows.size() << " rows to " << csv_path << "\n";
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
  }
  int run() override {
    const Resolved r = resolve(flags_);
    return print_and_write(r, compare(r, parse_algorithms(algos_)), csv_);
  }

 private:
  ProblemFlags flags_;
  std::string algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), csv_ = kDefaultCsv;
};

}  // namespace

std::unique_ptr<Command> make_compare_command() { return std::make_unique<CompareCommand>(); }

int run_default_comparison() {
  ProblemFlags f;
  const Resolved r = resolve(f);
  return print_and_write(r, compare(r, analysis::default_algorithms()), kDefaultCsv);
}

}  // namespace flashlab::cli
