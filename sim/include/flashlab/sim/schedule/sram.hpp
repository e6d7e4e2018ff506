// SRAM occupancy: which tiles are resident after each event, checked against M.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/schedule/event.hpp"

namespace flashlab::sim {

struct SramOverflow {
  i64 step = 0;      // index of the event that overflowed
  int line = 0;
  i64 bytes = 0;     // resident after that event
  i64 capacity = 0;
  std::vector<TileRef> resident;
  std::string describe() const;  // "K_j 49,152 B + V_j ... = 214,016 B > M = 196,608 B (line 9)"
};

class SramTracker : public EventSink {
 public:
  explicit SramTracker(i64 capacity_bytes) : capacity_(capacity_bytes) {}
  void on_event(const TileEvent& e) override;

  const std::vector<TileRef>& resident() const { return resident_; }
  i64 bytes() const { return bytes_; }
  i64 peak_bytes() const { return peak_; }
  i64 capacity() const { return capacity_; }
  i64 steps() const { return step_; }
  const std::optional<SramOverflow>& first_overflow() const { return overflow_; }
  // Frees or replacements of tiles that were not resident: a bug in a loop nest.
  i64 inconsistencies() const { return inconsistencies_; }
  void reset(const std::vector<TileRef>& resident, i64 step);

 private:
  void add(const TileRef& t);
  void remove(const TileRef& t);
  i64 capacity_;
  std::vector<TileRef> resident_;
  i64 bytes_ = 0, peak_ = 0, step_ = 0, inconsistencies_ = 0;
  std::optional<SramOverflow> overflow_;
};

std::string tile_label(const TileRef& t);  // "Q_3", "K_1", "S_3,1", "ℓ_3", "O"

}  // namespace flashlab::sim
