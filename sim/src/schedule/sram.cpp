#include "flashlab/sim/schedule/sram.hpp"

#include <algorithm>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::sim {

std::string tile_label(const TileRef& t) {
  std::string s(display_name(t.tensor));
  if (t.ti >= 0 && t.tj >= 0) return s + "_" + std::to_string(t.ti) + "," + std::to_string(t.tj);
  if (t.ti >= 0) return s + "_" + std::to_string(t.ti);
  if (t.tj >= 0) return s + "_" + std::to_string(t.tj);
  return s;
}

std::string SramOverflow::describe() const {
  std::string s;
  for (const TileRef& t : resident) {
    if (!s.empty()) s += " + ";
    s += tile_label(t) + " " + group_digits(t.bytes);
  }
  return s + " = " + group_digits(bytes) + " B > M = " + group_digits(capacity) + " B (at line " +
         std::to_string(line) + ")";
}

void SramTracker::reset(const std::vector<TileRef>& resident, i64 step) {
  resident_ = resident;
  bytes_ = 0;
  for (const TileRef& t : resident_) bytes_ += t.bytes;
  peak_ = std::max(peak_, bytes_);
  step_ = step;
}

void SramTracker::add(const TileRef& t) {
  for (TileRef& r : resident_)
    if (r.same_tile(t)) {
      bytes_ += t.bytes - r.bytes;
      r = t;
      return;
    }
  resident_.push_back(t);
  bytes_ += t.bytes;
}

void SramTracker::remove(const TileRef& t) {
  auto it = std::find_if(resident_.begin(), resident_.end(), [&](const TileRef& r) { return r.same_tile(t); });
  if (it == resident_.end()) {
    ++inconsistencies_;
    return;
  }
  bytes_ -= it->bytes;
  resident_.erase(it);
}

void SramTracker::on_event(const TileEvent& e) {
  switch (e.kind) {
    case EventKind::load: add(e.target); break;
    case EventKind::store: break;
    case EventKind::compute:
      if (e.has_replaces) remove(e.replaces);
      add(e.target);
      break;
    case EventKind::free:
      for (int k = 0; k < e.operand_count; ++k) remove(e.operands[static_cast<size_t>(k)]);
      break;
  }
  peak_ = std::max(peak_, bytes_);
  if (bytes_ > capacity_ && !overflow_) overflow_ = SramOverflow{step_, e.line, bytes_, capacity_, resident_};
  ++step_;
}

}  // namespace flashlab::sim
