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

// The launch order of the rungs' CTAs as runs: head by head, each head's CTAs
// in the order of `per_head` (their times; the rungs number the heaviest first).
inline std::vector<std::pair<double, i64>> head_by_head(const std::vector<double>& per_head, i64 heads) {
  std::vector<std::pair<double, i64>> runs;
  for (i64 h = 0; h < heads; ++h)
    for (double t : per_head) {
      if (!runs.empty() && runs.back().first == t) ++runs.back().second;
      else runs.emplace_back(t, 1);
    }
  return runs;
}

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
