// How FlashLab times GPU work, defined once for the single-GPU runner, the
// links' benchmark, the ring, the backward checker and the stand-alone
// drivers: warm-up runs first, the number of repeats sized so short kernels
// are timed long enough, CUDA events around every timed run, the L2 written
// over before each (so no run finds what the one before it left there), and
// the median with the least and the largest (sim/core/median.hpp).
//
// This header is plain C++ (the options and the loop, in every build);
// device_timing.hpp holds the CUDA side: the events, the flush, and the loop
// on one stream.
#pragma once

#include <cstddef>
#include <type_traits>
#include <vector>

namespace flashlab::kernels {

struct TimingOptions {
  int warmup = 3;          // untimed runs first (the last one sizes the repeats)
  int repeats = 20;        // timed runs; 0: run once and check, no timing
  int max_repeats = 100;   // short runs get more repeats, up to this
  double target_ms = 50;   // ... until the repeats add up to about this much; 0: exactly `repeats`
  bool l2_flush = true;    // write a buffer ≥ 2× the L2 before every timed run
};

// The repeats of a run that took `one_run_ms` once: `repeats`, or more — up
// to max_repeats — so that they add up to about target_ms.
int sized_repeats(const TimingOptions& o, double one_run_ms);

// The repeats that follow `warmups` warm-ups, the last of which took
// `last_warmup_ms`: sized_repeats from it, or o.repeats with no warm-up.
int repeats_after_warmups(const TimingOptions& o, int warmups, double last_warmup_ms);

// The one timing loop: `warmups` untimed runs, then repeats_after_warmups
// timed ones. `run(k)` runs once (k counts the warm-ups from 0, then the
// timed runs from 0) and returns what it measured; `ms_of(result)` is its
// time, asked of the last warm-up alone, so that a caller whose runs are
// timed by events reads the timed ones once all are queued. Returns the timed
// runs' results, in order. The CUDA loop on one stream (time_runs) is this
// one; a run spanning several GPUs (the ring's pass) returns its own record.
template <class Run, class MsOf>
auto timed_loop(const TimingOptions& o, int warmups, Run&& run, MsOf&& ms_of)
    -> std::vector<std::decay_t<decltype(run(0))>> {
  double last_ms = 0;
  for (int w = 0; w < warmups; ++w) {
    auto result = run(w);
    if (w + 1 == warmups) last_ms = ms_of(result);
  }
  const int repeats = repeats_after_warmups(o, warmups, last_ms);
  std::vector<std::decay_t<decltype(run(0))>> out;
  out.reserve(static_cast<std::size_t>(repeats > 0 ? repeats : 0));
  for (int r = 0; r < repeats; ++r) out.push_back(run(r));
  return out;
}

// The run that stands for the set, for a caller that reports what happened
// inside one run (the ring's steps): the one whose time is in the middle
// (of an even count, the later of the two middle ones). Throws
// std::invalid_argument for no times.
std::size_t median_run(const std::vector<double>& times_ms);

}  // namespace flashlab::kernels
