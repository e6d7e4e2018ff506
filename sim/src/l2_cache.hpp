// Internal: the L2 as the model sees it — a sectored, fully associative LRU
// cache of lines. A line is a run of up to 64 consecutive tiles of one tensor
// of one head (a bit per tile); a read of tiles not present is a DRAM read of
// their bytes; a write allocates without reading (whole tiles are written) and
// marks them dirty; an evicted line writes its dirty tiles back to DRAM.
#pragma once

#include <cstdint>
#include <vector>

#include "flashlab/sim/types.hpp"

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
  AccessOutcome access(std::uint64_t key, const LineShape& shape, std::uint64_t mask, bool write);

  i64 capacity() const { return capacity_; }
  i64 resident_bytes() const { return resident_; }
  i64 dram_write_bytes() const { return written_back_; }  // dirty bytes evicted so far
  i64 dirty_bytes() const;                               // dirty bytes still in L2
  // Dirty bytes still resident, per tensor tag (the top 4 bits of each key).
  std::vector<i64> dirty_bytes_by_tag() const;
  std::vector<i64> written_back_by_tag() const { return written_back_by_tag_; }

 private:
  struct Line {
    std::uint64_t key = 0;
    LineShape shape;
    std::uint64_t present = 0, dirty = 0;
    i64 bytes = 0;
    std::int32_t prev = -1, next = -1;  // LRU list: head = most recent
  };
  std::int32_t find(std::uint64_t key) const;
  std::int32_t insert(std::uint64_t key, const LineShape& shape);
  void erase_slot(std::size_t slot);
  void unlink(std::int32_t n);
  void push_front(std::int32_t n);
  void evict_to_capacity();
  std::size_t slot_of(std::uint64_t key) const;

  i64 capacity_;
  i64 resident_ = 0, written_back_ = 0;
  std::vector<i64> written_back_by_tag_ = std::vector<i64>(16, 0);
  std::vector<Line> lines_;
  std::vector<std::int32_t> free_;
  std::int32_t head_ = -1, tail_ = -1;
  // Open addressing, linear probing, backward-shift deletion: slot -> line index + 1 (0 = empty).
  std::vector<std::int32_t> table_;
  std::size_t mask_ = 0, used_ = 0;
};

}  // namespace flashlab::sim::detail
