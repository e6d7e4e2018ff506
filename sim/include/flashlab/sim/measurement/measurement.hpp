// A kernel run as measured: the vocabulary shared by the code that measures
// (kernels/, scripts/torch_compare.py) and the code that places a measurement
// beside the model (analysis/). Only what the GPU did — times, memory, error,
// the tiles that ran — and which simulator algorithm has the kernel's HBM
// traffic. No rate, FLOP or byte count lives here: those are the model's, and
// analysis/ derives them (placement.hpp). Plain values; no CUDA.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

enum class RunStatus { ok, oom, skipped, failed };
std::string_view to_string(RunStatus s);  // "ok", "OOM", "skipped", "failed"
std::optional<RunStatus> parse_run_status(std::string_view s);

struct MeasuredRun {
  std::string kernel;            // registry id, or "torch_eager", "sdpa_flash", "sdpa_cudnn"
  // The simulator algorithm with the kernel's HBM traffic, as its key
  // ("standard", "pytorch", "fa1", "fa2"): the registry's KernelInfo::model for
  // our kernels, torch_compare.py's for PyTorch's. Empty in files written
  // before rows carried it; such rows are not placed on a roofline.
  std::string model;
  std::string direction = "fwd"; // "fwd" or "bwd"
  AttentionProblem problem;
  TileShape tiles;               // what ran (0×0: not tiled, or not reported)
  RunStatus status = RunStatus::ok;
  std::string reason;            // why skipped / failed / OOM (with the bytes asked for)
  double time_ms_median = 0, time_ms_min = 0, time_ms_max = 0;
  int repeats = 0;               // timed runs; 0: checked only
  // The host's wall time inside the launch call, the median over the timed
  // runs (argument checks, descriptors, the launch itself); 0: not measured.
  double launch_host_us = 0;
  i64 peak_memory_bytes = 0;     // measured on the device
  // The allocation limit the case ran under (a smaller GPU emulated: flashlab
  // bench --mem-limit, a sweep's mem_limit); 0: the device's own memory.
  i64 mem_limit_bytes = 0;
  double rel_error = -1;         // relative Frobenius error vs fp64, -1 = not checked

  // How the kernel ran, for the L2 model's launch: thread blocks resident per
  // SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor; 0 = not reported, the
  // model's own), and whether each head's heaviest row block starts first.
  i64 ctas_per_sm = 0;
  bool heaviest_first = false;
  // Element types the kernel keeps in global memory where they differ from the
  // paper's algorithm (its O accumulated in fp32): the model counts them so.
  StorageTypes storage;

  // DRAM and L2 bytes the GPU's counters saw in a separate pass (L2 flushed by
  // reading before it); -1 = not measured, `counters_note` says why.
  i64 dram_read_bytes = -1, dram_write_bytes = -1;
  i64 l2_read_bytes = -1, l2_write_bytes = -1;
  std::string counters_note;
  bool has_counters() const { return dram_read_bytes >= 0 && dram_write_bytes >= 0; }
};

// The algorithm of `model`, nullopt when the run names none (or an unknown one).
std::optional<Algorithm> model_algorithm(const MeasuredRun& r);

// Where and how a set of runs was measured.
struct RunMeta {
  std::string gpu, driver, cuda_runtime, commit, flop_convention, date, host;
  // PyTorch's rows (scripts/torch_compare.py): its version, the CUDA it was
  // built with, cuDNN's version; empty in files that did not record them.
  std::string torch_version, torch_cuda, cudnn_version;
  // How the runs were taken and checked, in the words of the tool that took
  // them; empty where it did not say (the reader states what it knows).
  std::string method;
  int sm_count = 0;
  i64 l2_bytes = 0;  // the device's L2 (cudaDevAttrL2CacheSize), 0 when unknown
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  bool l2_flush = true;
};

// A set of runs and where they were measured: what a benchmark run returns.
struct MeasuredRuns {
  RunMeta meta;
  std::vector<MeasuredRun> runs;
};

}  // namespace flashlab::sim
