// flashlab: the command-line front end. With a display and the GUI built it
// opens the GUI; without one it prints the lecture's standard comparison.
#include "run.hpp"

#include <algorithm>
#include <cstdlib>
#include <iostream>

#include "commands.hpp"
#include "common.hpp"
#include "flashlab/kernels/student/isolation.hpp"
#include "flashlab/sim/core/closest_name.hpp"

namespace {

int fail(const std::string& msg) {
  std::cerr << "flashlab: error: " << msg << "\n";
  return 2;
}

// For a flag the command does not know: " (did you mean --causal?)" when one
// of its flags (or the root's) is a letter or two away, else "".
std::string flag_suggestion(const CLI::App& root, int argc, char** argv) {
  const CLI::App* cmd = &root;
  std::vector<std::string> flags;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (cmd == &root && a.rfind("-", 0) != 0) {
      for (const CLI::App* sub : root.get_subcommands({}))
        if (sub->get_name() == a) cmd = sub;
    }
  }
  for (const CLI::App* app : {cmd, &root})
    for (const CLI::Option* o : app->get_options())
      for (const std::string& n : o->get_lnames()) flags.push_back("--" + n);
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    if (a.rfind("--", 0) != 0) continue;
    a = a.substr(0, a.find('='));
    if (std::find(flags.begin(), flags.end(), a) != flags.end()) continue;
    if (const std::string hint = flashlab::sim::did_you_mean(a, flags); !hint.empty()) return hint;
  }
  return "";
}

}  // namespace

int flashlab::cli::run(int argc, char** argv) {
  // A kernel file's child process (flashlab bench --kernel-file starts it): not a subcommand a person types.
  if (argc > 1 && std::string(argv[1]) == flashlab::kernels::student::kKernelFileChildFlag)
    return flashlab::kernels::student::kernel_file_child_main(argc, argv);
  CLI::App root{"FlashLab: FlashAttention kernels beside a memory-hierarchy simulator", "flashlab"};
  root.set_version_flag("--version", "flashlab 0.1.0");
  std::vector<std::unique_ptr<Command>> commands;
  // In the order `flashlab --help` lists them.
  for (auto make : {&make_sim_command, &make_sweep_command, &make_compare_command, &make_hw_command,
                    &make_bench_command, &make_export_command, &make_report_command, &make_gui_command,
                    &make_ceilings_command, &make_pipeline_command, &make_ring_command, &make_links_command,
                    &make_check_command})
    commands.push_back(make());
  for (auto& c : commands) c->setup(root);

  try {
    root.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return root.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return root.exit(e);
  } catch (const CLI::ParseError& e) {
    return fail(std::string(e.what()) + flag_suggestion(root, argc, argv) + " (run 'flashlab --help')");
  }

  try {
    for (auto& c : commands)
      if (c->app->parsed()) return c->run();
    return run_main_job();
  } catch (const UsageError& e) {
    return fail(e.what());
  } catch (const flashlab::sim::OverflowError& e) {
    return fail(std::string("problem too large: ") + e.what());
  } catch (const std::bad_alloc&) {
    return fail("out of memory");
  } catch (const std::exception& e) {
    return fail(std::string("unexpected: ") + e.what());
  }
}
