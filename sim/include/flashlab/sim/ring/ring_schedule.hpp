// Sequence-parallel ring attention over P GPUs, simulated step by step
// (the layout: ring_partition.hpp; the model written out: docs/multi-gpu.md,
// "The ring's model").
//
// Forward: at step s GPU r computes its queries against the K, V chunks of GPU
// (r − s) mod P (the chunk pairs that are not `none`), while those chunks
// travel on to GPU r + 1 and the next ones arrive from GPU r − 1 (two K/V
// buffers: one computed on, one received into). A transfer of step s starts
// when both ends have started step s (a send meets its receive) and takes
// the link's transfer_s(bytes) — latency + bytes / bandwidth, or a measured
// link's curve; step s + 1 on GPU r starts when its
// compute of step s, its send and its receive of step s are done. The last
// step (P − 1) sends nothing. After the last step the partial outputs are
// already merged (each step's O, LSE folds into the running ones by the
// online-softmax rule), so the pass ends with the last compute. A hop carries
// one message at a time (one NCCL stream): the backward's K, V and dK, dV of a
// step go one after the other, in the order they are ready (K, V first on a
// tie).
//
// Backward (a training step's second pass, starting when the forward has
// ended on every GPU): the same K/V ring, and the partial dK, dV of the
// chunks a GPU computed on. GPU r's dK, dV of step s (owner (r − s) mod P) go
// to GPU r + 1 after its compute of step s, once the partial it adds to has
// arrived from GPU r − 1 and GPU r + 1 has started step s + 1 (where it posts
// the receive): they travel during step s + 1, beside that step's compute, and
// the transfers of step s + 1 (K, V and dK, dV, sent and received) end before
// step s + 2 starts (two buffers each). After step P − 1 the dK, dV of every
// chunk are one hop from home: the homecoming transfer (step P) ends the pass.
// dQ stays at home. dK, dV travel as fp32 accumulators (what the kernels send).
//
// The compute time of a chunk pair is the hardware model's time bound of that
// block, max(FLOPs / peak, HBM bytes / bandwidth) with FlashAttention-2's
// FLOPs and HBM requests (the forward: fa2, the backward: fa2_bwd) for a
// q-chunk × kv-chunk problem of B·H heads, causal on the diagonal, divided by
// an efficiency in (0, 1]: the fraction of its bound the single-GPU rung
// reaches (1 = the bound; a measured single-GPU run gives it). The L2 is not
// modelled here: the bound uses the requests to global memory. The link
// figures come from the interconnect presets (assets/interconnects/*.json),
// each with its source, or from a measured link in the same format.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/hardware/gpu_topology.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/hardware/host_issue.hpp"
#include "flashlab/sim/hardware/link_curve.hpp"
#include "flashlab/sim/calibration/power_cap.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/ring_partition.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// ---- links -------------------------------------------------------------------

// One GPU pair of a measured link, at its largest message.
struct LinkPairFigure {
  int gpu_a = 0, gpu_b = 0;          // CUDA ordinals
  std::string code;                  // the pair's link in nvidia-smi topo -m ("NV18"); empty when unknown
  double bytes = 0;                  // the message size of the figures
  double bandwidth = 0;              // NCCL send/recv, bytes/s one direction
  double bidir_bandwidth = 0;        // NCCL, per direction with both busy
  double copy_engine_bandwidth = 0;  // cudaMemcpyPeerAsync one direction; 0 when not measured
};

// One GPU-to-GPU link, one direction.
struct InterconnectModel {
  std::string id;              // "nvlink4", "pcie5", "ib-ndr"
  std::string label;           // "NVLink 4 (H100/H200 SXM)"
  std::string kind = "datasheet";  // "datasheet" or "measured"
  double bandwidth = 0;        // bytes/s, one direction, between two GPUs
  double latency_s = 0;        // per message
  std::string source;          // datasheet or paper the figures come from; "measured on ..." for a measured link
  std::vector<std::string> notes;  // what the figure leaves out (what NCCL achieves, ...)

  // A measured link's record (`flashlab links`); empty for a datasheet preset.
  std::vector<LinkCurvePoint> curve;              // NCCL send/recv, ascending bytes: what transfer_s uses
  std::vector<LinkCurvePoint> copy_engine_curve;  // cudaMemcpyPeerAsync, shown beside it (not used by the ring)
  // The ring's own exchange, measured over the GPUs at once (every GPU sends
  // a message to the next and receives one from the previous, one NCCL
  // group): what exchange_arrival_s uses when present. Over more than two
  // GPUs each GPU's send and receive go to different peers, which a pair's
  // curve does not see.
  std::vector<LinkCurvePoint> ring_curve;
  std::string ring_curve_source;  // where ring_curve was measured ("measured with the link", "the file's own ...")
  std::vector<LinkPairFigure> pairs;              // every pair measured
  std::vector<std::string> gpus;                  // the GPUs' names
  std::string nccl_version;                       // "2.28.9"
  std::string topology_text;                      // `nvidia-smi topo -m`, as captured
  GpuTopology topology;                           // parsed from topology_text
  HostIssueCosts host;                            // what the host spent issuing work on that machine; empty when not measured

  // Seconds for one message of `bytes`. Without a curve: latency_s + bytes /
  // bandwidth. With one: the measured time, interpolated linearly in log(bytes)
  // and log(time) between the two points around `bytes`; below the smallest
  // point its time (no message was measured faster); beyond the largest,
  // bytes at that point's bandwidth (its bytes over its time).
  double transfer_s(double bytes) const { return arrival_s(0, bytes); }
  // When a message of `bytes` sent at `start_s` has arrived: start_s +
  // transfer_s(bytes), summed left to right as the simulator always has.
  double arrival_s(double start_s, double bytes) const;
  // As a ring moves its messages: every GPU sends one and receives one at
  // once, so the time is the ring's exchange curve's where measured (beyond
  // its largest message, scaled as the pair curve's both-directions time
  // grows from there, where that reaches further), else a pair curve's
  // both-directions time (bytes over bidir_bandwidth, where measured);
  // `messages` equal messages of `bytes` in all, one after another. Without
  // a curve, arrival_s.
  double exchange_arrival_s(double start_s, double bytes, int messages = 1) const;
};

class InterconnectError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// JSON (format "flashlab-interconnect/1": id, label, kind, bandwidth_gbs — GB/s
// one direction —, latency_us, source, notes; a measured link also curve and
// copy_engine_curve — [{"bytes", "time_us", "gbs", "bidir_gbs"}, ...] — and
// ring_curve (the same form), pairs,
// gpus, nccl_version, topology_text and the topology derived from it). Throws
// InterconnectError naming the origin and the missing or malformed field.
InterconnectModel parse_interconnect_json(const std::string& text, const std::string& origin);
std::string to_interconnect_json(const InterconnectModel& link);

// The presets of assets_dir()/interconnects/*.json and of its measured/
// folder (kind "measured" only), sorted by id, read once; empty when the
// folder cannot be found. Throws InterconnectError for a malformed file or an
// id given twice.
const std::vector<InterconnectModel>& interconnect_presets();
// The same read from `assets` (a folder holding interconnects/), not cached.
std::vector<InterconnectModel> read_interconnect_presets(const std::string& assets);
const InterconnectModel* find_interconnect(std::string_view id);  // case-insensitive; nullptr when unknown
// A preset id or a path to a JSON file (a measured link); throws
// InterconnectError naming the known presets or the file's problem.
InterconnectModel load_interconnect(const std::string& preset_or_path);

// GPUs of one node talk over `intra`; the ring's hops that cross a node
// boundary (GPU r and r + 1 on different nodes, node = r / gpus_per_node; the
// hop from P − 1 back to 0 too) go over `inter`.
struct RingTopology {
  int gpus_per_node = 8;
  InterconnectModel intra;
  InterconnectModel inter;
  const InterconnectModel& link(int from_gpu, int to_gpu) const;
  bool crosses_nodes(int from_gpu, int to_gpu) const { return from_gpu / gpus_per_node != to_gpu / gpus_per_node; }
};
// 8 GPUs a node, NVLink 4 inside, InfiniBand NDR between (the presets; throws
// InterconnectError when the assets cannot be found).
RingTopology default_ring_topology();
// What the machine and the compute model of a ring simulation are made of, as
// the front ends name them: an error says which it is about.
enum class RingSetupField { gpus_per_node, intra, inter, efficiency, hardware };
std::string_view ring_setup_field_key(RingSetupField f);  // "gpus_per_node", "intra", "inter", "efficiency", "hardware"
struct RingSetupError {
  RingSetupField field;
  std::string message;
};
std::vector<RingSetupError> validate(const RingTopology& t);  // empty when usable

// ---- the problem ---------------------------------------------------------------



struct RingComputeModel {
  HardwareModel hw;
  double efficiency = 1.0;  // fraction of the block's time bound the forward rung reaches, (0, 1]
  // The backward rung's, when it differs (a measured single-GPU backward gives it); unset: `efficiency`.
  std::optional<double> backward_efficiency;
  RingSteps steps = RingSteps::fused;  // how the kernels launch a step: what scratch memory they hold
  // The rungs' launch model (rung_timing.hpp), fitted on one GPU: when set, a
  // chunk pair's time is its launch's — waves of CTAs, each CTA's fixed cost
  // and tiles, the launch — plus what the ring adds to it (the running O
  // folded in the forward's epilogue, dK, dV added in fp32 in the
  // backward's), and each step's other kernels are timed too; the efficiency
  // is then not used for that pass.
  std::optional<RungTiming> forward_rung, backward_rung;
  // Or a GPU's whole set: the rungs the ring runs on Hopper (fa3_hopper and
  // fa3_hopper_bwd where the set has them, else fa2_tc and fa2_tc_bwd), at the
  // problem's head dim, a diagonal chunk pair with the entry fitted under the
  // causal mask where the set has one per mask.
  std::optional<RungTimingSet> rung_set;
  // What one host thread spends issuing each step (host_issue.hpp): when
  // measured, a GPU's step starts no earlier than the host has issued its
  // first launch and ends no earlier than its last, and a transfer starts no
  // earlier than its exchange was issued. The rungs' own launches take their
  // RungTiming::host_launch_s (or the small kernel's launch_s). A ring over
  // several nodes has a host per GPU whatever `host.host_per_gpu` says.
  // With its exchange_sms measured: while a GPU's exchange is in flight, from
  // its posting to its last transfer's end, NCCL's CTAs hold that many SMs
  // and the step's rung launches (whose CTAs fill an SM) run on the others.
  HostIssueCosts host;
};
std::vector<RingSetupError> validate(const RingComputeModel& cm, DType dtype);  // empty when usable

// One chunk pair's work as the rung does it: a q-chunk × kv-chunk problem of
// B·H heads (causal for `diagonal`, nothing for `none`) — FlashAttention-2's
// counts (fa2, or fa2_bwd for the backward) without the L2, the bound from
// them, the time at the model's efficiency, and the convention's FLOPs
// (4·B·H·pairs·d forward, 2.5× that backward).
struct RingBlockCost {
  double flops = 0;             // exact: matmul and softmax (what the bound uses)
  double hbm_bytes = 0;         // requests to global memory
  double bound_s = 0;           // max(flops / peak, hbm_bytes / bandwidth)
  double time_s = 0;            // bound_s / efficiency
  i64 pairs = 0;                // visible (query, key) pairs
  double convention_flops = 0;
};
// `folds`: the pair's partial output folds into a running one (its query
// chunk has more pairs over the ring) — what the launch model adds per CTA.
RingBlockCost ring_block_cost(const AttentionProblem& p, i64 n_q, i64 n_kv, ChunkVisibility v, Pass pass,
                              const RingComputeModel& cm, bool folds = false);
// The same whole problem (N × N, B·H heads) on one GPU: the pass's bound
// from the same counts, at the same efficiency.
RingBlockCost ring_single_gpu_cost(const AttentionProblem& p, Pass pass, const RingComputeModel& cm);
// The FLOP convention of a pass over `pairs` visible (query, key) pairs:
// 4·B·H·pairs·d forward, 10·B·H·pairs·d backward.
double ring_convention_flops(const AttentionProblem& p, i64 pairs, Pass pass);

// ---- the schedule --------------------------------------------------------------

// compute: the visible chunk pairs of a step (zero long when every pair is
// `none`); transfer: a receive (K, V, or dK, dV); wait: the compute stream
// idle while a transfer it needs before its next step is in flight (exposed
// communication); idle: the compute stream idle with nothing in flight — a
// neighbour has not started the step yet, or the pass has not ended
// elsewhere (the unbalanced layout's bubbles).
enum class RingEventKind { compute, transfer, wait, idle };
std::string_view ring_event_name(RingEventKind k);  // "compute", "transfer", "wait", "idle"

// One bar of one GPU's timeline (seconds from the start of the first pass).
struct RingEvent {
  int gpu = 0;
  int step = 0;          // 0 … P − 1 (a backward's homecoming transfer of dK, dV: step P)
  Pass pass = Pass::fwd;
  RingEventKind kind = RingEventKind::compute;
  double start_s = 0;
  double end_s = 0;
  int kv_owner = 0;      // compute, transfer: whose K, V chunks (or dK, dV)
  int peer = -1;         // transfer: the GPU it comes from
  // transfer: when GPU `gpu` and its peer posted their parts of the exchange
  // (at most start_s; the later of the two is when it can start). A GPU's
  // span of an exchange as its own stream sees it runs from its posting to
  // end_s: it includes the wait for the peer's matching call.
  double posted_s = 0, peer_posted_s = 0;
  bool gradients = false;  // transfer: dK, dV (fp32) instead of K, V
  bool crosses_nodes = false;  // transfer: over the inter-node link
  i64 bytes = 0;         // transfer: bytes GPU `gpu` receives
  double flops = 0;      // compute: the convention's FLOPs of the visible chunk pairs
  i64 pairs = 0;         // compute: visible (query, key) pairs
  double duration_s() const { return end_s - start_s; }
};

// One GPU's sums over a pass.
struct RingGpuTotals {
  double compute_s = 0;
  double comm_s = 0;     // time with a send or a receive of its in flight (the communication stream)
  double wait_s = 0;     // compute stream waiting for a transfer: exposed communication
  double tail_wait_s = 0;  // of wait_s, after its last compute: the backward's dK, dV still travelling and coming home
  double idle_s = 0;     // neither computing nor waiting for data
  i64 pairs = 0;
  i64 bytes_received = 0;
};

struct RingPassResult {
  Pass pass = Pass::fwd;
  double start_s = 0, end_s = 0;   // time_s = end_s − start_s
  double time_s = 0;
  double compute_s = 0;            // the busiest GPU's compute
  double comm_s = 0;               // the busiest GPU's time on the communication stream (sends and receives)
  double exposed_comm_s = 0;       // longest time a GPU's compute waited for a transfer
  // Of that, what the steps expose (a GPU's waits before its last compute):
  // the K/V ring not hiding under compute. The rest is the backward's tail,
  // the dK, dV homecoming, which no compute of the pass can hide.
  double exposed_steps_s = 0;      // the most a GPU waited before its last compute
  double tail_s = 0;               // end_s − the last compute's end on any GPU
  double overlap = 0;              // 1 − exposed / comm (1 when nothing travelled)
  double idle_s = 0;               // the most idle GPU's time not computing and not waiting for data
  double flops = 0;                // all GPUs together (the per-pass convention: 4·B·H·pairs·d forward, 2.5× backward)
  i64 bytes_per_step = 0;          // the most one GPU receives in one step (K, V; and dK, dV backward)
  std::vector<RingGpuTotals> gpus; // per GPU
};

// What one GPU holds for the ring, term by term, so that the kernels'
// allocation can be printed beside it and compared. The terms follow the
// ring's kernels (kernels/src/ring/ring_runner.cpp): one arena per GPU holding the
// forward's tensors and, for a training step, the backward's, all at once;
// the rungs' own workspaces are the registry's and are not counted here.
struct RingMemoryTerm {
  std::string name;     // "K, V ring buffers (2)"
  std::string formula;  // "2·2·B·H_kv·n_gpu_max·d·2"
  i64 bytes = 0;
  Pass pass = Pass::fwd;  // the pass that needs it (the backward's only in a training step)
};
struct RingMemory {
  std::vector<RingMemoryTerm> terms;
  i64 total_bytes() const;
};
// GPU `gpu`'s memory for the ring of `p` (its backward's terms when p.backward()).
RingMemory ring_memory(const AttentionProblem& p, const RingPartition& part, int gpu, RingSteps steps = RingSteps::fused);

struct RingSimulation {
  AttentionProblem problem = default_ring_problem();  // with its parallel part
  RingPartition partition;
  std::vector<RingEvent> events;   // every GPU's bars, sorted by gpu, then start
  RingPassResult forward;
  std::optional<RingPassResult> backward;
  double time_s = 0;               // both passes
  double single_gpu_s = 0;         // the same whole problem on one GPU, same compute model
  double scaling_efficiency = 0;   // single_gpu_s / (P · time_s)
  std::vector<RingMemory> memory;  // per GPU, term by term
  std::vector<i64> peak_bytes_per_gpu;  // per GPU: memory[r].total_bytes()
  const RingPassResult& pass(Pass p) const;  // throws std::out_of_range for a backward not simulated
};

// Throws std::invalid_argument with the first reason of validate() (problem,
// topology, compute model).
RingSimulation simulate_ring(const AttentionProblem& p, const RingTopology& topo, const RingComputeModel& cm);

// A pass's rung as the ring's model times a launch under `causal` (a chunk
// against itself) or not: the model's own (forward_rung, backward_rung), else
// the set's at the head dim (fa3_hopper, else fa2_tc; fa3_hopper_bwd, else
// fa2_tc_bwd), its entry for that mask where it has one per mask; nullptr
// without a launch model (or without an entry for the mask).
const RungTiming* ring_rung(const RingComputeModel& cm, Pass pass, i64 head_dim, bool causal = false);

// The passes as a bench times them, a series of runs back to back
// (power_cap.hpp): simulated at boost; then, where a pass's rung is capped by
// the GPU's power limit, again with that rung's CTAs and tiles slowed as its
// median timed run is — a run's busy time being the busiest GPU's compute at
// boost. Without a capped rung, simulate_ring's result.
struct RingSeriesShares {
  SeriesShares forward, backward;
};
RingSimulation simulate_ring_timed(const AttentionProblem& p, const RingTopology& topo, const RingComputeModel& cm,
                                   TimedSeries forward, TimedSeries backward, RingSeriesShares* shares = nullptr);

// ---- the step-through ------------------------------------------------------------

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
// Throws std::invalid_argument unless 0 ≤ step < P.
RingStepView ring_step_view(const RingPartition& part, int step, bool causal);

}  // namespace flashlab::sim
