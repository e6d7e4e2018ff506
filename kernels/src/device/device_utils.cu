// The runner's device helpers: normal inputs from a counter-based generator,
// a count of non-finite outputs, and a clock spin to observe the SM clock.
#include <cmath>

#include "cuda_check.hpp"
#include "device_utils.hpp"
#include "dtype.cuh"
#include "random.cuh"

namespace flashlab::kernels::detail {
namespace {

template <class T>
__global__ void fill_normal_kernel(T* __restrict__ x, i64 n, unsigned long long seed, float scale) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    x[i] = from_float<T>(normal_at(seed, static_cast<unsigned long long>(i), scale));
}

template <class T>
__global__ void count_not_finite_kernel(const T* __restrict__ x, i64 n, unsigned long long* counter) {
  unsigned long long mine = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride)
    mine += isfinite(to_float(x[i])) ? 0 : 1;
  for (int o = 16; o > 0; o >>= 1) mine += __shfl_xor_sync(0xffffffffu, mine, o);
  if ((threadIdx.x & 31) == 0 && mine > 0) atomicAdd(counter, mine);
}

__global__ void read_flush_kernel(const unsigned long long* __restrict__ x, i64 n, unsigned long long* sink) {
  unsigned long long mine = 0;
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) mine ^= x[i];
  if (mine == 0x5eed5eed5eed5eedull) *sink = mine;  // keeps the reads; practically never stores
}

__global__ void spin_kernel(long long cycles, long long* out) {
  const long long start = clock64();
  long long now = start;
  while (now - start < cycles) now = clock64();
  if (threadIdx.x == 0) *out = now - start;
}

unsigned grid_for(i64 n) { return static_cast<unsigned>(std::max<i64>(1, std::min<i64>((n + 255) / 256, 4096))); }

}  // namespace

void fill_normal(void* data, i64 n, sim::DType t, std::uint64_t seed, float scale, void* stream) {
  if (n <= 0) return;
  dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_normal_kernel<T><<<grid_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(static_cast<T*>(data), n, seed,
                                                                                     scale);
    FLASHLAB_LAUNCH_CHECK("fill_normal_kernel");
  });
}

i64 count_not_finite(const void* data, i64 n, sim::DType t, unsigned long long* counter, void* stream) {
  auto s = static_cast<cudaStream_t>(stream);
  FLASHLAB_CUDA_CHECK(cudaMemsetAsync(counter, 0, sizeof *counter, s));
  if (n > 0) {
    dispatch_dtype(t, [&](auto tag) {
      using T = typename decltype(tag)::type;
      count_not_finite_kernel<T><<<grid_for(n), 256, 0, s>>>(static_cast<const T*>(data), n, counter);
      FLASHLAB_LAUNCH_CHECK("count_not_finite_kernel");
    });
  }
  unsigned long long host = 0;
  FLASHLAB_CUDA_CHECK(cudaMemcpyAsync(&host, counter, sizeof host, cudaMemcpyDeviceToHost, s));
  FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(s));
  return static_cast<i64>(host);
}

void read_flush(const void* data, i64 bytes, unsigned long long* sink, void* stream) {
  const i64 n = bytes / static_cast<i64>(sizeof(unsigned long long));
  if (n <= 0) return;
  read_flush_kernel<<<grid_for(n), 256, 0, static_cast<cudaStream_t>(stream)>>>(
      static_cast<const unsigned long long*>(data), n, sink);
  FLASHLAB_LAUNCH_CHECK("read_flush_kernel");
}

void spin_cycles(long long cycles, long long* out_device, void* stream) {
  spin_kernel<<<1, 32, 0, static_cast<cudaStream_t>(stream)>>>(cycles, out_device);
  FLASHLAB_LAUNCH_CHECK("spin_kernel");
}

}  // namespace flashlab::kernels::detail
