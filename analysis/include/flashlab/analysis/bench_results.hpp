// Measured kernel runs as data: what `flashlab bench` writes and the GUI, the
// roofline and the exporters read. Plain C++; no CUDA.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/problem.hpp"
#include "flashlab/sim/tiles.hpp"

namespace flashlab::analysis {

using sim::i64;

enum class RunStatus { ok, oom, skipped, failed };
std::string_view to_string(RunStatus s);  // "ok", "OOM", "skipped", "failed"

struct BenchRow {
  std::string kernel;            // registry id, or "torch_eager", "sdpa_flash", "sdpa_cudnn"
  std::string direction = "fwd"; // "fwd" or "bwd"
  sim::AttentionProblem problem;
  sim::TileShape tiles;          // what ran (0×0 when not applicable)
  RunStatus status = RunStatus::ok;
  std::string reason;            // why skipped / failed / OOM (with the bytes asked for)
  double time_ms_median = 0, time_ms_min = 0, time_ms_max = 0;
  int repeats = 0;
  double tflops = 0;             // convention FLOPs / median time
  double tflops_exact = 0;       // executed FLOPs / median time
  double gbps = 0;               // simulator HBM bytes / median time
  i64 peak_memory_bytes = 0;     // measured on the device
  i64 predicted_memory_bytes = 0;
  double rel_error = -1;         // relative Frobenius error vs fp64, -1 = not checked
};

struct BenchMeta {
  std::string gpu, driver, cuda_runtime, commit, flop_convention, date, host;
  int sm_count = 0;
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  bool l2_flush = true;
};

struct BenchResults {
  BenchMeta meta;
  std::vector<BenchRow> rows;
};

std::string bench_to_json(const BenchResults& r);
std::string bench_to_csv(const BenchResults& r);   // metadata as leading "# key: value" lines
// Reads either format (detected by content). Throws std::runtime_error with
// the origin and a one-line reason.
BenchResults bench_from_text(const std::string& text, const std::string& origin);
BenchResults bench_from_file(const std::string& path);

}  // namespace flashlab::analysis
