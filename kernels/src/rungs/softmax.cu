// Row softmax for the materialising rungs: P = softmax(scale · S) with the
// causal mask fused, S and P in HBM in the problem dtype.
//
// It is memory-bound (read S once, write P once), so it is written for
// bandwidth the way PyTorch's softmax is: one block per row, 16-byte vector
// loads and stores, the whole row held in registers (32 values per thread, up
// to 512 threads: rows up to 16,384 in one pass over HBM), warp-shuffle
// reductions. Longer rows take a two-pass kernel (online max and sum, then
// write), reading S twice.
#include <cmath>
#include <limits>

#include "common.cuh"
#include "softmax.cuh"

namespace flashlab::kernels::detail {
namespace {

constexpr int kValuesPerThread = 32;  // floats of the row each thread keeps in registers
constexpr int kRowMaxThreads = 512;
constexpr i64 kOnePassMaxRow = static_cast<i64>(kValuesPerThread) * kRowMaxThreads;  // 16,384

template <class T>
__device__ __forceinline__ void load_vec16(const T* p, float (&out)[Vec16<T>::n]) {
  const uint4 u = *reinterpret_cast<const uint4*>(p);
  const T* e = reinterpret_cast<const T*>(&u);
#pragma unroll
  for (int i = 0; i < Vec16<T>::n; ++i) out[i] = to_float(e[i]);
}

template <class T>
__device__ __forceinline__ void store_vec16(T* p, const float (&in)[Vec16<T>::n]) {
  uint4 u;
  T* e = reinterpret_cast<T*>(&u);
#pragma unroll
  for (int i = 0; i < Vec16<T>::n; ++i) e[i] = from_float<T>(in[i]);
  *reinterpret_cast<uint4*>(p) = u;
}

// One block per row; the row lives in registers between reading S and
// writing P. kVector: n_kv is a multiple of the vector width, so every row
// starts 16-byte aligned.
template <class T, bool kVector>
__global__ void __launch_bounds__(kRowMaxThreads)
    softmax_rows_one_pass(const T* __restrict__ S, T* __restrict__ P, i64 first_row, i64 n_q, i64 n_kv,
                          float scale_log2e, bool causal) {
  constexpr int V = Vec16<T>::n;
  constexpr int kChunks = kValuesPerThread / V;
  __shared__ float red_max[32], red_sum[32];
  const i64 row = first_row + blockIdx.x;
  const T* s = S + row * n_kv;  // (n_kv) one row of S
  T* p = P + row * n_kv;        // (n_kv) the same row of P
  // Causal keeps keys c ≤ r, r the query's row within its head.
  const i64 kept = causal ? min(n_kv, row % n_q + 1) : n_kv;

  float x[kChunks][V];  // the row, in the log2 domain: scale · log2(e) · S
  float m = -INFINITY;
#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const i64 col0 = (static_cast<i64>(c) * blockDim.x + threadIdx.x) * V;
    if (kVector && col0 + V <= n_kv) {
      load_vec16(s + col0, x[c]);
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v) x[c][v] = col0 + v < n_kv ? to_float(s[col0 + v]) : 0.f;
    }
#pragma unroll
    for (int v = 0; v < V; ++v) {
      x[c][v] = col0 + v < kept ? x[c][v] * scale_log2e : -INFINITY;
      m = fmaxf(m, x[c][v]);
    }
  }
  m = block_max(m, red_max);  // finite: key 0 is always kept

  float l = 0;
#pragma unroll
  for (int c = 0; c < kChunks; ++c)
#pragma unroll
    for (int v = 0; v < V; ++v) {
      x[c][v] = exp2f(x[c][v] - m);  // exp2(−inf) = 0 for masked keys
      l += x[c][v];
    }
  const float inv_l = 1.f / block_sum(l, red_sum);

#pragma unroll
  for (int c = 0; c < kChunks; ++c) {
    const i64 col0 = (static_cast<i64>(c) * blockDim.x + threadIdx.x) * V;
    if (col0 >= n_kv) continue;
#pragma unroll
    for (int v = 0; v < V; ++v) x[c][v] *= inv_l;
    if (kVector && col0 + V <= n_kv) {
      store_vec16(p + col0, x[c]);
    } else {
#pragma unroll
      for (int v = 0; v < V; ++v)
        if (col0 + v < n_kv) p[col0 + v] = from_float<T>(x[c][v]);
    }
  }
}

// Rows longer than the registers hold: each thread keeps a running (max, sum)
// over its strided elements (online softmax), the block combines them, and a
// second pass writes P.
template <class T>
__global__ void __launch_bounds__(kRowMaxThreads)
    softmax_rows_two_pass(const T* __restrict__ S, T* __restrict__ P, i64 first_row, i64 n_q, i64 n_kv,
                          float scale_log2e, bool causal) {
  __shared__ float red_max[32], red_sum[32];
  const i64 row = first_row + blockIdx.x;
  const T* s = S + row * n_kv;
  T* p = P + row * n_kv;
  const i64 kept = causal ? min(n_kv, row % n_q + 1) : n_kv;

  float m = -INFINITY, l = 0;
  for (i64 col = threadIdx.x; col < kept; col += blockDim.x) {
    const float x = to_float(s[col]) * scale_log2e;
    if (x > m) {
      l = l * exp2f(m - x) + 1.f;
      m = x;
    } else {
      l += exp2f(x - m);
    }
  }
  const float m_row = block_max(m, red_max);
  const float l_row = block_sum(m == -INFINITY ? 0.f : l * exp2f(m - m_row), red_sum);
  const float inv_l = 1.f / l_row;
  for (i64 col = threadIdx.x; col < n_kv; col += blockDim.x) {
    const float e = col < kept ? exp2f(to_float(s[col]) * scale_log2e - m_row) : 0.f;
    p[col] = from_float<T>(e * inv_l);
  }
}

unsigned threads_for_row(i64 n_kv) {
  unsigned t = 64;  // 64-thread blocks still fill an SM (32 blocks × 64)
  while (t < kRowMaxThreads && static_cast<i64>(t) * kValuesPerThread < n_kv) t *= 2;
  return t;
}

}  // namespace

void row_softmax(sim::DType dtype, const void* S, void* P, i64 rows, i64 n_q, i64 n_kv, float scale, bool causal,
                 cudaStream_t stream) {
  const float scale_log2e = scale * kLog2e;
  constexpr i64 kMaxGridX = 0x7fffffff;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* s = static_cast<const T*>(S);
    T* p = static_cast<T*>(P);
    for (i64 first = 0; first < rows; first += kMaxGridX) {
      const auto blocks = static_cast<unsigned>(std::min(kMaxGridX, rows - first));
      if (n_kv <= kOnePassMaxRow) {
        const unsigned threads = threads_for_row(n_kv);
        if (n_kv % Vec16<T>::n == 0) {
          softmax_rows_one_pass<T, true><<<blocks, threads, 0, stream>>>(s, p, first, n_q, n_kv, scale_log2e, causal);
          FLASHLAB_LAUNCH_CHECK("softmax_rows_one_pass");
        } else {
          softmax_rows_one_pass<T, false><<<blocks, threads, 0, stream>>>(s, p, first, n_q, n_kv, scale_log2e, causal);
          FLASHLAB_LAUNCH_CHECK("softmax_rows_one_pass");
        }
      } else {
        softmax_rows_two_pass<T><<<blocks, kRowMaxThreads, 0, stream>>>(s, p, first, n_q, n_kv, scale_log2e, causal);
        FLASHLAB_LAUNCH_CHECK("softmax_rows_two_pass");
      }
    }
  });
}

}  // namespace flashlab::kernels::detail
