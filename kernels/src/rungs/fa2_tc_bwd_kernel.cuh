// fa2_tc_bwd: FlashAttention-2 backward on tensor cores — the kernel template.
//
// What changed from the rung before (fa2_bwd, CUDA cores): the five products of
// a step run on tensor cores (mma.sync.m16n8k16, fp16/bf16 inputs, fp32
// accumulation) fed by ldmatrix from padded shared memory; Q_i, dO_i (and L_i,
// D_i) are double-buffered with cp.async so the copy of block i+1 overlaps the
// work on block i; P_ij and dS_ij go from accumulators to the A operand of the
// next product without leaving registers. Only dS_ij passes through shared
// memory, because dQ_i = dS_ij K_j needs it with its rows (queries) split over
// the warps the other way round.
// Expected bottleneck: mma.sync issue and ldmatrix shared-memory bandwidth (five
// products per step, two of them with the B operand re-read per 16 keys), then
// the fp32 atomics of dQ into L2. See docs/kernels.md ("fa2_tc_bwd").
//
// This header holds the configurable kernel; kernels/src/rungs/fa2_tc_bwd.cu instantiates
// the compiled configurations (one per head dim), launches the pre-pass (D_i,
// L_i, dQaccum = 0) and the convert kernel (dQ = τ·dQaccum) around it, and
// implements the contract of flashlab/kernels/rungs/fa2_tc_bwd.hpp. The CPU emulator
// (tests/kernels/fa2_tc_bwd_emulate.cpp) compiles this same body with
// FA2_TC_EMULATE, as it does the forward's.
#pragma once

#include "ptx_mma.cuh"  // the PTX wrappers (ldmatrix, cp.async, mma, exp2) and load_tile

#ifndef FA2_TC_EMULATE
#include <limits>

#include "fa_bwd_common.cuh"  // pre-pass, convert, argument checks
#include "launch_checks.hpp"
#endif

namespace flashlab::kernels::fa2_tc_bwd_detail {

using fa2_tc_detail::a_frags;
using fa2_tc_detail::a_from_acc;
using fa2_tc_detail::cp_async_16;
using fa2_tc_detail::cp_async_commit;
using fa2_tc_detail::cp_async_wait;
using fa2_tc_detail::Dtype;
using fa2_tc_detail::exp2_approx;
using fa2_tc_detail::ldsm_x4;
using fa2_tc_detail::ldsm_x4_trans;
using fa2_tc_detail::mma_a_y;
using fa2_tc_detail::mma_a_yt;
using fa2_tc_detail::mma_n_pair;
using fa2_tc_detail::smem_addr;
using fa2_tc_detail::zero_acc;

// ---------------------------------------------------------------------------
// Compile-time configuration.
// ---------------------------------------------------------------------------
// kHeadDim  d
// kBc       B_c: rows of K_j, V_j per thread block (the outer loop, one block each)
// kBr       B_r: rows of Q_i, dO_i per inner step
// kNWarps   warps per block; warp w owns keys [w·B_c/kNWarps, (w+1)·B_c/kNWarps) of
//           K_j, V_j and their rows of dK_j, dV_j (16·kMTiles keys)
// kKVInRegs K_j, V_j A fragments stay in registers for the whole Q_i loop
//           (else every step reloads them with ldmatrix)
// kMinBlocks resident blocks per SM asked of the register allocator
// kDeferDq  dQ_i += dS_ij K_j of step i is computed at the top of step i+1,
//           from a second dS buffer: one barrier per step instead of two, and
//           the dQ product overlaps the copies and the other warps' products
template <int D, int BC, int BR, int NW, bool KVREGS, int MINB, bool DEFER = false>
struct Config : fa2_tc_detail::MmaConfig<D, BR, BC, NW, MINB> {
  using fa2_tc_detail::MmaConfig<D, BR, BC, NW, MINB>::kThreads;
  using fa2_tc_detail::MmaConfig<D, BR, BC, NW, MINB>::kStride;  // rows padded by 8 elements (MmaConfig)
  static constexpr bool kKVInRegs = KVREGS;
  static constexpr bool kDeferDq = DEFER;
  static constexpr int kWarpKeys = BC / NW;
  static constexpr int kMTiles = kWarpKeys / 16;
  // dS_ijᵀ (B_c, B_r) in shared memory, padded the same way.
  static constexpr int kDsStride = BR + 8;
  // The dQ_i = dS_ij K_j product: (B_r/16) row tiles of 16 queries and d/8
  // column tiles, split over the warps: kDqSplitN warps share a row tile (each
  // d/kDqSplitN columns) or a warp takes kDqWarpM row tiles.
  static constexpr int kDqMTiles = BR / 16;
  static constexpr int kDqWarpM = kDqMTiles >= NW ? kDqMTiles / NW : 1;
  static constexpr int kDqSplitN = NW >= kDqMTiles ? NW / kDqMTiles : 1;
  static constexpr int kDqN = D / 8 / kDqSplitN;  // column tiles per warp
  // K_j, V_j | 2 stages of Q_i, dO_i | dS_ijᵀ (two with kDeferDq; 2-byte elements) | 2 stages of L_i, D_i (fp32).
  static constexpr std::size_t kSmemKV = static_cast<std::size_t>(2 * BC) * kStride * 2;
  static constexpr std::size_t kSmemQdO = static_cast<std::size_t>(2 * 2 * BR) * kStride * 2;
  static constexpr int kDsBuffers = DEFER ? 2 : 1;
  static constexpr std::size_t kSmemDs = static_cast<std::size_t>(kDsBuffers * BC) * kDsStride * 2;
  static constexpr std::size_t kSmemStats = static_cast<std::size_t>(2 * 2 * BR) * 4;
  static constexpr std::size_t kSmemBytes = kSmemKV + kSmemQdO + kSmemDs + kSmemStats;

  static_assert(BR % 16 == 0 && ((BR / 8 + 1) % 2) == 1, "B_r: whole k-steps of dV/dK, conflict-free dS rows");
  static_assert(128 % BR == 0, "L_i, D_i hold at least N_q rounded up to 128 rows per head (layout::fa_bwd_stat_rows)");
  static_assert(BC % NW == 0 && kWarpKeys % 16 == 0, "each warp owns whole 16-key mma tiles");
  static_assert(BC % 16 == 0, "dQ = dS K: whole k-steps of 16 keys");
  static_assert(kDqMTiles % NW == 0 || NW % kDqMTiles == 0, "dQ row tiles split evenly over the warps");
  static_assert((D / 8) % kDqSplitN == 0 && kDqN % 2 == 0, "dQ columns split into pairs of 8-column tiles");
  static_assert((BR * D / 8) % kThreads == 0 && (BC * D / 8) % kThreads == 0,
                "tile copies: 16-byte chunks split evenly over threads");
  static_assert(BR / 2 <= kThreads, "L_i and D_i: one 16-byte chunk per thread");
  static_assert((kWarpKeys * D / 8) % 32 == 0, "dK/dV store: 16-byte chunks split evenly over lanes");
};

// Kernel arguments: one block per (column block j, head); heads = B·H.
struct Params {
  const void* q;        // Q [B·H, N_q, d]
  const void* k;        // K [B·H, N_kv, d]
  const void* v;        // V [B·H, N_kv, d]
  const void* d_o;      // dO [B·H, N_q, d]
  const float* l_log2;  // L_i·log2(e) [B·H, stat_rows]; +inf past N_q
  const float* d_row;   // D_i = rowsum(dO_i ∘ O_i) [B·H, stat_rows]; 0 past N_q
  float* dq_accum;      // Σ_j dS_ij K_j [B·H, N_q, d], fp32, zeroed by the pre-pass (or the caller's)
  void* dk;             // dK [B·H, N_kv, d]
  void* dv;             // dV [B·H, N_kv, d]
  int n_q, n_kv;
  int stat_rows;        // N_q padded (layout::fa_bwd_stat_rows: at least N_q rounded up to 128)
  int T_c;              // ⌈N_kv / B_c⌉
  float scale;          // τ
  float scale_log2;     // τ·log2(e)
  int causal;           // key c is visible to query r iff c ≤ r
  int kv_group;         // H / H_kv: query head h reads K/V head h / kv_group (flat indices); 0 or 1: H_kv = H
  int dq_scaled;        // the caller's dQ accumulator: add τ·dS_ij K_j (the convert kernel is the caller's)
  float* dk_accum;      // null, or [B·H_kv, N_kv, d] fp32: τ·dK_j added there instead of writing dk
  float* dv_accum;      // null, or [B·H_kv, N_kv, d] fp32: dV_j added there instead of writing dv
};

#ifndef FA2_TC_EMULATE
// dQaccum[row, col..col+1] += (x, y): one vector reduction in L2 (sm_90).
__device__ __forceinline__ void red_add_f32x2(float* addr, float x, float y) {
  asm volatile("red.relaxed.gpu.global.add.v2.f32 [%0], {%1, %2};\n" ::"l"(addr), "f"(x), "f"(y) : "memory");
}
// L_i / D_i: 16 bytes of a padded statistics row.
__device__ __forceinline__ void cp_async_stats_16(uint32_t dst, const float* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(dst), "l"(src) : "memory");
}
#endif

namespace {

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) fa2_tc_backward_kernel(const Params p) {
  constexpr int d = Cfg::kHeadDim;
  constexpr int B_c = Cfg::kBc;
  constexpr int B_r = Cfg::kBr;
  constexpr int kMT = Cfg::kMTiles;        // 16-key mma tiles per warp
  constexpr int kStride = Cfg::kStride;
  constexpr int kDsStride = Cfg::kDsStride;
  constexpr int kSN = B_r / 8;             // n-tiles of S_ijᵀ (queries)
  constexpr int kDN = d / 8;               // n-tiles of dK_j, dV_j
  constexpr int kDK = d / 16;              // k-steps over d (Sᵀ = K Qᵀ, dPᵀ = V dOᵀ)
  constexpr int kRK = B_r / 16;            // k-steps over queries (dV += Pᵀ dO, dK += dSᵀ Q)
  constexpr int kCK = B_c / 16;            // k-steps over keys (dQ = dS K)
  using Ops = Dtype<T>;

#ifdef FA2_TC_EMULATE
  unsigned char* smem_raw = emu_smem_base();
#else
  extern __shared__ __align__(128) unsigned char smem_raw[];
#endif
  T* sK = reinterpret_cast<T*>(smem_raw);          // (B_c, d) K_j, later dK_j staging
  T* sV = sK + B_c * kStride;                      // (B_c, d) V_j, later dV_j staging
  T* sQ = sV + B_c * kStride;                      // (2, B_r, d) Q_i, double-buffered
  T* sdO = sQ + 2 * B_r * kStride;                 // (2, B_r, d) dO_i
  T* sdS0 = sdO + 2 * B_r * kStride;               // (kDsBuffers, B_c, B_r) dS_ijᵀ: keys are rows
  float* sL = reinterpret_cast<float*>(sdS0 + Cfg::kDsBuffers * B_c * kDsStride);  // (2, B_r) L_i·log2 e
  float* sD = sL + 2 * B_r;                                     // (2, B_r) D_i

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;  // accumulator rows g, g+8
  const int t = lane & 3;   // accumulator columns 2t, 2t+1

  // Head-major, and inside a head j ascending: under a causal mask block j = 0
  // visits every Q_i (the heaviest) and goes first.
  const int64_t head = static_cast<int64_t>(blockIdx.x) / p.T_c;
  const int j = static_cast<int>(static_cast<int64_t>(blockIdx.x) % p.T_c);
  const int kv0 = j * B_c;

  const T* __restrict__ Q = static_cast<const T*>(p.q) + head * p.n_q * static_cast<int64_t>(d);     // (N_q, d)
  const int64_t kv_head = p.kv_group > 1 ? head / p.kv_group : head;  // grouped-query attention: the group's K/V head
  const T* __restrict__ K = static_cast<const T*>(p.k) + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  const T* __restrict__ V = static_cast<const T*>(p.v) + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  const T* __restrict__ dO = static_cast<const T*>(p.d_o) + head * p.n_q * static_cast<int64_t>(d);  // (N_q, d)
  const float* __restrict__ L2 = p.l_log2 + head * p.stat_rows;   // (stat_rows) L_i·log2 e
  const float* __restrict__ Drow = p.d_row + head * p.stat_rows;  // (stat_rows) D_i
  float* __restrict__ dQacc = p.dq_accum + head * p.n_q * static_cast<int64_t>(d);                    // (N_q, d) fp32

  // Q_i blocks this K_j visits: from the first the causal mask leaves
  // (TileGrid::first_row: rows i·B_r.. reach key j·B_c) to the last, ascending.
  const int T_r = (p.n_q + B_r - 1) / B_r;
  const int i_first = p.causal ? kv0 / B_r : 0;

  // This warp's keys of K_j: [w_key0, w_key0 + 16·kMT).
  const int w_key0_local = warp * Cfg::kWarpKeys;
  const int w_key0 = kv0 + w_key0_local;
  const bool last_kv_block = kv0 + B_c > p.n_kv;  // keys past N_kv are zeros; their P is masked

  // Per-lane ldmatrix offsets (elements), as in the forward (docs/fa2_tc.md):
  // A from a row-major tile: lanes 0-15 rows 0-15 at column 0, lanes 16-31 at column 8.
  const int a_lane = (lane & 15) * kStride + (lane >> 4) * 8;
  // B of X·Yᵀ with Y row-major (n rows, k contiguous): non-transposed matrices
  // (n 0-7, k 0-7), (n 0-7, k 8-15), (n 8-15, k 0-7), (n 8-15, k 8-15).
  const int bt_lane = ((lane & 7) + ((lane >> 4) << 3)) * kStride + ((lane >> 3) & 1) * 8;
  // B of X·Y with Y row-major (k rows, n contiguous): transposed matrices
  // (k 0-7, n 0-7), (k 8-15, n 0-7), (k 0-7, n 8-15), (k 8-15, n 8-15).
  const int bn_lane = ((lane & 7) + ((lane >> 3) & 1) * 8) * kStride + (lane >> 4) * 8;
  // A of dQ = dS K from dSᵀ (keys are rows): transposed matrices (keys 0-7, queries 0-7),
  // (keys 0-7, queries 8-15), (keys 8-15, queries 0-7), (keys 8-15, queries 8-15).
  const int ds_lane = ((lane & 7) + ((lane >> 4) << 3)) * kDsStride + ((lane >> 3) & 1) * 8;
  const int bn_lane_k = bn_lane;  // K_j as the B operand of dQ = dS K: row-major (keys, d)

  // Q_i, dO_i, L_i, D_i of block i into stage st: one cp.async group with the caller's.
  auto load_row_block = [&](int i, int st) {
    fa2_tc_detail::load_tile<Cfg, B_r>(sQ + st * B_r * kStride, Q, i * B_r, p.n_q, tid);
    fa2_tc_detail::load_tile<Cfg, B_r>(sdO + st * B_r * kStride, dO, i * B_r, p.n_q, tid);
    // The statistics rows are padded to a multiple of 128 (L = +inf, D = 0 past
    // N_q): whole 16-byte chunks, never out of bounds.
    constexpr int kChunks = B_r / 4;
    if (tid < kChunks)
      cp_async_stats_16(smem_addr(sL + st * B_r + tid * 4), L2 + i * B_r + tid * 4);
    else if (tid < 2 * kChunks)
      cp_async_stats_16(smem_addr(sD + st * B_r + (tid - kChunks) * 4), Drow + i * B_r + (tid - kChunks) * 4);
  };

  // Prologue: K_j, V_j and the first row block in one group.
  fa2_tc_detail::load_tile<Cfg, B_c>(sK, K, kv0, p.n_kv, tid);
  fa2_tc_detail::load_tile<Cfg, B_c>(sV, V, kv0, p.n_kv, tid);
  load_row_block(i_first, 0);
  cp_async_commit();

  float dk_acc[kMT][kDN][4];  // (16·kMT, d) of dK_j per warp, fp32 (τ applied at the end)
  float dv_acc[kMT][kDN][4];  // (16·kMT, d) of dV_j per warp, fp32
  zero_acc(dk_acc, dv_acc);
  // K_j, V_j rows of this warp as A fragments; used only when kKVInRegs.
  uint32_t k_frag[Cfg::kKVInRegs ? kMT : 1][Cfg::kKVInRegs ? kDK : 1][4];
  uint32_t v_frag[Cfg::kKVInRegs ? kMT : 1][Cfg::kKVInRegs ? kDK : 1][4];

  const uint32_t sK_a = smem_addr(sK + w_key0_local * kStride) + a_lane * 2;
  const uint32_t sV_a = smem_addr(sV + w_key0_local * kStride) + a_lane * 2;

  // ---- dQ_i += dS_ij K_j : (B_r, d), its 16-row tiles and column ranges split over the warps ----
  const int n_q = p.n_q;  // a copy: the lambda below must not take the address of the kernel parameter
  const float dq_scale = p.dq_scaled ? p.scale : 1.f;
  const int m_base = (warp / Cfg::kDqSplitN) * Cfg::kDqWarpM;  // first 16-query tile of this warp
  const int n_base = (warp % Cfg::kDqSplitN) * Cfg::kDqN;     // first 8-column tile of this warp
  auto dq_product = [&](int q0, const T* sdS) {
    float dq[Cfg::kDqWarpM][Cfg::kDqN][4];
    zero_acc(dq);
    const uint32_t sdS_a = smem_addr(sdS) + ds_lane * 2;
    const uint32_t sK_b = smem_addr(sK) + bn_lane_k * 2;
#pragma unroll
    for (int kk = 0; kk < kCK; ++kk) {
      uint32_t a[Cfg::kDqWarpM][4];  // (16 queries, 16 keys) of dS_ij
#pragma unroll
      for (int mt = 0; mt < Cfg::kDqWarpM; ++mt)
        ldsm_x4_trans(a[mt], sdS_a + (kk * 16 * kDsStride + (m_base + mt) * 16) * 2);
#pragma unroll
      for (int np = 0; np < Cfg::kDqN / 2; ++np) {
        uint32_t b[4];  // (16 keys, 16 of d) of K_j: two d-tiles
        ldsm_x4_trans(b, sK_b + (kk * 16 * kStride + (n_base + 2 * np) * 8) * 2);
        mma_n_pair<Ops>(dq, a, b, np);
      }
    }
    // Into dQaccum in L2: every K_j block adds its part (red, no return value).
#pragma unroll
    for (int mt = 0; mt < Cfg::kDqWarpM; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int query = q0 + (m_base + mt) * 16 + g + r * 8;
        if (query < n_q) {
          float* row = dQacc + static_cast<int64_t>(query) * d + n_base * 8 + 2 * t;
#pragma unroll
          for (int n = 0; n < Cfg::kDqN; ++n)
            red_add_f32x2(row + n * 8, dq[mt][n][2 * r] * dq_scale, dq[mt][n][2 * r + 1] * dq_scale);
        }
      }
  };

  for (int i = i_first; i < T_r; ++i) {
    const int st = (i - i_first) & 1;
    // Block i (and K_j, V_j at the first step) has landed for this thread's
    // copies; the barrier makes everyone's visible and proves every warp is done
    // with step i-1: its stage (overwritten by the prefetch below) and dS (rewritten
    // below; with kDeferDq, complete for the dQ product of step i-1).
    cp_async_wait<0>();
    __syncthreads();
    if (i + 1 < T_r) {
      load_row_block(i + 1, st ^ 1);
      cp_async_commit();
    }
    if constexpr (Cfg::kKVInRegs) {
      if (i == i_first) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int kk = 0; kk < kDK; ++kk) {
            ldsm_x4(k_frag[mt][kk], sK_a + (mt * 16 * kStride + kk * 16) * 2);
            ldsm_x4(v_frag[mt][kk], sV_a + (mt * 16 * kStride + kk * 16) * 2);
          }
      }
    }
    const int q0 = i * B_r;
    // This step's dS_ijᵀ buffer; with kDeferDq the other one holds step i-1's,
    // whose dQ product runs now (the barrier above made it visible).
    T* sdS = sdS0 + (Cfg::kDeferDq ? st : 0) * B_c * kDsStride;
    if constexpr (Cfg::kDeferDq) {
      if (i > i_first) dq_product(q0 - B_r, sdS0 + (st ^ 1) * B_c * kDsStride);
    }
    const uint32_t sQ_i = smem_addr(sQ + st * B_r * kStride);    // (B_r, d) Q_i
    const uint32_t sdO_i = smem_addr(sdO + st * B_r * kStride);  // (B_r, d) dO_i
    const float* sL_i = sL + st * B_r;                           // (B_r) L_i·log2 e
    const float* sD_i = sD + st * B_r;                           // (B_r) D_i

    // Warp-uniform: under a causal mask a warp whose keys all come after the
    // last query of Q_i has P_ij = 0: it only writes its zeros of dS_ij.
    const bool warp_idle = p.causal && w_key0 > q0 + B_r - 1;
    if (warp_idle) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int n = 0; n < kSN; ++n) {
          const int key = w_key0_local + mt * 16 + g;
          *reinterpret_cast<uint32_t*>(sdS + key * kDsStride + n * 8 + 2 * t) = 0u;
          *reinterpret_cast<uint32_t*>(sdS + (key + 8) * kDsStride + n * 8 + 2 * t) = 0u;
        }
    } else {
      // ---- S_ijᵀ = K_j Q_iᵀ : (16·kMT keys, B_r queries) per warp, fp32 ----
      float s[kMT][kSN][4];
      float dp[kMT][kSN][4];  // dP_ijᵀ, then dS_ijᵀ
      zero_acc(s, dp);

#pragma unroll
      for (int kk = 0; kk < kDK; ++kk) {
        uint32_t a[kMT][4];  // (16 keys, 16 of d) of K_j
        a_frags<kStride, Cfg::kKVInRegs>(a, k_frag, sK_a, kk);
        mma_a_yt<Ops, kStride>(s, a, sQ_i, bt_lane, kk);  // Q_iᵀ: two n-tiles per ldmatrix
      }

      // ---- P_ij = exp(τ S_ij − L_i) = 2^(S_ij·τlog2e − L_i·log2e) ----
      // Masked: keys after the query (causal; only blocks crossing this warp's
      // diagonal) and keys past N_kv (the last block). Rows past N_q have
      // L = +inf and give 0 on their own.
      const bool need_mask = last_kv_block || (p.causal && w_key0 + 16 * kMT - 1 > q0);
#pragma unroll
      for (int n = 0; n < kSN; ++n) {
        const float2 l2 = *reinterpret_cast<const float2*>(sL_i + n * 8 + 2 * t);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            float x = fmaf(s[mt][n][e], p.scale_log2, -((e & 1) ? l2.y : l2.x));
            if (need_mask) {
              const int key = w_key0 + mt * 16 + g + (e >> 1) * 8;
              const int query = q0 + n * 8 + 2 * t + (e & 1);
              if (key >= p.n_kv || (p.causal && key > query)) x = -INFINITY;
            }
            s[mt][n][e] = exp2_approx(x);
          }
      }

      // ---- dP_ijᵀ = V_j dO_iᵀ ----
#pragma unroll
      for (int kk = 0; kk < kDK; ++kk) {
        uint32_t a[kMT][4];  // (16 keys, 16 of d) of V_j
        a_frags<kStride, Cfg::kKVInRegs>(a, v_frag, sV_a, kk);
        mma_a_yt<Ops, kStride>(dp, a, sdO_i, bt_lane, kk);  // dO_iᵀ: two n-tiles per ldmatrix
      }

      // ---- dV_j += P_ijᵀ dO_i : P_ijᵀ packed to fp16/bf16 in registers ----
#pragma unroll
      for (int kk = 0; kk < kRK; ++kk) {
        uint32_t a[kMT][4];  // (16 keys, 16 queries) of P_ijᵀ
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) a_from_acc<Ops>(a[mt], s[mt], kk);
        mma_a_y<Ops, kStride>(dv_acc, a, sdO_i, bn_lane, kk);  // dO_i: two d-tiles per ldmatrix
      }

      // ---- dS_ij = P_ij ∘ (dP_ij − D_i) ----
#pragma unroll
      for (int n = 0; n < kSN; ++n) {
        const float2 dd = *reinterpret_cast<const float2*>(sD_i + n * 8 + 2 * t);
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int e = 0; e < 4; ++e) dp[mt][n][e] = s[mt][n][e] * (dp[mt][n][e] - ((e & 1) ? dd.y : dd.x));
      }

      // ---- dK_j += dS_ijᵀ Q_i (τ at the end); dS_ijᵀ to shared memory for dQ ----
#pragma unroll
      for (int kk = 0; kk < kRK; ++kk) {
        uint32_t a[kMT][4];  // (16 keys, 16 queries) of dS_ijᵀ
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt) {
          a_from_acc<Ops>(a[mt], dp[mt], kk);
          // The same registers are dSᵀ rows g, g+8 at queries kk·16 + 2t (+8).
          T* row = sdS + (w_key0_local + mt * 16 + g) * kDsStride + kk * 16 + 2 * t;
          *reinterpret_cast<uint32_t*>(row) = a[mt][0];
          *reinterpret_cast<uint32_t*>(row + 8 * kDsStride) = a[mt][1];
          *reinterpret_cast<uint32_t*>(row + 8) = a[mt][2];
          *reinterpret_cast<uint32_t*>(row + 8 * kDsStride + 8) = a[mt][3];
        }
        mma_a_y<Ops, kStride>(dk_acc, a, sQ_i, bn_lane, kk);  // Q_i: two d-tiles per ldmatrix
      }
    }

    if constexpr (!Cfg::kDeferDq) {
      __syncthreads();  // dS_ij is complete in shared memory
      dq_product(q0, sdS);
    }
  }
  if constexpr (Cfg::kDeferDq) {
    __syncthreads();  // the last dS_ij is complete
    dq_product((T_r - 1) * B_r, sdS0 + ((T_r - 1 - i_first) & 1) * B_c * kDsStride);
  }

  // ---- epilogue: dK_j = τ·dK_j and dV_j to HBM through shared memory ----
  if (p.dk_accum != nullptr) {
    // The caller's fp32 accumulators (the ring): added from registers into the
    // group's K/V head, where every query head of the group adds too.
    float* __restrict__ dKacc = p.dk_accum + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d) fp32
    float* __restrict__ dVacc = p.dv_accum + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d) fp32
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int key = w_key0 + mt * 16 + g + r * 8;
        if (key >= p.n_kv) continue;
#pragma unroll
        for (int n = 0; n < kDN; ++n) {
          const int64_t at = static_cast<int64_t>(key) * d + n * 8 + 2 * t;
          red_add_f32x2(dKacc + at, dk_acc[mt][n][2 * r] * p.scale, dk_acc[mt][n][2 * r + 1] * p.scale);
          red_add_f32x2(dVacc + at, dv_acc[mt][n][2 * r], dv_acc[mt][n][2 * r + 1]);
        }
      }
    return;
  }
  // Every warp is done reading K_j, V_j (the dQ product of the last step).
  __syncthreads();
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const int key_local = w_key0_local + mt * 16 + g + r * 8;
#pragma unroll
      for (int n = 0; n < kDN; ++n) {
        *reinterpret_cast<uint32_t*>(sK + key_local * kStride + n * 8 + 2 * t) =
            Ops::pack(dk_acc[mt][n][2 * r] * p.scale, dk_acc[mt][n][2 * r + 1] * p.scale);
        *reinterpret_cast<uint32_t*>(sV + key_local * kStride + n * 8 + 2 * t) =
            Ops::pack(dv_acc[mt][n][2 * r], dv_acc[mt][n][2 * r + 1]);
      }
    }
  __syncwarp();  // each warp stores only its own rows
  T* __restrict__ dK = static_cast<T*>(p.dk) + head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  T* __restrict__ dV = static_cast<T*>(p.dv) + head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  constexpr int kChunksPerRow = d / 8;
  constexpr int kSteps = Cfg::kWarpKeys * kChunksPerRow / 32;
#pragma unroll
  for (int it = 0; it < kSteps; ++it) {
    const int c = lane + it * 32;
    const int kl = w_key0_local + c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 8;
    const int key = kv0 + kl;
    if (key < p.n_kv) {
      *reinterpret_cast<uint4*>(dK + static_cast<int64_t>(key) * d + col) =
          *reinterpret_cast<const uint4*>(sK + kl * kStride + col);
      *reinterpret_cast<uint4*>(dV + static_cast<int64_t>(key) * d + col) =
          *reinterpret_cast<const uint4*>(sV + kl * kStride + col);
    }
  }
}

#ifndef FA2_TC_EMULATE
// ---------------------------------------------------------------------------
// Host side, with internal linkage like the kernel: the library
// (kernels/src/rungs/fa2_tc_bwd.cu) and the device checker may instantiate the same
// configuration without clashing.
// ---------------------------------------------------------------------------
// The alignment check the forward makes too.
using kernels::detail::aligned16;

// The whole backward of one configuration on a.stream: the pre-pass, this
// kernel, the convert kernel. Checks the arguments first and throws Unsupported
// naming the limit hit (shared memory: cudaDevAttrMaxSharedMemoryPerBlockOptin),
// or CudaError with file:line.
template <class Cfg, typename T>
void launch(const LaunchArgs& a, const char* name) {
  const sim::AttentionProblem& pr = a.problem;
  const std::string who = detail::config_name<Cfg>(name);
  const detail::FaBwdWorkspace w = detail::check_fa_bwd_args(a, name);
  for (const void* ptr : {a.q, a.k, a.v, a.bwd.d_o, static_cast<const void*>(a.bwd.dk), static_cast<const void*>(a.bwd.dv),
                          static_cast<const void*>(a.bwd.dk_accum), static_cast<const void*>(a.bwd.dv_accum),
                          static_cast<const void*>(a.bwd.dq_accum)})
    if (!aligned16(ptr))
      throw Unsupported(who + " needs Q, K, V, dO, dK, dV and the accumulators 16-byte aligned (16-byte copies)");
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (pr.n_q() > kIntMax || pr.n_kv() > kIntMax || w.stat_rows > kIntMax)
    throw Unsupported(who + " indexes rows with 32-bit ints: seq_q and seq_kv must be below 2^31");
  const int64_t heads = pr.head_count();
  const int64_t T_c = (pr.n_kv() + Cfg::kBc - 1) / Cfg::kBc;
  if (T_c > kIntMax / heads)
    throw Unsupported(who + ": T_c·B·H = " + std::to_string(T_c) + "·" + std::to_string(heads) +
                      " blocks exceed the grid limit 2^31-1");
  auto* kernel = &fa2_tc_backward_kernel<Cfg, T>;
  detail::prepare_compiled_launch<Cfg>(a, kernel, who);

  const detail::FaBwdTargets tg = detail::begin_fa_bwd(a, w, who, name);
  Params p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.d_o = a.bwd.d_o;
  p.l_log2 = w.l_log2;
  p.d_row = w.d_row;
  p.dq_accum = tg.dq_accum;
  p.dq_scaled = tg.dq_scaled ? 1 : 0;
  p.dk = a.bwd.dk;
  p.dv = a.bwd.dv;
  p.kv_group = static_cast<int>(tg.kv_group);
  p.dk_accum = tg.dk_accum;
  p.dv_accum = tg.dv_accum;
  p.n_q = static_cast<int>(pr.n_q());
  p.n_kv = static_cast<int>(pr.n_kv());
  p.stat_rows = static_cast<int>(w.stat_rows);
  p.T_c = static_cast<int>(T_c);
  p.scale = a.softmax_scale;
  p.scale_log2 = static_cast<float>(static_cast<double>(a.softmax_scale) * 1.4426950408889634);
  p.causal = pr.causal ? 1 : 0;
  kernel<<<static_cast<unsigned>(T_c * heads), Cfg::kThreads, Cfg::kSmemBytes, static_cast<cudaStream_t>(a.stream)>>>(p);
  FLASHLAB_LAUNCH_CHECK("fa2_tc_backward_kernel");
  detail::end_fa_bwd(a, w, tg);
}
#endif  // FA2_TC_EMULATE

}  // namespace
}  // namespace flashlab::kernels::fa2_tc_bwd_detail
