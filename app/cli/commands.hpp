// The subcommands of `flashlab`. Each registers its flags on the root app and
// runs when chosen; run() returns the exit code or throws UsageError.
#pragma once

#include <memory>
#include <vector>

#include <CLI/CLI.hpp>

namespace flashlab::cli {

class Command {
 public:
  virtual ~Command() = default;
  CLI::App* app = nullptr;  // set by setup()
  virtual void setup(CLI::App& root) = 0;
  virtual int run() = 0;
};

std::unique_ptr<Command> make_sim_command();
std::unique_ptr<Command> make_sweep_command();
std::unique_ptr<Command> make_hw_command();
std::unique_ptr<Command> make_compare_command();
std::unique_ptr<Command> make_bench_command();  // kernels on the GPU (cmd_bench.cpp)
std::unique_ptr<Command> make_export_command();  // charts to SVG/PNG/PDF/CSV (cmd_export.cpp)
std::unique_ptr<Command> make_report_command();  // a lab report bundle (cmd_report.cpp)
std::unique_ptr<Command> make_gui_command();     // the window (cmd_gui.cpp)
std::unique_ptr<Command> make_ceilings_command();  // the GPU's ceilings measured (cmd_ceilings.cpp)
std::unique_ptr<Command> make_pipeline_command();  // the Hopper rung's schedule (cmd_pipeline.cpp)
std::unique_ptr<Command> make_ring_command();      // ring attention over P GPUs, simulated (cmd_ring.cpp)
std::unique_ptr<Command> make_links_command();     // the links between this machine's GPUs, measured (cmd_links.cpp)
std::unique_ptr<Command> make_check_command();     // a student's own measurements checked (cmd_check.cpp)

// The headless main job: the lecture's comparison, printed and written as CSV.
int run_default_comparison();
// `flashlab` with no arguments: the GUI when a display exists and the GUI is
// built, else run_default_comparison() (cmd_gui.cpp).
int run_main_job();

}  // namespace flashlab::cli
