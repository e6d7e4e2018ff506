// How sequence-parallel ring attention splits one sequence over P GPUs
// (Liu et al. 2023, "Ring Attention with Blockwise Transformers"; the
// zig-zag layout of Brandon et al. 2023 / DistFlashAttn / LightSeq):
//
//   the N tokens are cut into C chunks, as equal as integers allow (chunk c
//   is tokens [⌊cN/C⌋, ⌊(c+1)N/C⌋), so sizes differ by at most one);
//   contiguous: C = P, GPU r holds chunk r;
//   zig-zag:    C = 2P, GPU r holds chunks r and 2P − 1 − r, so that under the
//               causal mask every GPU has the same number of visible (query,
//               key) pairs to within a chunk's diagonal.
//
// GPU r keeps Q, O (and the LSE) of its own chunks for the whole pass. K and V
// travel: at step s = 0 … P − 1 GPU r holds the K, V chunks that GPU
// (r − s) mod P started with, computes its queries against them, and passes
// them on to GPU (r + 1) mod P. A (query chunk, key chunk) pair is
//   full      every key precedes every query (or the mask is off),
//   diagonal  the same chunk: the causal mask runs through it,
//   none      every key follows every query: skipped, never computed.
//
// This is the one definition of the layout: the ring's simulator, the
// kernels' host code, the GUI's step-through and the tests all use it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

enum class RingLayout { contiguous, zigzag };

// Each layout described once, as data: what the front ends call it and accept,
// how many chunks it cuts and which a GPU holds. The simulator, the kernels'
// ring, the results files, the CLI and the window read this table.
struct RingLayoutInfo {
  RingLayout layout;
  std::string_view name;     // "zigzag": files, flags, scenarios
  std::string_view words;    // "zig-zag": charts and the window
  std::string_view summary;  // "balanced under the causal mask": the flags' help
  std::string_view holds;    // "chunks r and 2P − 1 − r": what GPU r holds, in words
  std::vector<std::string_view> aliases;  // other names accepted ("zig-zag", "balanced")
  int chunks_per_gpu = 1;         // C = chunks_per_gpu · P
  bool balances_causal = false;   // under the causal mask every GPU has about the same visible pairs
  std::vector<int> (*held)(int r, int gpus) = nullptr;  // the chunks GPU r of P holds, in sequence order
};
// Every layout, the default (zigzag) first.
const std::vector<RingLayoutInfo>& ring_layouts();
const RingLayoutInfo& ring_layout_info(RingLayout l);
// The layout after `l` in the table (the last one's is the first): the one a
// view compares against.
RingLayout next_ring_layout(RingLayout l);

std::string_view ring_layout_name(RingLayout l);  // "zigzag", "contiguous"
// Parses a layout's name or one of its aliases ("zig-zag", "balanced" →
// zigzag, "unbalanced" → contiguous); false when the text names none.
bool parse_ring_layout(std::string_view text, RingLayout& out);
// "zigzag, contiguous": the names joined by `separator`, for a message or a help text listing them.
std::string ring_layout_names(std::string_view separator = ", ");

// Tokens [begin, end) of the sequence.
struct RingChunk {
  int index = 0;  // c, in sequence order
  i64 begin = 0;
  i64 end = 0;
  i64 size() const { return end - begin; }
};

struct RingPartition {
  i64 seq = 0;         // N, the whole sequence
  int gpus = 1;        // P
  RingLayout layout = RingLayout::contiguous;
  std::vector<RingChunk> chunks;            // all C chunks, in sequence order
  std::vector<std::vector<int>> held;       // held[r]: indices of GPU r's chunks, in sequence order
  i64 tokens_of(int r) const;               // Σ sizes of GPU r's chunks
};

// Throws std::invalid_argument (one sentence naming the value) unless
// 1 ≤ P ≤ 4096 and N ≥ C (every chunk holds at least one token).
RingPartition ring_partition(i64 seq, int gpus, RingLayout layout);

// Which GPU's K, V chunks GPU r holds at step s: (r − s) mod P.
int ring_kv_source(int r, int step, int gpus);

enum class ChunkVisibility { full, diagonal, none };
ChunkVisibility chunk_visibility(const RingChunk& q, const RingChunk& kv, bool causal);

// Visible (query, key) pairs of a chunk pair: |q|·|kv| for full, |q|(|q|+1)/2
// for the diagonal, 0 for none. The FLOPs and the softmax's exponentials of
// the block are proportional to it.
i64 visible_pairs(const RingChunk& q, const RingChunk& kv, bool causal);

}  // namespace flashlab::sim
