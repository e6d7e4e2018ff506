// flashlab.cuh: what FlashLab gives your kernel file. FlashLab compiles the
// file at run time (NVRTC), once for each dtype and head dim it runs, with
// this header included first; `#include "flashlab.cuh"` in your file is
// allowed and changes nothing. No CUDA header is needed: the dtypes, their
// conversions and the arguments are all here. (cuda_fp16.h and the other
// toolkit headers can still be included when FlashLab finds the toolkit.)
//
// Defined for each compiled version, before this header:
//   FLASHLAB_DTYPE_FP32 | FLASHLAB_DTYPE_FP16 | FLASHLAB_DTYPE_BF16
//   FLASHLAB_HEAD_DIM    d of this version
//   FLASHLAB_BR, FLASHLAB_BC   your declared tiles (0 when you declared none)
//   FLASHLAB_THREADS     your declared threads per block at this d
//   FLASHLAB_SMEM_BYTES  your declared dynamic shared memory at this d
// and the same as constants: flashlab::kHeadDim, kBr, kBc, kThreads, kSmemBytes.
#pragma once

namespace flashlab {

// 16-bit floats as they are stored in memory. Compute in float: to_float()
// after every load, from_float<elem_t>() before every store.
struct half {
  unsigned short bits;
};
struct bfloat16 {
  unsigned short bits;
};

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(half x) {
  float f;
  asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(x.bits));
  return f;
}
__device__ __forceinline__ float to_float(bfloat16 x) { return __uint_as_float(static_cast<unsigned>(x.bits) << 16); }

template <class T>
__device__ __forceinline__ T from_float(float f);
template <>
__device__ __forceinline__ float from_float<float>(float f) {
  return f;
}
template <>
__device__ __forceinline__ half from_float<half>(float f) {
  half h;
  asm("cvt.rn.f16.f32 %0, %1;" : "=h"(h.bits) : "f"(f));
  return h;
}
template <>
__device__ __forceinline__ bfloat16 from_float<bfloat16>(float f) {
  // Round to nearest even on the bits: every architecture, NaN kept a NaN.
  unsigned u = __float_as_uint(f);
  bfloat16 b;
  if ((u & 0x7fffffffu) > 0x7f800000u) {
    b.bits = 0x7fc0;
    return b;
  }
  u += 0x7fffu + ((u >> 16) & 1u);
  b.bits = static_cast<unsigned short>(u >> 16);
  return b;
}

// −∞ as a float: the initial running maximum m_i.
__device__ __forceinline__ float neg_infinity() { return __int_as_float(static_cast<int>(0xff800000u)); }

__host__ __device__ constexpr int ceil_div(int a, int b) { return (a + b - 1) / b; }

}  // namespace flashlab

#if defined(FLASHLAB_DTYPE_FP32)
typedef float elem_t;
#elif defined(FLASHLAB_DTYPE_FP16)
typedef flashlab::half elem_t;
#elif defined(FLASHLAB_DTYPE_BF16)
typedef flashlab::bfloat16 elem_t;
#else
#error "FlashLab defines FLASHLAB_DTYPE_FP32, _FP16 or _BF16 when it compiles a kernel file"
#endif

namespace flashlab {
constexpr int kHeadDim = FLASHLAB_HEAD_DIM;
constexpr int kBr = FLASHLAB_BR;
constexpr int kBc = FLASHLAB_BC;
constexpr int kThreads = FLASHLAB_THREADS;
constexpr int kSmemBytes = FLASHLAB_SMEM_BYTES;
}  // namespace flashlab

namespace flashlab {
// Your declared dynamic shared memory (smem: bytes per block) as an array of T:
//   float* tiles = flashlab::shared_memory<float>();
extern __shared__ __align__(16) unsigned char dynamic_smem[];
template <class T>
__device__ __forceinline__ T* shared_memory() {
  return reinterpret_cast<T*>(dynamic_smem);
}
}  // namespace flashlab

// One element of a tensor in float, and back.
__device__ __forceinline__ float load(const elem_t* p) { return flashlab::to_float(*p); }
__device__ __forceinline__ void store(elem_t* p, float v) { *p = flashlab::from_float<elem_t>(v); }

// What every launch of your kernel receives. Tensors are [B, H, N, d]
// row-major in the problem's dtype: element (b, h, n, c) of Q is
//   q[b * q_stride_b + h * q_stride_h + n * q_stride_n + c]
// K and V have H_kv heads (H_kv = H unless grouped-query attention): query
// head h reads K/V head h / (H / H_kv).
struct FlashLabArgs {
  const elem_t* q;  // [B, H, N_q, d]
  const elem_t* k;  // [B, H_kv, N_kv, d]
  const elem_t* v;  // [B, H_kv, N_kv, d]
  elem_t* o;        // [B, H, N_q, d]: every element must be written (FlashLab fills it with NaN first)
  void* workspace;  // your declared workspace bytes of device memory (null when 0); not cleared
  long long workspace_bytes;
  long long q_stride_b, q_stride_h, q_stride_n;     // of Q and O, in elements
  long long kv_stride_b, kv_stride_h, kv_stride_n;  // of K and V, in elements
  int B, H, H_kv, N_q, N_kv, d;
  int causal;  // 1: query row r sees keys c ≤ r only (N_q = N_kv then)
  int launch;  // which launch this is: 0 … your declared launches − 1
  int Br, Bc;  // your declared tiles (0 when none)
  int T_r, T_c;  // ⌈N_q / B_r⌉ and ⌈N_kv / B_c⌉ (N_q and N_kv without tiles)
  float scale;   // τ = 1/√d: S = τ Q Kᵀ
};

#if defined(FLASHLAB_ARGS_BYTES)
static_assert(sizeof(FlashLabArgs) == FLASHLAB_ARGS_BYTES,
              "flashlab.cuh does not match this FlashLab (its arguments' layout differs)");
#endif
