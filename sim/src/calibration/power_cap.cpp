#include "flashlab/sim/calibration/power_cap.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

namespace flashlab::sim {

double capped_factor(double share, double capped_rate) { return 1.0 - share + share / capped_rate; }

SeriesShares capped_shares(double busy_s, double boost_s, double capped_rate, TimedSeries series) {
  if (!(capped_rate > 0 && capped_rate <= 1))
    throw std::invalid_argument("a capped rate is in (0, 1] (got " + std::to_string(capped_rate) + ")");
  if (!(boost_s >= 0) || !std::isfinite(boost_s))
    throw std::invalid_argument("the boost time is 0 or more seconds (got " + std::to_string(boost_s) + ")");
  if (series.repeats < 1 || series.warmup < 0)
    throw std::invalid_argument("a timed series has 1 or more timed runs and 0 or more warm-ups");
  SeriesShares out;
  if (!(busy_s > 0)) return out;
  const auto share_of = [&](int k) {
    const double i = static_cast<double>(series.warmup + k);
    return std::clamp(((i + 1) * busy_s - boost_s) / busy_s, 0.0, 1.0);
  };
  // The run reported: the middle of the sorted times (a time grows with its
  // share). The shares grow run by run, so the times come sorted: checked
  // without a copy (the power-limit fit asks this some million times), sorted
  // only where rounding says otherwise.
  bool in_order = true;
  for (int k = 1; k < series.repeats && in_order; ++k)
    in_order = !(capped_factor(share_of(k), capped_rate) < capped_factor(share_of(k - 1), capped_rate));
  if (in_order) {
    out.median = share_of(series.repeats / 2);
    out.fastest = share_of(0);
    return out;
  }
  std::vector<double> share(static_cast<std::size_t>(series.repeats));
  for (int k = 0; k < series.repeats; ++k) share[static_cast<std::size_t>(k)] = share_of(k);
  std::vector<std::size_t> order(share.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return capped_factor(share[a], capped_rate) < capped_factor(share[b], capped_rate);
  });
  out.median = share[order[order.size() / 2]];
  out.fastest = share[order.front()];
  return out;
}

}  // namespace flashlab::sim
