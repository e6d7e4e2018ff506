// flashlab sweep: the model over one axis for several algorithms, with the
// IO-complexity reference curves; a table on stdout and CSV on request.
#include <algorithm>
#include <chrono>
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
    add_pass_flag(*app, pass_);
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
    const std::optional<sim::PassSelection> pass = parse_pass(pass_);
    // Each algorithm's passes: the backward of a forward one with --pass bwd, both with fwd+bwd.
    std::vector<sim::Algorithm> algos;
    bool steps = false;
    for (sim::Algorithm a : parse_algorithms(algos_)) {
      const sim::PassSelection selection = pass_or_own(pass, a);
      steps = steps || selection == sim::PassSelection::fwd_bwd;
      try {
        for (sim::Algorithm x : analysis::pass_algorithms(a, selection))
          if (std::find(algos.begin(), algos.end(), x) == algos.end()) algos.push_back(x);
      } catch (const std::invalid_argument& e) {
        throw UsageError(std::string("--pass: ") + e.what());
      }
    }
    Resolved r = resolve(flags_);
    // Check every point's problem before running any.
    for (sim::i64 v : spec.values)
      for (const sim::ProblemError& e : sim::validate(analysis::apply_axis(r.problem, spec.axis, v)))
        throw UsageError("--vary " + std::string(analysis::to_string(spec.axis)) + "=" + std::to_string(v) + ": " +
                         e.message);
    require_output_folder("--csv", csv_);
    // A long sweep says how far it is, every few seconds, on stderr.
    const auto start = std::chrono::steady_clock::now();
    auto last = start;
    const auto progress = [&](std::size_t done, std::size_t total) {
      const auto now = std::chrono::steady_clock::now();
      const double elapsed = std::chrono::duration<double>(now - start).count();
      if (done == total || elapsed < 2 || std::chrono::duration<double>(now - last).count() < 5) return;
      last = now;
      const double left = elapsed / static_cast<double>(done) * static_cast<double>(total - done);
      std::cerr << "sweep: " << sim::group_digits(static_cast<sim::i64>(done)) << " of "
                << sim::group_digits(static_cast<sim::i64>(total)) << " simulations in " << sim::fixed(elapsed, 0)
                << " s, about " << sim::duration(left) << " left\n";
    };
    const auto rows = analysis::run_sweep(r.problem, r.hw, spec, algos, r.options, progress);

    analysis::TextTable table({std::string(analysis::to_string(spec.axis)), "algorithm", "B_r×B_c", "requests",
                               "DRAM predicted", "AI", "≥ time", "bound", "note"});
    std::string csv = analysis::csv_row(analysis::result_csv_header());
    size_t ok = 0;
    // With --pass fwd+bwd, after each point's passes: each family's training step, summed.
    auto add_steps = [&](size_t first, size_t end) {
      std::vector<sim::Algorithm> families;
      for (size_t k = first; k < end; ++k) {
        const sim::Algorithm f = sim::forward_of(rows[k].result.algorithm);
        if (std::find(families.begin(), families.end(), f) == families.end()) families.push_back(f);
      }
      for (sim::Algorithm f : families) {
        std::vector<analysis::RooflineEstimate> parts;
        sim::i64 hbm = 0;
        bool all_ok = true;
        for (size_t k = first; k < end; ++k) {
          const sim::SimResult& res = rows[k].result;
          if (sim::forward_of(res.algorithm) != f) continue;
          all_ok = all_ok && res.ok();
          if (!res.ok()) continue;
          parts.push_back(rows[k].roof);
          hbm += res.total.level(sim::Level::HBM).bytes();
        }
        if (parts.size() < 2) continue;
        const analysis::RooflineEstimate step = analysis::sum_estimates(
            parts, static_cast<double>(analysis::convention_flops(rows[first].result.problem, sim::PassSelection::fwd_bwd)));
        table.add({sim::group_digits(rows[first].value), std::string(sim::to_string(f)) + " fwd+bwd", "",
                   all_ok ? sim::si_unit(static_cast<double>(hbm), "B") : "",
                   all_ok ? sim::si_unit(step.dram_bytes, "B") : "", all_ok ? analysis::fixed(step.ai, 1) : "",
                   all_ok ? sim::duration(step.time_s) : "",
                   all_ok ? (step.memory_bound ? "memory" : "compute") : "", all_ok ? "" : "a pass failed"});
      }
    };
    size_t point_start = 0;
    for (size_t k = 0; k < rows.size(); ++k) {
      const auto& row = rows[k];
      if (steps && k > point_start && row.value != rows[point_start].value) {
        add_steps(point_start, k);
        point_start = k;
      }
      const sim::SimResult& res = row.result;
      csv += analysis::csv_row(analysis::result_csv_fields(res, row.roof, std::string(analysis::to_string(spec.axis)),
                                                           row.value, row.theta_standard, row.theta_flash));
      const std::vector<std::string> msgs = res.errors();
      if (res.ok()) ++ok;
      table.add({sim::group_digits(row.value), std::string(sim::to_string(res.algorithm)),
                 res.T_r > 0 ? std::to_string(res.tiles.Br) + "×" + std::to_string(res.tiles.Bc) : "",
                 res.ok() ? sim::si_unit(static_cast<double>(res.total.level(sim::Level::HBM).bytes()), "B") : "",
                 res.ok() ? sim::si_unit(row.roof.dram_bytes, "B") : "", res.ok() ? analysis::fixed(row.roof.ai, 1) : "",
                 res.ok() ? sim::duration(row.roof.time_s) : "",
                 res.ok() ? (row.roof.memory_bound ? "memory" : "compute") : "",
                 msgs.empty() ? "" : "ERROR: " + msgs.front()});
    }
    if (steps && !rows.empty()) add_steps(point_start, rows.size());
    if (ok == 0) throw UsageError("no point of the sweep could be simulated: " + rows.front().result.errors().front());
    if (!csv_.empty()) {
      try {
        analysis::write_file_atomic(csv_, csv);
      } catch (const std::exception& e) {
        throw UsageError(std::string("--csv: ") + e.what());
      }
    }
    if (!quiet_)
      std::cout << table.str()
                << "requests: reads and writes to global memory (the paper's HBM accesses); DRAM predicted: what the L2 "
                   "model lets through, as flashlab sim predicts it; AI and ≥ time (the roofline's lower bound) use it.\n";
    if (!quiet_ && !csv_.empty()) std::cout << "wrote " << rows.size() << " rows to " << csv_ << "\n";
    return 0;
  }

 private:
  ProblemFlags flags_;
  std::string vary_, algos_ = analysis::algorithm_keys(analysis::default_algorithms(), ","), csv_, pass_;
  bool quiet_ = false;
};

}  // namespace

std::unique_ptr<Command> make_sweep_command() { return std::make_unique<SweepCommand>(); }

}  // namespace flashlab::cli
