// The device primitives of the tensor-core rungs (fa2_tc, fa2_tc_bwd): PTX
// wrappers for sm_80+ instructions — cp.async, ldmatrix, mma.sync.m16n8k16,
// ex2.approx — the fp16/bf16 traits that pack fp32 pairs into their registers,
// and the cp.async copy of a row-major tile into padded shared memory.
//
// In the rungs' shared namespace fa2_tc_detail. FA2_TC_EMULATE: the CPU
// emulators (tests/kernels/tc_emulator.hpp) supply the wrappers and the 16-bit
// types themselves; the tile copy is compiled over theirs.
#pragma once

#ifndef FA2_TC_EMULATE
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>
#endif

#include <cstdint>
#include <cstring>

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

// dtype traits: the mma instruction and fp32 → 2×16-bit packing. In a packed
// register the lower 16 bits hold the element with the lower column index.
template <typename T>
struct Dtype;

template <>
struct Dtype<__half> {
  // D(16×8, f32) += A(16×16, row) · B(16×8, col)
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    const __half2 h = __floats2half2_rn(lo, hi);  // .x (low 16 bits) = lo
    uint32_t u;
    memcpy(&u, &h, sizeof(u));
    return u;
  }
};

template <>
struct Dtype<__nv_bfloat16> {
  __device__ __forceinline__ static void mma(float (&c)[4], const uint32_t (&a)[4], uint32_t b0,
                                             uint32_t b1) {
    asm("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
        "{%8,%9}, {%0,%1,%2,%3};\n"
        : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
        : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
  }
  __device__ __forceinline__ static uint32_t pack(float lo, float hi) {
    const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
    uint32_t u;
    memcpy(&u, &h, sizeof(u));
    return u;
  }
};

#endif  // FA2_TC_EMULATE

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
