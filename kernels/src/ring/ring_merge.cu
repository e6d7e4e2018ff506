// The ring's element-wise kernels: chunked inputs, the K/V head expansion of
// grouped-query attention, the online-softmax merge of partial outputs through
// the logsumexp, and the fp32 accumulators of dQ, dK, dV. Memory-bound
// grid-stride loops; the attention itself is the rungs'.
#include <cmath>
#include <cstdint>

#include "rungs/common.cuh"
#include "device/random.cuh"
#include "ring_merge.hpp"

namespace flashlab::kernels::ring {
namespace {

using detail::from_float;
using detail::to_float;

unsigned grid_for(i64 n) { return static_cast<unsigned>(std::max<i64>(1, std::min<i64>((n + 255) / 256, 8192))); }

template <class T>
__global__ void fill_chunk_kernel(T* __restrict__ x, i64 n_elems, i64 chunk_rows, i64 d, i64 seq, i64 begin,
                                  unsigned long long seed, float scale) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_elems; i += stride) {
    const i64 x_ = i % d;
    const i64 row = i / d;                 // (b·heads + h)·n + t
    const i64 head = row / chunk_rows, t = row % chunk_rows;
    const i64 global = (head * seq + begin + t) * d + x_;
    x[i] = from_float<T>(detail::normal_at(seed, static_cast<unsigned long long>(global), scale));
  }
}

template <class T>
__global__ void expand_heads_kernel(T* __restrict__ dst, const T* __restrict__ src, i64 n_elems, i64 heads,
                                    i64 group, i64 head_elems) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_elems; i += stride) {
    const i64 bh = i / head_elems, within = i % head_elems;
    const i64 b = bh / heads, h = bh % heads;
    const i64 kv = b * (heads / group) + h / group;
    dst[i] = src[kv * head_elems + within];
  }
}

// The same expansion a head at a time: block x copies a slice of destination
// head bh = x / blocks_per_head from its K/V head, in 16-byte words, so that
// no thread divides per element (the element-wise kernel above runs at a
// fraction of the HBM's rate for it). Needs both heads' bytes in whole words.
__global__ void expand_heads_words_kernel(uint4* __restrict__ dst, const uint4* __restrict__ src, i64 head_words,
                                          i64 heads, i64 group, i64 blocks_per_head) {
  const i64 bh = static_cast<i64>(blockIdx.x) / blocks_per_head, part = static_cast<i64>(blockIdx.x) % blocks_per_head;
  const i64 b = bh / heads, h = bh % heads;
  const uint4* from = src + (b * (heads / group) + h / group) * head_words;
  uint4* to = dst + bh * head_words;
  const i64 stride = blocks_per_head * blockDim.x;
  for (i64 i = part * blockDim.x + threadIdx.x; i < head_words; i += stride) to[i] = from[i];
}

// One thread per element; the row's two logsumexps are read by every thread of
// the row. The new logsumexp is written by merge_lse_kernel, launched after
// this one, so that no thread reads a row's L_acc after it changed.
template <class T>
__global__ void merge_kernel(float* __restrict__ o_acc, float* __restrict__ lse_acc, const T* __restrict__ o_part,
                             const float* __restrict__ lse_part, i64 n_elems, i64 d, bool first) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_elems; i += stride) {
    const i64 row = i / d;
    const float lp = lse_part[row];
    const float op = to_float(o_part[i]);
    if (first) {
      o_acc[i] = op;
      if (i % d == 0) lse_acc[row] = lp;
      continue;
    }
    const float la = lse_acc[row];
    // A side with no visible key has L = −inf and weight 0. O_acc and O_part
    // are each normalised by their own ℓ: the merge weighs them by ℓ = e^L.
    const float m = fmaxf(la, lp);
    if (m == -INFINITY) continue;
    const float wa = expf(la - m), wp = expf(lp - m);
    o_acc[i] = (wa * o_acc[i] + wp * op) / (wa + wp);
  }
}

// The logsumexps after merge_kernel has used the old ones.
__global__ void merge_lse_kernel(float* __restrict__ lse_acc, const float* __restrict__ lse_part, i64 rows) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 r = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; r < rows; r += stride) {
    const float la = lse_acc[r], lp = lse_part[r];
    const float m = fmaxf(la, lp);
    lse_acc[r] = m == -INFINITY ? m : m + logf(expf(la - m) + expf(lp - m));
  }
}

template <class T>
__global__ void convert_kernel(T* __restrict__ dst, const float* __restrict__ src, i64 n) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) dst[i] = from_float<T>(src[i]);
}

template <class T>
__global__ void accumulate_kernel(float* __restrict__ acc, const T* __restrict__ part, i64 n) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) acc[i] += to_float(part[i]);
}

template <class T>
__global__ void accumulate_grouped_kernel(float* __restrict__ acc, const T* __restrict__ part, i64 n_acc, i64 kv_heads,
                                          i64 group, i64 head_elems) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n_acc; i += stride) {
    const i64 bk = i / head_elems, within = i % head_elems;
    const i64 b = bk / kv_heads, k = bk % kv_heads;
    const i64 first_head = b * kv_heads * group + k * group;
    float s = 0;
    for (i64 g = 0; g < group; ++g) s += to_float(part[(first_head + g) * head_elems + within]);
    acc[i] += s;
  }
}

__global__ void add_f32_kernel(float* __restrict__ acc, const float* __restrict__ add, i64 n) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 i = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; i < n; i += stride) acc[i] += add[i];
}

cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }

}  // namespace

void fill_chunk_normal(void* dst, sim::DType t, i64 batch, i64 heads, i64 n, i64 d, i64 seq, i64 begin,
                       std::uint64_t seed, float scale, void* stream) {
  const i64 elems = batch * heads * n * d;
  if (elems <= 0) return;
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    fill_chunk_kernel<T><<<grid_for(elems), 256, 0, as_stream(stream)>>>(static_cast<T*>(dst), elems, n, d, seq, begin,
                                                                        seed, scale);
    FLASHLAB_LAUNCH_CHECK("fill_chunk_kernel");
  });
}

void expand_heads(void* dst, const void* src, sim::DType t, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 d,
                  void* stream) {
  const i64 elems = batch * heads * n * d;
  if (elems <= 0) return;
  const i64 head_bytes = n * d * static_cast<i64>(sim::dtype_bytes(t));
  const bool words = head_bytes % 16 == 0 && reinterpret_cast<std::uintptr_t>(dst) % 16 == 0 &&
                     reinterpret_cast<std::uintptr_t>(src) % 16 == 0;
  if (words) {
    const i64 head_words = head_bytes / 16;
    const i64 blocks_per_head = std::max<i64>(1, std::min<i64>((head_words + 255) / 256, 64));
    expand_heads_words_kernel<<<static_cast<unsigned>(batch * heads * blocks_per_head), 256, 0, as_stream(stream)>>>(
        static_cast<uint4*>(dst), static_cast<const uint4*>(src), head_words, heads, heads / kv_heads, blocks_per_head);
    FLASHLAB_LAUNCH_CHECK("expand_heads_words_kernel");
    return;
  }
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    expand_heads_kernel<T><<<grid_for(elems), 256, 0, as_stream(stream)>>>(
        static_cast<T*>(dst), static_cast<const T*>(src), elems, heads, heads / kv_heads, n * d);
    FLASHLAB_LAUNCH_CHECK("expand_heads_kernel");
  });
}

void merge_partial(float* o_acc, float* lse_acc, const void* o_part, const float* lse_part, sim::DType t, i64 rows,
                   i64 d, bool first, void* stream) {
  const i64 elems = rows * d;
  if (elems <= 0) return;
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    merge_kernel<T><<<grid_for(elems), 256, 0, as_stream(stream)>>>(o_acc, lse_acc, static_cast<const T*>(o_part),
                                                                    lse_part, elems, d, first);
    FLASHLAB_LAUNCH_CHECK("merge_kernel");
  });
  if (!first) {
    merge_lse_kernel<<<grid_for(rows), 256, 0, as_stream(stream)>>>(lse_acc, lse_part, rows);
    FLASHLAB_LAUNCH_CHECK("merge_lse_kernel");
  }
}

void convert_from_f32(void* dst, const float* src, sim::DType t, i64 n, void* stream) {
  if (n <= 0) return;
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    convert_kernel<T><<<grid_for(n), 256, 0, as_stream(stream)>>>(static_cast<T*>(dst), src, n);
    FLASHLAB_LAUNCH_CHECK("convert_kernel");
  });
}

void accumulate(float* acc, const void* part, sim::DType t, i64 n, void* stream) {
  if (n <= 0) return;
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    accumulate_kernel<T><<<grid_for(n), 256, 0, as_stream(stream)>>>(acc, static_cast<const T*>(part), n);
    FLASHLAB_LAUNCH_CHECK("accumulate_kernel");
  });
}

void accumulate_grouped(float* acc, const void* part, sim::DType t, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 d,
                        void* stream) {
  const i64 elems = batch * kv_heads * n * d;
  if (elems <= 0) return;
  detail::dispatch_dtype(t, [&](auto tag) {
    using T = typename decltype(tag)::type;
    accumulate_grouped_kernel<T><<<grid_for(elems), 256, 0, as_stream(stream)>>>(
        acc, static_cast<const T*>(part), elems, kv_heads, heads / kv_heads, n * d);
    FLASHLAB_LAUNCH_CHECK("accumulate_grouped_kernel");
  });
}

void add_f32(float* acc, const float* add, i64 n, void* stream) {
  if (n <= 0) return;
  add_f32_kernel<<<grid_for(n), 256, 0, as_stream(stream)>>>(acc, add, n);
  FLASHLAB_LAUNCH_CHECK("add_f32_kernel");
}

}  // namespace flashlab::kernels::ring
