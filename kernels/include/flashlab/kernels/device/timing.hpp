// How FlashLab times GPU work, defined once for the single-GPU runner, the
// ring, the backward checker and the stand-alone drivers: CUDA events around
// every timed run, the L2 written over before each (so no run finds what the
// one before it left there), warm-up runs first, the number of repeats sized
// so short kernels are timed long enough, and the median.
//
// This header is plain C++ (the options and the statistics, in every build);
// device_timing.hpp holds the CUDA side.
#pragma once

#include <cstddef>
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

// The median of the times: the middle one, or the mean of the two middle
// ones for an even count; 0 for none.
double median_ms(std::vector<double> times_ms);

// The run that stands for the set, for a caller that reports what happened
// inside one run (the ring's steps): the one whose time is in the middle
// (of an even count, the later of the two middle ones). Throws
// std::invalid_argument for no times.
std::size_t median_run(const std::vector<double>& times_ms);

}  // namespace flashlab::kernels
