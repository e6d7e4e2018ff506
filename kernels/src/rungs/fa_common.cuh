// Pieces the CUDA-core FlashAttention rungs (fa1.cu, fa2.cu, fa2_bwd.cu) share:
// how a row is split over lanes and its dot products and updates, loading a
// tile into shared memory, one row of S_ij = τ Q_i K_jᵀ, the launch checks.
#pragma once

#include <string>
#include <type_traits>
#include <utility>

#include "common.cuh"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/sim/problem/pass.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::kernels::detail {

// A row of d elements held in registers by kLanes adjacent lanes of one warp:
// each keeps kDims of them, as float4 chunks. Chunk c of lane `part` holds
// elements 4·(c·kLanes + part) … +3, so the lanes of a row read adjacent
// 16-byte words of a row in shared memory (no bank conflicts) and lanes of
// different rows read the same word (a broadcast). The forward splits a
// query row of Q_i / O_i (RowSplit), the backward a key row of K_j, V_j and
// dK_j, dV_j (fa2_bwd.cu).
template <int D, int Lanes>
struct LaneSplit {
  static constexpr int kLanes = Lanes;
  static constexpr int kDims = D / kLanes;
  static constexpr int kChunks = kDims / 4;
  static_assert(D % (4 * kLanes) == 0, "d must split into float4 chunks over the lanes of a row");
  static_assert(32 % kLanes == 0, "the lanes of a row must not straddle warps");
  __device__ static int dim(int chunk, int part) { return 4 * (chunk * kLanes + part); }
};

template <int D>
struct RowSplit : LaneSplit<D, layout::fa_lanes_per_row(D)> {
  static constexpr int kMaxThreads = layout::fa_max_threads_per_block(D);
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

// This lane's part of a row, times `scale` (τ·log2 e for Q_i and K_j: S comes
// out in the log2 domain, so softmax uses exp2). kMayBeNull: a null row (a key
// of the padding lanes) gives zeros; without it the pointer is not tested.
template <class Split, bool kMayBeNull = false, class T>
__device__ __forceinline__ void load_row(float (&x)[Split::kDims], const T* row, int part, float scale) {
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 v = kMayBeNull && row == nullptr ? make_float4(0.f, 0.f, 0.f, 0.f) : load4(row + Split::dim(c, part));
    x[4 * c + 0] = v.x * scale;
    x[4 * c + 1] = v.y * scale;
    x[4 * c + 2] = v.z * scale;
    x[4 * c + 3] = v.w * scale;
  }
}

template <class Split, class T>
__device__ __forceinline__ void store_row(T* row, const float (&x)[Split::kDims], int part, float scale) {
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c)
    store4(row + Split::dim(c, part),
           make_float4(x[4 * c] * scale, x[4 * c + 1] * scale, x[4 * c + 2] * scale, x[4 * c + 3] * scale));
}

// x · row over the whole row: each lane its chunks, then a butterfly over the
// row's lanes. Every lane of the warp must call it (full-mask shuffles).
template <class Split>
__device__ __forceinline__ float row_dot(const float (&x)[Split::kDims], const float* row, int part) {
  float acc = 0.f;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 r = *reinterpret_cast<const float4*>(row + Split::dim(c, part));
    acc = fmaf(x[4 * c + 0], r.x, acc);
    acc = fmaf(x[4 * c + 1], r.y, acc);
    acc = fmaf(x[4 * c + 2], r.z, acc);
    acc = fmaf(x[4 * c + 3], r.w, acc);
  }
#pragma unroll
  for (int o = Split::kLanes / 2; o > 0; o >>= 1) acc += __shfl_xor_sync(0xffffffffu, acc, o);
  return acc;
}

// acc += a · row for this lane's chunks.
template <class Split>
__device__ __forceinline__ void row_axpy(float (&acc)[Split::kDims], float a, const float* row, int part) {
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 r = *reinterpret_cast<const float4*>(row + Split::dim(c, part));
    acc[4 * c + 0] = fmaf(a, r.x, acc[4 * c + 0]);
    acc[4 * c + 1] = fmaf(a, r.y, acc[4 * c + 1]);
    acc[4 * c + 2] = fmaf(a, r.z, acc[4 * c + 2]);
    acc[4 * c + 3] = fmaf(a, r.w, acc[4 * c + 3]);
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
    float s = row_dot<RowSplit<D>>(q, K_j + c * D, part);
    if (causal && key0 + c > row) s = -INFINITY;
    if (stores && part == c % RowSplit<D>::kLanes) S_row[c] = s;
    row_max = fmaxf(row_max, s);
  }
  return row_max;
}

// Calls f(std::integral_constant<int, D>{}, Tag<T>{}) for the problem's head
// dim among the compiled ones (layout::kFaHeadDims, one instantiation each) and
// T its dtype.
template <std::size_t I = 0, class F>
void dispatch_head_dim_and_dtype(const sim::AttentionProblem& p, F&& f) {
  constexpr std::size_t n = sizeof layout::kFaHeadDims / sizeof layout::kFaHeadDims[0];
  if constexpr (I < n) {
    constexpr int D = layout::kFaHeadDims[I];
    if (p.head_dim == D) {
      dispatch_dtype(p.dtype, [&](auto tag) { f(std::integral_constant<int, D>{}, tag); });
      return;
    }
    dispatch_head_dim_and_dtype<I + 1>(p, std::forward<F>(f));
  } else {
    std::string compiled;
    for (int x : layout::kFaHeadDims) compiled += (compiled.empty() ? "" : ", ") + std::to_string(x);
    throw Unsupported("not compiled for head dim d=" + std::to_string(p.head_dim) + " (compiled: " + compiled + ")");
  }
}

// The checks a CUDA-core FlashAttention forward launch makes of its tensors
// before it spends anything (the backward's: check_fa_bwd_args).
inline void check_fa_args(const LaunchArgs& a, const char* rung) {
  const sim::AttentionProblem& p = a.problem;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw Unsupported(std::string(rung) + ": Q, K, V and O must be device pointers (got null)");
  if (p.causal && p.n_kv() != p.n_q())
    throw Unsupported(std::string(rung) + ": causal attention needs seq_kv = seq_q");
  if (a.softmax_scale <= 0) throw Unsupported(std::string(rung) + ": softmax scale must be positive");
}

// What a CUDA-core FlashAttention launch needs, computed once after the checks:
// the block grid (T_r, T_c and the causal first_row(j) from the simulator's
// TileGrid: the kernels visit exactly the blocks the model counts), the block
// size and shared memory of layouts.hpp for its pass, the query heads per K/V
// head, and a name for refusals.
struct FaLaunchPlan {
  sim::TileGrid grid;
  i64 threads = 0, smem = 0;
  i64 kv_group = 1;  // H / H_kv
  std::string what;  // "fa2 with B_r=64, B_c=64, d=128"
};

// The forward puts a block per row block Q_i on the grid's x, the backward one
// per column block K_j, V_j. Refuses a launch that asks for what these rungs do
// not do (refuse_launch_extensions) and, for the forward, missing tensors.
inline FaLaunchPlan fa_launch_plan(const LaunchArgs& a, const char* rung, sim::Pass pass) {
  refuse_launch_extensions(a, rung);
  const bool backward = pass == sim::Pass::bwd;
  if (!backward) check_fa_args(a, rung);
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  if (t.Br < 1 || t.Bc < 1)
    throw Unsupported(std::string(rung) + ": tiles must be at least 1×1 (got B_r=" + std::to_string(t.Br) +
                      ", B_c=" + std::to_string(t.Bc) + ")");
  FaLaunchPlan plan;
  plan.grid = sim::TileGrid(p, t);
  const i64 blocks_x = backward ? plan.grid.T_c : plan.grid.T_r;
  if (blocks_x > 0x7fffffff)
    throw Unsupported(std::string(rung) + (backward ? ": T_c = " : ": T_r = ") + std::to_string(blocks_x) +
                      (backward ? " column" : " row") + " blocks exceed the grid's x limit");
  plan.threads = backward ? layout::fa_bwd_threads_per_block(p.head_dim, t) : layout::fa_threads_per_block(p.head_dim, t);
  plan.smem = backward ? layout::fa_bwd_smem_bytes(p.head_dim, t) : layout::fa_smem_bytes(p.head_dim, t);
  plan.kv_group = kv_group_of(a, rung);
  plan.what = std::string(rung) + " with B_r=" + std::to_string(t.Br) + ", B_c=" + std::to_string(t.Bc) +
              ", d=" + std::to_string(p.head_dim);
  return plan;
}

}  // namespace flashlab::kernels::detail
