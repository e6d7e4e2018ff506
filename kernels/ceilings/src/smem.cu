// Shared-memory bandwidth: every SM full of blocks, each block re-reading its
// own 32 KiB with conflict-free 16-byte ld.shared (consecutive threads read
// consecutive 16-byte words, so each quarter-warp covers the 32 banks once).
#include "check.hpp"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kSmemThreads = 256;
constexpr int kWordsPerThread = 8;                             // 16-byte words per thread per repetition
constexpr int kBlockWords = kSmemThreads * kWordsPerThread;    // 2048 words = 32 KiB per block
static_assert(kBlockWords * 16 <= 48 * 1024, "static shared memory is limited to 48 KiB per block");

// ld.volatile: `asm volatile` only binds the C++ compiler; ptxas still merges
// a plain ld.shared that re-reads an unchanged word (the first H100 run measured
// 125 TB/s, 3.7x the hardware's 128 B/clock/SM). A volatile shared load is the
// same LDS.128 that ptxas may not merge or hoist.
__device__ __forceinline__ uint4 lds16(std::uint32_t addr) {
  uint4 v;
  asm volatile("ld.volatile.shared.v4.u32 {%0, %1, %2, %3}, [%4];"
               : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
               : "r"(addr));
  return v;
}

__global__ void __launch_bounds__(kSmemThreads)
    smem_read_kernel(int reps, std::uint32_t seed, std::uint32_t sentinel, std::uint32_t* __restrict__ out) {
  __shared__ uint4 buf[kBlockWords];  // (kBlockWords,) 16-byte words in shared memory
  for (int k = threadIdx.x; k < kBlockWords; k += kSmemThreads) {
    const std::uint32_t h = mix32(static_cast<std::uint32_t>(k) ^ seed ^ (blockIdx.x << 16));
    buf[k] = make_uint4(h | 1u, mix32(h) | 1u, mix32(h + 1) | 1u, mix32(h + 2) | 1u);
  }
  __syncthreads();
  const auto base = static_cast<std::uint32_t>(__cvta_generic_to_shared(buf + threadIdx.x));
  std::uint32_t acc = 0;
  for (int r = 0; r < reps; ++r) {
    // Unrolled: the offsets become immediates of LDS.128; ld.volatile keeps
    // every repetition's loads (they read the same words each time).
#pragma unroll
    for (int w = 0; w < kWordsPerThread; ++w) {
      const uint4 v = lds16(base + static_cast<std::uint32_t>(w * kSmemThreads * 16));
      acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
  }
  if (acc == sentinel) out[blockIdx.x] = acc;
}

}  // namespace

Grid smem_grid(int sm_count) {
  int per_sm = 0;
  CEILINGS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, smem_read_kernel, kSmemThreads, 0));
  return {sm_count * (per_sm > 0 ? per_sm : 1), kSmemThreads};
}

i64 smem_bytes_per_rep(Grid g) { return g.total_threads() * kWordsPerThread * 16; }

void smem_read(int reps, Grid g, std::uint32_t seed, std::uint32_t sentinel, std::uint32_t* out, cudaStream_t s) {
  smem_read_kernel<<<g.blocks, g.threads, 0, s>>>(reps, seed, sentinel, out);
  CEILINGS_LAUNCH_CHECK("smem_read_kernel");
}

std::string smem_method(Grid g) {
  return "smem_read_kernel: " + std::to_string(g.blocks) + " blocks x " + std::to_string(g.threads) +
         " threads (every SM full), 32 KiB per block re-read with ld.shared.v4.u32, conflict-free";
}

}  // namespace flashlab::ceilings::detail
