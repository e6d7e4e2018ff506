#include "flashlab/analysis/fits/power_cap_fit.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <tuple>

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "text/ring_text.hpp"

namespace flashlab::analysis {

namespace {

using ring_text::signed_pct;

constexpr int kBoostStepsMs = 400;  // boost 0 … 400 ms by 1 ms
constexpr int kRateLow = 700, kRateHigh = 1000;  // rates in thousandths

// Median over fastest of a point's series, the rung at `rate` after `boost_s`.
double series_ratio(const PowerCapPoint& p, double boost_s, double rate) {
  const sim::SeriesShares s = sim::capped_shares(p.busy_s, boost_s, rate, p.series);
  return sim::capped_factor(s.median, rate) / sim::capped_factor(s.fastest, rate);
}

double sq_log_error(const PowerCapPoint& p, double boost_s, double rate) {
  const double e = std::log(series_ratio(p, boost_s, rate)) - std::log(p.median_ms / p.fastest_ms);
  return e * e;
}

using RungKey = std::tuple<std::string, sim::i64>;

}  // namespace

PowerCapFit fit_power_cap(const sim::MeasuredRuns& runs, const sim::RungTimingSet& launch,
                          const sim::HardwareModel& hw, const std::string& origin) {
  PowerCapFit f;
  f.set = launch;
  std::map<RungKey, std::vector<std::size_t>> groups;
  for (const sim::MeasuredRun& run : runs.runs) {
    if (run.status != sim::RunStatus::ok || run.problem.gpus() != 1) continue;
    for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
      const sim::PassTimes* m = sim::pass_times(run, pass);
      const sim::PassTimeline* steps = sim::pass_timeline(run, pass);
      if (m == nullptr || steps == nullptr || m->repeats < 1 || !(m->time_ms_min > 0) ||
          !(m->time_ms_median >= m->time_ms_min))
        continue;
      const std::string& rung = pass == sim::Pass::fwd ? run.kernel : run.parallel_part().backward_kernel;
      const sim::RungTiming* t = launch.find(rung, run.problem.head_dim, run.problem.causal);
      if (t == nullptr) {
        const std::string note = rung + " at d " + std::to_string(run.problem.head_dim) + ": not in the launch model's set";
        if (std::find(f.notes.begin(), f.notes.end(), note) == f.notes.end()) f.notes.push_back(note);
        continue;
      }
      PowerCapPoint p;
      p.rung = rung;
      p.head_dim = run.problem.head_dim;
      p.pass = pass;
      p.problem = run.problem;
      p.series.repeats = m->repeats;
      if (steps->warmup >= 0) p.series.warmup = steps->warmup;
      sim::RingComputeModel cm;
      cm.hw = hw;
      if (pass == sim::Pass::fwd) cm.forward_rung = *t;
      else cm.backward_rung = *t;
      p.busy_s = sim::ring_single_gpu_cost(run.problem, pass, cm).time_s;
      p.median_ms = m->time_ms_median;
      p.fastest_ms = m->time_ms_min;
      groups[{rung, p.head_dim}].push_back(f.points.size());
      f.points.push_back(std::move(p));
    }
  }
  if (f.points.empty())
    throw std::invalid_argument(origin + ": no successful one-GPU pass of a rung the launch model has");
  for (const auto& [key, idx] : groups)
    if (idx.size() < 3)
      throw std::invalid_argument(origin + ": " + std::get<0>(key) + " at d " + std::to_string(std::get<1>(key)) +
                                  " has " + std::to_string(idx.size()) + " one-GPU passes; the fit needs 3 or more");
  // For each boost time, each rung's best rate; the boost time with the least error in all.
  double best = std::numeric_limits<double>::infinity();
  std::map<RungKey, double> best_rates;
  for (int b = 0; b <= kBoostStepsMs; ++b) {
    const double boost_s = b * 1e-3;
    double total = 0;
    std::map<RungKey, double> rates;
    for (const auto& [key, idx] : groups) {
      double least = std::numeric_limits<double>::infinity(), at = 1;
      for (int r = kRateLow; r <= kRateHigh; ++r) {
        double e = 0;
        for (std::size_t k : idx) e += sq_log_error(f.points[k], boost_s, r * 1e-3);
        if (e < least) least = e, at = r * 1e-3;
      }
      rates[key] = at;
      total += least;
    }
    if (total < best) best = total, f.boost_s = boost_s, best_rates = rates;
  }
  const std::string source = "fitted to the median over the fastest of " + std::to_string(f.points.size()) +
                             " one-GPU passes of " + origin + " (" + runs.meta.gpu + ")";
  for (sim::RungTiming& t : f.set.rungs) {
    const auto it = best_rates.find({t.geometry.rung, t.geometry.head_dim});
    if (it == best_rates.end()) continue;
    t.capped_rate = it->second;
    t.boost_s = f.boost_s;
    t.power_source = source;
  }
  double sum = 0;
  for (PowerCapPoint& p : f.points) {
    p.fitted_ratio = series_ratio(p, f.boost_s, best_rates[{p.rung, p.head_dim}]);
    const double measured = p.median_ms / p.fastest_ms;
    const double e = (p.fitted_ratio - measured) / measured;
    sum += std::abs(e);
    if (std::abs(e) > std::abs(f.worst_error)) f.worst_error = e;
  }
  f.mean_abs_error = sum / static_cast<double>(f.points.size());
  return f;
}

std::string power_cap_fit_text(const PowerCapFit& f) {
  std::string out = "The rungs under the power limit: after " + sim::fixed(f.boost_s * 1e3, 0) +
                    " ms of rung time back to back the GPU holds each rung at its capped rate\n";
  TextTable c({"rung", "d", "capped rate", "points"});
  std::map<RungKey, int> counts;
  for (const PowerCapPoint& p : f.points) ++counts[{p.rung, p.head_dim}];
  for (const sim::RungTiming& t : f.set.rungs)
    if (!t.power_source.empty())
      c.add({t.geometry.rung, sim::head_dim_and_mask(t.geometry), sim::fixed(t.capped_rate, 3),
             std::to_string(counts[{t.geometry.rung, t.geometry.head_dim}])});
  out += c.str();
  out += "\nPer pass: its rung's time at boost (the launch model), the measured fastest and median of its timed runs, "
         "and the median over the fastest measured beside fitted\n";
  TextTable t({"rung", "d", "B", "H", "N", "mask", "busy ms", "fastest ms", "median ms", "ratio", "fitted", "error"});
  for (const PowerCapPoint& p : f.points) {
    const double measured = p.median_ms / p.fastest_ms;
    t.add({p.rung, std::to_string(p.head_dim), std::to_string(p.problem.batch), std::to_string(p.problem.heads),
           std::to_string(p.problem.seq_q), p.problem.causal ? "causal" : "full", sim::fixed(p.busy_s * 1e3, 3),
           sim::fixed(p.fastest_ms, 3), sim::fixed(p.median_ms, 3), sim::fixed(measured, 3),
           sim::fixed(p.fitted_ratio, 3), signed_pct((p.fitted_ratio - measured) / measured)});
  }
  out += t.str();
  out += "ratio error: mean " + sim::fixed(100 * f.mean_abs_error, 1) + " %, worst " + signed_pct(f.worst_error) + "\n";
  for (const std::string& n : f.notes) out += "note: " + n + "\n";
  return out;
}

}  // namespace flashlab::analysis
