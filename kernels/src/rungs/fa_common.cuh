// Pieces the two CUDA-core FlashAttention rungs (fa1.cu, fa2.cu) share: how a
// query row is split over lanes, loading a K_j / V_j tile into shared memory,
// and one row of S_ij = τ Q_i K_jᵀ.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "common.cuh"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::kernels::detail {

constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// A query row of Q_i / O_i belongs to kLanes adjacent lanes of one warp; each
// keeps kDims of its d elements in registers, as float4 chunks. Chunk c of
// lane `part` holds elements 4·(c·kLanes + part) … +3, so the lanes of a row
// read adjacent 16-byte words of a K_j row (no bank conflicts) and lanes of
// different rows read the same word (a broadcast).
template <int D>
struct RowSplit {
  static constexpr int kLanes = layout::fa_lanes_per_row(D);
  static constexpr int kDims = D / kLanes;
  static constexpr int kChunks = kDims / 4;
  static constexpr int kMaxThreads = layout::fa_max_threads_per_block(D);
  static_assert(D % (4 * kLanes) == 0, "d must split into float4 chunks over the lanes of a row");
  static_assert(32 % kLanes == 0, "the lanes of a row must not straddle warps");
  __device__ static int dim(int chunk, int part) { return 4 * (chunk * kLanes + part); }
};

// Rows [row0, row0 + rows) of one head's [n, D] matrix into `dst` (rows, D) in
// shared memory as fp32; rows at or past n are zeros (a partial last tile).
// The rows are contiguous in HBM, so consecutive threads read consecutive
// 4-element words.
template <class T, int D>
__device__ __forceinline__ void load_tile(float* dst, const T* head, i64 row0, int rows, i64 n) {
  constexpr int kWords = D / 4;
  const int words = rows * kWords;
  for (int w = threadIdx.x; w < words; w += blockDim.x) {
    const int r = w / kWords, k = (w % kWords) * 4;
    const i64 g = row0 + r;
    const float4 v = g < n ? load4(head + g * D + k) : make_float4(0.f, 0.f, 0.f, 0.f);
    *reinterpret_cast<float4*>(dst + r * D + k) = v;
  }
}

// This lane's part of a query row, times `scale` (τ·log2 e: S comes out in the
// log2 domain, so softmax uses exp2).
template <class T, int D>
__device__ __forceinline__ void load_row(float (&x)[RowSplit<D>::kDims], const T* row, int part, float scale) {
  using Split = RowSplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 v = load4(row + Split::dim(c, part));
    x[4 * c + 0] = v.x * scale;
    x[4 * c + 1] = v.y * scale;
    x[4 * c + 2] = v.z * scale;
    x[4 * c + 3] = v.w * scale;
  }
}

template <class T, int D>
__device__ __forceinline__ void store_row(T* row, const float (&x)[RowSplit<D>::kDims], int part, float scale) {
  using Split = RowSplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c)
    store4(row + Split::dim(c, part),
           make_float4(x[4 * c] * scale, x[4 * c + 1] * scale, x[4 * c + 2] * scale, x[4 * c + 3] * scale));
}

// q_r · k_c over the whole row: each lane its chunks, then a butterfly over
// the row's lanes. Every lane of the warp must call it (full-mask shuffles).
template <int D>
__device__ __forceinline__ float row_dot(const float (&q)[RowSplit<D>::kDims], const float* k_row, int part) {
  using Split = RowSplit<D>;
  float acc = 0.f;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 k = *reinterpret_cast<const float4*>(k_row + Split::dim(c, part));
    acc = fmaf(q[4 * c + 0], k.x, acc);
    acc = fmaf(q[4 * c + 1], k.y, acc);
    acc = fmaf(q[4 * c + 2], k.z, acc);
    acc = fmaf(q[4 * c + 3], k.w, acc);
  }
#pragma unroll
  for (int o = Split::kLanes / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

// o += p · v_c for this lane's chunks.
template <int D>
__device__ __forceinline__ void row_axpy(float (&o)[RowSplit<D>::kDims], float p, const float* v_row, int part) {
  using Split = RowSplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 v = *reinterpret_cast<const float4*>(v_row + Split::dim(c, part));
    o[4 * c + 0] = fmaf(p, v.x, o[4 * c + 0]);
    o[4 * c + 1] = fmaf(p, v.y, o[4 * c + 1]);
    o[4 * c + 2] = fmaf(p, v.z, o[4 * c + 2]);
    o[4 * c + 3] = fmaf(p, v.w, o[4 * c + 3]);
  }
}

// The dynamic shared memory of a CUDA-core FlashAttention block, carved in
// the order layout::fa_smem_bytes counts it: K_j and V_j (B_c, d) and S_ij
// (B_r, B_c + 1; the padding column keeps rows in different banks).
struct FaTiles {
  float* K_j;
  float* V_j;
  float* S_ij;
  int ld_S;
};
template <int D>
__device__ __forceinline__ FaTiles carve_fa_tiles(float4* smem, int Bc) {
  float* K_j = reinterpret_cast<float*>(smem);
  float* V_j = K_j + Bc * D;
  return {K_j, V_j, V_j + Bc * D, Bc + 1};
}

// S_ij = τ Q_i K_jᵀ for this lane's query row `row` over the `cols` keys of the
// tile starting at key `key0`, masked above the diagonal when causal; one lane
// of the row (r < B_r) stores each entry in the row of S_ij. Returns the row's
// max (−∞ when every key is masked). The caller syncs the warp before reading.
template <int D>
__device__ __forceinline__ float score_row(const float (&q)[RowSplit<D>::kDims], const float* K_j, float* S_row,
                                           int cols, i64 key0, i64 row, bool causal, bool stores, int part) {
  float row_max = -INFINITY;
  for (int c = 0; c < cols; ++c) {
    float s = row_dot<D>(q, K_j + c * D, part);
    if (causal && key0 + c > row) s = -INFINITY;
    if (stores && part == c % RowSplit<D>::kLanes) S_row[c] = s;
    row_max = fmaxf(row_max, s);
  }
  return row_max;
}

// Calls f(std::integral_constant<int, D>{}) for d among the compiled head dims
// (layout::kFaHeadDims, one instantiation each).
template <std::size_t I = 0, class F>
void dispatch_head_dim(i64 d, F&& f) {
  constexpr std::size_t n = sizeof layout::kFaHeadDims / sizeof layout::kFaHeadDims[0];
  if constexpr (I < n) {
    constexpr int D = layout::kFaHeadDims[I];
    if (d == D) {
      f(std::integral_constant<int, D>{});
      return;
    }
    dispatch_head_dim<I + 1>(d, std::forward<F>(f));
  } else {
    std::string compiled;
    for (int x : layout::kFaHeadDims) compiled += (compiled.empty() ? "" : ", ") + std::to_string(x);
    throw Unsupported("not compiled for head dim d=" + std::to_string(d) + " (compiled: " + compiled + ")");
  }
}

// The checks every FlashAttention launch makes before it spends anything.
inline void check_fa_args(const LaunchArgs& a, const char* rung) {
  const sim::AttentionProblem& p = a.problem;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw Unsupported(std::string(rung) + ": Q, K, V and O must be device pointers (got null)");
  if (a.tiles.Br < 1 || a.tiles.Bc < 1)
    throw Unsupported(std::string(rung) + ": tiles must be at least 1×1 (got B_r=" + std::to_string(a.tiles.Br) +
                      ", B_c=" + std::to_string(a.tiles.Bc) + ")");
  if (p.causal && p.n_kv() != p.n_q())
    throw Unsupported(std::string(rung) + ": causal attention needs seq_kv = seq_q");
  if (a.softmax_scale <= 0) throw Unsupported(std::string(rung) + ": softmax scale must be positive");
}

// What a CUDA-core FlashAttention launch needs, computed once after the checks:
// the block grid (T_r, T_c and the causal first_row(j) from the simulator's
// TileGrid: the kernels visit exactly the blocks the model counts), the block
// size and shared memory of layouts.hpp, and a name for refusals.
struct FaLaunchPlan {
  sim::TileGrid grid;
  i64 threads = 0, smem = 0;
  std::string what;  // "fa2 with B_r=64, B_c=64, d=128"
};

inline FaLaunchPlan fa_launch_plan(const LaunchArgs& a, const char* rung) {
  check_fa_args(a, rung);
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  FaLaunchPlan plan;
  plan.grid = sim::TileGrid(p, t);
  if (plan.grid.T_r > 0x7fffffff)
    throw Unsupported(std::string(rung) + ": T_r = " + std::to_string(plan.grid.T_r) +
                      " row blocks exceed the grid's x limit");
  plan.threads = layout::fa_threads_per_block(p.head_dim, t);
  plan.smem = layout::fa_smem_bytes(p.head_dim, t);
  plan.what = std::string(rung) + " with B_r=" + std::to_string(t.Br) + ", B_c=" + std::to_string(t.Bc) +
              ", d=" + std::to_string(p.head_dim);
  return plan;
}

}  // namespace flashlab::kernels::detail
