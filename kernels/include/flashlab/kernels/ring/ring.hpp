// Sequence-parallel ring attention over P GPUs of one host (Liu et al. 2023),
// run with the single-GPU rungs: each GPU keeps Q, O (and the logsumexp) of its
// chunks of the sequence (the layout: sim/problem/ring_partition.hpp, defined once);
// at each of P steps it computes its queries against the K, V chunks it holds
// with the rung it would use alone, while those chunks travel on to the next
// GPU and the next ones arrive (NCCL send/recv on a communication stream, two
// K/V buffers). Partial outputs merge by the online-softmax rule through the
// logsumexp. The backward is a second ring carrying K, V and the partial dK,
// dV, which come home after P steps.
//
// Grouped-query attention (H_kv < H): K and V travel as H_kv heads; the rungs
// read them so (the launch problem's kv_heads) and the backward adds each group's dK,
// dV into its K/V head; a rung that cannot gets K_j, V_j expanded to H heads
// and its dK, dV summed back per group by separate kernels (RingSteps).
//
// Measure here, model elsewhere: the runner returns what the GPUs did
// (sim::MeasuredRun with its parallel part: CUDA events around every step's compute and transfer,
// memory, errors against fp64); analysis/results/ring_results.hpp places it beside the
// ring's simulation. Plain C++: no CUDA or NCCL headers.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "flashlab/kernels/launch/launch_env.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/kernels/ring/rendezvous.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"

namespace flashlab::kernels {

// How K, V (and dK, dV) travel between the ring's GPUs.
enum class RingTransport {
  nccl,   // ncclSend / ncclRecv between P GPUs: one communicator per GPU, in one
          // process, or one process per GPU (RingOptions::group)
  local,  // P virtual GPUs on device 0, copies between their buffers: tests the
          // ring's arithmetic on one GPU; its times say nothing about links
};
std::string_view ring_transport_name(RingTransport t);  // "nccl", "local"

// How a GPU's step launches its work: fused (the rungs read grouped K/V
// heads in place, and fold partial outputs and add gradients themselves
// wherever the rung can: KernelInfo::folds_running_output,
// accumulates_gradients) or pairwise (separate kernels, K/V expanded to H
// heads) — sim/ring/ring_schedule.hpp.
using sim::RingSteps;
using sim::ring_steps_name;

// A ring run's options: the runner's (RunOptions: timing, check, seed, memory
// limit per GPU) and the ring's own. Its timing differs in its defaults: 2
// warm-ups, exactly 10 timed runs of each pass (target_ms 0: a pass is long
// enough), each GPU's L2 flushed before each. The tile request, the input
// scale, the reference cache, the error bound and the counter pass are the
// single-GPU runner's only.
struct RingOptions : RunOptions {
  RingOptions() {
    warmup = 2;
    repeats = 10;  // timed runs of each pass; 0: run once and check
    target_ms = 0;
  }
  // The forward rung (it must write the logsumexp) and, for a training step,
  // the backward rung reading its outputs; null: the fastest this device runs
  // (fa3_hopper on compute capability 9.0, else fa2_tc) and fa2_tc_bwd.
  const KernelInfo* forward = nullptr;
  const KernelInfo* backward = nullptr;
  RingTransport transport = RingTransport::nccl;
  RingSteps steps = RingSteps::fused;
  // The exchange's stream at the device's greatest priority: the block
  // scheduler hands NCCL's CTAs the first SMs the rung's running CTAs free,
  // instead of after the rung's last CTA is dispatched (a transfer posted
  // beside a launch of several waves would wait for most of it). false: both
  // streams at the default priority.
  bool comm_priority = true;
  std::vector<int> devices;   // CUDA ordinals of the P GPUs (nccl); empty: 0 … P − 1
  // One process per GPU: this process is rank group->rank() of the ring, on
  // devices.front() (one device); the ranks 0 … P − 1 of the group run the
  // same call and meet through it (rendezvous.hpp: NCCL's unique id, the
  // barrier before each timed run, the event times, the rows the check reads),
  // so every rank returns the same row. Ranks from P on must not call. Null:
  // this process drives all P GPUs.
  RankGroup* group = nullptr;
};

// The whole tensors of a run, gathered from the GPUs to the host in the
// problem's dtype bits (fp16/bf16) and fp32 (lse): what the tests compare with
// fp64 and with the single-GPU rung. [B, H or H_kv, N, d] row-major.
struct RingTensors {
  std::vector<std::uint16_t> q, k, v, o, d_o, dq, dk, dv;
  std::vector<float> lse;  // [B, H, N]
};

// Empty when P GPUs can run the ring with this transport; else one sentence
// (no CUDA in this build, NCCL not found, fewer GPUs than asked, ...).
std::string ring_unavailable_reason(int gpus, RingTransport transport, const std::vector<int>& devices = {});

// Runs the forward (and, when problem.backward(), the backward) of the ring:
// fills the inputs on every GPU from the seed (the same values the whole
// tensors would get from fill_normal), runs untimed warm-ups, then `repeats`
// timed runs of each pass, checks against fp64. Never throws for a run-level
// problem: the row says skipped (why), OOM (the bytes) or failed (the error).
// `gathered`, when set, receives the whole tensors after the last run.
sim::MeasuredRun run_ring(const sim::AttentionProblem& problem, const RingOptions& options,
                          RingTensors* gathered = nullptr);

// GPU names, NCCL's version, the environment that matters, the commit. With
// options.group, ranks 0 … gpus − 1 call it together: the GPUs, hosts and
// devices of all of them (`ranks`: what started them and this rank's place).
sim::RunMeta ring_meta(const RingOptions& options, int gpus, const RankEnvironment* ranks = nullptr);

// The rungs the ring uses on a device of this compute capability, at this
// head dim, when none is named: on Hopper (9.0) fa3_hopper and fa3_hopper_bwd
// where they are compiled for the head dim (the backward for every mask the
// ring launches: its off-diagonal pairs unmasked, a causal ring's diagonal
// ones causal), else fa2_tc and fa2_tc_bwd. Null when neither is built.
const KernelInfo* default_ring_forward(int compute_capability, sim::i64 head_dim);
const KernelInfo* default_ring_backward(int compute_capability, sim::i64 head_dim, bool causal);

}  // namespace flashlab::kernels
