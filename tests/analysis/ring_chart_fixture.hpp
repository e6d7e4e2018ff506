// A small ring results file for the ring charts' tests (analysis and CLI):
// two models on two GPUs, both step modes, a run of another layout, a run
// without its P = 1 run, an OOM run. Times in ms, chosen to be exact in binary.
#pragma once

#include <string>

#include "flashlab/sim/hardware/gpu_topology.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"

namespace flashlab::analysis::test {

inline void set_ring_pass(sim::MeasuredRun& r, sim::Pass which, double time, double compute, double rung,
                          double exposed) {
  sim::PassTimes t;
  t.time_ms_median = t.time_ms_min = t.time_ms_max = time;
  t.repeats = 5;
  sim::PassTimeline p;
  p.compute_ms = compute;
  p.rung_ms = rung;
  p.exposed_comm_ms = exposed;
  p.comm_ms = 2 * exposed;
  sim::set_pass(r, which, t, p);
}

// LLaMA-2-7B (H 32, H_kv 32, d 128) or Llama-3.2-1B (H 32, H_kv 8, d 64), forward and backward.
inline sim::MeasuredRun ring_run(const char* model, sim::i64 seq, int gpus, const char* steps, double fwd,
                                 double bwd, sim::RingLayout layout = sim::RingLayout::zigzag) {
  sim::MeasuredRun r;
  r.problem = sim::default_ring_problem();
  const bool small = std::string(model) == "1b";
  r.problem.heads = 32;
  r.problem.kv_heads = small ? 8 : 32;
  r.problem.head_dim = small ? 64 : 128;
  r.problem.seq_q = seq;
  r.problem.parallel_part().gpus = gpus;
  r.problem.parallel_part().layout = gpus == 1 ? sim::RingLayout::contiguous : layout;
  r.problem.parallel_part().passes = sim::PassSelection::fwd_bwd;
  r.kernel = "fa3_hopper";
  r.parallel_part().backward_kernel = "fa2_tc_bwd";
  r.parallel_part().transport = "nccl";
  r.parallel_part().steps = steps;
  // compute 5/6 of the time, the rung 4/5 of the compute, 1/12 of the time exposed.
  set_ring_pass(r, sim::Pass::fwd, fwd, fwd * 5 / 6, fwd * 4 / 6, fwd / 12);
  set_ring_pass(r, sim::Pass::bwd, bwd, bwd * 5 / 6, bwd * 4 / 6, bwd / 12);
  return r;
}

// A 2-GPU machine (NVLink between the pair) and runs of two models:
//   0 7B P=1 8K pairwise     1 7B P=2 8K fused       2 7B P=2 8K pairwise
//   3 7B P=2 16K fused (no P = 1 run of 16K)         4 7B P=2 8K contiguous fused
//   5 1B P=1 8K pairwise     6 1B P=2 8K fused       7 1B P=2 32K fused, OOM
inline sim::MeasuredRuns ring_chart_file() {
  sim::MeasuredRuns f;
  sim::ParallelMeta& m = f.meta.parallel_part();
  m.gpu_names = {"NVIDIA H200", "NVIDIA H200"};
  m.topology = "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n";
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  f.meta.gpu = "NVIDIA H200";
  f.runs.push_back(ring_run("7b", 8192, 1, "pairwise", 10, 30));
  f.runs.push_back(ring_run("7b", 8192, 2, "fused", 6, 18));
  f.runs.push_back(ring_run("7b", 8192, 2, "pairwise", 8, 24));
  f.runs.push_back(ring_run("7b", 16384, 2, "fused", 20, 60));
  f.runs.push_back(ring_run("7b", 8192, 2, "fused", 7, 21, sim::RingLayout::contiguous));
  f.runs.push_back(ring_run("1b", 8192, 1, "pairwise", 4, 12));
  f.runs.push_back(ring_run("1b", 8192, 2, "fused", 3, 9));
  f.runs.push_back(ring_run("1b", 32768, 2, "fused", 0, 0));
  f.runs.back().status = sim::RunStatus::oom;
  f.runs.back().reason = "asked for 200 GiB";
  return f;
}

}  // namespace flashlab::analysis::test
