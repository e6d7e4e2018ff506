// How the GUI runs benchmarks without depending on the kernels library: a
// struct of function pointers that the kernels adapter registers at startup
// when the build has it. Without one the panel says why and still opens
// results files written by `flashlab bench` elsewhere.
#pragma once

#include <atomic>
#include <functional>
#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"

namespace flashlab::gui {

struct BenchKernelEntry {
  std::string id, name, summary, dtypes, head_dims;
  bool built = false;  // launchable in this build
};

struct BenchSweepEntry {
  std::string name, title, source;
};

struct BenchRunRequest {
  std::string sweep;                 // a named sweep (assets/sweeps); empty: `problem`
  std::vector<std::string> kernels;  // empty: the sweep's, or every kernel of `pass`
  sim::PassSelection pass = sim::PassSelection::fwd;  // which rungs "every kernel" means
  sim::AttentionProblem problem;
  int repeats = 10;
  // A counter pass after the timed runs (kernels RunOptions::counters): the
  // DRAM and L2 bytes of one launch, measured by CUPTI.
  bool counters = false;
  // Students' own kernel files (flashlab bench --kernel-file), each compiled
  // and run in a process of its own beside the rungs; with `kernels` empty,
  // beside their comparison rungs (their algorithm's and fa2).
  std::vector<std::string> kernel_files;
  double kernel_timeout_s = 10;  // a case of a kernel file that answers nothing this long is stopped
};

using BenchProgressFn = std::function<void(size_t done, size_t total, const analysis::BenchRow& row)>;

struct BenchBackend {
  const char* name = "";
  // Empty when runs can start; else one sentence (no CUDA in this build, no device, ...).
  std::string (*unavailable_reason)() = nullptr;
  std::vector<BenchKernelEntry> (*kernels)() = nullptr;
  // Runs on the calling thread (the GUI's worker), checking `cancel` between
  // cases; throws std::exception with one line on failure.
  analysis::BenchResults (*run)(const BenchRunRequest& request, const BenchProgressFn& progress,
                                const std::atomic<bool>& cancel) = nullptr;
};

void register_bench_backend(const BenchBackend* backend);
// Registers the backends this build has (the kernels library's, when linked;
// see bench_kernels.cpp / bench_none.cpp). Called once at startup.
void register_builtin_bench_backends();
const BenchBackend* bench_backend();  // null when none is registered

// Named sweeps in assets/sweeps/*.json: name (file stem), title and source as
// the files give them. Read here so the list shows even without the kernels library.
std::vector<BenchSweepEntry> list_sweep_files();

}  // namespace flashlab::gui
