// Rung 4, backward — fa2_bwd: FlashAttention-2 backward (Dao 2023, Algorithm 2)
// on CUDA cores.
//
// What changed from the materialising backward (naive_bwd): S_ij, P_ij, dP_ij
// and dS_ij never reach HBM. One block owns K_j, V_j for its whole life, with
// dK_j, dV_j on chip (registers), and walks the row blocks Q_i, dO_i from the
// first one the causal mask leaves (TileGrid::first_row) to the last,
// recomputing S_ij and P_ij = exp(S_ij − L_i) from the logsumexp L_i the forward
// wrote. dQ_i is the one output every block adds to: dQ_i += dS_ij K_j goes by
// fp32 atomics into a dQaccum workspace, converted to the dtype by a last
// kernel. A pre-pass computes D_i = rowsum(dO_i ∘ O_i) once per row
// (fa_bwd_common.cu).
//
// Expected bottleneck: fp32 FMA throughput and shared-memory bandwidth, as the
// forward fa2 (every product reads a float4 of Q_i or dO_i per four FMAs), plus
// the atomics of dQ. Tensor cores are the next rung (fa2_tc_bwd).
// Measured (H200, fp16, 16k tokens, hidden 2048, 2026-11-25): 12–15 TFLOP/s by the backward
// convention (2.5× the forward's FLOPs) — see kernels/README.md.
#include <cmath>

#include "fa_bwd_common.cuh"
#include "fa_common.cuh"
#include "flashlab/kernels/rungs/rungs.hpp"

namespace flashlab::kernels {
namespace detail {
namespace {

// A key row of K_j, V_j (and of dK_j, dV_j) belongs to kLanes adjacent lanes of
// one warp; each keeps kDims of its d elements of k_c, v_c, dk_c, dv_c in
// registers, as float4 chunks (chunk c of lane `part` holds elements
// 4·(c·kLanes + part) … +3: adjacent lanes read adjacent 16-byte words of a
// Q_i / dO_i row, and lanes of other keys read the same word, a broadcast).
template <int D>
struct KeySplit {
  static constexpr int kLanes = layout::fa_bwd_lanes_per_row(D);
  static constexpr int kDims = D / kLanes;
  static constexpr int kChunks = kDims / 4;
  static_assert(D % (4 * kLanes) == 0, "d must split into float4 chunks over the lanes of a key");
  static_assert(32 % kLanes == 0, "the lanes of a key must not straddle warps");
  __device__ static int dim(int chunk, int part) { return 4 * (chunk * kLanes + part); }
};

// x · row over the whole d: each lane its chunks, then a butterfly over the
// key's lanes. Every lane of the warp calls it (full-mask shuffles).
template <int D>
__device__ __forceinline__ float key_dot(const float (&x)[KeySplit<D>::kDims], const float* row, int part) {
  using Split = KeySplit<D>;
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
template <int D>
__device__ __forceinline__ void key_axpy(float (&acc)[KeySplit<D>::kDims], float a, const float* row, int part) {
  using Split = KeySplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 r = *reinterpret_cast<const float4*>(row + Split::dim(c, part));
    acc[4 * c + 0] = fmaf(a, r.x, acc[4 * c + 0]);
    acc[4 * c + 1] = fmaf(a, r.y, acc[4 * c + 1]);
    acc[4 * c + 2] = fmaf(a, r.z, acc[4 * c + 2]);
    acc[4 * c + 3] = fmaf(a, r.w, acc[4 * c + 3]);
  }
}

template <class T, int D>
__device__ __forceinline__ void load_key(float (&x)[KeySplit<D>::kDims], const T* row, int part, float scale) {
  using Split = KeySplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c) {
    const float4 v = row != nullptr ? load4(row + Split::dim(c, part)) : make_float4(0.f, 0.f, 0.f, 0.f);
    x[4 * c + 0] = v.x * scale;
    x[4 * c + 1] = v.y * scale;
    x[4 * c + 2] = v.z * scale;
    x[4 * c + 3] = v.w * scale;
  }
}

template <class T, int D>
__device__ __forceinline__ void store_key(T* row, const float (&x)[KeySplit<D>::kDims], int part, float scale) {
  using Split = KeySplit<D>;
#pragma unroll
  for (int c = 0; c < Split::kChunks; ++c)
    store4(row + Split::dim(c, part),
           make_float4(x[4 * c] * scale, x[4 * c + 1] * scale, x[4 * c + 2] * scale, x[4 * c + 3] * scale));
}

// Grid (T_c, K/V heads); block: B_c keys × KeySplit<D>::kLanes lanes, padded to
// whole warps (padding lanes compute on zeros and store nothing). Dynamic
// shared memory: layout::fa_bwd_smem_bytes. With grouped-query heads the block
// of K/V head kv_head walks the rows of each of the group's kv_group query
// heads in turn, so that dK_j, dV_j sum over the group on chip.
template <class T, int D>
__global__ void __launch_bounds__(layout::fa_bwd_max_threads_per_block())
    fa2_backward_kernel(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V,
                        const T* __restrict__ dO, const float* __restrict__ l_log2, const float* __restrict__ d_row,
                        float* __restrict__ dq_accum, T* __restrict__ dK, T* __restrict__ dV, i64 n_q, i64 n_kv,
                        i64 stat_rows, int Br, int Bc, float scale, float scale_log2e, bool causal, i64 head0,
                        i64 kv_group) {
  using Split = KeySplit<D>;
  extern __shared__ float4 smem_f4[];
  float* const Q_i = reinterpret_cast<float*>(smem_f4);  // (B_r, d) in shared memory
  float* const dO_i = Q_i + Br * D;                        // (B_r, d)
  float* const K_j = dO_i + Br * D;                        // (B_c, d), for dQ_i += dS_ij K_j
  float* const dS_ij = K_j + Bc * D;                       // (B_r, B_c + 1)
  float* const L_i = dS_ij + Br * (Bc + 1);                // (B_r) L_i·log2 e
  float* const D_i = L_i + Br;                             // (B_r) rowsum(dO_i ∘ O_i)
  const int ld_S = Bc + 1;

  const i64 kv_head = head0 + blockIdx.y;
  const i64 j = blockIdx.x;  // column block: keys [j·B_c, (j+1)·B_c)
  const int kr = threadIdx.x / Split::kLanes, part = threadIdx.x % Split::kLanes;
  const i64 key = j * Bc + kr;
  const bool key_valid = kr < Bc && key < n_kv;
  const int cols = static_cast<int>(min(static_cast<i64>(Bc), n_kv - j * Bc));  // partial last tile

  const T* K_h = K + kv_head * n_kv * D;   // (N_kv, d)
  const T* V_h = V + kv_head * n_kv * D;   // (N_kv, d)

  // Algorithm 2, line 6: load K_j, V_j (this key, in registers; k_j pre-scaled
  // by τ·log2 e so that S comes out in the log2 domain) and K_j again into
  // shared memory for dQ; line 7: dK_j = dV_j = 0 on chip.
  float k[Split::kDims], v[Split::kDims], dk[Split::kDims], dv[Split::kDims];
  load_key<T, D>(k, key_valid ? K_h + key * D : nullptr, part, scale_log2e);
  load_key<T, D>(v, key_valid ? V_h + key * D : nullptr, part, 1.f);
#pragma unroll
  for (int c = 0; c < Split::kDims; ++c) dk[c] = dv[c] = 0.f;
  load_tile<T, D>(K_j, K_h, j * Bc, Bc, n_kv);

  // Line 8: for 1 ≤ i ≤ T_r, from the first row block the causal mask leaves;
  // with grouped heads, those of each query head of the group in turn.
  const i64 T_r = (n_q + Br - 1) / Br;
  const i64 i_first = causal ? (j * Bc) / Br : 0;  // TileGrid::first_row(j)
  const i64 row_blocks = T_r - i_first;
  for (i64 step = 0; step < kv_group * row_blocks; ++step) {
    const i64 head = kv_head * kv_group + step / row_blocks, i = i_first + step % row_blocks;
    const T* Q_h = Q + head * n_q * D;        // (N_q, d) of this query head
    const T* dO_h = dO + head * n_q * D;      // (N_q, d)
    float* dQ_h = dq_accum + head * n_q * D;  // (N_q, d) fp32
    // Line 9: load Q_i, dO_i (and L_i, D_i) after everyone is done with the last ones.
    __syncthreads();
    load_tile<T, D>(Q_i, Q_h, i * Br, Br, n_q);
    load_tile<T, D>(dO_i, dO_h, i * Br, Br, n_q);
    for (int r = threadIdx.x; r < Br; r += blockDim.x) {
      const i64 row = i * Br + r;
      L_i[r] = row < n_q ? l_log2[head * stat_rows + row] : INFINITY;
      D_i[r] = row < n_q ? d_row[head * stat_rows + row] : 0.f;
    }
    __syncthreads();
    const int rows = static_cast<int>(min(static_cast<i64>(Br), n_q - i * Br));

    for (int r = 0; r < rows; ++r) {
      const i64 row = i * Br + r;
      const float* q_r = Q_i + r * D;
      const float* do_r = dO_i + r * D;
      // Lines 10-11: S_ij = τ Q_i K_jᵀ, P_ij = exp(S_ij − L_i) (in base 2), masked above the diagonal.
      const float s = key_dot<D>(k, q_r, part);
      const float p = key_valid && !(causal && key > row) ? exp2f(s - L_i[r]) : 0.f;
      // Line 12: dV_j += P_ijᵀ dO_i.
      key_axpy<D>(dv, p, do_r, part);
      // Line 13: dP_ij = dO_i V_jᵀ.
      const float dp = key_dot<D>(v, do_r, part);
      // Line 14: dS_ij = P_ij ∘ (dP_ij − D_i).
      const float ds = p * (dp - D_i[r]);
      // Line 16: dK_j += dS_ijᵀ Q_i (τ once, at the end).
      key_axpy<D>(dk, ds, q_r, part);
      if (part == 0 && kr < Bc) dS_ij[r * ld_S + kr] = ds;
    }
    __syncthreads();  // dS_ij complete

    // Line 15: dQ_i += τ dS_ij K_j (τ in the convert kernel), one element per
    // thread per step, added to dQaccum by an fp32 atomic: every column block j
    // adds to the same rows.
    for (int e = threadIdx.x; e < rows * D; e += blockDim.x) {
      const int r = e / D, x = e % D;
      float acc = 0.f;
      for (int c = 0; c < cols; ++c) acc = fmaf(dS_ij[r * ld_S + c], K_j[c * D + x], acc);
      atomicAdd(dQ_h + (i * Br + r) * D + x, acc);
    }
  }

  // Line 18: write dK_j = τ·dK_j and dV_j.
  if (!key_valid) return;
  store_key<T, D>(dK + (kv_head * n_kv + key) * D, dk, part, scale);
  store_key<T, D>(dV + (kv_head * n_kv + key) * D, dv, part, 1.f);
}

}  // namespace
}  // namespace detail

void fa2_backward(const LaunchArgs& a) {
  detail::refuse_launch_extensions(a, "fa2_bwd");
  using namespace detail;
  const FaBwdWorkspace w = check_fa_bwd_args(a, "fa2_bwd");
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  const i64 kv_group = kv_group_of(a, "fa2_bwd");
  if (t.Br < 1 || t.Bc < 1)
    throw Unsupported("fa2_bwd: tiles must be at least 1×1 (got B_r=" + std::to_string(t.Br) +
                      ", B_c=" + std::to_string(t.Bc) + ")");
  const sim::TileGrid grid(p, t);
  if (grid.T_c > 0x7fffffff) throw Unsupported("fa2_bwd: T_c exceeds the grid's x limit");
  const i64 threads = layout::fa_bwd_threads_per_block(p.head_dim, t);
  const i64 smem = layout::fa_bwd_smem_bytes(p.head_dim, t);
  const std::string what = "fa2_bwd with B_r=" + std::to_string(t.Br) + ", B_c=" + std::to_string(t.Bc) +
                           ", d=" + std::to_string(p.head_dim);
  dispatch_head_dim(p.head_dim, [&](auto dim) {
    constexpr int D = decltype(dim)::value;
    dispatch_dtype(p.dtype, [&](auto tag) {
      using T = typename decltype(tag)::type;
      auto kernel = fa2_backward_kernel<T, D>;
      check_threads(kernel, threads, what);
      prepare_smem(kernel, smem, a.device_smem_optin, what);
      if (a.ctas_per_sm != nullptr)
        FLASHLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(
            a.ctas_per_sm, kernel, static_cast<int>(threads), static_cast<std::size_t>(smem)));
      fa_bwd_preprocess(a, w);
      for_each_head_chunk(p.head_count() / kv_group, [&](i64 head0, unsigned kv_heads) {
        const dim3 g(static_cast<unsigned>(grid.T_c), kv_heads);
        kernel<<<g, static_cast<unsigned>(threads), static_cast<std::size_t>(smem), stream_of(a)>>>(
            static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
            static_cast<const T*>(a.bwd.d_o), w.l_log2, w.d_row, w.dq_accum, static_cast<T*>(a.bwd.dk),
            static_cast<T*>(a.bwd.dv), p.n_q(), p.n_kv(), w.stat_rows, static_cast<int>(t.Br),
            static_cast<int>(t.Bc), a.softmax_scale, a.softmax_scale * kLog2e, p.causal, head0, kv_group);
        FLASHLAB_LAUNCH_CHECK("fa2_backward_kernel");
      });
      fa_bwd_convert_dq(a, w);
    });
  });
}

}  // namespace flashlab::kernels
