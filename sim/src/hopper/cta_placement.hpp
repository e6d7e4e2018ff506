// Thread blocks (CTAs) handed out by the GPU in launch order, each to the slot
// (an SM, or one of an SM's places for CTAs) that frees first: when the last
// one ends. What the Hopper rung's launch estimate and the rungs' launch model
// (rung_timing.cpp) both place CTAs by.
#pragma once

#include <algorithm>
#include <functional>
#include <queue>
#include <utility>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// `runs`: (one CTA's time, how many CTAs in a row take it), in launch order.
inline double first_free_makespan(const std::vector<std::pair<double, i64>>& runs, i64 slots) {
  std::priority_queue<double, std::vector<double>, std::greater<double>> free_at;
  for (i64 k = 0; k < std::max<i64>(1, slots); ++k) free_at.push(0.0);
  double end = 0;
  for (const auto& [t, count] : runs)
    for (i64 k = 0; k < count; ++k) {
      const double f = free_at.top() + t;
      free_at.pop();
      free_at.push(f);
      end = std::max(end, f);
    }
  return end;
}

}  // namespace flashlab::sim
