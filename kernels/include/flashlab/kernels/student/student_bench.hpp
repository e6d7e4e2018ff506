// Kernel files beside the ladder: `flashlab bench --kernel-file my_fa1.cu` and
// the GUI's benchmark panel both call run_bench_with_kernel_files. Each file
// is read, checked and compiled for the device first (its mistakes found
// before anything runs); each then runs every problem in a child process of
// its own (isolation.hpp) with the inputs the rungs get, its rows marked with
// its id ("user:NAME") and the model it declares, so that analysis/ places
// them beside the simulator like any rung's.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/kernels/student/compile.hpp"
#include "flashlab/kernels/student/isolation.hpp"

namespace flashlab::kernels::student {

// A kernel file ready to run, or why it cannot.
struct PreparedKernel {
  std::string path;                      // as given
  std::optional<KernelFile> file;        // absent when unreadable or its declaration is wrong
  std::vector<CompiledVersion> versions; // one per dtype and head dim the run needs and the file declares
  std::string error;                     // why none of its cases can run, one line ("" when they can)
  std::string message;                   // the whole story (a compile log) for the terminal; "" when none
  std::string id() const;                // "user:NAME" (the file's stem when it could not be read)
  bool ok() const { return error.empty(); }
};

// Reads and compiles each file for every (dtype, head dim) of `problems` it
// declares, for compute capability `cc`. Never throws for a file's mistakes:
// they are its `error`. Two files naming the same kernel: the second's error.
std::vector<PreparedKernel> prepare_kernel_files(const std::vector<std::string>& paths,
                                                 const std::vector<sim::AttentionProblem>& problems, int cc);

// The ladder's rungs a kernel file is measured against when none are named:
// the rung of each declared algorithm (naive, fa1, fa2) and fa2, whose time
// the grade divides by. Registry order.
std::vector<std::string> comparison_rungs(const std::vector<PreparedKernel>& files);

struct KernelFileOptions {
  IsolationOptions isolation;
  // `--no-isolation`: the kernel runs in this process (for cuda-gdb and
  // compute-sanitizer). A crash then ends the run; a hang is not stopped.
  bool in_process = false;
};

// The rungs (in this process) and the kernel files (each in its child) on every
// problem. Rows come problem by problem, the rungs then the files, and each
// problem's inputs are those run_bench gives it. The files run first, one
// child at a time over all problems (the GPU's counters serve one process at a
// time), then the rungs; `progress` sees rows as they finish. `cancelled` is
// asked between cases.
sim::MeasuredRuns run_bench_with_kernel_files(Backend& backend, const std::vector<const KernelInfo*>& rungs,
                                              const std::vector<PreparedKernel>& files,
                                              const std::vector<sim::AttentionProblem>& problems,
                                              const RunOptions& options, const KernelFileOptions& kernel_files,
                                              const Progress& progress = {},
                                              const std::function<bool()>& cancelled = {});

}  // namespace flashlab::kernels::student
