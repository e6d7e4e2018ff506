// The dtypes as C++ types on the device: fp32 conversions, pairs of 16-bit
// values packed in 32 bits, 4-element vector loads and stores, and the dispatch from a runtime dtype to a template instance. Shared
// by the rungs, the runner's device helpers and the ring's element-wise kernels.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>
#include <type_traits>

#include "flashlab/kernels/launch/launch.hpp"

namespace flashlab::kernels::detail {

using sim::i64;

// ---- dtypes ------------------------------------------------------------------

__device__ __forceinline__ float to_float(float x) { return x; }
__device__ __forceinline__ float to_float(__half x) { return __half2float(x); }
__device__ __forceinline__ float to_float(__nv_bfloat16 x) { return __bfloat162float(x); }

template <class T>
__device__ __forceinline__ T from_float(float x);
template <>
__device__ __forceinline__ float from_float<float>(float x) {
  return x;
}
template <>
__device__ __forceinline__ __half from_float<__half>(float x) {
  return __float2half_rn(x);
}
template <>
__device__ __forceinline__ __nv_bfloat16 from_float<__nv_bfloat16>(float x) {
  return __float2bfloat16_rn(x);
}

// The 16-bit float types, stored as they are in memory.
template <class T>
constexpr bool kIs16BitFloat = std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>;

// Two floats rounded to T and packed into 32 bits, `lo` in the low half: the
// order of two consecutive elements in memory and in an mma fragment register.
template <class T>
__device__ __forceinline__ uint32_t pack2(float lo, float hi) {
  static_assert(kIs16BitFloat<T>, "pack2 packs fp16 or bf16");
  const auto pair = [&] {
    if constexpr (std::is_same_v<T, __half>)
      return __floats2half2_rn(lo, hi);  // .x (low 16 bits) = lo
    else
      return __floats2bfloat162_rn(lo, hi);
  }();
  uint32_t u;
  memcpy(&u, &pair, sizeof(u));
  return u;
}

// The two elements of a packed pair as floats, the low half first.
template <class T>
__device__ __forceinline__ float2 unpack2(const uint32_t& u) {
  static_assert(kIs16BitFloat<T>, "unpack2 unpacks fp16 or bf16");
  if constexpr (std::is_same_v<T, __half>)
    return __half22float2(*reinterpret_cast<const __half2*>(&u));
  else
    return __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162*>(&u));
}

// Four consecutive elements as a float4. The address must be aligned to
// 4 elements (8 bytes for 16-bit types, 16 for fp32).
__device__ __forceinline__ float4 load4(const float* p) { return *reinterpret_cast<const float4*>(p); }
template <class T, std::enable_if_t<kIs16BitFloat<T>, int> = 0>
__device__ __forceinline__ float4 load4(const T* p) {
  const uint2 u = *reinterpret_cast<const uint2*>(p);
  const float2 a = unpack2<T>(u.x);
  const float2 b = unpack2<T>(u.y);
  return make_float4(a.x, a.y, b.x, b.y);
}

__device__ __forceinline__ void store4(float* p, float4 v) { *reinterpret_cast<float4*>(p) = v; }
template <class T, std::enable_if_t<kIs16BitFloat<T>, int> = 0>
__device__ __forceinline__ void store4(T* p, float4 v) {
  uint2 u;
  u.x = pack2<T>(v.x, v.y);
  u.y = pack2<T>(v.z, v.w);
  *reinterpret_cast<uint2*>(p) = u;
}

// ---- dispatch ----------------------------------------------------------------

template <class T>
struct Tag {
  using type = T;
};

// Calls f(Tag<float>{}), f(Tag<__half>{}) or f(Tag<__nv_bfloat16>{}).
template <class F>
void dispatch_dtype(sim::DType t, F&& f) {
  switch (t) {
    case sim::DType::fp32:
      f(Tag<float>{});
      return;
    case sim::DType::fp16:
      f(Tag<__half>{});
      return;
    case sim::DType::bf16:
      f(Tag<__nv_bfloat16>{});
      return;
  }
  throw Unsupported("unknown dtype");
}

}  // namespace flashlab::kernels::detail
