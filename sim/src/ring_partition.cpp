#include "flashlab/sim/ring_partition.hpp"

#include <stdexcept>

namespace flashlab::sim {

std::string_view ring_layout_name(RingLayout l) {
  return l == RingLayout::zigzag ? "zigzag" : "contiguous";
}

bool parse_ring_layout(std::string_view text, RingLayout& out) {
  if (text == "contiguous" || text == "unbalanced") {
    out = RingLayout::contiguous;
    return true;
  }
  if (text == "zigzag" || text == "zig-zag" || text == "balanced") {
    out = RingLayout::zigzag;
    return true;
  }
  return false;
}

i64 RingPartition::tokens_of(int r) const {
  i64 n = 0;
  for (int c : held.at(static_cast<std::size_t>(r))) n += chunks[static_cast<std::size_t>(c)].size();
  return n;
}

RingPartition ring_partition(i64 seq, int gpus, RingLayout layout) {
  if (gpus < 1 || gpus > 4096)
    throw std::invalid_argument("the ring needs 1 to 4096 GPUs, not " + std::to_string(gpus));
  const int C = layout == RingLayout::zigzag ? 2 * gpus : gpus;
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
  for (int g = 0; g < gpus; ++g) {
    if (layout == RingLayout::zigzag)
      p.held[static_cast<std::size_t>(g)] = {g, 2 * gpus - 1 - g};
    else
      p.held[static_cast<std::size_t>(g)] = {g};
  }
  return p;
}

int ring_kv_source(int r, int step, int gpus) {
  const int s = ((r - step) % gpus + gpus) % gpus;
  return s;
}

std::string_view chunk_visibility_name(ChunkVisibility v) {
  switch (v) {
    case ChunkVisibility::full: return "full";
    case ChunkVisibility::diagonal: return "diagonal";
    case ChunkVisibility::none: return "none";
  }
  return "none";
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
