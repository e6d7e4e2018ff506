// Traffic and work counters: per memory level and per tensor, 64-bit, with + and -.
#pragma once

#include <array>

#include "flashlab/sim/schedule/event.hpp"

namespace flashlab::sim {

struct Traffic {
  i64 read_elements = 0, write_elements = 0;
  i64 read_bytes = 0, write_bytes = 0;
  i64 bytes() const { return read_bytes + write_bytes; }
  i64 elements() const { return read_elements + write_elements; }
  Traffic& operator+=(const Traffic& o);
  Traffic& operator-=(const Traffic& o);
  bool operator==(const Traffic& o) const;
  bool operator!=(const Traffic& o) const { return !(*this == o); }
};

struct Counters {
  // traffic[level][tensor] for level in {HBM, L2, SRAM}.
  std::array<std::array<Traffic, kTensorCount>, kLevelCount> traffic{};
  i64 matmul_flops = 0;
  i64 softmax_flops = 0;
  i64 exps = 0;
  i64 events = 0;

  Traffic& at(Level l, Tensor t) { return traffic[static_cast<int>(l)][static_cast<int>(t)]; }
  const Traffic& at(Level l, Tensor t) const {
    return traffic[static_cast<int>(l)][static_cast<int>(t)];
  }
  Traffic level(Level l) const;  // summed over tensors
  i64 flops() const { return matmul_flops + softmax_flops; }

  // What one event adds. This is the model's single accounting rule.
  void add(const TileEvent& e);

  Counters& operator+=(const Counters& o);
  Counters& operator-=(const Counters& o);
  // Every field multiplied by k (B·H heads); throws OverflowError.
  Counters scaled(i64 k) const;
  // *this += k·o, every field; throws OverflowError.
  Counters& add_scaled(const Counters& o, i64 k);
  bool operator==(const Counters& o) const;
  bool operator!=(const Counters& o) const { return !(*this == o); }
};

Counters operator+(Counters a, const Counters& b);
Counters operator-(Counters a, const Counters& b);

// A visitor that sums a stream.
class CounterSink : public EventSink {
 public:
  void on_event(const TileEvent& e) override { counters.add(e); }
  Counters counters;
};

}  // namespace flashlab::sim
