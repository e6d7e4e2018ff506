// Inputs for the micro-benchmarks: never zero (the analyzer never measures on zeros;
// some units also draw less power on zeros, which would flatter the clock).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <type_traits>

#include "check.hpp"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kFillThreads = 256;

__global__ void fill_words_kernel(uint4* __restrict__ data, i64 words, std::uint32_t seed) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 k = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; k < words; k += stride) {
    const std::uint32_t base = static_cast<std::uint32_t>(k) * 4u ^ seed;
    data[k] = make_uint4(mix32(base) | 1u, mix32(base + 1) | 1u, mix32(base + 2) | 1u, mix32(base + 3) | 1u);
  }
}

template <class T>
__global__ void fill_values_kernel(T* __restrict__ data, i64 count, std::uint32_t seed) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 k = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; k < count; k += stride) {
    const float v = unit_value(mix32(static_cast<std::uint32_t>(k) ^ mix32(seed)));
    if constexpr (std::is_same_v<T, __half>)
      data[k] = __float2half_rn(v);
    else
      data[k] = __float2bfloat16_rn(v);
  }
}

__global__ void probe_kernel() {}

int fill_blocks(i64 items) {
  const i64 wanted = (items + kFillThreads - 1) / kFillThreads;
  return static_cast<int>(wanted < 65536 ? (wanted > 0 ? wanted : 1) : 65536);
}

}  // namespace

void fill_words(void* data, i64 bytes, std::uint32_t seed, cudaStream_t s) {
  const i64 words = bytes / 16;
  fill_words_kernel<<<fill_blocks(words), kFillThreads, 0, s>>>(static_cast<uint4*>(data), words, seed);
  CEILINGS_LAUNCH_CHECK("fill_words_kernel");
}

void fill_values(void* data, i64 count, Element e, std::uint32_t seed, cudaStream_t s) {
  if (e == Element::fp16) {
    fill_values_kernel<__half><<<fill_blocks(count), kFillThreads, 0, s>>>(static_cast<__half*>(data), count, seed);
    CEILINGS_LAUNCH_CHECK("fill_values_kernel<__half>");
  } else {
    fill_values_kernel<__nv_bfloat16>
        <<<fill_blocks(count), kFillThreads, 0, s>>>(static_cast<__nv_bfloat16*>(data), count, seed);
    CEILINGS_LAUNCH_CHECK("fill_values_kernel<__nv_bfloat16>");
  }
}

cudaError_t probe_kernel_image() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, probe_kernel);
}

}  // namespace flashlab::ceilings::detail
