// Sequence-parallel ring attention over P GPUs, simulated step by step
// (the layout: ring_partition.hpp).
//
// Forward: at step s GPU r computes its queries against the K, V chunks of GPU
// (r − s) mod P (the chunk pairs that are not `none`), while those chunks
// travel on to GPU r + 1 and the next ones arrive from GPU r − 1 (two K/V
// buffers: one computed on, one received into). A transfer of step s starts
// when both ends have started step s (a send meets its receive) and takes
// latency + bytes / link bandwidth; step s + 1 on GPU r starts when its
// compute of step s, its send and its receive of step s are done. After the
// last step the partial outputs are already merged (each step's O, LSE folds
// into the running ones by the online-softmax rule), so the pass ends with the
// last compute.
//
// Backward (a training step's second pass): the same ring, carrying K, V and
// the partial dK, dV of the chunks (dK, dV accumulate as they travel and come
// home after P steps: one more transfer), dQ staying at home.
//
// The compute time of a chunk pair is the hardware model's time bound of that
// block (FlashAttention-2's HBM traffic and FLOPs for a q-chunk × kv-chunk
// problem, causal on the diagonal) divided by an efficiency in (0, 1]: the
// fraction of its bound the single-GPU rung reaches (1 = the bound; a measured
// single-GPU run gives it). The link figures come from the interconnect
// presets, each with its source.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/hardware.hpp"
#include "flashlab/sim/ring_partition.hpp"
#include "flashlab/sim/types.hpp"

namespace flashlab::sim {

// One GPU-to-GPU link, one direction.
struct InterconnectModel {
  std::string_view id;       // "nvlink4", "pcie5", "ib-ndr"
  std::string_view label;    // "NVLink 4 (H100/H200 SXM)"
  double bandwidth = 0;      // bytes/s, one direction, between two GPUs
  double latency_s = 0;      // per message
  std::string_view source;   // datasheet or paper the figures come from
};
const std::vector<InterconnectModel>& interconnect_presets();
const InterconnectModel* find_interconnect(std::string_view id);  // nullptr when unknown

// GPUs of one node talk over `intra`; the ring's hops that cross a node
// boundary (GPU r and r + 1 on different nodes) go over `inter`.
struct RingTopology {
  int gpus_per_node = 8;
  InterconnectModel intra;
  InterconnectModel inter;
};
RingTopology default_ring_topology();  // 8 GPUs a node, NVLink 4 inside, InfiniBand NDR between

struct RingProblem {
  i64 batch = 1;        // B
  i64 heads = 32;       // H
  i64 kv_heads = 32;    // H_kv ≤ H, H mod H_kv = 0: what travels is K, V of H_kv heads
  i64 seq = 8192;       // N, the whole sequence (all GPUs together)
  i64 head_dim = 128;   // d
  bool causal = true;
  DType dtype = DType::bf16;
  int gpus = 2;         // P
  RingLayout layout = RingLayout::zigzag;
  bool backward = false;  // false: the forward pass; true: forward then backward (a training step)
};
// Reasons the ring cannot be simulated (empty when it can), one sentence each.
std::vector<std::string> validate(const RingProblem& p);

struct RingComputeModel {
  HardwareModel hw;
  double efficiency = 1.0;  // fraction of the block's time bound the rung reaches, (0, 1]
};

enum class RingPass { forward, backward };
std::string_view ring_pass_name(RingPass p);  // "fwd", "bwd"

enum class RingEventKind { compute, transfer, idle };
std::string_view ring_event_name(RingEventKind k);  // "compute", "transfer", "idle"

// One bar of one GPU's timeline (seconds from the start of the first pass).
struct RingEvent {
  int gpu = 0;
  int step = 0;          // 0 … P − 1 (a backward's homecoming transfer of dK, dV: step P)
  RingPass pass = RingPass::forward;
  RingEventKind kind = RingEventKind::compute;
  double start_s = 0;
  double end_s = 0;
  int kv_owner = 0;      // compute, transfer: whose K, V chunks
  i64 bytes = 0;         // transfer: bytes GPU `gpu` receives
  double flops = 0;      // compute: FLOPs of the visible chunk pairs
  i64 pairs = 0;         // compute: visible (query, key) pairs
};

struct RingPassResult {
  RingPass pass = RingPass::forward;
  double start_s = 0, end_s = 0;   // time_s = end_s − start_s
  double time_s = 0;
  double compute_s = 0;            // the busiest GPU's compute
  double comm_s = 0;               // the busiest GPU's transfer time (receives)
  double exposed_comm_s = 0;       // longest time a GPU's compute waited for a transfer
  double overlap = 0;              // 1 − exposed / comm (1 when nothing travelled)
  double idle_s = 0;               // the most idle GPU's time not computing and not waiting for data
  double flops = 0;                // all GPUs together (the per-pass convention: 4·B·H·pairs·d forward, 2.5× backward)
  i64 bytes_per_step = 0;          // what one GPU receives per step
};

struct RingSimulation {
  RingProblem problem;
  RingPartition partition;
  std::vector<RingEvent> events;   // every GPU's bars, sorted by gpu, then start
  RingPassResult forward;
  std::optional<RingPassResult> backward;
  double time_s = 0;               // both passes
  double single_gpu_s = 0;         // the same whole problem on one GPU, same compute model
  double scaling_efficiency = 0;   // single_gpu_s / (P · time_s)
  std::vector<i64> peak_bytes_per_gpu;  // Q, K, V, O, LSE of its chunks, the second K/V buffer (and the backward's tensors)
};

// Throws std::invalid_argument with validate()'s first reason.
RingSimulation simulate_ring(const RingProblem& p, const RingTopology& topo, const RingComputeModel& cm);

// What the step-through shows at step s: the K/V owner GPU r holds and, for
// each of its query chunks against each held K/V chunk, the pair's visibility.
struct RingPairView {
  int q_chunk = 0, kv_chunk = 0;
  ChunkVisibility visibility = ChunkVisibility::full;
  i64 pairs = 0;
};
struct RingStepView {
  int step = 0;
  std::vector<int> kv_owner;                      // per GPU
  std::vector<std::vector<RingPairView>> blocks;  // per GPU
};
RingStepView ring_step_view(const RingPartition& part, int step, bool causal);

}  // namespace flashlab::sim
