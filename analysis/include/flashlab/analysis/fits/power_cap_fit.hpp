// The power limit's constants of each rung (sim/calibration/power_cap.hpp) fitted to
// one-GPU ring runs timed as the ring's bench times every pass (the sweep
// ring-power-cap: warm-ups, then timed runs back to back). What is fitted is
// each pass's median over its fastest timed run — a ratio the launch model
// does not enter: a run's busy time at boost (the launch model's) only places
// its runs in the series. boost_s is the GPU's, one for all its rungs;
// capped_rate is each (rung, head dim)'s. A grid search, least squares on the
// logarithms of the ratios: boost 0–400 ms by 1 ms, rates 0.700–1.000 by 0.001.
// No multi-GPU run enters the fit; the ring's model is scored on those.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/calibration/power_cap.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"

namespace flashlab::analysis {

struct PowerCapPoint {
  std::string rung;
  sim::i64 head_dim = 0;
  sim::Pass pass = sim::Pass::fwd;
  sim::AttentionProblem problem;
  sim::TimedSeries series;
  double busy_s = 0;                   // the rung's launch at boost (the launch model)
  double median_ms = 0, fastest_ms = 0;  // measured
  double fitted_ratio = 1;             // median over fastest, with the fitted constants
};

struct PowerCapFit {
  sim::RungTimingSet set;  // the launch model's set with capped_rate, boost_s and power_source filled
  std::vector<PowerCapPoint> points;
  double boost_s = 0;
  double mean_abs_error = 0, worst_error = 0;  // of the ratio: (fitted − measured) / measured
  std::vector<std::string> notes;              // what was left out
};

// Every successful P = 1 pass of `runs` whose rung `launch` has at its head
// dim is a point. Throws std::invalid_argument when a rung has fewer than 3
// points or none at all is usable.
PowerCapFit fit_power_cap(const sim::MeasuredRuns& runs, const sim::RungTimingSet& launch,
                          const sim::HardwareModel& hw, const std::string& origin);

// The constants, then per point measured beside fitted.
std::string power_cap_fit_text(const PowerCapFit& f);

}  // namespace flashlab::analysis
