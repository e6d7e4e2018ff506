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

// The headless main job: the lecture's comparison, printed and written as CSV.
int run_default_comparison();

}  // namespace flashlab::cli
