// A kernel file runs in a process of its own, so that what it does wrong
// cannot take the lab down: an illegal address poisons only the child's CUDA
// context, a trap or a crash ends only the child, and a kernel that never
// returns is stopped by a watchdog. The child is `flashlab` itself, started
// with a hidden flag (main() hands such a call to kernel_file_child_main); it
// runs each case through the runner exactly as a registry rung runs and
// answers one row per case on a pipe. FlashLab starts a new child for the
// next case after one ends badly, so the rest of the sweep goes on.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/kernels/student/compile.hpp"

namespace flashlab::kernels::student {

struct IsolationOptions {
  // A case that answers nothing for this long (its check, timed runs and
  // counter pass together) is stopped: `flashlab bench --kernel-timeout`.
  double case_timeout_s = 10;
  // A child's start: its CUDA context and the cuBLAS handle of the runner.
  double start_timeout_s = 60;
  // The command that starts a child, the request's path appended; empty:
  // this executable with kKernelFileChildFlag. Tests start fake children.
  std::vector<std::string> child_command;
};

// The hidden flag: `flashlab --kernel-file-child REQUEST [--fake SPEC]`.
// SPEC (tests, no GPU): what the child does at given case numbers, a comma
// list of ok | crash | hang | exit | hang-start | fail-start with "@N" (crash@1,hang@3); every
// other case answers a row that says "ok".
inline constexpr const char* kKernelFileChildFlag = "--kernel-file-child";
int kernel_file_child_main(int argc, char** argv);

// One kernel file's child, started when the first case needs it and again
// after one ends badly.
class KernelProcess {
 public:
  // Writes the request and the compiled images to a private temporary folder;
  // starts nothing yet. Throws std::runtime_error when the folder cannot be written.
  KernelProcess(const KernelFile& file, const std::vector<CompiledVersion>& versions,
                std::vector<sim::AttentionProblem> problems, const RunOptions& options, int device,
                IsolationOptions isolation);
  // Asks the child to quit (stops it after a second) and removes the folder.
  ~KernelProcess();
  KernelProcess(const KernelProcess&) = delete;
  KernelProcess& operator=(const KernelProcess&) = delete;

  // Problem `index` with the inputs of `seed`. Never throws for what the
  // kernel does: a crash, a hang or a child that cannot start is a failed
  // row with one sentence saying what happened and what to run next.
  sim::MeasuredRun run(std::size_t index, std::uint64_t seed);
  // Children started so far (a new one after each that ended badly).
  int children_started() const;
  // Asks the child to quit now (the next run starts another).
  void stop();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace flashlab::kernels::student
