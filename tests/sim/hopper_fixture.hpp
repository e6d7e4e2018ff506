// What the tests of the Hopper forward and backward pipelines share: their
// problem (one head, N, d), the measured H200 whose L2 bandwidth feeds the
// copies, a rung's configuration for a head dim, one unit's intervals, the
// step-through's events with their times on the timeline.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "support.hpp"
#include "support/problems.hpp"

namespace flashlab::test {

inline AttentionProblem hopper_problem(i64 n, i64 d, bool causal, DType dt = DType::fp16) {
  return problem(1, 1, n, d, causal, dt);
}

// The H200 as `flashlab ceilings` measured it.
inline const HardwareModel& h200() {
  static const HardwareModel hw = load_hardware(assets_dir() + "/hardware/measured/H200-SXM-141GB-2026-11-25.json");
  return hw;
}

// The configuration of head dim d in a rung's list (kHopperConfigs, kHopperBwdConfigs).
template <class Config, size_t N>
const Config& config_of(const Config (&all)[N], i64 d) {
  for (const Config& c : all)
    if (c.head_dim == d) return c;
  FAIL("no configuration for d=" << d);
  return all[0];
}

// Every interval of one unit, in start order.
template <class Pipeline>
std::vector<PipeInterval> on_unit(const Pipeline& h, PipeUnit u) {
  std::vector<PipeInterval> v;
  for (const PipeInterval& iv : h.intervals)
    if (iv.unit == u) v.push_back(iv);
  std::sort(v.begin(), v.end(), [](const PipeInterval& a, const PipeInterval& b) { return a.start_ns < b.start_ns; });
  return v;
}

// The events of outer iteration o of `s`, each with its time on the pipeline
// (time_of), in the order the loop nest emits them.
template <class Pipeline>
std::vector<std::pair<TileEvent, double>> timed_events(const Schedule& s, i64 o, const Pipeline& h) {
  struct Times final : EventSink {
    const Pipeline* h = nullptr;
    std::vector<std::pair<TileEvent, double>> v;
    void on_event(const TileEvent& e) override { v.emplace_back(e, h->time_of(e)); }
  } t;
  t.h = &h;
  s.emit_outer(o, t);
  return t.v;
}

}  // namespace flashlab::test
