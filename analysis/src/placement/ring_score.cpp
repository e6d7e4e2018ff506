// The ring model's score on a results file: mean and worst errors of the
// multi-GPU passes' times, compute, transfers and exposed communication.
#include <algorithm>
#include <array>
#include <cmath>

#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

constexpr sim::i64 kLongTokens = 16384;

void add(RingErrorStat& s, double error, const std::string& at) {
  if (!std::isfinite(error)) return;
  s.mean_abs = (s.mean_abs * s.count + std::fabs(error)) / (s.count + 1);
  ++s.count;
  if (std::fabs(error) > std::fabs(s.worst) || s.count == 1) {
    s.worst = error;
    s.worst_at = at;
  }
}

std::string tokens_k(sim::i64 n) { return n % 1024 == 0 ? std::to_string(n / 1024) + "K" : std::to_string(n); }

std::string pct_line(const RingErrorStat& s) {
  if (s.count == 0) return "-";
  return "mean " + sim::fixed(100 * s.mean_abs, 1) + " %, worst " + (s.worst >= 0 ? "+" : "") +
         sim::fixed(100 * s.worst, 1) + " % (" + s.worst_at + "), " + std::to_string(s.count) + " passes";
}

nlohmann::json stat_json(const RingErrorStat& s) {
  return {{"count", s.count}, {"mean_abs", s.mean_abs}, {"worst", s.worst}, {"worst_at", s.worst_at}};
}

}  // namespace

RingScore score_ring_placements(const std::vector<RingPlacement>& placed, const std::vector<std::size_t>& run_index) {
  RingScore s;
  for (std::size_t k = 0; k < placed.size(); ++k) {
    const RingPlacement& pl = placed[k];
    const sim::AttentionProblem& p = pl.simulation.problem;
    const RingCalibration& c = pl.calibration;
    if (p.gpus() < 2) {
      // A one-GPU run the model did not calibrate on is a prediction too.
      if (!c.from_single_gpu_run)
        for (const RingPassPlacement& pp : pl.passes)
          add(s.time_one_gpu, pp.time_error,
              "run " + std::to_string(k < run_index.size() ? run_index[k] : k) + " (P=1, " + tokens_k(p.seq_q) +
                  (p.causal ? ", causal" : "") + "), " + (pp.pass == sim::Pass::fwd ? "forward" : "backward"));
      continue;
    }
    if (c.from_single_gpu_run) {
      ++s.from_single_gpu_runs;
      s.forward_efficiency[0] = std::min(s.forward_efficiency[0], c.forward);
      s.forward_efficiency[1] = std::max(s.forward_efficiency[1], c.forward);
      if (c.backward) {
        s.backward_efficiency[0] = std::min(s.backward_efficiency[0], *c.backward);
        s.backward_efficiency[1] = std::max(s.backward_efficiency[1], *c.backward);
      }
    } else if (std::find(s.calibrations.begin(), s.calibrations.end(), c.note) == s.calibrations.end()) {
      s.calibrations.push_back(c.note);
    }
    const std::string run = "run " + std::to_string(k < run_index.size() ? run_index[k] : k) + " (P=" +
                            std::to_string(p.gpus()) + ", " + tokens_k(p.seq_q) + (p.causal ? ", causal" : "") + ")";
    for (const RingPassPlacement& pp : pl.passes) {
      const std::string at = run + ", " + (pp.pass == sim::Pass::fwd ? "forward" : "backward");
      add(s.time, pp.time_error, at);
      add(p.seq_q >= kLongTokens ? s.time_long : s.time_short, pp.time_error, at);
      add(s.compute, pp.compute_error, at);
      add(s.comm, pp.comm_error, at);
      add(s.exposed_ms, pp.predicted_exposed_ms - pp.measured_exposed_ms, at);
    }
  }
  return s;
}

std::string ring_score_text(const RingScore& s) {
  TextTable t({"measure", "error (predicted - measured); multi-GPU passes unless said"});
  t.add({"pass time", pct_line(s.time)});
  t.add({"  N >= 16K", pct_line(s.time_long)});
  t.add({"  N < 16K", pct_line(s.time_short)});
  if (s.time_one_gpu.count > 0) t.add({"one GPU", pct_line(s.time_one_gpu)});
  t.add({"compute", pct_line(s.compute)});
  t.add({"transfers", pct_line(s.comm)});
  t.add({"exposed", s.exposed_ms.count == 0 ? std::string("-")
                                            : "mean " + sim::fixed(s.exposed_ms.mean_abs, 3) + " ms, worst " +
                                                  (s.exposed_ms.worst >= 0 ? "+" : "") +
                                                  sim::fixed(s.exposed_ms.worst, 3) + " ms (" + s.exposed_ms.worst_at +
                                                  ")"});
  std::string out = "The model's score on this file\n" + t.str();
  if (s.from_single_gpu_runs > 0) {
    auto range = [](const std::array<double, 2>& r) {
      return r[0] > r[1] ? std::string("-") : sim::fixed(r[0], 3) + (r[1] > r[0] ? "–" + sim::fixed(r[1], 3) : "");
    };
    out += "  compute model: calibrated on each problem's P = 1 run in the file (" +
           std::to_string(s.from_single_gpu_runs) + " multi-GPU runs), efficiency forward " +
           range(s.forward_efficiency) + ", backward " + range(s.backward_efficiency) + "\n";
  }
  for (const std::string& c : s.calibrations) out += "  compute model: " + c + "\n";
  return out;
}

std::string ring_score_summary(const RingScore& s) {
  if (s.time.count == 0) return "every run of the file: no multi-GPU pass to score";
  auto stat = [](const RingErrorStat& x) {
    return "mean " + sim::fixed(100 * x.mean_abs, 1) + " %, worst " + (x.worst >= 0 ? "+" : "") +
           sim::fixed(100 * x.worst, 1) + " %";
  };
  std::string out = "every run of the file: pass time " + stat(s.time) + " (" + std::to_string(s.time.count) + ")";
  if (s.time_long.count > 0) out += "; from 16K tokens " + stat(s.time_long);
  return out;
}

nlohmann::json ring_score_json(const RingScore& s) {
  return {{"time", stat_json(s.time)},         {"time_long", stat_json(s.time_long)},
          {"time_short", stat_json(s.time_short)}, {"time_one_gpu", stat_json(s.time_one_gpu)}, {"compute", stat_json(s.compute)},
          {"comm", stat_json(s.comm)},         {"exposed_ms", stat_json(s.exposed_ms)},
          {"from_single_gpu_runs", s.from_single_gpu_runs},
          {"forward_efficiency", s.forward_efficiency[0] > s.forward_efficiency[1] ? nlohmann::json(nullptr)
                                                                                 : nlohmann::json(s.forward_efficiency)},
          {"backward_efficiency", s.backward_efficiency[0] > s.backward_efficiency[1] ? nlohmann::json(nullptr)
                                                                                    : nlohmann::json(s.backward_efficiency)},
          {"calibrations", s.calibrations}};
}

}  // namespace flashlab::analysis
