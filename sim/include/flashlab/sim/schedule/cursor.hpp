// Step-through over a schedule. Any position is reached in O(T) integer work
// plus the replay of one piece (one (i, j) visit, at most ~15 events): the
// counters come from the prefix closed forms, the SRAM contents from the
// piece's outer iteration, never from replaying the stream from the start.
#pragma once

#include <optional>
#include <vector>

#include "flashlab/sim/schedule/schedule.hpp"
#include "flashlab/sim/schedule/sram.hpp"

namespace flashlab::sim {

class Cursor {
 public:
  enum class Part { start, prologue, outer_begin, visit, outer_end, epilogue };
  struct Where {
    Part part = Part::start;
    i64 outer = -1, visit = -1;  // outer iteration and visit index in it
    i64 i = -1, j = -1;          // loop indices of the last event
    int line = 0;                // pseudocode line of the last event
  };

  // `s` must outlive the cursor.
  Cursor(const Schedule& s, i64 sram_capacity_bytes);

  i64 size() const { return size_; }          // events in the stream of one head
  i64 position() const { return position_; }  // events applied so far, 0..size()

  void seek(i64 position);  // clamped to [0, size()]
  void step() { seek(position_ + 1); }
  void back() { seek(position_ - 1); }
  void to_start() { seek(0); }
  // Position just after the first event of block (i, j)'s first visit; false
  // (and no move) when the block is never visited.
  bool seek_block(i64 i, i64 j);
  // Position of the first event of outer iteration o.
  i64 outer_start(i64 o) const { return starts_[static_cast<size_t>(o)]; }

  const Schedule& schedule() const { return s_; }
  const Counters& counters() const { return counters_; }  // one head, after position() events
  // The same prefix over the whole run: every query head and K/V head at this
  // position (Schedule::over_heads). Throws OverflowError past 64 bits.
  Counters over_heads() const { return s_.over_heads(counters_, kv_head_part_); }
  const std::vector<TileRef>& sram() const { return sram_; }
  i64 sram_bytes() const;
  i64 sram_capacity() const { return capacity_; }
  const std::optional<TileEvent>& last_event() const { return last_; }
  // Events the last seek emitted to rebuild its state: at most one outer
  // iteration's begin plus one piece (a visit, an outer end, the prologue or
  // the epilogue), wherever the jump lands — never a replay from the start.
  i64 last_seek_replayed() const { return replayed_; }
  const Where& where() const { return where_; }

 private:
  const Schedule& s_;
  i64 capacity_;
  std::vector<i64> starts_;  // first event of each outer iteration; back() = first epilogue event
  std::vector<TileRef> after_prologue_;
  i64 size_ = 0, position_ = 0, replayed_ = 0;
  Counters counters_;
  Counters kv_head_part_;  // of counters_, in passes run once per K/V head
  std::vector<TileRef> sram_;
  std::optional<TileEvent> last_;
  Where where_;
};

}  // namespace flashlab::sim
