// fa3_hopper_bwd: FlashAttention backward on Hopper (sm_90a) — the kernel template.
//
// What changed from fa2_tc_bwd: the five products of a step run on wgmma
// (warpgroup MMA, m64nNk16, fp32 accumulation) reading their shared-memory
// operands through matrix descriptors instead of ldmatrix + mma.sync; Q_i, dO_i
// (128-byte swizzle, rows past N zero-filled) and the statistics L_i, D_i are
// copied by the tensor memory accelerator into a ring of stages completed on
// mbarriers, issued by one producer thread while two consumer warpgroups
// compute (warp specialisation; setmaxnreg moves the producer's registers to
// them). A block owns K_j, V_j (B_c = 128 keys, 64 to each consumer warpgroup)
// and keeps dK_j, dV_j in its consumers' registers for the whole Q_i loop:
//
//   S_ijᵀ  = K_j Q_iᵀ        wgmma, both from shared memory (K-major)
//   dP_ijᵀ = V_j dO_iᵀ       wgmma, both from shared memory (K-major)
//   P_ijᵀ  = exp2(S_ijᵀ·τ log2 e − L_i log2 e), dS_ijᵀ = P_ijᵀ ∘ (dP_ijᵀ − D_i)
//   dV_j  += P_ijᵀ dO_i      wgmma, P_ijᵀ from registers, dO_i N-major
//   dK_j  += dS_ijᵀ Q_i      wgmma, dS_ijᵀ from registers, Q_i N-major
//   dQ_i   = dS_ij K_j       wgmma, dS_ijᵀ through shared memory (both operands
//                            MN-major): a 64 × 64 block of dQ_i per warpgroup
//   dQ_iᵀ  = K_jᵀ dS_ijᵀ     at B_r = 80 (Config::kSwapDq): wgmma m64n80, K_j's
//                            d panel MN-major as A, dS_ij stored [query][key]
//                            (stmatrix.trans) as B: a 64-wide d panel per warpgroup,
//                            so that wgmma's M is never B_r
//
// A step: S_ijᵀ and dP_ijᵀ issued as two commit groups, P_ijᵀ computed as soon
// as S_ijᵀ is in registers while dP_ijᵀ runs, then dS_ijᵀ; dV_j issued, the
// barrier (both halves of dS_ijᵀ stored), then dQ_i and dK_j issued back to
// back so that the tensor cores hold work while the warpgroup adds dQ_i. At
// B_r = 64 dK_j's product also runs on under the next step's S_ijᵀ and dP_ijᵀ,
// and the step's stage is released there (sim::HopperBwdConfig::
// dk_overlaps_next_step; the model's schedule is this one).
//
// dQ is accumulated in fp32 into dQaccum, as FlashAttention-2 does: the blocks
// of K_j of a head each add their share of every dQ_i, so dQ is the one result
// that crosses blocks; one pass over the keys, at the price of an addition
// order that varies from run to run. Each warpgroup adds the block it computed,
// in one of two ways (Config::kDqBuffers, from sim::HopperBwdConfig::dq_buffers):
//   0     by vector reductions (red.global.add.v2.f32) from its registers, 32
//         values a thread a step;
//   1, 2  as FlashAttention-3 does: it stores the block into one of its
//         kDqBuffers fp32 buffers in shared memory (TMA's 128-byte swizzle, two
//         boxes of 32 columns; swapped, the d panel's (B_r, 64) block of dQ_i
//         as B_r rows, one 32-bit store a value), and a writer thread of the producer warpgroup
//         adds the buffer into dQaccum by two TMA tensor reductions
//         (cp.reduce.async.bulk.tensor) while the warpgroup goes on; with two
//         buffers a warpgroup waits only for the block it stored two steps ago.
// Bottleneck, measured (H200, Nsight Compute): the two warpgroups meet at the
// dS barrier every step and compute dS_ijᵀ at the same time, so the tensor
// cores wait then; warps stall most on the long scoreboard; the L1 and the
// L2's crossbar are two-thirds busy with the dQ reductions (docs/kernels.md).
//
// This header holds the configurable kernel; kernels/src/rungs/fa3_hopper_bwd.cu
// instantiates the configurations of sim::kHopperBwdConfigs and makes the
// tensor maps on the host.
#pragma once

#include <cstddef>

#include "flashlab/sim/hopper/hopper_pipeline.hpp"  // the configuration's schedule rules
#include "ptx_hopper.cuh"                           // mbarriers, TMA, wgmma, descriptors, setmaxnreg, exp2

namespace flashlab::kernels::fa3_hopper_bwd_detail {

using hopper_ptx::bulk_commit;
using hopper_ptx::bulk_wait;
using hopper_ptx::bulk_wait_read;
using hopper_ptx::exp2_approx;
using hopper_ptx::fence_proxy_async_smem;
using hopper_ptx::fence_regs;
using hopper_ptx::make_desc;
using hopper_ptx::mbar_arrive;
using hopper_ptx::mbar_arrive_expect_tx;
using hopper_ptx::mbar_init;
using hopper_ptx::mbar_wait;
using hopper_ptx::named_bar_arrive;
using hopper_ptx::named_bar_sync;
using hopper_ptx::pack2;
using hopper_ptx::prefetch_tensormap;
using hopper_ptx::setmaxnreg_dec;
using hopper_ptx::setmaxnreg_inc;
using hopper_ptx::smem_addr;
using hopper_ptx::tma_load_3d;
using hopper_ptx::tma_reduce_add_3d;
using hopper_ptx::Wgmma;
using hopper_ptx::wgmma_commit;
using hopper_ptx::wgmma_fence;
using hopper_ptx::wgmma_wait;

// ---------------------------------------------------------------------------
// Compile-time configuration (a row of sim::kHopperBwdConfigs).
// ---------------------------------------------------------------------------
// kHeadDim  d ∈ {64, 128}
// kBr       B_r rows of Q_i, dO_i per step (64, 80 or 128)
// kBc       B_c keys of K_j, V_j per block: 64 per consumer warpgroup
// kStages   depth of the Q_i, dO_i, L_i, D_i ring
// kDqBuffers 0: dQ_i by vector reductions; 1, 2: dQ_i's buffers per warpgroup for the writer
template <int D, int BR, int BC, int STAGES, int DQ_BUFFERS>
struct Config {
  static constexpr int kHeadDim = D;
  static constexpr int kBr = BR;
  static constexpr int kBc = BC;
  static constexpr int kStages = STAGES;
  static constexpr int kDqBuffers = DQ_BUFFERS;
  static constexpr bool kDqWriter = DQ_BUFFERS > 0;
  static constexpr int kConsumers = BC / 64;
  static constexpr int kThreads = 128 * (kConsumers + 1);  // producer warpgroup first
  // The table's row: its schedule rules (sim::HopperBwdConfig).
  static constexpr sim::HopperBwdConfig kRow{D, BR, BC, STAGES, DQ_BUFFERS};
  // dQ_iᵀ = K_jᵀ dS_ijᵀ, a 64-wide d panel per warpgroup (B_r = 80), with dS_ij
  // stored [query][key]; else a 64 × 64 block of dQ_i = dS_ij K_j per warpgroup
  // with dS_ijᵀ stored [key][query].
  static constexpr bool kSwapDq = kRow.dq_swapped();
  // Tiles are d/64 panels of 64 columns (128-byte rows, the swizzle's width).
  static constexpr int kPanels = D / 64;
  static constexpr int kKVBytes = BC * D * 2;   // K_j or V_j
  static constexpr int kQBytes = BR * D * 2;    // Q_i or dO_i
  static constexpr int kStatBytes = kRow.stat_stage_bytes();  // L_i or D_i: B_r floats, padded to 128 bytes
  // dS_ijᵀ: B_r/64 panels of (B_c keys, 64 queries); swapped, dS_ij: B_c/64
  // panels of (B_r queries, 64 keys), panel c written by warpgroup c.
  static constexpr int kDsBytes = BC * BR * 2;
  static constexpr int kDsPanelBytes = BR * 128;  // swapped: one panel of 64 keys
  // A warpgroup's fp32 block of dQ_i for the writer: two boxes of (rows, 32
  // columns = 128 bytes), each swizzled as a TMA copy of it would be; 64 rows, or
  // the B_r queries of the swapped block.
  static constexpr int kDqBoxRows = kSwapDq ? BR : 64;
  static constexpr int kDqBoxBytes = kDqBoxRows * 128;
  static constexpr int kDqBlockBytes = 2 * kDqBoxBytes;
  static constexpr int kDqBytes = DQ_BUFFERS * (BC / 64) * kDqBlockBytes;
  static constexpr int kBarrierBytes = 1024;
  // 1 KiB to align the tiles on 1024 bytes, or none with the writer's buffers: the
  // kernel then takes the dynamic shared memory's start as aligned (and traps if
  // not), so that two buffers fit at d = 64 (227 KiB, the opt-in limit; 226 KiB at
  // d = 128) and one at B_r = 80.
  static constexpr int kSlackBytes = DQ_BUFFERS > 0 ? 0 : 1024;
  static constexpr std::size_t kSmemBytes = kSlackBytes + 2ull * kKVBytes +
                                            2ull * kStages * kQBytes + 2ull * kDsBytes + kDqBytes +
                                            2ull * kStages * kStatBytes + kBarrierBytes;
  // Not swapped, dQ_i (B_r, d) is (B_r/64) × (d/64) blocks of 64 × 64, one per consumer warpgroup.
  static constexpr int kQPanels = BR / 64;
  // dQ_i's accumulators a thread: the 64 × 64 block, or the swapped (64 d, B_r) one.
  static constexpr int kDqRegs = kSwapDq ? BR / 2 : 32;

  static_assert(D == 64 || D == 128, "d must be 64 or 128 (whole 128-byte panels, dK_j and dV_j in registers)");
  static_assert(BC == 128, "two consumer warpgroups of 64 keys");
  static_assert(BR == 64 || BR == 128 || (BR == 80 && D == 128),
                "B_r: a wgmma N of S_ijᵀ; 64 and 128 in whole 64-query panels of dS_ijᵀ, 80 with dQ swapped at d = 128");
  static_assert(kSwapDq ? kPanels == kConsumers : kQPanels * kPanels == kConsumers,
                "one block of dQ_i per consumer warpgroup");
  static_assert(kStages >= 2, "Q_{i+1}, dO_{i+1} arrive while block i is computed");
  static_assert(kKVBytes % 1024 == 0 && kQBytes % 1024 == 0 && kDsBytes % 1024 == 0 && kDqBoxBytes % 1024 == 0 &&
                    kDsPanelBytes % 1024 == 0 && (BR * 128) % 1024 == 0,
                "every tile and panel starts on a 1024-byte swizzle atom");
  static_assert(DQ_BUFFERS >= 0 && DQ_BUFFERS <= 2, "dQ_i by reductions (0), or one or two buffers for the writer");
  static_assert(kSmemBytes <= 232448, "Hopper's opt-in shared memory per block (227 KiB)");
  // dK_j's product of step i finishes under step i + 1's S and dP products (the
  // model's rule, sim::HopperBwdConfig::dk_overlaps_next_step; at B_r = 128
  // ptxas would serialise the wgmma for want of registers).
  static constexpr bool kOverlapDk = kRow.dk_overlaps_next_step();
  // setmaxnreg's pool is what the launch allocated (168 a thread at 384
  // threads): the consumers' setmaxnreg.inc waits until their registers are
  // free, so the split must not exceed it (24·128 + 240·256 = 40·128 + 232·256 =
  // 168·384). At d = 128 (and without the writer) the consumers take 240: at 232
  // ptxas serialises their wgmma there for want of registers (its warning
  // C7512), which cost 14–22 % on an H200; the producer warpgroup keeps 24, and
  // with the writer beside the TMA thread ptxas spills 36 bytes of it. At d = 64
  // 232 serialise nothing and the producer's 40 spill nothing.
  static constexpr bool kWideConsumers = D == 128 || DQ_BUFFERS == 0;
  static constexpr int kProducerRegs = kWideConsumers ? 24 : 40;
  static constexpr int kConsumerRegs = kWideConsumers ? 240 : 232;
  static_assert(kProducerRegs * 128 + kConsumerRegs * 128 * kConsumers <= 168 * 128 * (kConsumers + 1),
                "setmaxnreg's pool: the registers the launch allocated (168 a thread)");
};

// Kernel arguments: one block per (column block j, head); heads = B·H. L_i·log2 e
// and D_i ([B·H, stat_rows] fp32, +inf and 0 past N_q) come through tensor maps.
struct Params {
  float* dq_accum;      // Σ_j dS_ij K_j [B·H, N_q, d], fp32 (τ·Σ when dq_scaled)
  void* dk;             // dK [B·H, N_kv, d] (dk_accum null)
  void* dv;             // dV [B·H, N_kv, d]
  float* dk_accum;      // null, or [B·H_kv, N_kv, d] fp32: τ·dK_j added there
  float* dv_accum;      // null, or [B·H_kv, N_kv, d] fp32: dV_j added there
  int n_q, n_kv;
  int T_c;              // ⌈N_kv / B_c⌉
  float scale;          // τ
  float scale_log2;     // τ·log2(e)
  int causal;           // key c is visible to query r iff c ≤ r (top-left aligned, N_q = N_kv)
  int kv_group;         // H / H_kv: query head h reads K/V head h / kv_group; 0 or 1: H_kv = H
  int dq_scaled;        // the caller's dQ accumulator: add τ·dS_ij K_j
  unsigned* head_done;  // null, or [B·H]: each block adds 1 to its head's once all its writes are
                        // visible (the writer's configurations only), for dQ's convert to follow
};

// ---------------------------------------------------------------------------
// PTX wrappers of the backward only.
// ---------------------------------------------------------------------------
// 2-D tensor copy global → shared: box (B_r rows of statistics, 1 head) at
// (c0 row, c1 head) — L_i or D_i; completes `bar`'s transactions.
__device__ __forceinline__ void tma_load_2d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1) {
  asm volatile(
      "cp.async.bulk.tensor.2d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1)
      : "memory");
}
// dQaccum[row, col] += x: one reduction in L2.
__device__ __forceinline__ void red_add_f32(float* addr, float x) {
  asm volatile("red.relaxed.gpu.global.add.f32 [%0], %1;\n" ::"l"(addr), "f"(x) : "memory");
}
// dQaccum[row, col..col+1] += (x, y): one vector reduction in L2.
__device__ __forceinline__ void red_add_f32x2(float* addr, float x, float y) {
  asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(addr), "f"(x), "f"(y) : "memory");
}

// wgmma m64n64k16, both operands from shared memory and MN-major (imm-trans-a =
// imm-trans-b = 1): D(64×64) (+)= A(64×16) · B(16×64) with A's 64 rows and B's 64
// columns contiguous — dQ_i's block from dS_ijᵀ (keys × queries) and K_j (keys × d).
template <typename T>
struct WgmmaMN;

template <>
struct WgmmaMN<__half> {
  __device__ __forceinline__ static void ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.f16.f16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  }
};

template <>
struct WgmmaMN<__nv_bfloat16> {
  __device__ __forceinline__ static void ss(float (&d)[32], uint64_t desc_a, uint64_t desc_b, int accumulate) {
    asm volatile(
        "{\n.reg .pred p;\nsetp.ne.b32 p, %34, 0;\n"
        "wgmma.mma_async.sync.aligned.m64n64k16.f32.bf16.bf16 "
        "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}, %32, %33, p, 1, 1, 1, 1;\n}\n"
        : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31])
        : "l"(desc_a), "l"(desc_b), "r"(accumulate));
  }
};

// ---------------------------------------------------------------------------
// The kernel. Grid: T_c · (B·H) blocks, head-major, column block j ascending
// inside a head (under the causal mask j = 0 visits every Q_i: the heaviest
// first); block = 1 + kConsumers warpgroups:
//   warpgroup 0      producer: one thread copies K_j and V_j once, then Q_i,
//                    dO_i and L_i, D_i (TMA) into stage
//                    i mod kStages when every consumer warp released it; with
//                    kDqBuffers > 0 its second warp is the dQ writer (lane 0
//                    issues, the warp meets the consumers at named barriers)
//   warpgroups 1, 2  consumers: keys [64c, 64c + 64) of K_j, V_j each, their
//                    rows of dK_j, dV_j in registers; per Q_i the five products
// Shared memory: K_j, V_j, kStages × Q_i, kStages × dO_i, 2 × dS_ijᵀ,
// kConsumers × kDqBuffers × dQ_i's block, kStages × L_i, kStages × D_i, mbarriers:
//   bar_kv     K_j and V_j have landed (one phase)
//   full[s]    Q_i, dO_i, L_i, D_i have landed in stage s
//   empty[s]   every consumer warp is done with stage s (4 · kConsumers arrivals)
// Named barrier kDsReady: both warpgroups' dS_ijᵀ are in shared memory. The
// writer's (kDqBuffers > 0), per warpgroup c and buffer b, each of c's 128
// threads and the writer warp's 32:
//   dq_full(c, b)   c's block of dQ_i is in buffer b (c arrives, the writer waits)
//   dq_empty(c, b)  the writer's reductions have read buffer b (the writer
//                   arrives, c waits before it stores there again)
// ---------------------------------------------------------------------------
namespace {

constexpr int kDsReady = 1;
__device__ __forceinline__ constexpr int dq_full(int c, int b) { return 2 + 2 * (2 * c + b); }   // 2, 4, 6, 8
__device__ __forceinline__ constexpr int dq_empty(int c, int b) { return 3 + 2 * (2 * c + b); }  // 3, 5, 7, 9
constexpr int kDqSyncThreads = 128 + 32;
// The consumers' writes are fenced: the writer warp may count the block done.
constexpr int kBlockDone = 10;  // with dK_j, dV_j added in fp32

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    fa3_hopper_backward_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                               const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_do,
                               const __grid_constant__ CUtensorMap tm_l, const __grid_constant__ CUtensorMap tm_d,
                               const __grid_constant__ CUtensorMap tm_dq, const Params p) {
#if defined(__CUDA_ARCH__)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int d = Cfg::kHeadDim;
  constexpr int B_r = Cfg::kBr;
  constexpr int B_c = Cfg::kBc;
  constexpr int kStages = Cfg::kStages;
  constexpr int kPanels = Cfg::kPanels;
  constexpr int kConsumers = Cfg::kConsumers;

  extern __shared__ unsigned char smem_raw[];
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);  // generic pointer to the same byte
  if constexpr (Cfg::kSlackBytes == 0) {
    if (base != raw) __trap();  // no slack was allocated: the tiles would run past the end
  }
  const uint32_t sK = base;                                  // (B_c, d) K_j, kPanels × (B_c, 64)
  const uint32_t sV = sK + Cfg::kKVBytes;                    // (B_c, d) V_j
  const uint32_t sQ = sV + Cfg::kKVBytes;                    // kStages × (B_r, d) Q_i
  const uint32_t sdO = sQ + kStages * Cfg::kQBytes;          // kStages × (B_r, d) dO_i
  const uint32_t sdS = sdO + kStages * Cfg::kQBytes;         // 2 × (B_c, B_r) dS_ijᵀ
  const uint32_t sdQ = sdS + 2 * Cfg::kDsBytes;              // kConsumers × kDqBuffers fp32 dQ_i blocks
  const uint32_t sL = sdQ + Cfg::kDqBytes;                   // kStages × (B_r) L_i·log2 e
  const uint32_t sD = sL + kStages * Cfg::kStatBytes;        // kStages × (B_r) D_i
  const uint32_t bars = sD + kStages * Cfg::kStatBytes;      // mbarriers, 8 bytes each
  const uint32_t bar_kv = bars;
  auto full = [&](int s) { return bars + 8u * (1 + s); };
  auto empty = [&](int s) { return bars + 8u * (1 + kStages + s); };

  const int64_t head = static_cast<int64_t>(blockIdx.x) / p.T_c;
  const int j = static_cast<int>(static_cast<int64_t>(blockIdx.x) % p.T_c);
  const int kv0 = j * B_c;
  const int kv_head = static_cast<int>(p.kv_group > 1 ? head / p.kv_group : head);
  // Q_i blocks this K_j visits: under the causal mask from the first whose last
  // row reaches key kv0 (TileGrid::first_row), ascending.
  const int T_r = (p.n_q + B_r - 1) / B_r;
  const int i_first = p.causal ? kv0 / B_r : 0;
  const int steps = T_r - i_first;  // ≥ 1: key kv0 < N_kv = N_q under the mask

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    mbar_init(bar_kv, 1);
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full(s), 1);
      mbar_init(empty(s), kConsumers * 4);
    }
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
  }
  __syncthreads();

  // Launched programmatically after the pre-pass: this block may run while the
  // pre-pass finishes; L_i, D_i and dQaccum are read only after waiting for it.
  // The converting kernel after this one may be placed once every block has started.
  kernels::detail::let_next_grid_launch();
  if (warpgroup == 0) {
    // ---------------- producer ----------------
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tm_q);
      prefetch_tensormap(&tm_k);
      prefetch_tensormap(&tm_v);
      prefetch_tensormap(&tm_do);
      prefetch_tensormap(&tm_l);
      prefetch_tensormap(&tm_d);
      mbar_arrive_expect_tx(bar_kv, 2 * Cfg::kKVBytes);
#pragma unroll
      for (int pn = 0; pn < kPanels; ++pn) {
        tma_load_3d(sK + pn * B_c * 128, &tm_k, bar_kv, pn * 64, kv0, kv_head);
        tma_load_3d(sV + pn * B_c * 128, &tm_v, bar_kv, pn * 64, kv0, kv_head);
      }
      kernels::detail::wait_for_previous_grid();  // the pre-pass's L_i, D_i
      for (int it = 0; it < steps; ++it) {
        const int s = it % kStages;
        const int round = it / kStages;
        if (round > 0) mbar_wait(empty(s), (round - 1) & 1);
        const int q0 = (i_first + it) * B_r;
        mbar_arrive_expect_tx(full(s), 2 * Cfg::kQBytes + 2 * B_r * 4);  // the statistics' boxes: B_r floats each
#pragma unroll
        for (int pn = 0; pn < kPanels; ++pn) {
          tma_load_3d(sQ + s * Cfg::kQBytes + pn * B_r * 128, &tm_q, full(s), pn * 64, q0, static_cast<int>(head));
          tma_load_3d(sdO + s * Cfg::kQBytes + pn * B_r * 128, &tm_do, full(s), pn * 64, q0, static_cast<int>(head));
        }
        // Statistics rows are padded to a multiple of 128 ≥ q0 + B_r: always in bounds.
        tma_load_2d(sL + s * Cfg::kStatBytes, &tm_l, full(s), q0, static_cast<int>(head));
        tma_load_2d(sD + s * Cfg::kStatBytes, &tm_d, full(s), q0, static_cast<int>(head));
      }
    } else if constexpr (Cfg::kDqWriter) {
      if (threadIdx.x / 32 == 1) {
        // ---------------- the dQ writer ----------------
        // Each warpgroup's block of dQ_i, in the order the warpgroups store them,
        // added into dQaccum by two tensor reductions (one a box of 32 columns),
        // one bulk group a block; its buffer is given back once that group has
        // been read, kDqBuffers − 1 steps later.
        constexpr int kBuf = Cfg::kDqBuffers;
        const bool leader = threadIdx.x % 32 == 0;
        if (leader) prefetch_tensormap(&tm_dq);
        kernels::detail::wait_for_previous_grid();  // dQaccum zeroed by the pre-pass
        for (int it = 0; it < steps; ++it) {
          const int q0 = (i_first + it) * B_r;
          const int b = it % kBuf;
#pragma unroll 1
          for (int cw = 0; cw < kConsumers; ++cw) {
            __syncwarp();
            named_bar_sync(dq_full(cw, b), kDqSyncThreads);
            if (leader) {
              // Not swapped at B_r = 128 the blocks are row panels; else d panels.
              const int row0 = q0 + (!Cfg::kSwapDq && Cfg::kQPanels == 2 ? 64 * cw : 0);
              const int col0 = !Cfg::kSwapDq && Cfg::kQPanels == 2 ? 0 : 64 * cw;
              const uint32_t src = sdQ + (cw * kBuf + b) * Cfg::kDqBlockBytes;
              if (row0 < p.n_q) {  // a box's rows past N_q are not written (the map's bounds)
                tma_reduce_add_3d(&tm_dq, src, col0, row0, static_cast<int>(head));
                tma_reduce_add_3d(&tm_dq, src + Cfg::kDqBoxBytes, col0 + 32, row0, static_cast<int>(head));
              }
              bulk_commit();
            }
            // Step it − kBuf + 1's buffer of warpgroup cw, when step it + 1 stores there:
            // every group but the (kBuf − 1)·kConsumers newest has been read.
            if (it + 1 >= kBuf && it + 1 < steps) {
              if (leader) bulk_wait_read<(kBuf - 1) * kConsumers>();
              __syncwarp();
              named_bar_arrive(dq_empty(cw, (it + 1) % kBuf), kDqSyncThreads);
            }
          }
        }
        if (leader) bulk_wait<0>();  // the reductions are done before the CTA's shared memory goes
        if (p.head_done != nullptr) {
          // The block's reductions into dQaccum (and, added in fp32, the consumers'
          // dK_j, dV_j, which a convert after this one reads) are visible to the GPU
          // before the block counts itself done.
          if (p.dk_accum != nullptr) named_bar_sync(kBlockDone, 128 * kConsumers + 32);
          if (leader) {
            asm volatile("fence.proxy.async.global;\n" ::: "memory");
            __threadfence();
            atomicAdd(p.head_done + head, 1u);
          }
        }
      }
    }
    return;
  }

  // ---------------- consumers ----------------
  setmaxnreg_inc<Cfg::kConsumerRegs>();
  kernels::detail::wait_for_previous_grid();  // dQaccum and the accumulators they add into
  using Mma_S = Wgmma<B_r, T>;   // S_ijᵀ, dP_ijᵀ: (64 keys, B_r)
  using Mma_KV = Wgmma<d, T>;    // dV_j, dK_j: (64 keys, d)
  using Mma_Q = WgmmaMN<T>;      // a (64, 64) block of dQ_i; swapped, Mma_S::ss<1>: (64 of d, B_r)
  constexpr int kSRegs = B_r / 2;   // S_ijᵀ accumulators per thread
  constexpr int kKVRegs = d / 2;    // dK_j (or dV_j) accumulators per thread
  const int c = warpgroup - 1;       // keys [64c, 64c + 64) of K_j
  const int tid = threadIdx.x % 128;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;  // accumulator rows g and g + 8 of the warp's 16
  const int t = lane & 3;   // accumulator columns 2t, 2t + 1 of every 8
  const int key_local = 64 * c + 16 * warp + g;  // this thread's first key of K_j (the second is 8 on)
  const int key_a = kv0 + key_local;
  const int key_b = key_a + 8;
  // The block of dQ_i this warpgroup computes: query panel qc, d panel dc (swapped: d panel c, every query).
  const int qc = !Cfg::kSwapDq && Cfg::kQPanels == 2 ? c : 0;
  const int dc = !Cfg::kSwapDq && Cfg::kQPanels == 2 ? 0 : c;
  const uint32_t sK_c = sK + 64 * c * 128;  // this warpgroup's 64 keys in panel 0 of K_j
  const uint32_t sV_c = sV + 64 * c * 128;
  const float* sL_f = reinterpret_cast<const float*>(smem + (sL - base));
  const float* sD_f = reinterpret_cast<const float*>(smem + (sD - base));
  const float dq_factor = p.dq_scaled ? p.scale : 1.f;

  float dv_acc[kKVRegs];
  float dk_acc[kKVRegs];
#pragma unroll
  for (int k = 0; k < kKVRegs; ++k) dv_acc[k] = dk_acc[k] = 0.f;

  // Stage s (Q_i, dO_i, L_i, D_i) is free for block i + kStages once dK_j's
  // product of step i is done. L_i and D_i were read by the generic proxy and the
  // next copies write them through the async proxy: a proxy fence orders the
  // reads before the arrival.
  auto release = [&](int stage) {
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    __syncwarp();
    if (lane == 0) mbar_arrive(empty(stage));
  };
  mbar_wait(bar_kv, 0);
  for (int it = 0; it < steps; ++it) {
    const int s = it % kStages;
    const int q0 = (i_first + it) * B_r;
    const uint32_t sQ_s = sQ + s * Cfg::kQBytes;
    const uint32_t sdO_s = sdO + s * Cfg::kQBytes;
    const uint32_t sdS_b = sdS + (it & 1) * Cfg::kDsBytes;
    mbar_wait(full(s), (it / kStages) & 1);

    // ---- S_ijᵀ = K_j Q_iᵀ and dP_ijᵀ = V_j dO_iᵀ, two commit groups ----
    float s_acc[kSRegs];
    float dp_acc[kSRegs];
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < d / 16; ++kk) {
      const uint32_t off = (kk / 4) * B_c * 128 + (kk % 4) * 32;  // columns [16kk, 16kk + 16) of d
      const uint32_t off_q = (kk / 4) * B_r * 128 + (kk % 4) * 32;
      Mma_S::ss(s_acc, make_desc(sK_c + off, 16, 1024), make_desc(sQ_s + off_q, 16, 1024), kk > 0 ? 1 : 0);
    }
    wgmma_commit();
#pragma unroll
    for (int kk = 0; kk < d / 16; ++kk) {
      const uint32_t off = (kk / 4) * B_c * 128 + (kk % 4) * 32;
      const uint32_t off_q = (kk / 4) * B_r * 128 + (kk % 4) * 32;
      Mma_S::ss(dp_acc, make_desc(sV_c + off, 16, 1024), make_desc(sdO_s + off_q, 16, 1024), kk > 0 ? 1 : 0);
    }
    wgmma_commit();

    // ---- P_ijᵀ in registers (rows: keys; columns: queries) while dP_ijᵀ is on the tensor cores ----
    wgmma_wait<1>();  // S_ijᵀ, and the previous step's dK_j, are done
    fence_regs(s_acc);
    if constexpr (Cfg::kOverlapDk) {
      if (it > 0) release((it - 1) % kStages);
    }
    const float* L_s = sL_f + s * (Cfg::kStatBytes / 4);
    const float* D_s = sD_f + s * (Cfg::kStatBytes / 4);
    // Some key of this warpgroup above a query. The swapped configuration serves
    // unmasked problems only (sim::kHopperBwdConfigs; the host checks it) and
    // compiles no mask: its registers would spill.
    const bool need_mask = !Cfg::kSwapDq && p.causal && kv0 + 64 * c + 63 > q0;
#pragma unroll
    for (int nn = 0; nn < B_r / 8; ++nn) {
      const float2 L = *reinterpret_cast<const float2*>(L_s + 8 * nn + 2 * t);
#pragma unroll
      for (int e = 0; e < 4; ++e) {
        const float Le = (e & 1) ? L.y : L.x;
        float pe = exp2_approx(fmaf(s_acc[4 * nn + e], p.scale_log2, -Le));
        if (need_mask) {
          const int key = e < 2 ? key_a : key_b;
          const int q = q0 + 8 * nn + 2 * t + (e & 1);
          if (key > q) pe = 0.f;
        }
        s_acc[4 * nn + e] = pe;
      }
    }
    // ---- dS_ijᵀ = P_ijᵀ ∘ (dP_ijᵀ − D_i) ----
    wgmma_wait<0>();
    fence_regs(dp_acc);
#pragma unroll
    for (int nn = 0; nn < B_r / 8; ++nn) {
      const float2 Dv = *reinterpret_cast<const float2*>(D_s + 8 * nn + 2 * t);
#pragma unroll
      for (int e = 0; e < 4; ++e) dp_acc[4 * nn + e] = s_acc[4 * nn + e] * (dp_acc[4 * nn + e] - ((e & 1) ? Dv.y : Dv.x));
    }
    // As wgmma's A operand: (64 keys, 16 queries) per k-step; the accumulator's
    // columns [16kk, 16kk + 16) are k-step kk's fragment (as P_ij in the forward).
    uint32_t p_frag[B_r / 16][4];
    uint32_t ds_frag[B_r / 16][4];
#pragma unroll
    for (int kk = 0; kk < B_r / 16; ++kk)
#pragma unroll
      for (int w = 0; w < 4; ++w) {
        p_frag[kk][w] = pack2<T>(s_acc[8 * kk + 2 * w], s_acc[8 * kk + 2 * w + 1]);
        ds_frag[kk][w] = pack2<T>(dp_acc[8 * kk + 2 * w], dp_acc[8 * kk + 2 * w + 1]);
      }
    if constexpr (Cfg::kSwapDq) {
      // dS_ij to shared memory transposed, [query][key]: this warpgroup's 64 keys
      // are panel c, (query, key) at row query, 16-byte chunk (key%64)/8 XOR
      // query%8 (TMA's 128-byte swizzle). Fragment w of k-step kk is the 8 × 8
      // block of keys 16·warp + 8(w%2) + [0, 8) and queries 16kk + 8(w/2) + [0, 8);
      // lane 8w + r gives the address of its query row r: its 8 keys are one chunk.
      const int m = lane >> 3, r = lane & 7;
      const uint32_t chunk = static_cast<uint32_t>((2 * warp + (m & 1)) ^ r) << 4;
      const uint32_t row0 = sdS_b + c * Cfg::kDsPanelBytes + (8 * (m >> 1) + r) * 128 + chunk;
#pragma unroll
      for (int kk = 0; kk < B_r / 16; ++kk) hopper_ptx::stmatrix_x4_trans(row0 + kk * 16 * 128, ds_frag[kk]);
    } else {
      // dS_ijᵀ to shared memory, this warpgroup's 64 keys: (key, query) at panel
      // query/64, row key, 16-byte chunk (query%64)/8 XOR key%8 (TMA's 128-byte swizzle).
#pragma unroll
      for (int kk = 0; kk < B_r / 16; ++kk)
#pragma unroll
        for (int w = 0; w < 4; ++w) {
          const int row = key_local + 8 * (w & 1);
          const int col = 16 * kk + 8 * (w >> 1) + 2 * t;
          const uint32_t at = (col / 64) * B_c * 128 + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16) + (col % 8) * 2;
          *reinterpret_cast<uint32_t*>(smem + (sdS_b - base) + at) = ds_frag[kk][w];
        }
    }
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");  // the stores, visible to wgmma

    // ---- dV_j += P_ijᵀ dO_i, then dQ_i = dS_ij K_j, then dK_j += dS_ijᵀ Q_i ----
    // Issued back to back so the tensor cores hold work while this warpgroup
    // waits at the dS barrier and while it adds dQ_i: dV_j does not need the
    // other warpgroup's half of dS_ijᵀ, and dK_j runs under the additions.
    fence_regs(dv_acc);
    fence_regs(dk_acc);
    wgmma_fence();
#pragma unroll
    for (int kk = 0; kk < B_r / 16; ++kk)  // queries [16kk, 16kk + 16): 16 rows of 128 bytes; the next 64 of d one panel on
      Mma_KV::rs(dv_acc, p_frag[kk], make_desc(sdO_s + kk * 16 * 128, B_r * 128, 1024), 1);
    wgmma_commit();
    named_bar_sync(kDsReady, 128 * kConsumers);  // both halves of dS_ijᵀ are written
    float dq_acc[Cfg::kDqRegs];
    if constexpr (Cfg::kSwapDq) {
      // keys [16kk, 16kk + 16): A = K_j's d panel c (64 of d × 16 keys, d contiguous:
      // the descriptor K_j has as dQ's B operand below), B = dS_ij's 16 keys of
      // every query (K-major, as Q_i is for S_ijᵀ): this warpgroup's (64 of d, B_r) of dQ_iᵀ.
#pragma unroll
      for (int kk = 0; kk < B_c / 16; ++kk)
        Mma_S::template ss<1>(dq_acc, make_desc(sK + c * B_c * 128 + kk * 16 * 128, B_c * 128, 1024),
                              make_desc(sdS_b + (kk / 4) * Cfg::kDsPanelBytes + (kk % 4) * 32, 16, 1024),
                              kk > 0 ? 1 : 0);
    } else {
#pragma unroll
      for (int kk = 0; kk < B_c / 16; ++kk)  // keys [16kk, 16kk + 16): this warpgroup's (64, 64) block of dQ_i
        Mma_Q::ss(dq_acc, make_desc(sdS_b + qc * B_c * 128 + kk * 16 * 128, B_c * 128, 1024),
                  make_desc(sK + dc * B_c * 128 + kk * 16 * 128, B_c * 128, 1024), kk > 0 ? 1 : 0);
    }
    wgmma_commit();
#pragma unroll
    for (int kk = 0; kk < B_r / 16; ++kk)
      Mma_KV::rs(dk_acc, ds_frag[kk], make_desc(sQ_s + kk * 16 * 128, B_r * 128, 1024), 1);
    wgmma_commit();
    wgmma_wait<1>();  // dV_j and dQ_i are done; dK_j runs under the additions
    fence_regs(dq_acc);
    if constexpr (Cfg::kDqWriter) {
      // Buffer it mod kDqBuffers, once the writer has read what step it − kDqBuffers stored there.
      const int b = it % Cfg::kDqBuffers;
      if (it >= Cfg::kDqBuffers) named_bar_sync(dq_empty(c, b), kDqSyncThreads);
      unsigned char* blk = smem + (sdQ - base) + (c * Cfg::kDqBuffers + b) * Cfg::kDqBlockBytes;
      if constexpr (Cfg::kSwapDq) {
        // dQ_iᵀ's (d row 16·warp + g + 8(e/2), query column 8n + 2t + e%2) is dQ_i's
        // (query, d): box d/32 = warp/2, row query, 16-byte chunk (d%32)/4 XOR
        // query%8, word d%4 (TMA's 128-byte swizzle). One 32-bit store a value; a
        // warp's 32 reach chunks (4(warp%2) + 2(e/2) + g/4) XOR (2t + e%2), words
        // g%4: every bank once.
        unsigned char* box = blk + (warp >> 1) * Cfg::kDqBoxBytes + (g & 3) * 4;
#pragma unroll
        for (int n = 0; n < B_r / 8; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int q = 8 * n + 2 * t + (e & 1);
            const int chunk = (4 * (warp & 1) + 2 * (e >> 1) + (g >> 2)) ^ (2 * t + (e & 1));
            *reinterpret_cast<float*>(box + q * 128 + chunk * 16) = dq_acc[4 * n + e] * dq_factor;
          }
      } else {
        // Row 16·warp + g (+8), columns 8n + 2t, 8n + 2t + 1 go to 16-byte chunk
        // 2(n mod 4) + t/2 of box n/4, the chunk XOR the row mod 8 (= g): TMA's
        // 128-byte swizzle. Lanes with t/2 = 1 store n XOR 2 when the others store
        // n, so that a half-warp's 16 64-bit stores reach chunks 2n XOR (5·(t/2)
        // XOR g) — all 8 once, two lanes each (t mod 2) in distinct halves: the 32
        // banks once, no conflict.
        const int dq_h = t >> 1;
        const uint32_t dq_lane = static_cast<uint32_t>((16 * warp + g) * 128 + (t & 1) * 8);
        const uint32_t dq_xor = static_cast<uint32_t>((5 * dq_h) ^ g) << 4;
#pragma unroll
        for (int r = 0; r < 2; ++r)
#pragma unroll
          for (int nn = 0; nn < 8; ++nn) {
            const int e = 4 * nn + 2 * r, e2 = 4 * (nn ^ 2) + 2 * r;
            const float2 v = make_float2((dq_h ? dq_acc[e2] : dq_acc[e]) * dq_factor,
                                         (dq_h ? dq_acc[e2 + 1] : dq_acc[e + 1]) * dq_factor);
            const uint32_t at = (nn / 4) * Cfg::kDqBoxBytes + r * 1024 + dq_lane + ((2u * (nn % 4) << 4) ^ dq_xor);
            *reinterpret_cast<float2*>(blk + at) = v;
          }
      }
      fence_proxy_async_smem();  // the stores, visible to the writer's reductions
      named_bar_arrive(dq_full(c, b), kDqSyncThreads);
    } else if constexpr (Cfg::kSwapDq) {
      // dQ_iᵀ's (d, query) pairs hold no two neighbours of a dQaccum row: one reduction a value.
      float* __restrict__ dQacc = p.dq_accum + head * p.n_q * static_cast<int64_t>(d) + 64 * c + 16 * warp + g;
#pragma unroll
      for (int n = 0; n < B_r / 8; ++n)
#pragma unroll
        for (int e = 0; e < 4; ++e) {
          const int q = q0 + 8 * n + 2 * t + (e & 1);
          if (q < p.n_q) red_add_f32(dQacc + static_cast<int64_t>(q) * d + 8 * (e >> 1), dq_acc[4 * n + e] * dq_factor);
        }
    } else {
      float* __restrict__ dQacc = p.dq_accum + head * p.n_q * static_cast<int64_t>(d);  // (N_q, d) fp32
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int q = q0 + 64 * qc + 16 * warp + g + 8 * r;
        if (q >= p.n_q) continue;
        float* row = dQacc + static_cast<int64_t>(q) * d + 64 * dc + 2 * t;
#pragma unroll
        for (int nn = 0; nn < 8; ++nn)
          red_add_f32x2(row + 8 * nn, dq_acc[4 * nn + 2 * r] * dq_factor, dq_acc[4 * nn + 2 * r + 1] * dq_factor);
      }
    }
    if constexpr (!Cfg::kOverlapDk) {
      wgmma_wait<0>();
      fence_regs(dv_acc);
      fence_regs(dk_acc);
      release(s);
    }
  }
  wgmma_wait<0>();
  fence_regs(dv_acc);
  fence_regs(dk_acc);

  // ---- epilogue: dK_j = τ·dK_j and dV_j, this warpgroup's 64 keys ----
  // Added in fp32, they are fenced for the writer warp to count the block done.
  auto block_done = [&] {
    if constexpr (Cfg::kDqWriter) {
      if (p.head_done != nullptr) {
        __threadfence();
        named_bar_arrive(kBlockDone, 128 * kConsumers + 32);
      }
    }
  };
  if (p.dk_accum != nullptr) {
    // fp32 accumulators (the ring's, or grouped heads' own): every query head of
    // a group adds into its K/V head.
    float* __restrict__ dKacc = p.dk_accum + static_cast<int64_t>(kv_head) * p.n_kv * d;  // (N_kv, d) fp32
    float* __restrict__ dVacc = p.dv_accum + static_cast<int64_t>(kv_head) * p.n_kv * d;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int key = r == 0 ? key_a : key_b;
      if (key >= p.n_kv) continue;
#pragma unroll
      for (int nn = 0; nn < d / 8; ++nn) {
        const int64_t at = static_cast<int64_t>(key) * d + 8 * nn + 2 * t;
        red_add_f32x2(dKacc + at, dk_acc[4 * nn + 2 * r] * p.scale, dk_acc[4 * nn + 2 * r + 1] * p.scale);
        red_add_f32x2(dVacc + at, dv_acc[4 * nn + 2 * r], dv_acc[4 * nn + 2 * r + 1]);
      }
    }
    block_done();
    return;
  }
  T* __restrict__ dK = static_cast<T*>(p.dk) + head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  T* __restrict__ dV = static_cast<T*>(p.dv) + head * p.n_kv * static_cast<int64_t>(d);
#pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int key = r == 0 ? key_a : key_b;
    if (key >= p.n_kv) continue;
#pragma unroll
    for (int nn = 0; nn < d / 8; ++nn) {
      const int64_t at = static_cast<int64_t>(key) * d + 8 * nn + 2 * t;
      *reinterpret_cast<uint32_t*>(dK + at) = pack2<T>(dk_acc[4 * nn + 2 * r] * p.scale, dk_acc[4 * nn + 2 * r + 1] * p.scale);
      *reinterpret_cast<uint32_t*>(dV + at) = pack2<T>(dv_acc[4 * nn + 2 * r], dv_acc[4 * nn + 2 * r + 1]);
    }
  }
#else
  __trap();  // built without the sm_90a target: the host refuses to launch this
#endif
#endif
}

}  // namespace
}  // namespace flashlab::kernels::fa3_hopper_bwd_detail
