// fa2_tc: FlashAttention-2 forward on tensor cores — the kernel template.
//
// What changed from the rung before (fa2, CUDA cores): S_ij = Q_i K_jᵀ and
// O_i += P_ij V_j run on tensor cores (mma.sync.m16n8k16, fp16/bf16 inputs,
// fp32 accumulation); fragments come from shared memory through ldmatrix
// (.trans for V); K_j, V_j are double-buffered with cp.async so the copy of
// block j+1 overlaps the mma work of block j; P_ij never leaves registers.
// Expected bottleneck: tensor-core issue (mma.sync), then shared-memory
// bandwidth of ldmatrix, then MUFU (exp2) for small d. See docs/fa2_tc.md.
//
// This header holds the configurable kernel and its launcher; kernels/src/rungs/fa2_tc.cu
// instantiates the compiled configurations (one per head dim) and implements
// the contract in flashlab/kernels/rungs/fa2_tc.hpp. The standalone checker
// (tests/kernels/fa2_tc_standalone.cu) instantiates alternative configurations
// from here to time them beside the compiled ones.
#pragma once

// FA2_TC_EMULATE: the CPU emulator (see docs/fa2_tc.md) compiles the kernel
// body below with plain C++ and supplies the CUDA builtins, the PTX wrappers
// and the 16-bit types itself; nothing else changes between the two builds.
#ifndef FA2_TC_EMULATE
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>

#include "flashlab/kernels/launch/launch.hpp"
#include "ptx_mma.cuh"  // cp.async, ldmatrix, mma.sync, exp2, Dtype, load_tile
#include "running_output.cuh"

#ifndef FA2_TC_EMULATE
// Every CUDA call checked; the message names file:line and the call.
#include "device/cuda_check.hpp"
#include "device/smem_opt_in.hpp"
#include "launch_checks.hpp"
#endif

namespace flashlab::kernels::fa2_tc_detail {

// ---------------------------------------------------------------------------
// Compile-time configuration: the tile shape and how warps split it.
// ---------------------------------------------------------------------------
// kHeadDim   d
// kBr        B_r: rows of Q_i per thread block
// kBc        B_c: rows of K_j, V_j per inner step
// kNWarps    warps per block; warp w owns rows [w·B_r/kNWarps, (w+1)·B_r/kNWarps)
// kQInRegs   Q_i fragments stay in registers for the whole K loop (else each
//            step reloads them from shared memory with ldmatrix)
// kMinBlocks resident blocks per SM asked of the register allocator
template <int D, int BR, int BC, int NW, bool QREGS, int MINB>
struct Config : MmaConfig<D, BR, BC, NW, MINB> {
  using MmaConfig<D, BR, BC, NW, MINB>::kThreads;
  using MmaConfig<D, BR, BC, NW, MINB>::kStride;  // rows padded by 8 elements (MmaConfig)
  static constexpr bool kQInRegs = QREGS;
  static constexpr int kWarpRows = BR / NW;     // 16·kMTiles rows of Q_i per warp
  static constexpr int kMTiles = kWarpRows / 16;
  static constexpr int kStages = 2;             // K_j/V_j double buffer
  // Q_i, then kStages × K_j, then kStages × V_j, all 2-byte elements.
  static constexpr std::size_t kSmemBytes =
      static_cast<std::size_t>(BR + 2 * kStages * BC) * kStride * 2;

  static_assert(BC % 16 == 0, "B_c must be a multiple of 16 (P_ij is the A operand, k = 16)");
  static_assert(BR % NW == 0 && kWarpRows % 16 == 0, "each warp owns whole 16-row mma tiles");
  static_assert((BR * D / 8) % kThreads == 0, "Q_i copy: 16-byte chunks split evenly over threads");
  static_assert((BC * D / 8) % kThreads == 0, "K_j/V_j copy: 16-byte chunks split evenly over threads");
  static_assert((kWarpRows * D / 8) % 32 == 0, "O_i store: 16-byte chunks split evenly over lanes");
};

// Kernel arguments: one block per (row block i, head); heads = B·H.
struct Params {
  const void* q;
  const void* k;
  const void* v;
  void* o;
  float* lse;        // [B·H, N_q] or null; the running logsumexp when folding
  int n_q;           // N_q
  int n_kv;          // N_kv
  int T_r;           // ⌈N_q / B_r⌉
  float scale_log2;  // τ·log2(e): softmax runs in base 2, one FFMA per element
  int causal;        // key c is visible to query r iff c ≤ r (top-left aligned)
  int kv_group;      // H / H_kv: query head h reads K/V head h / kv_group (flat indices); 0 or 1: H_kv = H
  int fold;          // kFoldNone, or how this launch folds into the running output
  float* o_run;      // [B·H, N_q, d] fp32, the running output (fold ≠ kFoldNone)
};

// ---------------------------------------------------------------------------
// The kernel. Grid: T_r · (B·H) blocks, 1-D; block = kNWarps warps.
//
// mma.m16n8k16 fragments (PTX ISA, "Matrix Fragments for mma.m16n8k16 with
// floating point type"), g = lane/4, t = lane%4:
//   A (16×16): a[0] = (g, 2t..2t+1)   a[1] = (g+8, 2t..)   a[2] = (g, 2t+8..)   a[3] = (g+8, 2t+8..)
//   B (16×8):  b0 = (k 2t..2t+1, n g)  b1 = (k 2t+8..2t+9, n g)
//   C (16×8):  c[0..1] = (g, 2t..2t+1)  c[2..3] = (g+8, 2t..2t+1)
// So an S accumulator pair (n-tiles 2k, 2k+1) is exactly the A fragment of
// P_ij for k-step k of the PV product: P stays in registers.
// ---------------------------------------------------------------------------
namespace {

// The epilogue's ℓ_i of a row from this lane's partial sum: the quad of lanes
// holding the row's columns adds theirs.
__device__ __forceinline__ float quad_row_sum(float l) {
  l += __shfl_xor_sync(0xffffffffu, l, 1);
  l += __shfl_xor_sync(0xffffffffu, l, 2);
  return l;
}
// 1/ℓ_i. ℓ ≥ 1 for every row (its max contributes 2^0); the guard only keeps a
// fully masked row (impossible with key 0 always visible) finite.
__device__ __forceinline__ float inverse_row_sum(float l) { return l > 0.f ? 1.f / l : 0.f; }
// L_i = m_i τ + ln ℓ_i (natural log), m_i the unscaled running max.
__device__ __forceinline__ float row_logsumexp(float m, float l, float scale_log2) {
  constexpr float kLn2 = 0.693147180559945309f;
  const float m_scaled = m == -INFINITY ? 0.f : m * scale_log2;
  return (m_scaled + __log2f(l)) * kLn2;
}

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::kThreads, Cfg::kMinBlocks) fa2_tc_forward_kernel(const Params p) {
  constexpr int d = Cfg::kHeadDim;
  constexpr int B_r = Cfg::kBr;
  constexpr int B_c = Cfg::kBc;
  constexpr int kMT = Cfg::kMTiles;       // 16-row mma tiles per warp
  constexpr int kStride = Cfg::kStride;   // padded shared row, elements
  constexpr int kSN = B_c / 8;            // n-tiles of S_ij per mma tile row
  constexpr int kON = d / 8;              // n-tiles of O_i
  constexpr int kQK_K = d / 16;           // k-steps of Q_i K_jᵀ
  constexpr int kPV_K = B_c / 16;         // k-steps of P_ij V_j
  using Ops = Dtype<T>;

#ifdef FA2_TC_EMULATE
  unsigned char* smem_raw = emu_smem_base();
#else
  extern __shared__ __align__(128) unsigned char smem_raw[];
#endif
  T* sQ = reinterpret_cast<T*>(smem_raw);       // (B_r, d) in shared memory, then O_i staging
  T* sK = sQ + B_r * kStride;                   // (kStages, B_c, d) in shared memory
  T* sV = sK + Cfg::kStages * B_c * kStride;    // (kStages, B_c, d) in shared memory

  const int tid = threadIdx.x;
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;  // groupID: accumulator rows g and g+8
  const int t = lane & 3;   // threadID_in_group: accumulator columns 2t, 2t+1

  // Head-major order so the blocks resident together share K, V in L2; within a
  // head the heaviest row block (most key blocks when causal) goes first, so
  // the light ones fill the tail of the grid.
  const int64_t head = static_cast<int64_t>(blockIdx.x) / p.T_r;
  const int i = p.T_r - 1 - static_cast<int>(static_cast<int64_t>(blockIdx.x) % p.T_r);
  const int q0 = i * B_r;

  const T* __restrict__ Q = static_cast<const T*>(p.q) + head * p.n_q * static_cast<int64_t>(d);     // (N_q, d)
  const int64_t kv_head = p.kv_group > 1 ? head / p.kv_group : head;  // grouped-query attention: the group's K/V head
  const T* __restrict__ K = static_cast<const T*>(p.k) + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  const T* __restrict__ V = static_cast<const T*>(p.v) + kv_head * p.n_kv * static_cast<int64_t>(d);  // (N_kv, d)
  T* __restrict__ O = static_cast<T*>(p.o) + head * p.n_q * static_cast<int64_t>(d);                 // (N_q, d)

  // Key blocks this row block visits: causal skips every block above the diagonal.
  const int q_last = min(q0 + B_r, p.n_q) - 1;
  const int kv_end = p.causal ? min(p.n_kv, q_last + 1) : p.n_kv;
  const int T_c = (kv_end + B_c - 1) / B_c;  // ≥ 1: key 0 is visible to every row

  // This warp's rows of Q_i: [w_row0, w_row0 + kWarpRows) ∩ [0, N_q).
  const int w_row0 = q0 + warp * Cfg::kWarpRows;
  const int w_row_last = min(w_row0 + Cfg::kWarpRows, p.n_q) - 1;
  const bool warp_has_rows = w_row0 < p.n_q;

  // Per-lane ldmatrix row/column offsets (elements), see the fragment table above.
  // A (Q_i): lanes 0-15 rows 0-15 at column 0, lanes 16-31 rows 0-15 at column 8.
  const uint32_t q_lane = smem_addr(sQ + (warp * Cfg::kWarpRows + (lane & 15)) * kStride + (lane >> 4) * 8);
  // B of S = Q Kᵀ (K_j rows are B's columns): matrices (n 0-7, k 0-7), (n 0-7, k 8-15),
  // (n 8-15, k 0-7), (n 8-15, k 8-15) → b0,b1 of n-tile 2p and b0,b1 of n-tile 2p+1.
  const int k_lane = ((lane & 7) + ((lane >> 4) << 3)) * kStride + ((lane >> 3) & 1) * 8;
  // B of O += P V (V_j rows are B's k): transposed matrices (k 0-7, n 0-7), (k 8-15, n 0-7),
  // (k 0-7, n 8-15), (k 8-15, n 8-15) → b0,b1 of d-tile 2p and b0,b1 of d-tile 2p+1.
  const int v_lane = ((lane & 7) + ((lane >> 3) & 1) * 8) * kStride + (lane >> 4) * 8;

  // Prologue: Q_i and K_0, V_0 in one cp.async group.
  load_tile<Cfg, B_r>(sQ, Q, q0, p.n_q, tid);
  load_tile<Cfg, B_c>(sK, K, 0, p.n_kv, tid);
  load_tile<Cfg, B_c>(sV, V, 0, p.n_kv, tid);
  cp_async_commit();

  float o_acc[kMT][kON][4];   // (16·kMT, d) of O_i per warp, fp32, unnormalised
  float m_i[kMT][2];          // running row max of S (unscaled) for rows g, g+8
  float l_i[kMT][2];          // running row sum of exp, this lane's columns only
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int n = 0; n < kON; ++n)
#pragma unroll
      for (int e = 0; e < 4; ++e) o_acc[mt][n][e] = 0.f;
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      m_i[mt][r] = -INFINITY;
      l_i[mt][r] = 0.f;
    }
  }
  // (16·kMT, d) of Q_i as A fragments; used only when kQInRegs.
  uint32_t q_frag[Cfg::kQInRegs ? kMT : 1][Cfg::kQInRegs ? kQK_K : 1][4];

  for (int j = 0; j < T_c; ++j) {
    // K_j, V_j (and Q_i when j = 0) have landed for this thread's copies; the
    // barrier makes every thread's copies visible and proves every warp is done
    // with block j-1, whose stage the prefetch below overwrites.
    cp_async_wait<0>();
    __syncthreads();
    if (j + 1 < T_c) {
      const int st = (j + 1) % Cfg::kStages;
      load_tile<Cfg, B_c>(sK + st * B_c * kStride, K, (j + 1) * B_c, p.n_kv, tid);
      load_tile<Cfg, B_c>(sV + st * B_c * kStride, V, (j + 1) * B_c, p.n_kv, tid);
      cp_async_commit();
    }
    if constexpr (Cfg::kQInRegs) {
      if (j == 0) {
#pragma unroll
        for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
          for (int kk = 0; kk < kQK_K; ++kk)
            ldsm_x4(q_frag[mt][kk], q_lane + (mt * 16 * kStride + kk * 16) * 2);
      }
    }

    const int kv0 = j * B_c;
    // Warp-uniform: a warp with no rows, or whose rows all precede key kv0
    // (causal), has nothing in this block; it still joins every barrier.
    if (!warp_has_rows || (p.causal && kv0 > w_row_last)) continue;

    const int st = j % Cfg::kStages;
    const uint32_t sK_j = smem_addr(sK + st * B_c * kStride);  // (B_c, d) K_j
    const uint32_t sV_j = smem_addr(sV + st * B_c * kStride);  // (B_c, d) V_j

    // ---- S_ij = Q_i K_jᵀ : (16·kMT, B_c) per warp, fp32 ----
    float s[kMT][kSN][4];
    zero_acc(s);

#pragma unroll
    for (int kk = 0; kk < kQK_K; ++kk) {
      uint32_t a[kMT][4];  // (16, 16) of Q_i per mma tile
      a_frags<kStride, Cfg::kQInRegs>(a, q_frag, q_lane, kk);
      mma_a_yt<Ops, kStride>(s, a, sK_j, k_lane, kk);  // K_j: two n-tiles per ldmatrix
    }

    // ---- mask: only blocks that cross N_kv or (causal) the diagonal of this warp ----
    const bool need_mask = (kv0 + B_c > p.n_kv) || (p.causal && kv0 + B_c - 1 > w_row0);
    if (need_mask) {
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
        for (int n = 0; n < kSN; ++n)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = w_row0 + mt * 16 + g + (e >> 1) * 8;
            const int col = kv0 + n * 8 + 2 * t + (e & 1);
            if (col >= p.n_kv || (p.causal && col > row)) s[mt][n][e] = -INFINITY;
          }
    }

    // ---- online softmax in base 2: m_i ← max(m_i, rowmax S_ij), P_ij = 2^(S·τlog2e − m·τlog2e) ----
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = m_i[mt][r];
#pragma unroll
        for (int n = 0; n < kSN; ++n) mx = fmaxf(mx, fmaxf(s[mt][n][2 * r], s[mt][n][2 * r + 1]));
        // The 4 lanes of a quad hold the 8·kSN columns of one row.
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        // A row with every key so far masked keeps m = -inf; 0 avoids inf - inf.
        const float m_scaled = (mx == -INFINITY) ? 0.f : mx * p.scale_log2;
        const float alpha = exp2_approx(m_i[mt][r] * p.scale_log2 - m_scaled);  // 0 on the first block
        m_i[mt][r] = mx;
        float rowsum = 0.f;
#pragma unroll
        for (int n = 0; n < kSN; ++n)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e) {
            const float pe = exp2_approx(fmaf(s[mt][n][e], p.scale_log2, -m_scaled));
            s[mt][n][e] = pe;
            rowsum += pe;
          }
        // Each lane keeps the partial sum of its own columns; the quad sums once at the end.
        l_i[mt][r] = l_i[mt][r] * alpha + rowsum;
#pragma unroll
        for (int n = 0; n < kON; ++n) {
          o_acc[mt][n][2 * r] *= alpha;
          o_acc[mt][n][2 * r + 1] *= alpha;
        }
      }
    }

    // ---- O_i += P_ij V_j : P_ij converted to fp16/bf16 in registers, no shared-memory trip ----
#pragma unroll
    for (int kk = 0; kk < kPV_K; ++kk) {
      uint32_t a[kMT][4];  // (16, 16 keys) of P_ij per mma tile
#pragma unroll
      for (int mt = 0; mt < kMT; ++mt) a_from_acc<Ops>(a[mt], s[mt], kk);
      mma_a_y<Ops, kStride>(o_acc, a, sV_j, v_lane, kk);  // V_j: two d-tiles per ldmatrix
    }
  }

  if (!warp_has_rows) return;  // no barrier follows: only warp-local work remains

  // ---- epilogue: O_i = diag(ℓ_i)⁻¹ O_i, L_i = m_i τ + ln ℓ_i ----
  if (p.fold != kernels::detail::kFoldNone) {
    // The ring's running output: O_i and L_i fold into O_run and the running
    // logsumexp (running_output.cuh) from registers. Every lane reads its rows'
    // running L before the quad's first lane writes the new one.
    kernels::detail::FoldedRow f[kMT][2];
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const float l = quad_row_sum(l_i[mt][r]);
        const float inv_l = inverse_row_sum(l);
        const float lse_part = row_logsumexp(m_i[mt][r], l, p.scale_log2);
        const int row = w_row0 + mt * 16 + g + r * 8;
        const float lse_run = p.fold != kernels::detail::kFoldStart && row < p.n_q ? p.lse[head * p.n_q + row] : 0.f;
        f[mt][r] = kernels::detail::fold_row(p.fold, lse_run, lse_part, inv_l);
      }
    __syncwarp();
    const bool first = p.fold == kernels::detail::kFoldStart;
    auto run_of = [&](int row) { return p.o_run + (head * p.n_q + row) * static_cast<int64_t>(d); };  // (d) fp32
#pragma unroll
    for (int mt = 0; mt < kMT; ++mt) {
      float prev[2][2 * kON];  // the two rows' O_run, loaded before anything is stored
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = w_row0 + mt * 16 + g + r * 8;
        kernels::detail::load_running_row<kON>(run_of(row), t, first || row >= p.n_q, prev[r]);
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = w_row0 + mt * 16 + g + r * 8;
        if (row >= p.n_q) continue;
        if (t == 0) p.lse[head * p.n_q + row] = f[mt][r].lse;
        float* run = run_of(row);
#pragma unroll
        for (int n = 0; n < kON; ++n) {
          const int col = n * 8 + 2 * t;
          const float x = f[mt][r].w_run * prev[r][2 * n] + f[mt][r].w_part * o_acc[mt][n][2 * r];
          const float y = f[mt][r].w_run * prev[r][2 * n + 1] + f[mt][r].w_part * o_acc[mt][n][2 * r + 1];
          if (p.fold == kernels::detail::kFoldFinish) {
            *reinterpret_cast<uint32_t*>(O + static_cast<int64_t>(row) * d + col) = Ops::pack(x, y);
          } else {
            run[col] = x;
            run[col + 1] = y;
          }
        }
      }
    }
    return;
  }
  // The warp's own rows of sQ become its O staging buffer: each warp only ever
  // read its own Q rows, and no cp.async targets sQ after the prologue.
  __syncwarp();
  T* sO = sQ + warp * Cfg::kWarpRows * kStride;  // (16·kMT, d) in shared memory, this warp's rows
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      const float l = quad_row_sum(l_i[mt][r]);
      const float inv_l = inverse_row_sum(l);
      const int row_local = mt * 16 + g + r * 8;
#pragma unroll
      for (int n = 0; n < kON; ++n) {
        *reinterpret_cast<uint32_t*>(sO + row_local * kStride + n * 8 + 2 * t) =
            Ops::pack(o_acc[mt][n][2 * r] * inv_l, o_acc[mt][n][2 * r + 1] * inv_l);
      }
      const int row = w_row0 + row_local;
      if (p.lse != nullptr && t == 0 && row < p.n_q)
        p.lse[head * p.n_q + row] = row_logsumexp(m_i[mt][r], l, p.scale_log2);
    }
  }
  __syncwarp();
  // 16-byte stores: consecutive lanes write consecutive chunks of a row.
  constexpr int kChunksPerRow = d / 8;
  constexpr int kSteps = Cfg::kWarpRows * kChunksPerRow / 32;
#pragma unroll
  for (int it = 0; it < kSteps; ++it) {
    const int c = lane + it * 32;
    const int rl = c / kChunksPerRow;
    const int col = (c % kChunksPerRow) * 8;
    const int row = w_row0 + rl;
    if (row < p.n_q)
      *reinterpret_cast<uint4*>(O + static_cast<int64_t>(row) * d + col) =
          *reinterpret_cast<const uint4*>(sO + rl * kStride + col);
  }
}

#ifndef FA2_TC_EMULATE
// ---------------------------------------------------------------------------
// Host side. The kernel template and its launcher have internal linkage: the
// library (kernels/src/rungs/fa2_tc.cu) and the standalone checker may instantiate the
// same configuration without clashing.
// ---------------------------------------------------------------------------
using kernels::detail::aligned16;

// Checks the arguments against what this configuration can run, then launches
// on a.stream. Throws Unsupported naming the limit hit, CudaError on a failed
// call, std::invalid_argument on malformed arguments (null tensors, empty sizes).
template <class Cfg, typename T>
void launch(const LaunchArgs& a, const char* name) {
  const sim::AttentionProblem& pr = a.problem;
  const std::string who = kernels::detail::config_name<Cfg>(name);
  if (pr.head_dim != Cfg::kHeadDim)
    throw Unsupported(who + " was asked for head dim " + std::to_string(pr.head_dim));
  if (pr.batch < 1 || pr.heads < 1 || pr.n_q() < 1 || pr.n_kv() < 1)
    throw std::invalid_argument(who + ": batch, heads, seq_q and seq_kv must be at least 1");
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw std::invalid_argument(who + ": q, k, v and o must be device pointers, got null");
  if (!aligned16(a.q) || !aligned16(a.k) || !aligned16(a.v) || !aligned16(a.o))
    throw Unsupported(who + " needs q, k, v and o 16-byte aligned (16-byte cp.async and stores)");
  if (!(a.softmax_scale > 0.f) || !std::isfinite(a.softmax_scale))
    throw Unsupported(who + " needs a positive finite softmax scale τ (the row max is taken "
                            "before scaling); got " + std::to_string(a.softmax_scale));
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (pr.n_q() > kIntMax || pr.n_kv() > kIntMax)
    throw Unsupported(who + " indexes rows with 32-bit ints: seq_q and seq_kv must be at most " +
                      std::to_string(kIntMax));
  if (pr.batch > kIntMax / pr.heads)
    throw Unsupported(who + ": B·H exceeds " + std::to_string(kIntMax));
  const int64_t heads = pr.batch * pr.heads;
  const int64_t T_r = (pr.n_q() + Cfg::kBr - 1) / Cfg::kBr;
  if (T_r > kIntMax / heads)
    throw Unsupported(who + ": T_r·B·H = " + std::to_string(T_r) + "·" + std::to_string(heads) +
                      " blocks exceed the grid limit 2^31-1");

  auto* kernel = &fa2_tc_forward_kernel<Cfg, T>;
  kernels::detail::prepare_compiled_launch<Cfg>(a, kernel, who);
  Params p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  p.lse = a.lse;
  p.n_q = static_cast<int>(pr.n_q());
  p.n_kv = static_cast<int>(pr.n_kv());
  p.T_r = static_cast<int>(T_r);
  p.scale_log2 = static_cast<float>(static_cast<double>(a.softmax_scale) * 1.4426950408889634);
  p.causal = pr.causal ? 1 : 0;
  p.kv_group = static_cast<int>(kv_group_of(a, who));
  check_running_output(a, who);
  p.fold = static_cast<int>(a.running.step);
  p.o_run = a.running.o;

  const dim3 grid(static_cast<unsigned>(T_r * heads));
  const dim3 block(Cfg::kThreads);
  kernel<<<grid, block, Cfg::kSmemBytes, static_cast<cudaStream_t>(a.stream)>>>(p);
  FLASHLAB_CUDA_CHECK(cudaGetLastError());
}
#endif  // FA2_TC_EMULATE

}  // namespace
}  // namespace flashlab::kernels::fa2_tc_detail
