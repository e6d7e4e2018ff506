#include "flashlab/analysis/model/roofline.hpp"

#include <algorithm>

#include "flashlab/sim/core/checked.hpp"

namespace flashlab::analysis {

namespace {
// GEMMs of 2·N_q·N_kv·d per head that the convention counts, ×2 (FLOPs per multiply-add).
i64 convention_factor(sim::PassSelection passes) {
  switch (passes) {
    case sim::PassSelection::fwd: return 4;       // S = QKᵀ, O = PV
    case sim::PassSelection::bwd: return 10;      // S again, dV, dP, dQ, dK
    case sim::PassSelection::fwd_bwd: return 14;
  }
  return 4;
}
}  // namespace

i64 convention_flops(const sim::AttentionProblem& p, sim::PassSelection passes) {
  const i64 f = sim::checked_mul(
      sim::checked_mul(sim::checked_mul(convention_factor(passes), p.head_count(), "FLOPs"),
                       sim::checked_mul(p.n_q(), p.n_kv(), "FLOPs"), "FLOPs"),
      p.head_dim, "FLOPs");
  return p.causal ? f / 2 : f;
}

i64 convention_flops(const sim::AttentionProblem& p) { return convention_flops(p, sim::PassSelection::fwd); }

i64 convention_flops(const sim::AttentionProblem& p, sim::Pass pass) {
  return convention_flops(p, pass == sim::Pass::fwd ? sim::PassSelection::fwd : sim::PassSelection::bwd);
}

std::string convention_formula(const sim::AttentionProblem& p, sim::PassSelection passes) {
  return std::to_string(convention_factor(passes)) + "·B·H·N²·d" + (p.causal ? "/2" : "");
}

i64 exact_flops(const sim::Counters& c) { return c.flops(); }

double arithmetic_intensity(double flops, double bytes) { return bytes > 0 ? flops / bytes : 0.0; }

double ridge_point(double peak_flops, double bandwidth) { return bandwidth > 0 ? peak_flops / bandwidth : 0.0; }

double attainable_flops(double ai, double peak_flops, double bandwidth) {
  return std::min(peak_flops, ai * bandwidth);
}

double highest_peak(const sim::HardwareModel& hw, sim::DType d) {
  double p = 0;
  for (int u = 0; u < sim::kUnitCount; ++u) p = std::max(p, hw.peak(d, static_cast<sim::ComputeUnit>(u)));
  return p;
}

double time_lower_bound_s(double flops, double bytes, double peak_flops, double bandwidth) {
  const double tc = peak_flops > 0 ? flops / peak_flops : 0.0;
  const double tm = bandwidth > 0 ? bytes / bandwidth : 0.0;
  return std::max(tc, tm);
}

RooflineEstimate roofline(const sim::SimResult& r, const sim::HardwareModel& hw, sim::ComputeUnit unit) {
  RooflineEstimate e;
  e.flops = static_cast<double>(exact_flops(r.total));
  e.convention_flops = static_cast<double>(convention_flops(r.problem, sim::algorithm_info(r.algorithm).pass));
  e.request_bytes = static_cast<double>(r.total.level(sim::Level::HBM).bytes());
  e.dram_bytes = static_cast<double>(r.dram_bytes());
  e.ai = arithmetic_intensity(e.flops, e.dram_bytes);
  e.ai_requests = arithmetic_intensity(e.flops, e.request_bytes);
  e.peak_flops = hw.peak(r.problem.dtype, unit);
  e.bandwidth = hw.hbm_bandwidth;
  e.ridge = ridge_point(e.peak_flops, e.bandwidth);
  e.attainable = attainable_flops(e.ai, e.peak_flops, e.bandwidth);
  e.compute_time_s = e.peak_flops > 0 ? e.flops / e.peak_flops : 0.0;
  e.memory_time_s = e.bandwidth > 0 ? e.dram_bytes / e.bandwidth : 0.0;
  e.time_s = std::max(e.compute_time_s, e.memory_time_s);
  e.memory_bound = e.memory_time_s >= e.compute_time_s;
  return e;
}

}  // namespace flashlab::analysis
