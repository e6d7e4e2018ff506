// `flashlab bench --kernel-file my_fa1.cu`: a student's own kernel files
// (kernels/student/) compiled for the GPU at hand, each run in its own process
// beside the ladder's rungs on every problem of the grid, checked, timed and
// counted as a rung is; the bench table, then each file's grade
// (analysis/student/kernel_grade.hpp), CSV and JSON (the grade inside).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::cli {

struct KernelFileBench {
  std::vector<std::string> paths;                  // --kernel-file, in order
  std::vector<sim::AttentionProblem> problems;
  std::optional<std::vector<std::string>> rungs;   // --kernels (empty: none); unset: the comparison rungs
  kernels::RunOptions options;
  double timeout_s = 10;                           // --kernel-timeout
  bool compile_only = false;                       // --compile-only: NVRTC alone, no GPU needed
  bool in_process = false;                         // --no-isolation
  std::string csv, json;
  bool quiet = false;
};

// Throws UsageError (exit 2) for a machine that cannot run it (no device, no
// NVRTC); returns 1 when a case failed or a file does not compile, else 0.
int run_kernel_file_bench(const KernelFileBench& b);

// The progress line of every case on stderr, as `flashlab bench` prints it.
kernels::Progress bench_progress(const sim::HardwareModel& device);

}  // namespace flashlab::cli
