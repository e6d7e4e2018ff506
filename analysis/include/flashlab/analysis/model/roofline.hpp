// FLOPs, arithmetic intensity and the roofline: the numbers people read off a
// simulation.
#pragma once

#include <string>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/memory/simulate.hpp"

namespace flashlab::analysis {

using sim::i64;

// The FlashAttention benchmark convention: 4·B·H·N_q·N_kv·d forward (two
// GEMMs of 2·N_q·N_kv·d), halved when causal. Not what runs: see exact_flops.
i64 convention_flops(const sim::AttentionProblem& p);
// The same convention for a pass (flash-attn's benchmarks): the backward is
// 2.5 × the forward — five GEMMs of 2·N_q·N_kv·d (S recomputed, dV, dP, dQ,
// dK) against the forward's two — and a training step 3.5 ×.
i64 convention_flops(const sim::AttentionProblem& p, sim::Pass pass);
i64 convention_flops(const sim::AttentionProblem& p, sim::PassSelection passes);
// "4·B·H·N²·d/2", "10·B·H·N²·d", ...: the formula as the printers show it.
std::string convention_formula(const sim::AttentionProblem& p, sim::PassSelection passes);
// FLOPs of the blocks actually computed, matmul plus softmax/rescaling.
i64 exact_flops(const sim::Counters& c);

double arithmetic_intensity(double flops, double bytes);  // FLOP/byte; 0 when bytes is 0
double ridge_point(double peak_flops, double bandwidth);  // FLOP/byte where the roofs meet
double attainable_flops(double ai, double peak_flops, double bandwidth);  // min(peak, AI·BW)
// The highest peak of the dtype over the units (tf32 tensor cores for fp32):
// the roof nothing computing in that dtype can pass, whichever unit it used.
double highest_peak(const sim::HardwareModel& hw, sim::DType d);
// max(FLOPs/peak, bytes/BW): no implementation runs faster on this machine.
double time_lower_bound_s(double flops, double bytes, double peak_flops, double bandwidth);

struct RooflineEstimate {
  double flops = 0;          // exact FLOPs (all heads)
  double convention_flops = 0;  // of the simulated algorithm's pass
  double request_bytes = 0;  // requests to global memory: the paper's "HBM accesses"
  double dram_bytes = 0;     // what reaches DRAM after the L2 (= requests when the L2 is not modelled)
  double ai = 0;             // exact FLOPs / DRAM bytes: what the bound uses
  double ai_requests = 0;    // exact FLOPs / requests: the paper's intensity
  double peak_flops = 0;     // of the unit used
  double bandwidth = 0;      // DRAM (HBM) bytes/s
  double ridge = 0;
  double attainable = 0;     // FLOP/s
  double time_s = 0;         // lower bound
  double compute_time_s = 0, memory_time_s = 0;
  bool memory_bound = false;
};

RooflineEstimate roofline(const sim::SimResult& r, const sim::HardwareModel& hw, sim::ComputeUnit unit);
inline RooflineEstimate roofline(const sim::SimResult& r, const sim::HardwareModel& hw) {
  return roofline(r, hw, sim::HardwareModel::default_unit(r.problem.dtype));
}

}  // namespace flashlab::analysis
