// Measured kernel runs as data: what `flashlab bench` writes and the GUI, the
// roofline and the exporters read. Plain C++; no CUDA.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/measurement/measurement.hpp"

namespace flashlab::analysis {

using sim::i64;

// The measured part of a row is sim::MeasuredRun (what kernels/ and
// scripts/torch_compare.py report); the names below keep the tree's vocabulary.
using RunStatus = sim::RunStatus;
using sim::to_string;
using BenchMeta = sim::RunMeta;

// A measured run and the rates analysis derives from it with the model
// (bench_row() in placement.hpp). Files carry both: the derived fields are
// written as the run was printed, and read back as written.
struct BenchRow : sim::MeasuredRun {
  double tflops = 0;             // convention FLOPs / median time
  double tflops_exact = 0;       // the model's FLOPs / median time
  double gbps = 0;               // the model's DRAM bytes (after its L2) / median time
  i64 predicted_memory_bytes = 0;  // the model's HBM tensors (sim::hbm_footprint_bytes)
  // The model's DRAM bytes for the launch that ran (the L2 model with the
  // device's L2, SM count and the row's occupancy), as the counters would see
  // them: written back during the run, not the dirty tail left in L2. -1: none.
  i64 predicted_dram_read_bytes = -1, predicted_dram_write_bytes = -1;
  // The model's other state for a launch of several CTAs per SM: each SM's CTA
  // slots walking apart instead of in lockstep (bench_row; docs/model.md §7b,
  // "Two CTAs on an SM"). Set only for a row with counters whose two states
  // differ by more than 5 %; -1 otherwise. Not written to files: the
  // prediction of a row is the lockstep state above.
  i64 apart_dram_read_bytes = -1, apart_dram_write_bytes = -1;
  // The file the row was read from: its index in BenchResults::sources
  // (merge_results sets it; not written to files).
  std::size_t source = 0;
};

// One file a set of results was read from: where and how its runs were
// measured (its own metadata, PyTorch's versions among them) and the
// implementations it holds.
struct ResultsSource {
  std::string origin;
  BenchMeta meta;
  std::vector<std::string> kernels;  // in first-appearance order
};

struct BenchResults {
  BenchMeta meta;  // the first file's (merge_results); every file's in `sources`
  std::vector<BenchRow> rows;
  std::vector<ResultsSource> sources{};  // empty: one file, `meta` its own
};

// One run of an implementation: its pass, problem, tiles and allocation limit.
// A file merging several sweeps, or several files, may hold it more than once.
bool same_run(const BenchRow& a, const BenchRow& b);

// Several results files as one. Rows keep the files' order; a run held by more
// than one (same_run) is kept once, from the first file that holds it — the
// stated rule of every merge; the repeats whose times disagree by more than
// kRepeatSpread are listed (`disagreeing`), so a report says so. The metadata is the first file's; `sources`
// keeps every file's, in order. Files
// measured on different GPUs are refused (std::runtime_error naming both): a
// report draws one GPU's runs.
// How far apart the times of one thing timed more than once may be,
// (max − min) / min, before they are said to disagree: flashlab check's
// default --spread and the merge's note on repeated runs.
constexpr double kRepeatSpread = 0.10;

// A run held more than once whose measured median times disagree: the row
// kept (the first) and the range of all its times.
struct DisagreeingRepeat {
  BenchRow kept;
  std::size_t times = 0;  // measured rows of the run, the kept one among them
  double min_ms = 0, max_ms = 0;
  double spread() const { return min_ms > 0 ? (max_ms - min_ms) / min_ms : 0; }
};

struct MergedResults {
  BenchResults results;
  std::size_t repeats_dropped = 0;  // rows left out as runs an earlier row already holds
  // Every repeated run whose times spread over kRepeatSpread, the widest first.
  std::vector<DisagreeingRepeat> disagreeing;
};
MergedResults merge_results(const std::vector<std::pair<std::string, BenchResults>>& files);

std::string bench_to_json(const BenchResults& r);
std::string bench_to_csv(const BenchResults& r);   // metadata as leading "# key: value" lines
std::string bench_rows_to_csv(const BenchResults& r);  // the header and the rows only: pandas reads it as is
// Reads either format (detected by content). Throws std::runtime_error with
// the origin and a one-line reason.
BenchResults bench_from_text(const std::string& text, const std::string& origin);
BenchResults bench_from_file(const std::string& path);

}  // namespace flashlab::analysis
