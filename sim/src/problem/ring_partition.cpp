#include "flashlab/sim/problem/ring_partition.hpp"

#include <stdexcept>

namespace flashlab::sim {

namespace {

std::vector<int> contiguous_held(int r, int) { return {r}; }
std::vector<int> zigzag_held(int r, int gpus) { return {r, 2 * gpus - 1 - r}; }

}  // namespace

const std::vector<RingLayoutInfo>& ring_layouts() {
  // The default first.
  static const std::vector<RingLayoutInfo> table{
      {RingLayout::zigzag, "zigzag", "zig-zag", "balanced under the causal mask", "chunks r and 2P − 1 − r",
       {"zig-zag", "balanced"}, 2, true, zigzag_held},
      {RingLayout::contiguous, "contiguous", "contiguous", "unbalanced under the causal mask", "chunk r",
       {"unbalanced"}, 1, false, contiguous_held},
  };
  return table;
}

const RingLayoutInfo& ring_layout_info(RingLayout l) {
  for (const RingLayoutInfo& x : ring_layouts())
    if (x.layout == l) return x;
  return ring_layouts().front();
}

RingLayout next_ring_layout(RingLayout l) {
  const std::vector<RingLayoutInfo>& t = ring_layouts();
  for (std::size_t k = 0; k < t.size(); ++k)
    if (t[k].layout == l) return t[(k + 1) % t.size()].layout;
  return t.front().layout;
}

std::string_view ring_layout_name(RingLayout l) { return ring_layout_info(l).name; }

bool parse_ring_layout(std::string_view text, RingLayout& out) {
  for (const RingLayoutInfo& x : ring_layouts()) {
    bool match = text == x.name;
    for (std::string_view a : x.aliases) match = match || text == a;
    if (match) {
      out = x.layout;
      return true;
    }
  }
  return false;
}

std::string ring_layout_names(std::string_view separator) {
  std::string s;
  for (const RingLayoutInfo& x : ring_layouts()) s += (s.empty() ? "" : std::string(separator)) + std::string(x.name);
  return s;
}

i64 RingPartition::tokens_of(int r) const {
  i64 n = 0;
  for (int c : held.at(static_cast<std::size_t>(r))) n += chunks[static_cast<std::size_t>(c)].size();
  return n;
}

RingPartition ring_partition(i64 seq, int gpus, RingLayout layout) {
  if (gpus < 1 || gpus > 4096)
    throw std::invalid_argument("the ring needs 1 to 4096 GPUs, not " + std::to_string(gpus));
  const RingLayoutInfo& info = ring_layout_info(layout);
  const int C = info.chunks_per_gpu * gpus;
  if (seq < C)
    throw std::invalid_argument("a sequence of " + std::to_string(seq) + " tokens cannot fill the " +
                                std::to_string(C) + " chunks of the " + std::string(ring_layout_name(layout)) +
                                " layout on " + std::to_string(gpus) + " GPUs (at least one token each)");
  RingPartition p;
  p.seq = seq;
  p.gpus = gpus;
  p.layout = layout;
  p.chunks.resize(static_cast<std::size_t>(C));
  for (int c = 0; c < C; ++c) {
    // ⌊cN/C⌋ without overflow: seq ≤ 2^62 in practice, C ≤ 8192.
    const i64 q = seq / C, r = seq % C;
    auto edge = [&](i64 k) { return k * q + (k * r) / C; };
    p.chunks[static_cast<std::size_t>(c)] = RingChunk{c, edge(c), edge(c + 1)};
  }
  p.held.resize(static_cast<std::size_t>(gpus));
  for (int g = 0; g < gpus; ++g) p.held[static_cast<std::size_t>(g)] = info.held(g, gpus);
  return p;
}

int ring_kv_source(int r, int step, int gpus) {
  const int s = ((r - step) % gpus + gpus) % gpus;
  return s;
}

ChunkVisibility chunk_visibility(const RingChunk& q, const RingChunk& kv, bool causal) {
  if (!causal || kv.index < q.index) return ChunkVisibility::full;
  if (kv.index == q.index) return ChunkVisibility::diagonal;
  return ChunkVisibility::none;
}

i64 visible_pairs(const RingChunk& q, const RingChunk& kv, bool causal) {
  switch (chunk_visibility(q, kv, causal)) {
    case ChunkVisibility::full: return q.size() * kv.size();
    case ChunkVisibility::diagonal: return q.size() * (q.size() + 1) / 2;
    case ChunkVisibility::none: return 0;
  }
  return 0;
}

}  // namespace flashlab::sim
