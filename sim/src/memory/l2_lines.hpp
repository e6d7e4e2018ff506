// The L2 of the L2 model as lines of tiles: which line a tile of a tensor
// falls in (keyed by the head of the tensor's memory), the sectored LRU they
// live in (l2_cache.hpp), and the traffic each followed head asked for.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <stdexcept>
#include <vector>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/memory/l2.hpp"
#include "l2_accesses.hpp"
#include "l2_cache.hpp"

namespace flashlab::sim::l2_detail {

using detail::AccessOutcome;
using detail::LineShape;
using detail::SectoredLru;

// Lines per L2 capacity (see Memory). 64 lines resolve capacity to about 1.5%
// of the L2; over the 88 points of the H200 validation the DRAM predicted with
// 64 lines and with 256 differ by at most 1.6 points of error (docs/model.md).
constexpr i64 kLinesPerL2 = 64;

class Memory {
 public:
  Memory(const TileGrid& g, const AttentionProblem& p, i64 l2_bytes, i64 partitions)
      : g_(g), p_(p), cache_(l2_bytes), partitions_(std::max<i64>(1, partitions)) {
    // A few dozen lines fill the L2: an LRU of lines that size behaves as an
    // LRU of tiles (capacity effects resolve to about 1/kLinesPerL2 of it), at
    // a fraction of the bookkeeping.
    target_line_ = std::max<i64>(4096, l2_bytes / kLinesPerL2);
  }

  i64 extent(Extent e, i64 i, i64 j) const {
    switch (e) {
      case Extent::r: return i >= 0 ? g_.rows(i) : g_.Br;
      case Extent::c: return j >= 0 ? g_.cols(j) : g_.Bc;
      case Extent::d: return g_.d;
      case Extent::one: return 1;
      case Extent::n_q: return g_.n_q;
      case Extent::n_kv: return g_.n_kv;
    }
    return 0;
  }
  i64 tile_bytes(const Access& a, i64 i, i64 j) const {
    return extent(a.rows, i, j) * extent(a.cols, i, j) * a.element_bytes;
  }

  // Tiles per line of an access pattern: by row block when it uses i, else by
  // column block. Fixed per tensor and pattern, so remembered.
  i64 group(const Access& a) const {
    const size_t slot = static_cast<size_t>(a.tensor) * 4 + (a.uses_i ? 2 : 0) + (a.uses_j ? 1 : 0);
    i64& g = groups_[slot];
    if (g == 0) {
      const i64 full = tile_bytes(a, -1, a.uses_i && a.uses_j ? 0 : -1);
      g = std::clamp<i64>(target_line_ / std::max<i64>(1, full), 1, 64);
    }
    return g;
  }

  // A line is keyed by the head of the tensor's memory (memory_head: the
  // heads of a group share the lines of K, V, dK, dV) and carries the head
  // that accesses it, whose traffic it is.
  struct Line {
    std::uint64_t key = 0;
    LineShape shape;
    int bit = 0;
    i64 head = 0;  // the accessing (query) head
  };
  Line line_of(const Access& a, i64 head, i64 i, i64 j) const {
    const i64 gsz = group(a);
    Line l;
    l.head = head;
    const i64 in_memory = memory_head(a.tensor, p_, head);
    const i64 index = a.uses_i ? i : j, count = a.uses_i ? g_.T_r : g_.T_c;
    const i64 line = index / gsz;
    const i64 a_idx = a.uses_i ? line : 0, b_idx = a.uses_i ? (a.uses_j ? j + 1 : 0) : line;
    l.bit = static_cast<int>(index - line * gsz);
    if (static_cast<int>(a.tensor) >= kGlobalTensorCount)
      throw std::logic_error("the L2 model was asked for an on-chip tensor in global memory");
    if (head >= (i64{1} << 19) || a_idx >= (i64{1} << 20) || b_idx >= (i64{1} << 20))
      throw OverflowError("too many heads or blocks for the L2 model's line index");
    // Key: tensor (5 bits, SectoredLru::kTagShift), head in memory (19), line index a (20), b (20).
    l.key = (static_cast<std::uint64_t>(a.tensor) << SectoredLru::kTagShift) |
            (static_cast<std::uint64_t>(in_memory) << 40) | (static_cast<std::uint64_t>(a_idx) << 20) |
            static_cast<std::uint64_t>(b_idx);
    l.shape.tile_bytes = a.uses_i ? tile_bytes(a, -1, j) : tile_bytes(a, i, -1);
    const i64 last = count - 1;
    if ((line + 1) * gsz > last) {  // the line holds the last tile
      const i64 last_bytes = a.uses_i ? tile_bytes(a, last, j) : tile_bytes(a, i, last);
      if (last_bytes != l.shape.tile_bytes) {
        l.shape.partial_bit = static_cast<int>(last % gsz);
        l.shape.partial_bytes = last_bytes;
      }
    }
    return l;
  }

  // Touches the tiles `mask` of a line for `copies` blocks at once: the first
  // finds what the L2 holds, the other copies then hit (blocks of one cohort
  // asking for the same K_j in the same step). The traffic is the accessing
  // head's, and so are the write-backs of a line it brings in.
  // Accesses of heads the model does not follow (counting off) take their
  // place in the L2 but are not counted.
  // A line read by SMs of every partition is held in each; a write, and an
  // atomic add, is done at the line's home partition, the point of coherence,
  // and the line is held there alone until it is read again.
  AccessOutcome touch(const Access& a, const Line& l, std::uint64_t mask, i64 copies = 1) {
    const auto head = static_cast<std::int32_t>(l.head);
    const bool at_home = a.write || a.atomic_add;
    const AccessOutcome o = cache_.access(l.key, l.shape, mask, a.write, counting_ ? head : SectoredLru::kNoOwner,
                                          at_home ? partitions_ : 1);
    if (++accesses_ > limit_) throw AccessLimit{};
    if (!counting_) return o;
    if (static_cast<size_t>(head) >= per_head_.size()) per_head_.resize(static_cast<size_t>(head) + 1);
    TensorTraffic& t = per_head_[static_cast<size_t>(head)][static_cast<size_t>(a.tensor)];
    const i64 bytes = o.hit_bytes + o.miss_bytes;
    const i64 again = bytes * (copies - 1);
    if (a.write) {
      t.request_write_bytes += bytes + again;
      t.l2_absorbed_write_bytes += o.dirty_hit_bytes + again;
    } else {
      t.request_read_bytes += bytes + again;
      t.l2_hit_read_bytes += o.hit_bytes + again;
      t.dram_read_bytes += o.miss_bytes;
    }
    return o;
  }
  // A request a block serves from its own registers or shared memory (a
  // tile it keeps across the query heads of a group): asked for and found,
  // a read hit or a write absorbed, without reaching the L2's lines.
  void on_chip(const Access& a, i64 head, i64 bytes) {
    if (!counting_) return;
    if (static_cast<size_t>(head) >= per_head_.size()) per_head_.resize(static_cast<size_t>(head) + 1);
    TensorTraffic& t = per_head_[static_cast<size_t>(head)][static_cast<size_t>(a.tensor)];
    if (a.write) {
      t.request_write_bytes += bytes;
      t.l2_absorbed_write_bytes += bytes;
    } else {
      t.request_read_bytes += bytes;
      t.l2_hit_read_bytes += bytes;
    }
  }
  void set_counting(bool on) { counting_ = on; }
  // Bytes the L2 took in so far (misses and write allocations), and other
  // heads' bytes brought in, in this model's lines.
  i64 brought_in_bytes() const { return cache_.brought_in_bytes(); }
  void bring_in_other(i64 bytes) { cache_.bring_in_other(bytes, target_line_); }

  // Per tensor, all `heads` of the run from the `followed` first ones. Every
  // head followed: their sum, as walked. Fewer: the `first` heads (the first
  // head, or the first group of G heads that share K, V), which start with an
  // empty L2, plus the others as the heads after them ran (each started
  // beside the tail of the one before), scaled to the heads not followed; the
  // writes that left the L2 are then the written requests less what the L2
  // holds dirty at the end and what later writes absorbed.
  std::array<TensorTraffic, kTensorCount> finish(i64 followed, i64 heads, i64 first) const {
    std::array<TensorTraffic, kTensorCount> out{};
    const std::vector<i64> dirty = cache_.dirty_bytes_by_tag();
    for (int t = 0; t < kGlobalTensorCount; ++t) {  // on-chip tensors never reach the L2
      const auto ti = static_cast<size_t>(t);
      auto of = [&](i64 h) {
        TensorTraffic x = static_cast<size_t>(h) < per_head_.size() ? per_head_[static_cast<size_t>(h)][ti] : TensorTraffic{};
        x.dram_write_bytes = cache_.written_back(static_cast<std::int32_t>(h), t);
        return x;
      };
      TensorTraffic& o = out[ti];
      if (followed >= heads || followed < 2 * first) {
        for (i64 h = 0; h < followed; ++h) o += of(h);
        if (followed < heads) {  // one head of several: the first's, for every head
          auto scale = [&](i64 v) { return checked_mul(v, heads, "L2 model"); };
          o.request_read_bytes = scale(o.request_read_bytes);
          o.request_write_bytes = scale(o.request_write_bytes);
          o.l2_hit_read_bytes = scale(o.l2_hit_read_bytes);
          o.l2_absorbed_write_bytes = scale(o.l2_absorbed_write_bytes);
        }
      } else {
        TensorTraffic walked, rest;
        for (i64 h = 0; h < first; ++h) walked += of(h);
        for (i64 h = first; h < followed; ++h) rest += of(h);
        auto scale = [&](i64 as_walked, i64 others) {
          return as_walked + checked_mul(others, heads - first, "L2 model") / (followed - first);
        };
        o.request_read_bytes = scale(walked.request_read_bytes, rest.request_read_bytes);
        o.request_write_bytes = scale(walked.request_write_bytes, rest.request_write_bytes);
        o.l2_hit_read_bytes = scale(walked.l2_hit_read_bytes, rest.l2_hit_read_bytes);
        o.l2_absorbed_write_bytes = scale(walked.l2_absorbed_write_bytes, rest.l2_absorbed_write_bytes);
      }
      o.dirty_at_end_bytes = dirty[ti];
      if (followed < heads) {
        o.dram_read_bytes = o.request_read_bytes - o.l2_hit_read_bytes;
        o.dram_write_bytes = std::max<i64>(0, o.request_write_bytes - o.dirty_at_end_bytes - o.l2_absorbed_write_bytes);
      }
    }
    return out;
  }
  i64 accesses() const { return accesses_; }
  struct AccessLimit {};
  void set_limit(i64 limit) { limit_ = limit; }

 private:
  const TileGrid& g_;
  const AttentionProblem& p_;
  SectoredLru cache_;
  i64 partitions_ = 1;
  i64 target_line_ = 4096;
  std::vector<std::array<TensorTraffic, kTensorCount>> per_head_;  // of the followed heads
  mutable std::array<i64, kTensorCount * 4> groups_{};
  i64 accesses_ = 0;
  i64 limit_ = std::numeric_limits<i64>::max();
  bool counting_ = true;
};

}  // namespace flashlab::sim::l2_detail
