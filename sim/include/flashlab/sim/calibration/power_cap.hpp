// A rung under the GPU's power limit. A rung that draws more than the limit at
// the boost clock (fa3_hopper on an H200 at 550–620 TFLOP/s; fa2_tc_bwd at
// 270 does not) runs at boost for a while, then the driver holds its clock
// down and its tiles run at `capped_rate` of their boost rate. The ring's bench
// times a pass as a series — warm-up runs, then timed runs back to back, the
// median reported (kernels/src/ring/ring_runner.cpp) — so what it reports depends on
// where the median run falls in the series:
//
//   run i of the series (0-based, warm-ups first), the rung keeping the GPU
//   busy b seconds a run:
//     its capped share   s_i = clamp(((i + 1)·b − boost_s) / b, 0, 1)
//     its time           b · (1 − s_i + s_i / capped_rate)
//
// boost_s is the rung time the GPU runs back to back before the limit holds,
// as the ring's bench runs its series (after the runs before it, not from
// idle). Both constants belong to a GPU and a rung and are fitted to one-GPU
// runs (analysis/fits/power_cap_fit.hpp, `flashlab ceilings rungs --power`), never
// to the ring's multi-GPU runs. Plain values; no CUDA.
#pragma once

namespace flashlab::sim {

// How a pass is timed: untimed warm-up runs, then timed ones back to back.
struct TimedSeries {
  int warmup = 2;    // the ring's bench: --warmup, at most 2
  int repeats = 10;  // the ring's bench: --repeats, at most 10
};

// The capped shares of the median timed run (the one reported: the middle of
// the sorted times, kernels/device/timing.hpp's median_run) and of the fastest.
struct SeriesShares {
  double median = 0;
  double fastest = 0;
};

// What a run's time is over its time at boost: 1 − s + s / capped_rate.
double capped_factor(double share, double capped_rate);

// The series of a pass whose rung keeps the GPU busy `busy_s` a run at boost.
// capped_rate in (0, 1] (1: the limit never holds the rung's clock), boost_s
// ≥ 0; repeats ≥ 1, warmup ≥ 0. Throws std::invalid_argument otherwise.
SeriesShares capped_shares(double busy_s, double boost_s, double capped_rate, TimedSeries series);

}  // namespace flashlab::sim
