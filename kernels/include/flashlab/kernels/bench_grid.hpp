// What to benchmark, as named axes (nvbench style): kernels × dtype × causal ×
// (heads, head dim) × batch × seq. The CLI flags and the sweep files of
// assets/sweeps/*.json fill the same struct, and one function expands it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/kernels/registry.hpp"

namespace flashlab::kernels {

struct BenchAxes {
  std::vector<std::string> kernels;  // registry ids; empty: every kernel
  std::vector<i64> batch;            // empty: 16, or tokens / N when `tokens` is set
  std::vector<i64> tokens;           // B = tokens / N (the FlashAttention-2 paper's grid)
  std::vector<i64> seq;              // empty: 1024
  std::vector<i64> seq_kv;           // empty: = seq (non-causal only)
  // emb_dim = heads · head_dim: give any two (all three when they agree).
  std::vector<i64> heads;            // empty: 16, or emb_dim / head_dim
  std::vector<i64> head_dim;         // empty: 64, or emb_dim / heads
  std::vector<i64> emb_dim;
  std::vector<bool> causal;          // empty: non-causal
  std::vector<sim::DType> dtypes;    // empty: fp16
};

// One point of the grid per problem, in the order dtype, causal, (heads,
// head dim), batch, seq, seq_kv (the last varies fastest). Throws
// std::invalid_argument with a one-line reason naming the axis.
std::vector<sim::AttentionProblem> expand_axes(const BenchAxes& axes);

// The registry kernels of `axes.kernels`, as named; when empty, every kernel
// that computes a pass of `pass` (the forward ladder by default). Throws
// std::invalid_argument for an unknown id.
std::vector<const KernelInfo*> select_kernels(const std::vector<std::string>& ids,
                                              sim::PassSelection pass = sim::PassSelection::fwd);

// A named sweep of assets/sweeps/NAME.json (format "flashlab-sweep/1"):
//   {"format": "flashlab-sweep/1", "name": "lab-batch-seq", "title": "...",
//    "source": "where the grid comes from", "kernels": ["naive", ...],
//    "axes": {"batch": [16, 32, 64], "seq": [512, 1024, 2048], "heads": [32],
//             "emb_dim": [2048], "causal": [false], "dtype": ["fp16"]},
//    "mem_limit": "15GiB"}        (optional: emulate a smaller GPU)
struct SweepFile {
  std::string name, title, source;
  BenchAxes axes;
  std::optional<i64> mem_limit_bytes;
};

// Throws std::runtime_error "ORIGIN: reason" for malformed JSON, an unknown
// key, a bad value or a grid that does not expand.
SweepFile parse_sweep(const std::string& text, const std::string& origin);
// A name from assets/sweeps (without .json) or a path to a JSON file.
SweepFile load_sweep(const std::string& name_or_path);
std::string sweeps_dir();                // assets_dir()/sweeps
std::vector<std::string> list_sweeps();  // names, sorted

}  // namespace flashlab::kernels
