// Global-memory bandwidth: read (through L1 and L2, or L2 only), write and
// copy, 16-byte accesses, a grid that fills every SM. The same read kernel
// measures HBM (one pass over a buffer ≥ 8× L2), L2 (many passes over ≤ L2/2)
// and every point of the working-set sweep.
#include <algorithm>

#include "check.hpp"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kStreamThreads = 256;
constexpr int kUnroll = 4;  // independent 16-byte accesses in flight per thread

// asm volatile: the compiler may neither drop a load whose value it could
// predict nor hoist a re-read of the same word out of the pass loop.
template <Loads L>
__device__ __forceinline__ uint4 load16(const uint4* p) {
  uint4 v;
  if constexpr (L == Loads::l2_only)
    asm volatile("ld.global.cg.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  else
    asm volatile("ld.global.v4.u32 {%0, %1, %2, %3}, [%4];" : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w) : "l"(p));
  return v;
}

__device__ __forceinline__ std::uint32_t fold(uint4 v) { return v.x ^ v.y ^ v.z ^ v.w; }

template <Loads L>
__global__ void __launch_bounds__(kStreamThreads)
    read_kernel(const uint4* __restrict__ data, i64 words, int passes, std::uint32_t sentinel,
                std::uint32_t* __restrict__ out) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  const i64 tid = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  std::uint32_t acc = 0;
  if (words >= stride) {
    // Grid-stride: each SM owns the same words on every pass (blocks stay put),
    // so its share hits its L1 when it fits there.
    for (int p = 0; p < passes; ++p) {
      i64 k = tid;
      for (; k + (kUnroll - 1) * stride < words; k += kUnroll * stride) {
        const uint4 a = load16<L>(data + k);
        const uint4 b = load16<L>(data + k + stride);
        const uint4 c = load16<L>(data + k + 2 * stride);
        const uint4 d = load16<L>(data + k + 3 * stride);
        acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
      }
      for (; k < words; k += stride) acc ^= fold(load16<L>(data + k));
    }
  } else {
    // A working set smaller than the grid: threads wrap around it; `passes` is
    // a multiple of kUnroll (read_buffer rounds it). Every load of a thread
    // reads another word — the window moves by a warp's width (32 words) per
    // load, staying coalesced — because ptxas merges re-reads of one address
    // even from asm volatile (the first H100 run measured 86 TB/s for 1 KiB).
    // Sweep sizes are powers of two, so the wrap is a mask; other sizes use %.
    const bool pow2 = (words & (words - 1)) == 0;
    const i64 mask = words - 1;
    auto at = [&](i64 k) { return data + (pow2 ? (k & mask) : (k % words)); };
    for (int it = 0; it < passes; it += kUnroll) {
      const i64 k = tid + static_cast<i64>(it) * 32;
      const uint4 a = load16<L>(at(k));
      const uint4 b = load16<L>(at(k + 32));
      const uint4 c = load16<L>(at(k + 64));
      const uint4 d = load16<L>(at(k + 96));
      acc ^= fold(a) ^ fold(b) ^ fold(c) ^ fold(d);
    }
  }
  if (acc == sentinel) out[0] = acc;
}

__global__ void __launch_bounds__(kStreamThreads) write_kernel(uint4* __restrict__ data, i64 words, std::uint32_t seed) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  i64 k = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  // Values differ per word and are never zero; computing them is a few integer
  // operations per 16 bytes, far below what the memory takes.
  for (; k + (kUnroll - 1) * stride < words; k += kUnroll * stride) {
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) {
      const std::uint32_t v = (static_cast<std::uint32_t>(k + u * stride) ^ seed) | 1u;
      data[k + u * stride] = make_uint4(v, v + 2, v + 4, v + 6);
    }
  }
  for (; k < words; k += stride) {
    const std::uint32_t v = (static_cast<std::uint32_t>(k) ^ seed) | 1u;
    data[k] = make_uint4(v, v + 2, v + 4, v + 6);
  }
}

__global__ void __launch_bounds__(kStreamThreads)
    copy_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, i64 words) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  i64 k = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (; k + (kUnroll - 1) * stride < words; k += kUnroll * stride) {
    uint4 v[kUnroll];
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) v[u] = src[k + u * stride];  // all loads first: kUnroll in flight
#pragma unroll
    for (int u = 0; u < kUnroll; ++u) dst[k + u * stride] = v[u];
  }
  for (; k < words; k += stride) dst[k] = src[k];
}

int resident_blocks(const void* kernel, int threads) {
  int per_sm = 0;
  CEILINGS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, 0));
  return per_sm > 0 ? per_sm : 1;
}

}  // namespace

const char* loads_name(Loads l) { return l == Loads::l2_only ? "ld.global.cg" : "ld.global"; }

Grid stream_grid(int sm_count) {
  // The least resident of the kernels sets the grid, so all of them keep every block resident.
  int per_sm = resident_blocks(reinterpret_cast<const void*>(read_kernel<Loads::cached>), kStreamThreads);
  per_sm = std::min(per_sm, resident_blocks(reinterpret_cast<const void*>(read_kernel<Loads::l2_only>), kStreamThreads));
  per_sm = std::min(per_sm, resident_blocks(reinterpret_cast<const void*>(write_kernel), kStreamThreads));
  per_sm = std::min(per_sm, resident_blocks(reinterpret_cast<const void*>(copy_kernel), kStreamThreads));
  return {sm_count * per_sm, kStreamThreads};
}

i64 read_bytes(i64 bytes, int passes, Grid g) {
  const i64 words = bytes / 16;
  if (words >= g.total_threads()) return words * 16 * passes;
  const int rounded = (passes + kUnroll - 1) / kUnroll * kUnroll;
  return g.total_threads() * 16 * rounded;
}

void read_buffer(Loads loads, const void* data, i64 bytes, int passes, Grid g, std::uint32_t sentinel,
                 std::uint32_t* out, cudaStream_t s) {
  const i64 words = bytes / 16;
  const int p = words >= g.total_threads() ? passes : (passes + kUnroll - 1) / kUnroll * kUnroll;
  const auto* d = static_cast<const uint4*>(data);
  if (loads == Loads::l2_only) {
    read_kernel<Loads::l2_only><<<g.blocks, g.threads, 0, s>>>(d, words, p, sentinel, out);
    CEILINGS_LAUNCH_CHECK("read_kernel<l2_only>");
  } else {
    read_kernel<Loads::cached><<<g.blocks, g.threads, 0, s>>>(d, words, p, sentinel, out);
    CEILINGS_LAUNCH_CHECK("read_kernel<cached>");
  }
}

void write_buffer(void* data, i64 bytes, std::uint32_t seed, Grid g, cudaStream_t s) {
  write_kernel<<<g.blocks, g.threads, 0, s>>>(static_cast<uint4*>(data), bytes / 16, seed);
  CEILINGS_LAUNCH_CHECK("write_kernel");
}

void copy_buffer(void* dst, const void* src, i64 bytes, Grid g, cudaStream_t s) {
  copy_kernel<<<g.blocks, g.threads, 0, s>>>(static_cast<uint4*>(dst), static_cast<const uint4*>(src), bytes / 16);
  CEILINGS_LAUNCH_CHECK("copy_kernel");
}

}  // namespace flashlab::ceilings::detail
