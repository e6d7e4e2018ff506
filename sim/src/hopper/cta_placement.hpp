// Thread blocks (CTAs) handed out by the GPU in launch order, each to the slot
// (an SM, or one of an SM's places for CTAs) that frees first: when the last
// one ends. What the Hopper rung's launch estimate and the rungs' launch model
// (rung_timing.cpp) both place CTAs by.
#pragma once

#include <algorithm>
#include <utility>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// `runs`: (one CTA's time, how many CTAs in a row take it), in launch order.
inline double first_free_makespan(const std::vector<std::pair<double, i64>>& runs, i64 slots) {
  // The slots' free times as a binary min-heap: each CTA takes the top and
  // puts it back later by one sift down (a pop and a push would take two).
  std::vector<double> free_at(static_cast<std::size_t>(std::max<i64>(1, slots)), 0.0);
  const std::size_t n = free_at.size();
  double end = 0;
  for (const auto& [t, count] : runs)
    for (i64 k = 0; k < count; ++k) {
      const double f = free_at[0] + t;
      end = std::max(end, f);
      std::size_t at = 0;
      for (std::size_t c = 1; c < n; c = 2 * at + 1) {
        if (c + 1 < n && free_at[c + 1] < free_at[c]) ++c;
        if (!(free_at[c] < f)) break;
        free_at[at] = free_at[c];
        at = c;
      }
      free_at[at] = f;
    }
  return end;
}

}  // namespace flashlab::sim
