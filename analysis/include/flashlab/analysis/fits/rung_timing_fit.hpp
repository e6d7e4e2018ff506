// The three constants of a rung's launch model (sim/calibration/rung_timing.hpp) fitted to
// one-GPU runs of that rung on one GPU: least squares on the logarithm of
// predicted over measured time (Levenberg–Marquardt, the constants kept
// positive), every run of the rung at a head dim one point. The runs come from
// a bench results file (the 16k-token grid: N 1K–16K at B·N = 16K, causal and
// not) or from `flashlab ceilings rungs`, which measures such a grid. The fit
// says how well the model reproduces the runs it was fitted to; it is scored
// elsewhere on runs it never saw (the ring's).
#pragma once

#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"

namespace flashlab::analysis {

struct RungTimingPoint {
  sim::i64 heads = 0;  // B·H
  sim::i64 n_q = 0, n_kv = 0;
  bool causal = false;
  double time_s = 0;
};

struct RungTimingFit {
  sim::RungTiming timing;
  std::vector<RungTimingPoint> points;
  std::vector<double> predicted_s;  // per point, with the fitted constants
  double mean_abs_error = 0, worst_error = 0;  // (predicted − measured) / measured
};

// Throws std::invalid_argument with fewer than 3 points or a point the launch
// model cannot take.
RungTimingFit fit_rung_timing(const sim::RungGeometry& g, const std::vector<RungTimingPoint>& points,
                              sim::i64 sm_count);

// Every (rung, head dim) of `r` with a compiled geometry and at least 3
// successful timed runs (n_q = n_kv), fitted; `notes` says what was left out.
struct RungTimingFits {
  sim::RungTimingSet set;
  std::vector<RungTimingFit> fits;
  std::vector<std::string> notes;
};
RungTimingFits fit_rung_timings(const BenchResults& r, const std::string& origin);

// The fits as a table: per rung and head dim the constants and, per run,
// measured beside predicted.
std::string rung_timing_fits_text(const RungTimingFits& f);

}  // namespace flashlab::analysis
