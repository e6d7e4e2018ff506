#include "flashlab/analysis/fits/rung_timing_fit.hpp"

#include <Eigen/Dense>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <stdexcept>

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

// The constants as exp(y): positive by construction.
sim::RungTiming with(const sim::RungGeometry& g, const Eigen::Vector3d& y) {
  sim::RungTiming t;
  t.geometry = g;
  t.launch_s = std::exp(y[0]);
  t.cta_s = std::exp(y[1]);
  t.tile_s = std::exp(y[2]);
  return t;
}

Eigen::VectorXd residuals(const sim::RungGeometry& g, const Eigen::Vector3d& y, const std::vector<RungTimingPoint>& pts,
                          sim::i64 sms) {
  const sim::RungTiming t = with(g, y);
  Eigen::VectorXd r(static_cast<Eigen::Index>(pts.size()));
  for (std::size_t k = 0; k < pts.size(); ++k) {
    const RungTimingPoint& p = pts[k];
    r[static_cast<Eigen::Index>(k)] =
        std::log(sim::rung_launch(t, p.heads, p.n_q, p.n_kv, p.causal, sms).time_s / p.time_s);
  }
  return r;
}

}  // namespace

RungTimingFit fit_rung_timing(const sim::RungGeometry& g, const std::vector<RungTimingPoint>& points, sim::i64 sm_count) {
  if (points.size() < 3)
    throw std::invalid_argument("fitting " + g.rung + " at d " + std::to_string(g.head_dim) + " needs 3 runs or more (" +
                                std::to_string(points.size()) + " given)");
  // A start from the longest run: its time spread over its tiles, a tenth of
  // a tile's worth of work per CTA, a few microseconds per launch.
  const auto longest = std::max_element(points.begin(), points.end(), [](const auto& a, const auto& b) {
    return a.n_q * a.n_kv < b.n_q * b.n_kv;
  });
  sim::RungTiming probe;
  probe.geometry = g;
  probe.tile_s = 1;
  const sim::RungLaunch shape = sim::rung_launch(probe, longest->heads, longest->n_q, longest->n_kv, longest->causal,
                                                 sm_count);
  const double tile0 = longest->time_s * static_cast<double>(shape.slots) / std::max(1.0, shape.tiles);
  Eigen::Vector3d y(std::log(5e-6), std::log(2 * tile0), std::log(tile0));
  double lambda = 1e-3;
  Eigen::VectorXd r = residuals(g, y, points, sm_count);
  for (int it = 0; it < 200; ++it) {
    Eigen::MatrixXd J(r.size(), 3);
    for (int c = 0; c < 3; ++c) {
      Eigen::Vector3d yc = y;
      yc[c] += 1e-4;
      J.col(c) = (residuals(g, yc, points, sm_count) - r) / 1e-4;
    }
    const Eigen::Matrix3d A = J.transpose() * J;
    const Eigen::Vector3d b = -J.transpose() * r;
    bool improved = false;
    for (int tries = 0; tries < 20 && !improved; ++tries) {
      Eigen::Matrix3d M = A;
      M.diagonal() += lambda * (A.diagonal().array() + 1e-9).matrix();
      Eigen::Vector3d step = M.ldlt().solve(b);
      // Keep every constant between a nanosecond and a second.
      Eigen::Vector3d yn = (y + step).cwiseMax(std::log(1e-9)).cwiseMin(0.0);
      const Eigen::VectorXd rn = residuals(g, yn, points, sm_count);
      if (rn.squaredNorm() < r.squaredNorm()) {
        y = yn;
        r = rn;
        lambda = std::max(lambda / 3, 1e-9);
        improved = true;
      } else {
        lambda *= 4;
      }
    }
    if (!improved) break;
  }
  RungTimingFit f;
  f.timing = with(g, y);
  f.points = points;
  for (const RungTimingPoint& p : points) {
    const double t = sim::rung_launch(f.timing, p.heads, p.n_q, p.n_kv, p.causal, sm_count).time_s;
    f.predicted_s.push_back(t);
    const double e = (t - p.time_s) / p.time_s;
    f.mean_abs_error += std::fabs(e) / static_cast<double>(points.size());
    if (std::fabs(e) > std::fabs(f.worst_error)) f.worst_error = e;
  }
  return f;
}

RungTimingFits fit_rung_timings(const BenchResults& r, const std::string& origin) {
  RungTimingFits out;
  out.set.gpu = r.meta.gpu;
  out.set.sm_count = r.meta.sm_count;
  if (r.meta.sm_count <= 0)
    throw std::invalid_argument(origin + ": the file records no SM count (its metadata): the launch model needs it");
  auto usable = [&](const BenchRow& row) {
    return row.status == sim::RunStatus::ok && row.repeats > 0 && row.time_ms_median > 0 &&
           sim::rung_geometry(row.kernel, row.problem.head_dim).has_value();
  };
  // A fit per (rung, head dim), or per (rung, head dim, mask) where the runs
  // recorded other tiles under the causal mask than without (fa3_hopper_bwd
  // at d = 128): each mask's launches are then timed with their own tiles.
  std::map<std::tuple<std::string, sim::i64, bool>, sim::TileShape> tiles_by_mask;  // each mask's first recorded
  for (const BenchRow& row : r.rows)
    if (usable(row) && row.tiles.Br > 0 && row.tiles.Bc > 0)
      tiles_by_mask.emplace(std::make_tuple(row.kernel, row.problem.head_dim, row.problem.causal), row.tiles);
  auto split = [&](const std::string& rung, sim::i64 d) {
    const auto full = tiles_by_mask.find({rung, d, false}), causal = tiles_by_mask.find({rung, d, true});
    return full != tiles_by_mask.end() && causal != tiles_by_mask.end() && !(full->second == causal->second);
  };
  using Key = std::tuple<std::string, sim::i64, std::optional<bool>>;  // the mask unset: both
  std::map<Key, std::vector<RungTimingPoint>> by;
  std::map<Key, std::vector<double>> host_us;  // the host's time in each launch call
  // The tiles of each key's longest run, when recorded: a rung may run other
  // tiles at short sequences (fa3_hopper at d = 64, N ≤ 1K), and its launch
  // model is the long sequences' configuration.
  std::map<Key, std::pair<sim::i64, sim::TileShape>> longest_tiles;
  auto key_of = [&](const BenchRow& row) {
    const sim::AttentionProblem& p = row.problem;
    return Key{row.kernel, p.head_dim, split(row.kernel, p.head_dim) ? std::optional<bool>(p.causal) : std::nullopt};
  };
  for (const BenchRow& row : r.rows) {
    if (!usable(row) || row.problem.seq_q != row.problem.seq_kv || row.tiles.Br <= 0 || row.tiles.Bc <= 0) continue;
    auto [it, first] = longest_tiles.emplace(key_of(row), std::make_pair(row.problem.seq_q, row.tiles));
    if (!first && row.problem.seq_q > it->second.first) it->second = {row.problem.seq_q, row.tiles};
  }
  std::map<Key, sim::TileShape> tiles_of_runs;
  for (const auto& [key, longest] : longest_tiles) tiles_of_runs.emplace(key, longest.second);
  auto named = [](const Key& k) {
    sim::RungGeometry g;
    g.head_dim = std::get<1>(k);
    g.causal = std::get<2>(k);
    return std::get<0>(k) + " at d " + sim::head_dim_and_mask(g);
  };
  for (const BenchRow& row : r.rows) {
    if (!usable(row)) continue;
    const sim::AttentionProblem& p = row.problem;
    if (p.seq_q != p.seq_kv) {
      out.notes.push_back(row.kernel + " " + sim::describe(p) + ": N_q ≠ N_kv, left out");
      continue;
    }
    const Key key = key_of(row);
    if (row.tiles.Br > 0 && row.tiles.Bc > 0) {
      const auto it = tiles_of_runs.find(key);
      if (it != tiles_of_runs.end() && !(it->second == row.tiles)) {
        out.notes.push_back(row.kernel + " " + sim::describe(p) + ": tiles " + std::to_string(row.tiles.Br) + " × " +
                            std::to_string(row.tiles.Bc) + " where the longest run had " + std::to_string(it->second.Br) +
                            " × " + std::to_string(it->second.Bc) + ", left out");
        continue;
      }
    }
    by[key].push_back({p.batch * p.heads, p.seq_q, p.seq_kv, p.causal, row.time_ms_median * 1e-3});
    if (row.launch_host_us > 0) host_us[key].push_back(row.launch_host_us);
  }
  for (const auto& [key, pts] : by) {
    sim::RungGeometry g = *sim::rung_geometry(std::get<0>(key), std::get<1>(key), std::get<2>(key));
    if (auto t = tiles_of_runs.find(key); t != tiles_of_runs.end()) g.tiles = t->second;  // the build measured
    if (pts.size() < 3) {
      out.notes.push_back(named(key) + ": " + std::to_string(pts.size()) + " run(s), 3 needed: not fitted");
      continue;
    }
    RungTimingFit f = fit_rung_timing(g, pts, r.meta.sm_count);
    f.timing.source = "fitted to " + std::to_string(pts.size()) + " one-GPU runs of " + origin + " (" + r.meta.gpu +
                      ", " + std::to_string(r.meta.sm_count) + " SMs" +
                      (r.meta.commit.empty() ? std::string() : ", build " + r.meta.commit) + ")";
    if (auto h = host_us.find(key); h != host_us.end()) {
      std::vector<double> v = h->second;
      std::sort(v.begin(), v.end());
      f.timing.host_launch_s = v[v.size() / 2] * 1e-6;  // the runs' median
    }
    out.set.rungs.push_back(f.timing);
    out.fits.push_back(std::move(f));
  }
  return out;
}

std::string rung_timing_fits_text(const RungTimingFits& f) {
  std::string out = "The rungs' launch model on " + f.set.gpu + " (" + std::to_string(f.set.sm_count) +
                    " SMs): launch + the makespan of CTAs of (per CTA + per tile × tiles visited)\n";
  TextTable c({"rung", "d", "B_r x B_c", "CTAs/SM", "launch us", "per CTA us", "per tile us", "fit: mean", "worst",
               "host us"});
  for (const RungTimingFit& x : f.fits) {
    const sim::RungTiming& t = x.timing;
    c.add({t.geometry.rung, sim::head_dim_and_mask(t.geometry),
           std::to_string(t.geometry.tiles.Br) + " x " + std::to_string(t.geometry.tiles.Bc),
           std::to_string(t.geometry.ctas_per_sm), sim::fixed(t.launch_s * 1e6, 2), sim::fixed(t.cta_s * 1e6, 2),
           sim::fixed(t.tile_s * 1e6, 3), sim::fixed(100 * x.mean_abs_error, 1) + " %",
           (x.worst_error >= 0 ? "+" : "") + sim::fixed(100 * x.worst_error, 1) + " %",
           t.host_launch_s > 0 ? sim::fixed(t.host_launch_s * 1e6, 2) : "-"});
  }
  out += c.str();
  TextTable p({"rung", "d", "B·H", "N", "mask", "measured ms", "model ms", "error"});
  for (const RungTimingFit& x : f.fits)
    for (std::size_t k = 0; k < x.points.size(); ++k) {
      const RungTimingPoint& q = x.points[k];
      p.add({x.timing.geometry.rung, std::to_string(x.timing.geometry.head_dim), std::to_string(q.heads),
             std::to_string(q.n_q), q.causal ? "causal" : "full", sim::fixed(q.time_s * 1e3, 3),
             sim::fixed(x.predicted_s[k] * 1e3, 3),
             (x.predicted_s[k] >= q.time_s ? "+" : "") +
                 sim::fixed(100 * (x.predicted_s[k] - q.time_s) / q.time_s, 1) + " %"});
    }
  out += "\n" + p.str();
  for (const std::string& n : f.notes) out += "  note: " + n + "\n";
  return out;
}

}  // namespace flashlab::analysis
