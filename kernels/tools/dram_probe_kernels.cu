// The probe kernels: plain global functions (no namespace, no templates) so
// that ncu's --kernel-name matches them by the names in the header.
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>

#include "device/cuda_check.hpp"
#include "dram_probe_kernels.hpp"

namespace {

constexpr int kThreads = 256;

unsigned blocks_for(std::size_t vectors) {
  const std::size_t wanted = (vectors + kThreads - 1) / kThreads;
  return static_cast<unsigned>(std::clamp<std::size_t>(wanted, 1, std::size_t{1} << 20));
}

__device__ __forceinline__ uint4 pattern(std::size_t i, unsigned seed) {
  const unsigned x = (static_cast<unsigned>(i) * 2654435761u) ^ seed;
  return make_uint4(x | 1u, (x ^ 0x5a5a5a5au) | 2u, static_cast<unsigned>(i >> 32) + 0x01010101u, seed | 4u);
}

// Grid-stride bodies; each is wrapped by kernels of different names below.
__device__ __forceinline__ void write_pattern(uint4* __restrict__ dst, std::size_t n, unsigned seed) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = pattern(i, seed);
}

__device__ __forceinline__ void read_all(const uint4* __restrict__ src, std::size_t n, uint4* sink) {
  unsigned acc = 0;
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) {
    const uint4 v = src[i];
    acc += v.x ^ v.y ^ v.z ^ v.w;
  }
  if (acc == 0x9e3779b9u) *sink = make_uint4(acc, 0, 0, 0);
}

}  // namespace

// n (16-byte vectors) first, so one launcher serves them all.
__global__ void dram_probe_fill(std::size_t n, uint4* __restrict__ dst, unsigned seed) { write_pattern(dst, n, seed); }
__global__ void dram_probe_write(std::size_t n, uint4* __restrict__ dst, unsigned seed) { write_pattern(dst, n, seed); }
__global__ void dram_probe_read(std::size_t n, const uint4* __restrict__ src, uint4* sink) { read_all(src, n, sink); }
__global__ void dram_probe_flush(std::size_t n, const uint4* __restrict__ src, uint4* sink) { read_all(src, n, sink); }

__global__ void dram_probe_copy(std::size_t n, const uint4* __restrict__ src, uint4* __restrict__ dst) {
  const std::size_t stride = static_cast<std::size_t>(gridDim.x) * blockDim.x;
  for (std::size_t i = static_cast<std::size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    dst[i] = src[i];
}

namespace {

template <class... Params, class... Args>
void launch(void (*kernel)(std::size_t, Params...), const char* name, std::size_t bytes, Args... args) {
  const std::size_t n = bytes / sizeof(uint4);
  kernel<<<blocks_for(n), kThreads>>>(n, static_cast<Params>(args)...);
  flashlab::kernels::detail::check_cuda(cudaGetLastError(), name, __FILE__, __LINE__);
}

}  // namespace

namespace flashlab::kernels::probe {

void fill(void* dst, std::size_t bytes, unsigned seed) { launch(dram_probe_fill, "dram_probe_fill", bytes, dst, seed); }

void read_once(const void* src, std::size_t bytes, void* sink) {
  launch(dram_probe_read, "dram_probe_read", bytes, src, sink);
}

void copy(const void* src, void* dst, std::size_t bytes) { launch(dram_probe_copy, "dram_probe_copy", bytes, src, dst); }

void write_only(void* dst, std::size_t bytes, unsigned seed) {
  launch(dram_probe_write, "dram_probe_write", bytes, dst, seed);
}

void flush_l2(const void* scratch, std::size_t bytes, void* sink) {
  launch(dram_probe_flush, "dram_probe_flush", bytes, scratch, sink);
}

}  // namespace flashlab::kernels::probe
