// flashlab sweep: the model over one axis for several algorithms, with the
// IO-complexity reference curves; a table on stdout and CSV on request.
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/analysis.hpp"

namespace flashlab::cli {
namespace {

class SweepCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("sweep", "sweep N, d, M, B or H for several algorithms");
    app->add_option("--vary", vary_, "axis=start:stop:xK | axis=start:stop:+K | axis=v1,v2,... "
                                     "(axis: seq, head-dim, sram, batch, heads)")
        ->required();
    app->add_option("--algos", algos_, algorithms_help() + ", or all")->capture_default_str();
    add_problem_flags(*app, flags_);
    app->add_option("--csv", csv_, "write every row as CSV to FILE");
    app->add_flag("--quiet", quiet_, "no table on stdout");
  }

  int run() override {
    analysis::SweepSpec spec;
    try {
      spec = analysis::parse_sweep(vary_);
    } catch (const std::invalid_argument& e) {
      throw UsageError(std::string("--vary: ") + e.what());
    }
    const auto algos = parse_algorithms(algos_);
    Resolved r = resolve(flags_);
    // Check every point's problem before running any.
    for (sim::i64 v : spec.values)
      for (const std::string& e : sim::validate(analysis::apply_axis(r.problem, spec.axis, v)))
        throw UsageError("--vary " + std::string(analysis::to_string(spec.axis)) + "=" + std::to_string(v) + ": " + e);
    const auto rows = analysis::run_sweep(r.problem, r.hw, spec, algos, r.options);

    analysis::TextTable table({std::string(analysis::to_string(spec.axis)), "algorithm", "B_r×B_c", "HBM bytes",
                               "L2 bytes", "AI", "≥ ms", "bound", "note"});
    std::string csv = analysis::csv_row(analysis::result_csv_header());
    size_t ok = 0;
    for (const auto& row : rows) {
      const sim::SimResult& res = row.result;
      csv += analysis::csv_row(analysis::result_csv_fields(res, row.roof, std::string(analysis::to_string(spec.axis)),
                                                           row.value, row.theta_standard, row.theta_flash));
      const std::vector<std::string> msgs = res.errors();
      if (res.ok()) ++ok;
      table.add({sim::group_digits(row.value), std::string(sim::to_string(res.algorithm)),
                 res.T_r > 0 ? std::to_string(res.tiles.Br) + "×" + std::to_string(res.tiles.Bc) : "",
                 res.ok() ? sim::si(static_cast<double>(res.total.level(sim::Level::HBM).bytes())) : "",
                 res.ok() ? sim::si(static_cast<double>(res.total.level(sim::Level::L2).bytes())) : "",
                 res.ok() ? analysis::fixed(row.roof.ai, 1) : "", res.ok() ? analysis::fixed(row.roof.time_s * 1e3, 3) : "",
                 res.ok() ? (row.roof.memory_bound ? "memory" : "compute") : "",
                 msgs.empty() ? "" : "ERROR: " + msgs.front()});
    }
    if (ok == 0) throw UsageError("no point of the sweep could be simulated: " + rows.front().result.errors().front());
    if (!csv_.empty()) {
      try {
        analysis::write_file_atomic(csv_, csv);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--csv: ") + e.what());
      }
    }
    if (!quiet_) std::cout << table.str();
    if (!quiet_ && !csv_.empty()) std::cout << "wrote " << rows.size() << " rows to " << csv_ << "\n";
    return 0;
  }

 private:
  ProblemFlags flags_;
  std::string vary_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), csv_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace flashlab::cli
