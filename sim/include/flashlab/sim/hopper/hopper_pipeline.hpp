// The Hopper rung's schedule inside one thread block (CTA): FlashAttention-2's
// loop nest — one CTA per Q_i streaming K_j, V_j, so the HBM traffic is
// FlashAttention-2's — run as FlashAttention-3 runs it (Shah et al. 2024,
// Algorithms 1 and 2):
//
//   a producer warp issues asynchronous copies through the tensor memory
//   accelerator (TMA): Q_i once, then K_j and V_j into stage j mod s of a ring
//   of s shared-memory stages, K_j once every warpgroup's S of the block that
//   held the stage before is done, V_j once its P V is (K_{j−s}, V_{j−s});
//   W consumer warpgroups (64 rows of Q_i each) compute S_ij = Q_i K_jᵀ on the
//   tensor cores (wgmma), the online softmax on the CUDA cores and the
//   special-function units (exp2), and O_i += P_ij V_j on the tensor cores;
//   a stage's K half is released when every warpgroup's S_ij is done, its V
//   half when every warpgroup's P_ij V_j is.
//
// The tensor cores, the exponential units and the copy engine are each one
// per SM and serve in the kernel's issue order, so that the warpgroups
// alternate (one's softmax while another's products run: the ping-pong), and
// K_{j+1}, V_{j+1} arrive while S_ij is computed. With `overlap` each
// warpgroup also issues S_{i,j+1} before P_ij V_j and runs the softmax of
// S_{i,j+1} while P_ij V_j is on the tensor cores (Algorithm 2).
//
// The configurations compiled into the rung (kernels/src/rungs/fa3_hopper.cu) are
// defined here, once: the kernel instantiates them, the registry reports
// their tiles, the step-through draws their ring.
//
// The times are a model, not a measurement: every op's work comes from the
// loop nest's own emission of one full B_r × B_c block (the FLOPs of S_ij and
// P_ij V_j, the softmax's exponentials and other FLOPs, the bytes of K_j and
// V_j), divided by the rates of one SM of the hardware model (its tensor-core
// and CUDA-core peaks over its SMs, 16 exp2 per clock per SM, the L2 — else
// HBM — bandwidth over its SMs, one CTA per SM), plus an assumed copy latency.
// docs/model.md ("The Hopper schedule") says what it leaves out.
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <algorithm>
#include <vector>

#include "flashlab/sim/schedule/event.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

// A sequence length for a row of the tables below: the longer of N_q and N_kv,
// or kAnySeq where none is given (the row for long sequences).
inline constexpr i64 kAnySeq = std::numeric_limits<i64>::max();
inline i64 hopper_seq(const AttentionProblem& p) { return std::max(p.n_q(), p.n_kv()); }

// Which problems a row of a configuration table serves: either mask, or one.
enum class HopperMask : std::uint8_t { any, causal, non_causal };
constexpr bool mask_serves(HopperMask m, bool causal) {
  return m == HopperMask::any || (m == HopperMask::causal) == causal;
}
std::string_view to_string(HopperMask m);  // "any", "causal", "non-causal"

// One configuration of the rung: B_r = 64 × the consumer warpgroups, B_c, the
// depth of the K_j/V_j ring, whether each warpgroup overlaps its softmax with
// its own P_ij V_j, and the problems it serves: sequences up to max_seq, under
// `mask` (kernels/README.md has the timings that chose these). The first row
// that serves a problem runs it.
struct HopperConfig {
  int head_dim;
  int Br;
  int Bc;
  int stages;
  bool overlap;
  i64 max_seq = 0;  // serves N_q, N_kv up to this; 0: any
  HopperMask mask = HopperMask::any;
  // One block per SM walking the tiles (block b takes tiles b, b + SMs, ...),
  // Q_i in two buffers so that the next tile's lands under this one.
  bool persistent = false;
  constexpr int consumers() const { return Br / 64; }
  constexpr int q_buffers() const { return persistent ? 2 : 1; }
  constexpr bool serves(i64 d, bool causal, i64 seq = kAnySeq) const {
    return head_dim == d && (max_seq == 0 || seq <= max_seq) && mask_serves(mask, causal);
  }
};

// Short sequences run persistent: there a tile's start and end are an eighth
// of it, and a persistent block lands the next Q_i under them. Under the causal
// mask a tile's length depends on its row block: the grid takes the tiles in
// sections of SMs heads, heaviest row block first, so that each block gets one
// row block of each rank per section — faster than one CTA a tile at d 64 on an
// H200, not at d 128, where causal tiles stay one CTA each (kernels/README.md).
inline constexpr HopperConfig kHopperConfigs[] = {
    //  d   B_r  B_c  stages  overlap  sequences  mask                  persistent
    {64, 256, 64, 4, true, 1024, HopperMask::any, true},  // N ≤ 1K: 256 rows pad none of 1K, where 192 pad it to 1152
    {64, 192, 128, 3, true},
    {128, 128, 128, 2, true, 1024, HopperMask::non_causal, true},  // short: 8 key blocks of 128 for 1K
    {128, 128, 128, 2, true, 1024, HopperMask::causal},             // short causal: one key block on each diagonal
    {128, 128, 176, 2, true},
};

// Dynamic shared memory of a configuration: 1 KiB of slack to align the tiles
// to the 1024-byte swizzle atom, Q_i (twice when persistent), stages × (K_j,
// V_j) in 16-bit elements, 1 KiB of mbarriers. The kernel's own count is
// checked against it.
constexpr std::size_t hopper_smem_bytes(const HopperConfig& c) {
  return 1024 + static_cast<std::size_t>(c.q_buffers()) * c.Br * c.head_dim * 2 +
         2ull * c.stages * static_cast<std::size_t>(c.Bc) * c.head_dim * 2 + 1024;
}

// The row that runs head dim d at sequence length `seq` (hopper_seq) under the
// mask, if any; its index in kHopperConfigs. Without a length: the row of long
// sequences, unmasked.
std::optional<std::size_t> hopper_row(i64 head_dim, i64 seq = kAnySeq, bool causal = false);
std::optional<HopperConfig> hopper_config(i64 head_dim, i64 seq = kAnySeq, bool causal = false);
std::optional<HopperConfig> hopper_config(const AttentionProblem& p);  // the problem's row
std::string hopper_head_dims_text();  // "64, 128"
inline TileShape tiles_of(const HopperConfig& c) { return {c.Br, c.Bc}; }

// The backward on Hopper (kernels/src/rungs/fa3_hopper_bwd.cu), FlashAttention-2's loop
// nest as FlashAttention-3 runs it: one CTA per K_j, V_j (B_c = 128 keys, 64 to
// each of two consumer warpgroups, dK_j and dV_j in their registers) streaming
// Q_i, dO_i, L_i and D_i of B_r rows through a ring of `stages` by TMA. The five
// products run on wgmma: S_ijᵀ = K_j Q_iᵀ and dP_ijᵀ = V_j dO_iᵀ from shared
// memory, dV_j += P_ijᵀ dO_i and dK_j += dS_ijᵀ Q_i with P_ijᵀ, dS_ijᵀ from
// registers, and dQ_i from dS_ij in shared memory — a 64 × 64 block of
// dQ_i = dS_ij K_j per warpgroup (two d panels when B_r = 64, two row panels
// when B_r = 128), or at B_r = 80 a 64-wide d panel of dQ_iᵀ = K_jᵀ dS_ijᵀ
// (dq_swapped) — added into dQaccum in fp32: with dq_buffers > 0 (the default)
// stored in fp32 to shared memory and added by a writer warp's TMA tensor
// reductions, with 0 by the warpgroup's own reductions. A step: S_ijᵀ and
// dP_ijᵀ issued together, P_ijᵀ computed while dP_ijᵀ runs, then dS_ijᵀ; dV_j,
// dQ_i (after the barrier: both halves of dS_ijᵀ stored) and dK_j issued back to
// back, dQ_i's block stored (or reduced) while dK_j runs.
struct HopperBwdConfig {
  int head_dim;
  int Br;
  int Bc;
  int stages;
  // 1 or 2: each warpgroup stores its block of dQ_i in fp32 into one of that
  // many shared-memory buffers of its own, and a writer thread of the producer
  // warpgroup adds the buffer into dQaccum by TMA tensor reductions; the
  // warpgroup waits only when the buffer it reuses has not been read yet. 0: it
  // adds the block from registers by vector reductions.
  int dq_buffers;
  HopperMask mask = HopperMask::any;  // the problems this row serves
  constexpr int consumers() const { return Bc / 64; }
  constexpr bool serves(i64 d, bool causal, i64 /*seq*/ = kAnySeq) const {  // any sequence length
    return head_dim == d && mask_serves(mask, causal);
  }
  // dQ_i computed swapped, as FlashAttention-3 does at B_r = 80: dQ_iᵀ (d × B_r)
  // = K_jᵀ dS_ijᵀ, each warpgroup one 64-wide d panel (wgmma M = 64 of d, N = B_r
  // queries, K = B_c keys), so that M never has to be B_r; dS_ij is stored
  // [query][key]. At B_r = 64 and 128 a warpgroup computes a 64 × 64 block of
  // dQ_i = dS_ij K_j from dS_ijᵀ stored [key][query].
  constexpr bool dq_swapped() const { return Br % 64 != 0; }
  // A warpgroup's block of dQ_i in fp32: B_r·d / consumers values (64 × 64, or
  // the d panel's 64 × B_r when swapped).
  constexpr int dq_block_bytes() const { return Br * head_dim / consumers() * 4; }
  // L_i or D_i of one stage: B_r fp32 values, padded to 128 bytes (a TMA
  // tensor copy's shared-memory alignment).
  constexpr int stat_stage_bytes() const { return (Br * 4 + 127) / 128 * 128; }
  // dK_j's product of a step finishes under the next step's S_ijᵀ and dP_ijᵀ, and
  // the step's stage is released then, when dS_ijᵀ's register fragment (B_r/4
  // registers a thread) can stay live that long beside the accumulators: at
  // B_r = 64. At B_r = 80 and 128 a warpgroup waits for dK_j before its next step.
  constexpr bool dk_overlaps_next_step() const { return Br == 64; }
};

// The build's way of adding dQ (HopperBwdConfig::dq_buffers): two buffers for the
// writer unless the build says otherwise (CMake: -DFLASHLAB_HOPPER_BWD_DQ_WRITER=1,
// or 0 for the vector reductions), so that builds of one tree time each against
// the others. CMake defines it for every target; a compile without it gets 2.
#ifndef FLASHLAB_HOPPER_BWD_DQ_WRITER
#define FLASHLAB_HOPPER_BWD_DQ_WRITER 2
#endif
inline constexpr int kHopperBwdDqBuffers = FLASHLAB_HOPPER_BWD_DQ_WRITER;
static_assert(kHopperBwdDqBuffers >= 0 && kHopperBwdDqBuffers <= 2, "dQ's buffers: 0 (no writer), 1 or 2");
// B_r of the non-causal d = 128 row: 80 (FlashAttention-3's tile, dQ swapped; the
// default) or 64 (the causal row's kernel), from CMake's
// -DFLASHLAB_HOPPER_BWD_D128_BR for A/B builds of one tree; a compile without it gets 80.
#ifndef FLASHLAB_HOPPER_BWD_D128_BR
#define FLASHLAB_HOPPER_BWD_D128_BR 80
#endif
inline constexpr int kHopperBwdD128Br = FLASHLAB_HOPPER_BWD_D128_BR;
static_assert(kHopperBwdD128Br == 80 || kHopperBwdD128Br == 64, "the non-causal d = 128 row's B_r: 80 or 64");
// At B_r = 80 one buffer per warpgroup: two (80 KiB) do not fit beside the tiles.
inline constexpr int kHopperBwdD128DqBuffers =
    kHopperBwdD128Br == 80 && kHopperBwdDqBuffers > 1 ? 1 : kHopperBwdDqBuffers;

// The first row that serves a problem is its configuration.
inline constexpr HopperBwdConfig kHopperBwdConfigs[] = {
    //  d   B_r  B_c  stages  dQ buffers  mask
    {64, 128, 128, 2, kHopperBwdDqBuffers, HopperMask::any},
    {128, 64, 128, 2, kHopperBwdDqBuffers, HopperMask::causal},
    {128, kHopperBwdD128Br, 128, 2, kHopperBwdD128DqBuffers, HopperMask::non_causal},
};

// Dynamic shared memory: 1 KiB of slack (the 1024-byte swizzle atom), K_j and
// V_j, `stages` × (Q_i, dO_i) in 16-bit elements, two buffers of dS_ijᵀ,
// `dq_buffers` × one fp32 block of dQ_i per consumer warpgroup,
// `stages` × (L_i, D_i) in fp32 (each padded to 128 bytes), 1 KiB of mbarriers.
// The kernel checks its own count against it. With dQ buffers the slack goes
// (the kernel takes the dynamic shared memory's start as 1024-byte aligned, as
// CUTLASS does, and traps otherwise): with two, 227 KiB at d = 64 (B_r = 128) —
// Hopper's whole opt-in limit — and 226 KiB at d = 128 (B_r = 64); with one at
// B_r = 80, 226.5 KiB.
constexpr std::size_t hopper_bwd_smem_bytes(const HopperBwdConfig& c) {
  const std::size_t slack = c.dq_buffers > 0 ? 0 : 1024;
  const std::size_t kv = 2ull * c.Bc * c.head_dim * 2;
  const std::size_t q_do = 2ull * c.stages * c.Br * c.head_dim * 2;
  const std::size_t ds = 2ull * c.Bc * c.Br * 2;
  const std::size_t dq = static_cast<std::size_t>(c.dq_buffers) * c.consumers() * c.dq_block_bytes();
  const std::size_t stats = 2ull * c.stages * c.stat_stage_bytes();
  return slack + kv + q_do + ds + dq + stats + 1024;
}

// The first row of kHopperBwdConfigs that serves head dim d under the mask
// `causal`, if any: its index (the kernel launches that row's instantiation)
// and the row.
std::optional<std::size_t> hopper_bwd_row(i64 head_dim, bool causal);
std::optional<HopperBwdConfig> hopper_bwd_config(i64 head_dim, bool causal);
std::string hopper_bwd_head_dims_text();  // "64, 128"
inline TileShape tiles_of(const HopperBwdConfig& c) { return {c.Br, c.Bc}; }

// What an op of the schedule does.
enum class PipeOp : std::uint8_t {
  copy_Q,      // TMA: Q_i into shared memory
  copy_K,      // TMA: K_j into its stage
  copy_V,      // TMA: V_j into its stage
  gemm_S,      // tensor cores: S_ij = τ Q_i K_jᵀ (one warpgroup's 64 rows)
  softmax,     // m_i, P̃_ij = exp(S_ij − m_i), ℓ_i, the rescale of O_i
  gemm_PV,     // tensor cores: O_i += P̃_ij V_j
  epilogue,    // O_i = diag(ℓ_i)⁻¹ O_i, L_i = m_i + log ℓ_i, written to HBM
  // The backward's (hopper_bwd_pipeline.hpp), one CTA per K_j, V_j:
  copy_dO,      // TMA: dO_i into its stage (Q_i into its stage is copy_Q)
  copy_LD,      // TMA: L_i and D_i into their stage
  gemm_St,      // tensor cores: S_ijᵀ = K_j Q_iᵀ (one warpgroup's 64 keys)
  gemm_dPt,     // tensor cores: dP_ijᵀ = V_j dO_iᵀ
  softmax_bwd,  // P_ijᵀ = exp(S_ijᵀ − L_i), dS_ijᵀ = P_ijᵀ ∘ (dP_ijᵀ − D_i)
  store_dS,     // dS_ijᵀ to shared memory, then the named barrier both warpgroups meet at
  gemm_dV,      // tensor cores: dV_j += P_ijᵀ dO_i
  gemm_dK,      // tensor cores: dK_j += dS_ijᵀ Q_i
  gemm_dQ,      // tensor cores: a 64 × 64 block of dQ_i = dS_ij K_j
  reduce_dQ,    // that block added into dQaccum_i (fp32) in the L2: the writer's TMA reductions, or the warpgroup's vector reductions
  epilogue_dKdV,  // dK_j, dV_j written
  store_dQ,     // that block in fp32 to the warpgroup's shared-memory buffer, for the writer
};
std::string_view to_string(PipeOp op);  // "TMA Q_i", "S_ij = Q_i K_jᵀ", ...

// The unit an op occupies: one of each per SM. The load/store path carries
// the consumers' own shared-memory stores and global reductions and stores
// (the backward's; the forward's copies are the producer's, by TMA). The dQ
// writer is the backward's second TMA issuer: a thread of the producer
// warpgroup whose tensor reductions add dQ_i's blocks into the L2, one at a time.
enum class PipeUnit : std::uint8_t { copy_engine, tensor_cores, softmax_units, load_store, dq_writer };
std::string_view to_string(PipeUnit u);  // "TMA (producer)", "tensor cores", ...

struct PipeInterval {
  PipeOp op = PipeOp::copy_Q;
  PipeUnit unit = PipeUnit::copy_engine;
  int warpgroup = -1;  // consumer warpgroup 0..W−1; −1: the producer
  i64 j = -1;          // column block (−1: Q_i, the epilogue)
  i64 i = -1;          // row block (the backward's steps; −1 in the forward)
  int stage = -1;      // ring stage of K_j, V_j (copies)
  double start_ns = 0;  // the unit starts it
  double busy_ns = 0;   // the unit is busy until start + busy
  double end_ns = 0;    // its result is usable (a copy adds the latency)
  // Its work at the unit's full rate: busy_ns, or less when it shared the unit
  // with ops running at once (the backward's two warpgroups).
  double work_ns = 0;
};

enum class StageStatus : std::uint8_t { empty, loading, full, released };
std::string_view to_string(StageStatus s);  // "empty", "loading", "full", "released"
// A tile's status at t in a stage issued before t: loading until it arrived,
// full until the stage is released, released after.
constexpr StageStatus stage_status(double t, double arrived, double released) {
  return t < arrived ? StageStatus::loading : t < released ? StageStatus::full : StageStatus::released;
}

// One use of a ring stage: block j's K_j, V_j copied in, read, released.
struct StageUse {
  int stage = 0;
  i64 j = 0;
  double issued_ns = 0;    // the producer issues K_j's copy
  double k_arrived_ns = 0; // K_j has landed: S_ij may start
  double arrived_ns = 0;   // V_j has landed too
  double k_released_ns = 0;  // every warpgroup's S_ij is done: K_{j+s} may land
  double released_ns = 0;    // every warpgroup's P_ij V_j is done: V_{j+s} may land
};

// The ring and the units at one moment.
struct PipelineState {
  double t_ns = 0;
  struct Stage {
    i64 j = -1;  // the block it holds or loads
    StageStatus K = StageStatus::empty, V = StageStatus::empty;  // its two halves: K_j and V_j
  };
  std::vector<Stage> stages;
  // What each unit runs at t (an index into HopperPipeline::intervals), −1 idle.
  int copy = -1, tensor = -1, softmax = -1;
  std::vector<int> warpgroup_op;  // per consumer warpgroup: its op at t on any unit, −1 waiting
};

// Rates of one SM, from the hardware model.
struct PipelineRates {
  double mma_flops_per_ns = 0;      // tensor-core peak / SMs
  double fp32_ops_per_ns = 0;       // CUDA-core fp32 instructions: half the fp32 peak (an FMA is two FLOPs) / SMs
  double exp_per_ns = 0;            // 16 exp2 per clock per SM × clock
  double copy_bytes_per_ns = 0;     // L2 (else HBM) bandwidth / SMs
  double copy_latency_ns = 0;       // kCopyLatencyCycles at the clock
  double smem_bytes_per_ns = 0;     // kSmemBytesPerClockPerSm at the clock
  std::string copy_source;          // "L2" or "HBM": which bandwidth the copies get
};
// The exp2 throughput of the special-function units, per clock per SM (CUDA
// C++ Programming Guide, arithmetic instruction throughput: compute
// capability 7.5 to 9.0).
inline constexpr double kExpPerClockPerSm = 16;
// An assumed round trip of a TMA copy, in SM cycles: the order of an L2 hit
// on Hopper; not measured here (docs/model.md).
inline constexpr double kCopyLatencyCycles = 600;
// Shared memory's bandwidth per SM: 32 banks of 4 bytes per clock (CUDA C++
// Programming Guide, shared memory of compute capability 5.x to 9.0).
inline constexpr double kSmemBytesPerClockPerSm = 128;
// Throws std::invalid_argument naming the missing figure.
PipelineRates pipeline_rates(const HardwareModel& hw, DType dt);

// What the schedules of a forward and of a backward CTA share: the ops as
// timed, each unit's work, the end, and the search by op. `Block` is the
// block an op belongs to: the column block j in the forward (one CTA per row
// block), the row block i in the backward (one CTA per column block).
template <class Config, i64 PipeInterval::*Block>
struct CtaPipeline {
  Config config{};
  PipelineRates rates;
  std::vector<PipeInterval> intervals;  // in issue order
  double end_ns = 0;                    // the last op is done: the CTA's writes
  // Work of each unit (Σ work_ns: the time at its full rate), the sums a bound reads.
  double tensor_busy_ns = 0, softmax_busy_ns = 0, copy_busy_ns = 0, load_store_busy_ns = 0, dq_writer_busy_ns = 0;

  double tensor_utilisation() const { return end_ns > 0 ? tensor_busy_ns / end_ns : 0; }
  // The interval of op `op` of block `block` run by warpgroup w (the
  // producer's ops, whatever w; the first warpgroup by default); null when
  // there is none.
  const PipeInterval* find(PipeOp op, i64 block, int warpgroup = 0) const {
    for (const PipeInterval& iv : intervals)
      if (iv.op == op && iv.*Block == block && (iv.warpgroup < 0 || iv.warpgroup == warpgroup)) return &iv;
    return nullptr;
  }
  // When the first warpgroup's op starts, and when its result is usable; −1 when there is none.
  double start_of(PipeOp op, i64 block) const {
    const PipeInterval* iv = find(op, block);
    return iv ? iv->start_ns : -1.0;
  }
  double end_of(PipeOp op, i64 block) const {
    const PipeInterval* iv = find(op, block);
    return iv ? iv->end_ns : -1.0;
  }
  // The ring's stages at t, each as the last use issued by then left it:
  // `fill(stage, use)` sets a stage's block and its tiles' statuses.
  template <class Stage, class Use, class Fill>
  std::vector<Stage> stages_at(const std::vector<Use>& uses, double t, Fill fill) const {
    std::vector<Stage> stages(static_cast<std::size_t>(config.stages));
    for (const Use& u : uses)  // in issue order: a later use of a stage replaces an earlier one
      if (u.issued_ns <= t) fill(stages[static_cast<std::size_t>(u.stage)], u);
    return stages;
  }
  // A timed op joins the schedule, its work to its unit's.
  void add(const PipeInterval& iv) {
    intervals.push_back(iv);
    switch (iv.unit) {
      case PipeUnit::tensor_cores: tensor_busy_ns += iv.work_ns; break;
      case PipeUnit::softmax_units: softmax_busy_ns += iv.work_ns; break;
      case PipeUnit::copy_engine: copy_busy_ns += iv.work_ns; break;
      case PipeUnit::load_store: load_store_busy_ns += iv.work_ns; break;
      case PipeUnit::dq_writer: dq_writer_busy_ns += iv.work_ns; break;
    }
    end_ns = std::max(end_ns, iv.end_ns);
  }
};

struct HopperPipeline : CtaPipeline<HopperConfig, &PipeInterval::j> {
  i64 i = 0;        // the row block this CTA computes
  i64 visits = 0;   // column blocks it visits (fewer under causal masking)
  std::vector<StageUse> stage_uses;     // one per visit, in j order
  // Per visit, for one warpgroup: the two products and the softmax.
  double gemm_ns_per_visit = 0, softmax_ns_per_visit = 0;

  PipelineState state_at(double t_ns) const;
  // The moment the step-through's event of FlashAttention-2's loop nest (the
  // one the rung follows) happens in this schedule, for the first warpgroup:
  // the loads of K_j, V_j and S_ij when S_ij starts (K_j, V_j are in their
  // stage by then: they arrived while earlier blocks were computed), the
  // softmax lines when the softmax starts, O_i += P̃_ij V_j when that product
  // starts, the free of K_j, V_j when it ends, the end of the row block at the
  // epilogue. Without overlap the times never decrease along the loop nest;
  // with it S_{i,j+1} is issued before P̃_ij V_j, so the first event of a visit
  // may come earlier than the last of the one before. Another row block: −1.
  double time_of(const TileEvent& e) const;
};

// The schedule of row block i of `p` under configuration `c` on `hw`. Throws
// std::invalid_argument for a head dim other than c's, a row block out of
// range, or a hardware model without the rates.
HopperPipeline simulate_hopper_pipeline(const AttentionProblem& p, i64 i, const HopperConfig& c,
                                        const HardwareModel& hw);

// The whole launch from the CTAs' schedules: B·H·T_r CTAs, one per SM at a
// time (a configuration's shared memory leaves no room for a second), handed
// to the SMs in the rung's order — head by head, each head's heaviest row block
// first — each to the SM that frees first; each CTA takes its
// row block's schedule (the same for every row block without causal masking;
// with it, the visits grow with i). A persistent configuration launches one
// block per SM that takes every SMs-th tile; each tile still takes its whole
// schedule (the model does not credit the next Q_i landing under this tile).
// A model of the kernel's time, shown beside what the GPU measures.
struct HopperLaunchEstimate {
  i64 ctas = 0;    // tiles: (row block, head) pairs, one CTA each unless persistent
  i64 blocks = 0;  // blocks launched: ctas, or min(ctas, SMs) when persistent
  i64 sms = 0;
  double waves = 0;           // CTAs / SMs
  double time_s = 0;          // when the last SM finishes
  double cta_time_min_s = 0, cta_time_max_s = 0;
  double tensor_busy_fraction = 0;  // Σ tensor-core time / (SMs × time)
  std::string method;         // how the CTAs were placed
};
// Throws std::invalid_argument as simulate_hopper_pipeline does, or when the
// row blocks differ in more than 4,096 ways. Beyond 4,000,000 CTAs (tiles)
// whose row blocks differ, the time is their total over the SMs.
HopperLaunchEstimate estimate_hopper_launch(const AttentionProblem& p, const HopperConfig& c, const HardwareModel& hw);

}  // namespace flashlab::sim
