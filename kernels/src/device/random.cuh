// The inputs' generator, one definition: element i of a tensor seeded with
// `seed` is N(0, scale²) from one 64-bit hash of (seed, i), the same value
// whatever GPU, launch shape or chunking computes it (the runner's whole
// tensors, the ring's chunks of them).
#pragma once

namespace flashlab::kernels::detail {

__device__ __forceinline__ unsigned long long splitmix64(unsigned long long z) {
  z += 0x9e3779b97f4a7c15ull;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

// Box-Muller on two 24-bit uniforms of one 64-bit hash of (seed, i).
__device__ __forceinline__ float normal_at(unsigned long long seed, unsigned long long i, float scale) {
  const unsigned long long h = splitmix64(seed ^ splitmix64(i));
  const float u1 = (static_cast<float>(h >> 40) + 0.5f) * (1.0f / 16777216.0f);  // (0, 1)
  const float u2 = static_cast<float>((h >> 16) & 0xffffffull) * (1.0f / 16777216.0f);
  return sqrtf(-2.0f * logf(u1)) * cospif(2.0f * u2) * scale;
}

}  // namespace flashlab::kernels::detail
