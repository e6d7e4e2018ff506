// Trace export: the event stream as CSV, one row per event.
#pragma once

#include <ostream>

#include "flashlab/sim/schedule/schedule.hpp"
#include "flashlab/sim/schedule/sram.hpp"

namespace flashlab::sim {

class TraceCsvWriter : public EventSink {
 public:
  TraceCsvWriter(std::ostream& out, i64 sram_capacity_bytes);
  void on_event(const TileEvent& e) override;
  i64 rows() const { return step_; }

 private:
  std::ostream& out_;
  SramTracker sram_;
  i64 step_ = 0;
};

}  // namespace flashlab::sim
