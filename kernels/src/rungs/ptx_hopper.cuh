// The device primitives of the Hopper rungs (fa3_hopper, fa3_hopper_bwd): PTX
// wrappers for sm_90a instructions — mbarriers, TMA copies of 3-D tensor maps
// and TMA reductions into them (bulk groups, the async proxy's fence), stmatrix,
// wgmma (m64nNk16, fp32 accumulators; A from shared memory or registers) with
// its fences and shared-memory matrix descriptors (128-byte swizzle),
// setmaxnreg, named barriers — exp2 (MUFU or an FMA-pipe polynomial) and the
// packing of fp32 pairs into fp16/bf16 registers.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only; the driver is reached through the runtime)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

namespace flashlab::kernels::hopper_ptx {

__device__ __forceinline__ uint32_t smem_addr(const void* p) {
  return static_cast<uint32_t>(__cvta_generic_to_shared(p));
}

__device__ __forceinline__ void mbar_init(uint32_t bar, uint32_t count) {
  asm volatile("mbarrier.init.shared::cta.b64 [%0], %1;\n" ::"r"(bar), "r"(count) : "memory");
}
// One arrival that also announces `bytes` of transactions (the TMA copies to come).
__device__ __forceinline__ void mbar_arrive_expect_tx(uint32_t bar, uint32_t bytes) {
  asm volatile("mbarrier.arrive.expect_tx.shared::cta.b64 _, [%0], %1;\n" ::"r"(bar), "r"(bytes) : "memory");
}
__device__ __forceinline__ void mbar_arrive(uint32_t bar) {
  asm volatile("mbarrier.arrive.shared::cta.b64 _, [%0];\n" ::"r"(bar) : "memory");
}
// Spins until the phase with the given parity has completed.
__device__ __forceinline__ void mbar_wait(uint32_t bar, uint32_t parity) {
  asm volatile(
      "{\n"
      ".reg .pred done;\n"
      "WAIT_%=:\n"
      "mbarrier.try_wait.parity.shared::cta.b64 done, [%0], %1;\n"
      "@!done bra WAIT_%=;\n"
      "}\n" ::"r"(bar),
      "r"(parity)
      : "memory");
}

// 3-D tensor copy global → shared: box (64 columns, rows, 1 head) at
// coordinates (c0 column, c1 row, c2 head); completes `bar`'s transactions.
__device__ __forceinline__ void tma_load_3d(uint32_t dst, const CUtensorMap* map, uint32_t bar, int c0, int c1,
                                            int c2) {
  asm volatile(
      "cp.async.bulk.tensor.3d.shared::cluster.global.mbarrier::complete_tx::bytes [%0], [%1, {%3, %4, %5}], [%2];\n" ::"r"(dst),
      "l"(reinterpret_cast<uint64_t>(map)), "r"(bar), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// 3-D tensor reduction shared → global: the box at (c0 column, c1 row, c2 head)
// of `map` += the box at `src` (laid out as a copy into shared memory lays it
// out, swizzle included), element by element in the map's type (.add: f32, f16,
// bf16 and integers). Elements of the box outside the tensor are not written.
// Joins this thread's current bulk group.
__device__ __forceinline__ void tma_reduce_add_3d(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile(
      "cp.reduce.async.bulk.tensor.3d.global.shared::cta.add.tile.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
          reinterpret_cast<uint64_t>(map)),
      "r"(src), "r"(c0), "r"(c1), "r"(c2)
      : "memory");
}
// 3-D tensor copy shared → global: the box at `src` (laid out as a copy into
// shared memory lays it out, swizzle included) to the box at (c0 column, c1 row,
// c2 head) of `map`; elements outside the tensor are not written. Joins this
// thread's current bulk group.
__device__ __forceinline__ void tma_store_3d(const CUtensorMap* map, uint32_t src, int c0, int c1, int c2) {
  asm volatile("cp.async.bulk.tensor.3d.global.shared::cta.bulk_group [%0, {%2, %3, %4}], [%1];\n" ::"l"(
                   reinterpret_cast<uint64_t>(map)),
               "r"(src), "r"(c0), "r"(c1), "r"(c2)
               : "memory");
}
// Closes this thread's current bulk group (the bulk copies and reductions since the last).
__device__ __forceinline__ void bulk_commit() { asm volatile("cp.async.bulk.commit_group;\n" ::: "memory"); }
// Waits until at most N of this thread's newest bulk groups are still reading
// their shared memory (the older ones' sources may be overwritten).
template <int N>
__device__ __forceinline__ void bulk_wait_read() {
  asm volatile("cp.async.bulk.wait_group.read %0;\n" ::"n"(N) : "memory");
}
// Waits until at most N of this thread's newest bulk groups are incomplete
// (their writes to global memory performed).
template <int N>
__device__ __forceinline__ void bulk_wait() {
  asm volatile("cp.async.bulk.wait_group %0;\n" ::"n"(N) : "memory");
}
// Orders this thread's generic-proxy accesses to shared memory before later
// async-proxy ones (wgmma operands, TMA copies and reductions) and the reverse.
__device__ __forceinline__ void fence_proxy_async_smem() {
  asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
}
__device__ __forceinline__ void prefetch_tensormap(const CUtensorMap* map) {
  asm volatile("prefetch.tensormap [%0];\n" ::"l"(reinterpret_cast<uint64_t>(map)) : "memory");
}

__device__ __forceinline__ void wgmma_fence() { asm volatile("wgmma.fence.sync.aligned;\n" ::: "memory"); }
__device__ __forceinline__ void wgmma_commit() { asm volatile("wgmma.commit_group.sync.aligned;\n" ::: "memory"); }
template <int N>
__device__ __forceinline__ void wgmma_wait() {
  asm volatile("wgmma.wait_group.sync.aligned %0;\n" ::"n"(N) : "memory");
}
// Keeps the compiler from moving accumulator reads/writes across wgmma boundaries.
template <int N>
__device__ __forceinline__ void fence_regs(float (&r)[N]) {
#pragma unroll
  for (int i = 0; i < N; ++i) asm volatile("" : "+f"(r[i])::"memory");
}

template <int kRegs>
__device__ __forceinline__ void setmaxnreg_inc() {
  asm volatile("setmaxnreg.inc.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}
template <int kRegs>
__device__ __forceinline__ void setmaxnreg_dec() {
  asm volatile("setmaxnreg.dec.sync.aligned.u32 %0;\n" ::"n"(kRegs));
}

// Named barrier among the 128 threads of one warpgroup (id 0 is __syncthreads).
__device__ __forceinline__ void warpgroup_sync(int id) {
  asm volatile("bar.sync %0, 128;\n" ::"r"(id) : "memory");
}
// Named barrier of two warpgroups: one waits (bar.sync), the other signals (bar.arrive).
__device__ __forceinline__ void named_bar_sync(int id, int threads) {
  asm volatile("bar.sync %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}
__device__ __forceinline__ void named_bar_arrive(int id, int threads) {
  asm volatile("bar.arrive %0, %1;\n" ::"r"(id), "r"(threads) : "memory");
}

// Four 8 × 8 matrices of 16-bit values stored transposed: lane 4r + c holds, in
// a[m], row r and columns 2c, 2c + 1 of matrix m (an mma fragment's layout) and
// lane 8m + i gives the shared-memory address of row i of matrix m's transpose
// (16 bytes): matrix m's column i lands there, its row r at bytes 2r, 2r + 1.
__device__ __forceinline__ void stmatrix_x4_trans(uint32_t addr, const uint32_t (&a)[4]) {
  asm volatile("stmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%0], {%1, %2, %3, %4};\n" ::"r"(addr), "r"(a[0]),
               "r"(a[1]), "r"(a[2]), "r"(a[3])
               : "memory");
}

// wgmma shared-memory matrix descriptor, 128-byte swizzle. K-major tiles (Q_i,
// K_j: d contiguous) step 8-row groups by SBO = 1024 bytes (LBO unused);
// N-major V_j (d contiguous, keys are k) steps 8 keys by SBO = 1024 bytes and
// the next 64 columns of d (the next panel) by LBO.
__device__ __forceinline__ uint64_t make_desc(uint32_t addr, uint32_t lbo_bytes, uint32_t sbo_bytes) {
  uint64_t desc = 0;
  desc |= static_cast<uint64_t>((addr & 0x3FFFF) >> 4);
  desc |= static_cast<uint64_t>((lbo_bytes >> 4) & 0x3FFF) << 16;
  desc |= static_cast<uint64_t>((sbo_bytes >> 4) & 0x3FFF) << 32;
  desc |= 1ull << 62;  // 128-byte swizzle
  return desc;
}

__device__ __forceinline__ float exp2_approx(float x) {
  float y;
  asm("ex2.approx.ftz.f32 %0, %1;\n" : "=f"(y) : "f"(x));
  return y;
}
// 2^x for x ≤ 0 without MUFU: x = j + f with j = round(x), f ∈ [−0.5, 0.5];
// 2^f from a degree-3 polynomial (relative error 7.5e-5, below fp16's half ulp,
// fitted to 2^f in relative error), 2^j added to the exponent field. x is
// clamped at −126 (−∞ of a masked entry included): the result is then at
// least a denormal near 2^−126 (0 once P is fp16; beside the row maximum's 1
// in ℓ_i, nothing), never a wrapped exponent (2^f ≥ 0.707 has exponent ≥ −1).
__device__ __forceinline__ float exp2_poly(float x) {
  constexpr float kRound = 12582912.f;  // 1.5 · 2^23: x + kRound holds round(x) in its low mantissa bits
  x = fmaxf(x, -126.f);
  const float t = __fadd_rn(x, kRound);
  const float f = __fsub_rn(x, __fsub_rn(t, kRound));
  float p = fmaf(0.0551716313f, f, 0.24261117f);
  p = fmaf(p, f, 0.693260968f);
  p = fmaf(p, f, 0.999928057f);
  return __int_as_float(__float_as_int(p) + (__float_as_int(t) << 23));
}

template <typename T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t pack2<__half>(float lo, float hi) {
  const __half2 h = __floats2half2_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}
template <>
__device__ __forceinline__ uint32_t pack2<__nv_bfloat16>(float lo, float hi) {
  const __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  uint32_t u;
  memcpy(&u, &h, sizeof(u));
  return u;
}

// wgmma.mma_async m64nNk16 (N = 64, 80, 128, 176) with fp32 accumulators; ss: A and
// B from shared memory (K-major; ss<1>: A M-major, the backward's swapped
// dQ_iᵀ = K_jᵀ dS_ijᵀ with K_j's d contiguous), rs: A from registers (P_ij). Accumulator element 4n + e of a thread
// (warp w of the warpgroup, lane = 4g + t) is row 16w + g + 8·(e/2), column
// 8n + 2t + (e%2) — per 8 columns the layout of mma.sync's C fragment, so the
// S accumulators of columns [16k, 16k + 16) are P_ij's A fragment for k-step k.
template <int N, typename T>
struct Wgmma;

// One specialization per shape and dtype from one body: an asm statement's
// operand list and its text are fixed at compile time, so a shape contributes
// its accumulator operands (ACC(): d[0 .. N/2) as "+f", numbered %0 .. %(N/2 − 1);
// named without its parentheses, so that its commas pass through FLASHLAB_WGMMA_SHAPE)
// and, the preprocessor not adding, the numbers of the operands after them
// (K0 .. K5 = N/2 .. N/2 + 5).
#define FLASHLAB_WGMMA_ACC8(i)                                                                                  \
  "+f"(d[i]), "+f"(d[i + 1]), "+f"(d[i + 2]), "+f"(d[i + 3]), "+f"(d[i + 4]), "+f"(d[i + 5]), "+f"(d[i + 6]), \
      "+f"(d[i + 7])
#define FLASHLAB_WGMMA_ACC32() \
  FLASHLAB_WGMMA_ACC8(0), FLASHLAB_WGMMA_ACC8(8), FLASHLAB_WGMMA_ACC8(16), FLASHLAB_WGMMA_ACC8(24)
#define FLASHLAB_WGMMA_ACC40() FLASHLAB_WGMMA_ACC32(), FLASHLAB_WGMMA_ACC8(32)
#define FLASHLAB_WGMMA_ACC64() \
  FLASHLAB_WGMMA_ACC32(), FLASHLAB_WGMMA_ACC8(32), FLASHLAB_WGMMA_ACC8(40), FLASHLAB_WGMMA_ACC8(48), FLASHLAB_WGMMA_ACC8(56)
#define FLASHLAB_WGMMA_ACC88() FLASHLAB_WGMMA_ACC64(), FLASHLAB_WGMMA_ACC8(64), FLASHLAB_WGMMA_ACC8(72), FLASHLAB_WGMMA_ACC8(80)
#define FLASHLAB_WGMMA_REGS32 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31}"
#define FLASHLAB_WGMMA_REGS40 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39}"
#define FLASHLAB_WGMMA_REGS64 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63}"
#define FLASHLAB_WGMMA_REGS88 \
  "{%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, %16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, %32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, %48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, %64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, %80, %81, %82, %83, %84, %85, %86, %87}"
#define FLASHLAB_WGMMA(N, T, PTX_T, ACC, REGS, K0, K1, K2, K3, K4, K5)                                          \
  template <>                                                                                                  \
  struct Wgmma<N, T> {                                                                                         \
    /* D(64×N, f32) (+)= A(64×16, smem) · B(N×16, smem, K-major)ᵀ; A K-major, or M-major with            \
       kTransA = 1 (imm-trans-a) */                                                                            \
    template <int kTransA = 0>                                                                                 \
    __device__ __forceinline__ static void ss(float (&d)[N / 2], uint64_t desc_a, uint64_t desc_b,            \
                                              int accumulate) {                                                \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #K2 ", 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX_T "." PTX_T " " REGS ", %" #K0        \
                   ", %" #K1 ", p, 1, 1, %" #K3 ", 0;\n}\n"                                                     \
                   : ACC()                                                                                     \
                   : "l"(desc_a), "l"(desc_b), "r"(accumulate), "n"(kTransA));                                 \
    }                                                                                                          \
    /* D(64×N, f32) += A(64×16, registers) · B(16×N, smem, N-major: imm-trans-b = 1) */                       \
    __device__ __forceinline__ static void rs(float (&d)[N / 2], const uint32_t (&a)[4], uint64_t desc_b,     \
                                              int accumulate) {                                                \
      asm volatile("{\n.reg .pred p;\nsetp.ne.b32 p, %" #K5 ", 0;\n"                                           \
                   "wgmma.mma_async.sync.aligned.m64n" #N "k16.f32." PTX_T "." PTX_T " " REGS ", {%" #K0       \
                   ", %" #K1 ", %" #K2 ", %" #K3 "}, %" #K4 ", p, 1, 1, 1;\n}\n"                                \
                   : ACC()                                                                                     \
                   : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "l"(desc_b), "r"(accumulate));                \
    }                                                                                                          \
  };
#define FLASHLAB_WGMMA_SHAPE(N, ACC, REGS, K0, K1, K2, K3, K4, K5)              \
  FLASHLAB_WGMMA(N, __half, "f16", ACC, REGS, K0, K1, K2, K3, K4, K5)           \
  FLASHLAB_WGMMA(N, __nv_bfloat16, "bf16", ACC, REGS, K0, K1, K2, K3, K4, K5)

FLASHLAB_WGMMA_SHAPE(64, FLASHLAB_WGMMA_ACC32, FLASHLAB_WGMMA_REGS32, 32, 33, 34, 35, 36, 37)
FLASHLAB_WGMMA_SHAPE(80, FLASHLAB_WGMMA_ACC40, FLASHLAB_WGMMA_REGS40, 40, 41, 42, 43, 44, 45)
FLASHLAB_WGMMA_SHAPE(128, FLASHLAB_WGMMA_ACC64, FLASHLAB_WGMMA_REGS64, 64, 65, 66, 67, 68, 69)
FLASHLAB_WGMMA_SHAPE(176, FLASHLAB_WGMMA_ACC88, FLASHLAB_WGMMA_REGS88, 88, 89, 90, 91, 92, 93)

#undef FLASHLAB_WGMMA_SHAPE
#undef FLASHLAB_WGMMA
#undef FLASHLAB_WGMMA_REGS88
#undef FLASHLAB_WGMMA_REGS64
#undef FLASHLAB_WGMMA_REGS40
#undef FLASHLAB_WGMMA_REGS32
#undef FLASHLAB_WGMMA_ACC88
#undef FLASHLAB_WGMMA_ACC64
#undef FLASHLAB_WGMMA_ACC40
#undef FLASHLAB_WGMMA_ACC32
#undef FLASHLAB_WGMMA_ACC8

}  // namespace flashlab::kernels::hopper_ptx
