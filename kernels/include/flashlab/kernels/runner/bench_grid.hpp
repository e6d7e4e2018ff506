// What to benchmark, as named axes (nvbench style): kernels × dtype × causal ×
// (heads, head dim) × batch × seq. The CLI flags and the sweep files of
// assets/sweeps/*.json fill the same struct, and one function expands it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"

namespace flashlab::kernels {

struct BenchAxes {
  std::vector<std::string> kernels;  // registry ids; empty: every kernel
  std::vector<i64> batch;            // empty: 16, or tokens / N when `tokens` is set (the ring: 1)
  std::vector<i64> tokens;           // B = tokens / N (the FlashAttention-2 paper's grid)
  std::vector<i64> seq;              // empty: 1024 (the ring: 8192 tokens over all GPUs)
  std::vector<i64> seq_kv;           // empty: = seq (non-causal only)
  // emb_dim = heads · head_dim: give any two (all three when they agree).
  std::vector<i64> heads;            // empty: 16, or emb_dim / head_dim (the ring: 32)
  std::vector<i64> head_dim;         // empty: 64, or emb_dim / heads (the ring: 128)
  std::vector<i64> emb_dim;
  std::vector<i64> kv_heads;         // K/V heads H_kv (grouped-query attention); empty: = heads
  std::vector<bool> causal;          // empty: non-causal (the ring: causal)
  std::vector<sim::DType> dtypes;    // empty: fp16 (the ring: bf16)

  // The ring over several GPUs (expand_ring_axes): the attention of a model
  // in place of heads, K/V heads and head dim, GPU counts, layouts, and
  // whether the backward runs too.
  std::vector<std::string> models;   // sim::attention_models() ids
  std::vector<int> gpus;             // P; empty: 2
  std::vector<sim::RingLayout> layouts;  // empty: zig-zag
  sim::PassSelection passes = sim::PassSelection::fwd;  // fwd, or fwd+bwd (a training step's attention)
};

// One point of the grid per problem, in the order dtype, causal, (heads,
// head dim), K/V heads, batch, seq, seq_kv (the last varies fastest). Throws
// std::invalid_argument with a one-line reason naming the axis.
std::vector<sim::AttentionProblem> expand_axes(const BenchAxes& axes);

// The registry kernels of `axes.kernels`, as named; when empty, every kernel
// that computes a pass of `pass` (the forward ladder by default). Throws
// std::invalid_argument for an unknown id.
std::vector<const KernelInfo*> select_kernels(const std::vector<std::string>& ids,
                                              sim::PassSelection pass = sim::PassSelection::fwd);

// One ring problem per point, in the order dtype, causal, layout, model (or
// heads, K/V heads, head dim), batch, seq, gpus (the last varies fastest).
// Throws std::invalid_argument naming the axis.
std::vector<sim::AttentionProblem> expand_ring_axes(const BenchAxes& axes);

// A named sweep of assets/sweeps/NAME.json (format "flashlab-sweep/1"):
//   {"format": "flashlab-sweep/1", "name": "lab-batch-seq", "title": "...",
//    "source": "where the grid comes from", "kernels": ["naive", ...],
//    "axes": {"batch": [16, 32, 64], "seq": [512, 1024, 2048], "heads": [32],
//             "emb_dim": [2048], "causal": [false], "dtype": ["fp16"]},
//    "mem_limit": "15GiB"}        (optional: emulate a smaller GPU)
//
// or, for the ring over several GPUs (format "flashlab-ring-sweep/1"):
//   {"format": "flashlab-ring-sweep/1", "name": "ring-llama2-7b", ...,
//    "axes": {"model": ["llama2-7b"], "seq": ["8K", "16K"], "gpus": [2],
//             "layout": ["zigzag", "contiguous"], "causal": [true],
//             "dtype": ["bf16"], "pass": "fwd+bwd"}}
struct SweepFile {
  std::string name, title, source;
  BenchAxes axes;
  bool ring = false;  // a ring sweep: `axes` expand with expand_ring_axes
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
