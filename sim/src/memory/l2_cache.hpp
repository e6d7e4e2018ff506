// Internal: the L2 as the model sees it — a sectored, fully associative LRU
// cache of lines. A line is a run of up to 64 consecutive tiles of one tensor
// of one head (a bit per tile); a read of tiles not present is a DRAM read of
// their bytes; a write allocates without reading (whole tiles are written) and
// marks them dirty; an evicted line writes its dirty tiles back to DRAM.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim::detail {

// Bytes of the tiles of one line: every tile has `tile_bytes` except the
// tensor's last, partial one, which has `partial_bytes` at bit `partial_bit`.
struct LineShape {
  i64 tile_bytes = 0;
  int partial_bit = -1;
  i64 partial_bytes = 0;
  i64 bytes(std::uint64_t mask) const;
};

struct AccessOutcome {
  i64 hit_bytes = 0;        // already in L2
  i64 miss_bytes = 0;       // read from DRAM (reads) or allocated (writes)
  i64 dirty_hit_bytes = 0;  // of the hits, tiles already written and not yet written back
};

class SectoredLru {
 public:
  explicit SectoredLru(i64 capacity_bytes);

  // Touches tiles `mask` of line `key` (shape fixed per key); returns what hit.
  // `owner` (fixed per key) is whose write-backs the line's are, for
  // written_back(); kNoOwner: another's (a thread block of a head the caller
  // does not follow), whose line takes its place in the L2 but whose
  // write-backs are not counted.
  static constexpr std::int32_t kNoOwner = -1;
  // `held_in` > 1: the line is held in one of that many partitions, not in
  // each (a write or an atomic add is done at its line's home partition), so its tiles
  // take 1/held_in of their bytes of this capacity. A line takes the share
  // of its last access.
  AccessOutcome access(std::uint64_t key, const LineShape& shape, std::uint64_t mask, bool write,
                       std::int32_t owner = 0, i64 held_in = 1);
  // `bytes` of other data, each byte touched once (clean, never touched again),
  // brought in at the most recent end: what the thread blocks of heads the
  // caller does not follow would bring in between two of its own. Evicts as
  // any access does. In lines of `line_bytes`.
  void bring_in_other(i64 bytes, i64 line_bytes);
  // Bytes brought into the L2 so far (read misses and write allocations).
  i64 brought_in_bytes() const { return brought_in_; }

  i64 capacity() const { return capacity_; }
  i64 resident_bytes() const { return resident_; }
  // A key's top 5 bits are its tag: the tensor (Tensor's index, below
  // kGlobalTensorCount), or kOtherTag for other data brought in.
  static constexpr int kTagShift = 59;
  static constexpr int kTags = 32;
  static constexpr int kOtherTag = kTags - 1;
  static_assert(kGlobalTensorCount < kOtherTag, "a tensor's tag must not be the other data's");
  // Dirty bytes still resident, per tensor tag.
  std::vector<i64> dirty_bytes_by_tag() const;
  // Dirty bytes evicted so far from the lines of `owner` with tag `tag`.
  i64 written_back(std::int32_t owner, int tag) const;

 private:
  struct Line {
    std::uint64_t key = 0;
    LineShape shape;
    std::uint64_t present = 0, dirty = 0;
    i64 bytes = 0;  // of the capacity it takes
    i64 held_in = 1;
    std::int32_t prev = -1, next = -1;  // LRU list: head = most recent
    std::uint32_t slot = 0;             // where the table holds it
    std::int32_t owner = 0;
  };
  // The line of `key`, or -1 with `slot` where it would be inserted.
  std::int32_t find(std::uint64_t key, std::size_t& slot) const;
  std::int32_t insert(std::uint64_t key, const LineShape& shape, std::size_t slot);
  void erase_slot(std::size_t slot);
  void unlink(std::int32_t n);
  void push_front(std::int32_t n);
  void evict_to_capacity();
  std::size_t slot_of(std::uint64_t key) const;

  i64 capacity_;
  i64 resident_ = 0, brought_in_ = 0;
  std::uint64_t next_other_ = 0;  // keys of other data: tag kOtherTag, a counter
  std::vector<i64> written_back_by_owner_tag_;  // [owner · kTags + tag]
  std::vector<Line> lines_;
  std::vector<std::int32_t> free_;
  std::int32_t head_ = -1, tail_ = -1;
  // Open addressing, linear probing, backward-shift deletion: slot -> line index + 1 (0 = empty).
  std::vector<std::int32_t> table_;
  std::size_t mask_ = 0, used_ = 0;
};

}  // namespace flashlab::sim::detail
