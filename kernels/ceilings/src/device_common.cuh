// Device helpers shared by the micro-benchmark kernels.
#pragma once

#include <cstdint>

#include "micro_kernels.hpp"

namespace flashlab::ceilings::detail {

// A 32-bit integer hash (xorshift-multiply): cheap, and every input bit moves
// every output bit, so neighbouring words differ.
__device__ __forceinline__ std::uint32_t mix32(std::uint32_t x) {
  x ^= x >> 16;
  x *= 0x7feb352du;
  x ^= x >> 15;
  x *= 0x846ca68bu;
  x ^= x >> 16;
  return x;
}

// ±[0.25, 1) from a hash: 1/4 + 3/4 · u with u = (h >> 8) / 2^24 in [0, 1),
// sign from one bit. The operands of every figure (never zero: zeros draw less
// power and would flatter the clock).
__device__ __forceinline__ float unit_value(std::uint32_t h) {
  const float v = 0.25f + 0.75f * static_cast<float>(h >> 8) * (1.0f / 16777216.0f);
  return (h & 1u) ? -v : v;
}

__device__ __forceinline__ unsigned long long global_ns() {
  unsigned long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

// Start and stop of a block's timed region, between barriers so that the
// whole block's work lies inside. Thread 0 records; the start values wait in
// shared memory, not in registers, so they are not live (or spilled to local
// memory) across the timed loop.
struct BlockClock {
  __device__ __forceinline__ static void start() {
    __syncthreads();
    if (threadIdx.x == 0) {
      start_ns() = global_ns();
      start_cycles() = clock64();
    }
  }
  __device__ __forceinline__ static void stop(ClockProbe p) {
    __syncthreads();
    if (threadIdx.x == 0) {
      const long long c1 = clock64();
      const unsigned long long t1 = global_ns();
      p.cycles[blockIdx.x] = c1 - start_cycles();
      p.ns[blockIdx.x] = t1 - start_ns();
    }
  }

 private:
  __device__ __forceinline__ static long long& start_cycles() {
    __shared__ long long c0;
    return c0;
  }
  __device__ __forceinline__ static unsigned long long& start_ns() {
    __shared__ unsigned long long t0;
    return t0;
  }
};

}  // namespace flashlab::ceilings::detail
