// `flashlab bench --gpus P`: the ring over several GPUs (kernels/ring/ring.hpp) on a
// grid of problems — the flags or a ring sweep of assets/sweeps — each problem
// also run on one GPU for the scaling efficiency; the table, CSV and JSON of
// analysis/results/ring_results.hpp.
#pragma once

#include <string>

namespace flashlab::cli {

// The flags of `flashlab bench` that the ring reads, as typed.
struct RingBenchFlags {
  std::string gpus, devices, model, kv_heads, layout, sweep;
  std::string batch, seq, heads, head_dim, causal, dtype, pass;
  std::string check = "sampled", mem_limit, csv, json;
  std::string steps = "fused";  // comma list of fused | pairwise: each multi-GPU problem once per value
  std::string comm_stream = "priority";  // priority | default: the exchange's stream (kernels::RingOptions::comm_priority)
  int repeats = 20, warmup = 3;
  bool check_only = false, no_flush = false, quiet = false;
  bool virtual_gpus = false;  // P virtual GPUs on device 0 (local copies): the ring's arithmetic, not its links
  bool ranks = false;         // one rank of a job, a process per GPU (kernels/launch/launch_env.hpp, rendezvous.hpp)
  double rendezvous_timeout_s = 60;
  std::uint64_t seed = 0x5eed;
};

// Throws UsageError (exit 2) for bad flags and for a machine that cannot run
// the ring (no CUDA, no NCCL, fewer GPUs than asked); returns 1 when a run
// failed, 0 otherwise.
int run_ring_bench(const RingBenchFlags& f);

}  // namespace flashlab::cli
