// The device primitives of the tensor-core rungs (fa2_tc, fa2_tc_bwd): PTX
// wrappers for sm_80+ instructions — cp.async, ldmatrix, mma.sync.m16n8k16,
// ex2.approx — the fp16/bf16 traits that pack fp32 pairs into their registers,
// and the cp.async copy of a row-major tile into padded shared memory.
//
// In the rungs' shared namespace fa2_tc_detail. FA2_TC_EMULATE: the CPU
// emulators (tests/kernels/tc_emulator.hpp) supply the wrappers and the 16-bit
// types themselves; the tile copy is compiled over theirs.
#pragma once

#include <cstdint>
#include <cstring>
#include <type_traits>

#ifndef FA2_TC_EMULATE
#include <cuda_runtime.h>

#include "device/dtype.cuh"  // the 16-bit types, pack2
#endif

namespace flashlab::kernels::fa2_tc_detail {

#ifndef FA2_TC_EMULATE
__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

// 16-byte global→shared copy, L2 only (.cg: K_j/V_j are streamed, L1 would only
// be polluted). With src_bytes = 0 nothing is read and the 16 bytes are zero
// filled: rows past N are zeros, never garbage (a NaN in a V row past N_kv
// times P = 0 would still be NaN).
__device__ __forceinline__ void cp_async_16(uint32_t dst, const void* src, bool valid) {
  const int src_bytes = valid ? 16 : 0;
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;\n" ::"r"(dst), "l"(src),
               "r"(src_bytes)
               : "memory");
}
__device__ __forceinline__ void cp_async_commit() {
  asm volatile("cp.async.commit_group;\n" ::: "memory");
}
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;\n" ::"n"(N) : "memory");
}

// Four 8×8 b16 matrices; lanes 8m..8m+7 give the row addresses of matrix m,
// register m receives row lane/4, columns 2·(lane%4)+{0,1} of matrix m.
__device__ __forceinline__ void ldsm_x4(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}
// Same, transposed: register m receives rows 2·(lane%4)+{0,1}, column lane/4.
__device__ __forceinline__ void ldsm_x4_trans(uint32_t (&r)[4], uint32_t addr) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, [%4];\n"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(addr)
               : "memory");
}

// 2^x in one MUFU.EX2; ftz is harmless here (2^x < 2^-126 contributes nothing
// next to the row max, which contributes 1) and 2^-inf = +0 for masked entries.
__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}

// dtype traits: the mma instruction and fp32 → 2×16-bit packing
// (kernels::detail::pack2). In a packed register the lower 16 bits hold the
// element with the lower column index.
// D(16×8, f32) += A(16×16, row) · B(16×8, col), A and B of `type` ("f16", "bf16").
#define FLASHLAB_MMA_M16N8K16(type)                                                                 \
  asm("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, " \
      "{%8,%9}, {%0,%1,%2,%3};\n"                                                                  \
      : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])                                             \
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1))
template <typename T>
struct Dtype {
  static_assert(kernels::detail::kIs16BitFloat<T>, "mma.sync m16n8k16 takes fp16 or bf16");
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    if constexpr (std::is_same_v<T, __half>)
      FLASHLAB_MMA_M16N8K16("f16");
    else
      FLASHLAB_MMA_M16N8K16("bf16");
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) { return kernels::detail::pack2<T>(lo, hi); }
};
#undef FLASHLAB_MMA_M16N8K16

#endif  // FA2_TC_EMULATE

// What the compile-time configuration of either rung holds: d, B_r, B_c, the
// warps of a block (kThreads), the resident blocks per SM asked of the
// register allocator, and the row stride of every 16-bit tile in shared
// memory. Rows are padded by 8 elements (16 bytes): a row then starts 16 bytes
// further along the 128-byte bank line than the row before, so the 8 row
// addresses of one ldmatrix 8×8 matrix hit 8 distinct 16-byte bank groups
// (needs (d/8 + 1) odd, i.e. d a multiple of 16).
template <int D, int BR, int BC, int NW, int MINB>
struct MmaConfig {
  static constexpr int kHeadDim = D;
  static constexpr int kBr = BR;
  static constexpr int kBc = BC;
  static constexpr int kNWarps = NW;
  static constexpr int kMinBlocks = MINB;
  static constexpr int kThreads = NW * 32;
  static constexpr int kStride = D + 8;
  static_assert(D % 16 == 0, "d must be a multiple of 16 (mma k-step and padding rule)");
  static_assert(((D / 8 + 1) % 2) == 1, "odd row stride in 16-byte units keeps ldmatrix conflict-free");
};

// The fragment steps of the rungs' products (fa2_tc: S_ij = Q_i K_jᵀ, O_i += P_ij V_j;
// fa2_tc_bwd: S_ijᵀ, dP_ijᵀ, dV_j, dK_j, dQ_i). A warp owns kMT row tiles of 16; an
// accumulator acc[mt][n] is the C fragment of row tile mt, n-tile n (8 columns).

// Accumulators zeroed before their first product, element by element: several
// of one shape (of any rank) in one pass.
template <int N, class... More>
__device__ __forceinline__ void zero_acc(float (&acc)[N], More&... more) {
#pragma unroll
  for (int i = 0; i < N; ++i) {
    acc[i] = 0.f;
    ((more[i] = 0.f), ...);
  }
}
template <class Row, int N, class... More>
__device__ __forceinline__ void zero_acc(Row (&acc)[N], More&... more) {
#pragma unroll
  for (int i = 0; i < N; ++i) zero_acc(acc[i], more[i]...);
}

// A fragment of k-step kk from an fp32 accumulator (P_ij, dS_ij): its n-tiles 2kk
// and 2kk + 1 are the A operand's columns, packed to 16 bits without leaving registers.
template <class Ops, int kN>
__device__ __forceinline__ void a_from_acc(uint32_t (&a)[4], const float (&c)[kN][4], int kk) {
  a[0] = Ops::pack(c[2 * kk][0], c[2 * kk][1]);
  a[1] = Ops::pack(c[2 * kk][2], c[2 * kk][3]);
  a[2] = Ops::pack(c[2 * kk + 1][0], c[2 * kk + 1][1]);
  a[3] = Ops::pack(c[2 * kk + 1][2], c[2 * kk + 1][3]);
}

// n-tiles 2·np and 2·np + 1 of every row tile += A · B, with b the two n-tiles'
// B fragments from one ldmatrix.x4.
template <class Ops, int kMT, int kN>
__device__ __forceinline__ void mma_n_pair(float (&acc)[kMT][kN][4], const uint32_t (&a)[kMT][4],
                                           const uint32_t (&b)[4], int np) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    Ops::mma(acc[mt][2 * np], a[mt], b[0], b[1]);
    Ops::mma(acc[mt][2 * np + 1], a[mt], b[2], b[3]);
  }
}

// A's row tiles for k-step kk: from registers (kInRegs: frag[mt][kk], loaded once
// per block) or by ldmatrix from a row-major tile at a_addr (kStride-element rows).
template <int kStride, bool kInRegs, int kMT, class Frag>
__device__ __forceinline__ void a_frags(uint32_t (&a)[kMT][4], const Frag& frag, uint32_t a_addr, int kk) {
#pragma unroll
  for (int mt = 0; mt < kMT; ++mt) {
    if constexpr (kInRegs) {
#pragma unroll
      for (int e = 0; e < 4; ++e) a[mt][e] = frag[mt][kk][e];
    } else {
      ldsm_x4(a[mt], a_addr + (mt * 16 * kStride + kk * 16) * 2);
    }
  }
}

// acc += A · Yᵀ for k-step kk, Y row-major in shared memory (its rows are acc's
// columns, k contiguous; b_lane the lane's ldmatrix offset).
template <class Ops, int kStride, int kMT, int kN>
__device__ __forceinline__ void mma_a_yt(float (&acc)[kMT][kN][4], const uint32_t (&a)[kMT][4], uint32_t y_addr,
                                         int b_lane, int kk) {
#pragma unroll
  for (int np = 0; np < kN / 2; ++np) {
    uint32_t b[4];  // (16 columns, 16 of k) of Y: two n-tiles
    ldsm_x4(b, y_addr + (b_lane + np * 16 * kStride + kk * 16) * 2);
    mma_n_pair<Ops>(acc, a, b, np);
  }
}

// acc += A · Y for k-step kk, Y row-major in shared memory (k rows, acc's columns
// contiguous; b_lane the lane's offset of the transposed ldmatrix).
template <class Ops, int kStride, int kMT, int kN>
__device__ __forceinline__ void mma_a_y(float (&acc)[kMT][kN][4], const uint32_t (&a)[kMT][4], uint32_t y_addr,
                                        int b_lane, int kk) {
#pragma unroll
  for (int np = 0; np < kN / 2; ++np) {
    uint32_t b[4];  // (16 of k, 16 columns) of Y: two n-tiles
    ldsm_x4_trans(b, y_addr + (b_lane + kk * 16 * kStride + np * 16) * 2);
    mma_n_pair<Ops>(acc, a, b, np);
  }
}

// Copy rows [row0, row0 + kRows) of a row-major (N, d) head into a padded
// (kRows, d) shared tile, 16 bytes per thread per step; consecutive threads take
// consecutive 16-byte chunks of a row, so each warp reads whole 128-byte lines.
template <class Cfg, int kRows, typename T>
__device__ __forceinline__ void load_tile(T* s_tile, const T* g_head, int row0, int n_rows,
                                          int tid) {
  constexpr int kChunksPerRow = Cfg::kHeadDim / 8;
  constexpr int kSteps = kRows * kChunksPerRow / Cfg::kThreads;
  if constexpr (Cfg::kThreads % kChunksPerRow == 0) {
    // Each step moves whole rows: a thread keeps its column and advances by a
    // fixed number of rows, so every step's addresses are one base register
    // plus an immediate (no per-step offsets held live across the K loop).
    constexpr int kRowsPerStep = Cfg::kThreads / kChunksPerRow;
    const int r0 = tid / kChunksPerRow;
    const int col = (tid % kChunksPerRow) * 8;
    const T* g_base = g_head + static_cast<int64_t>(row0 + r0) * Cfg::kHeadDim + col;
    const uint32_t s_base = smem_addr(s_tile + r0 * Cfg::kStride + col);
#pragma unroll
    for (int it = 0; it < kSteps; ++it) {
      const bool valid = row0 + r0 + it * kRowsPerStep < n_rows;
      // An invalid row copies nothing; its address is clamped to the head base.
      const T* src = valid ? g_base + it * kRowsPerStep * Cfg::kHeadDim : g_head;
      cp_async_16(s_base + it * kRowsPerStep * Cfg::kStride * 2, src, valid);
    }
  } else {
#pragma unroll
    for (int it = 0; it < kSteps; ++it) {
      const int c = tid + it * Cfg::kThreads;
      const int r = c / kChunksPerRow;
      const int col = (c % kChunksPerRow) * 8;
      const bool valid = row0 + r < n_rows;
      const T* src = valid ? g_head + static_cast<int64_t>(row0 + r) * Cfg::kHeadDim + col : g_head;
      cp_async_16(smem_addr(s_tile + r * Cfg::kStride + col), src, valid);
    }
  }
}

}  // namespace flashlab::kernels::fa2_tc_detail
