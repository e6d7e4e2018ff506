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

// A key row of K_j, V_j (and of dK_j, dV_j) in the registers of kLanes adjacent
// lanes: lanes of other keys read the same word of a Q_i / dO_i row (a broadcast).
template <int D>
using KeySplit = LaneSplit<D, layout::fa_bwd_lanes_per_row(D)>;

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
  load_row<Split, true>(k, key_valid ? K_h + key * D : nullptr, part, scale_log2e);  // a padding key: zeros
  load_row<Split, true>(v, key_valid ? V_h + key * D : nullptr, part, 1.f);
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
      const float s = row_dot<Split>(k, q_r, part);
      const float p = key_valid && !(causal && key > row) ? exp2f(s - L_i[r]) : 0.f;
      // Line 12: dV_j += P_ijᵀ dO_i.
      row_axpy<Split>(dv, p, do_r, part);
      // Line 13: dP_ij = dO_i V_jᵀ.
      const float dp = row_dot<Split>(v, do_r, part);
      // Line 14: dS_ij = P_ij ∘ (dP_ij − D_i).
      const float ds = p * (dp - D_i[r]);
      // Line 16: dK_j += dS_ijᵀ Q_i (τ once, at the end).
      row_axpy<Split>(dk, ds, q_r, part);
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
  store_row<Split, T>(dK + (kv_head * n_kv + key) * D, dk, part, scale);
  store_row<Split, T>(dV + (kv_head * n_kv + key) * D, dv, part, 1.f);
}

}  // namespace
}  // namespace detail

void fa2_backward(const LaunchArgs& a) {
  using namespace detail;
  const FaLaunchPlan plan = fa_launch_plan(a, "fa2_bwd", sim::Pass::bwd);
  const FaBwdWorkspace w = check_fa_bwd_args(a, "fa2_bwd");
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  dispatch_head_dim_and_dtype(p, [&](auto dim, auto tag) {
    constexpr int D = decltype(dim)::value;
    using T = typename decltype(tag)::type;
    auto kernel = fa2_backward_kernel<T, D>;
    prepare_launch(kernel, a, plan.threads, plan.smem, plan.what);
    fa_bwd_preprocess(a, w);
    for_each_head_chunk(p.head_count() / plan.kv_group, [&](i64 head0, unsigned kv_heads) {
      const dim3 g(static_cast<unsigned>(plan.grid.T_c), kv_heads);
      kernel<<<g, static_cast<unsigned>(plan.threads), static_cast<std::size_t>(plan.smem), stream_of(a)>>>(
          static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
          static_cast<const T*>(a.bwd.d_o), w.l_log2, w.d_row, w.dq_accum, static_cast<T*>(a.bwd.dk),
          static_cast<T*>(a.bwd.dv), p.n_q(), p.n_kv(), w.stat_rows, static_cast<int>(t.Br),
          static_cast<int>(t.Bc), a.softmax_scale, a.softmax_scale * kLog2e, p.causal, head0, plan.kv_group);
      FLASHLAB_LAUNCH_CHECK("fa2_backward_kernel");
    });
    fa_bwd_convert_dq(a, w);
  });
}

}  // namespace flashlab::kernels
