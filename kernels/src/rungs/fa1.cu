// Rung 3 — fa1: FlashAttention-1 forward, Algorithm 1 of Dao et al. (2022) as
// written.
//
// Changed from naive: S and P never reach HBM. The outer loop runs over K_j,
// V_j (one launch per j, so "load K_j, V_j" happens once per block of keys) and
// the inner loop over Q_i (the blocks of a launch). Each inner step computes
// S_ij, its row maxima and sums on chip, and — exactly as the pseudocode says —
// reads O_i, ℓ_i, m_i from HBM and writes them back (lines 8 and 12-13). O is
// kept in fp32 between steps (workspace), ℓ and m are fp32; the last step of a
// row block writes O in the problem dtype.
//
// Expected bottleneck: the O_i/ℓ_i/m_i round trips — T_c·N·d reads and writes
// of O against N·d for fa2 — plus T_c launches, each a full wave of row blocks;
// then fp32 FMA throughput as in fa2.
//
// Measured (H100, fp16, 16k tokens, hidden 2048): 12–21 TFLOP/s, 0.3–0.5 TB/s modelled (2026-11-22) — see
// kernels/README.md.
#include <cmath>

#include "fa_common.cuh"
#include "flashlab/kernels/rungs/rungs.hpp"

namespace flashlab::kernels {
namespace detail {
namespace {

// line 2: O = 0, ℓ = 0, m = −∞ in HBM (rows = B·H·N_q).
template <int D>
__global__ void fa1_init_kernel(float* __restrict__ O_acc, float* __restrict__ l, float* __restrict__ m, i64 rows) {
  const i64 stride = static_cast<i64>(gridDim.x) * blockDim.x;
  for (i64 x = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; x < rows * D; x += stride) O_acc[x] = 0.f;
  for (i64 x = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; x < rows; x += stride) {
    l[x] = 0.f;
    m[x] = -INFINITY;
  }
}

// One step j of the outer loop (lines 6-13) for row blocks i ≥ i_first.
// Grid (T_r − i_first, heads); block as fa2: B_r rows × kLanes lanes.
template <class T, int D>
__global__ void __launch_bounds__(RowSplit<D>::kMaxThreads)
    fa1_step_kernel(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V, T* __restrict__ O,
                    float* __restrict__ O_acc, float* __restrict__ l_hbm, float* __restrict__ m_hbm, i64 n_q, i64 n_kv,
                    int Br, int Bc, float scale_log2e, bool causal, i64 j, i64 i_first, i64 head0, i64 kv_group) {
  using Split = RowSplit<D>;
  extern __shared__ float4 smem_f4[];
  float* K_j = reinterpret_cast<float*>(smem_f4);  // (B_c, d) in shared memory
  float* V_j = K_j + Bc * D;                        // (B_c, d) in shared memory
  float* S_ij = V_j + Bc * D;                       // (B_r, B_c + 1) in shared memory
  const int ld_S = Bc + 1;

  const i64 head = head0 + blockIdx.y;
  const i64 i = i_first + blockIdx.x;
  const int r = threadIdx.x / Split::kLanes, part = threadIdx.x % Split::kLanes;
  const i64 row = i * Br + r;
  const bool row_valid = r < Br && row < n_q;
  const i64 row_c = min(row, n_q - 1);  // loads of padding rows stay in bounds
  const int r_S = min(r, Br - 1);
  const i64 stat = head * n_q + row_c;  // index of this row in ℓ, m
  const i64 kv_head = head / kv_group;   // grouped-query attention: the group's K/V head

  // line 6: load K_j, V_j from HBM to on-chip SRAM.
  load_tile<T, D>(K_j, K + kv_head * n_kv * D, j * Bc, Bc, n_kv);
  load_tile<T, D>(V_j, V + kv_head * n_kv * D, j * Bc, Bc, n_kv);
  __syncthreads();
  const int cols = static_cast<int>(min(static_cast<i64>(Bc), n_kv - j * Bc));

  // line 8: load Q_i, O_i, ℓ_i, m_i from HBM (this row).
  float q[Split::kDims], o[Split::kDims];
  load_row<Split>(q, Q + (head * n_q + row_c) * D, part, scale_log2e);
  load_row<Split>(o, O_acc + stat * D, part, 1.f);
  float l_i = l_hbm[stat], m_i = m_hbm[stat];

  // line 9: S_ij = τ Q_i K_jᵀ (this row), masked above the diagonal.
  // line 10: m̃_ij = rowmax(S_ij).
  // (The same loop as fa2's score_row, written out: through the shared helper
  // this kernel measured 3-9% slower on causal problems, H100, 2026-11-22.)
  float m_tilde = -INFINITY;
  for (int c = 0; c < cols; ++c) {
    float s = row_dot<Split>(q, K_j + c * D, part);
    if (causal && j * Bc + c > row) s = -INFINITY;
    if (r < Br && part == c % Split::kLanes) S_ij[r * ld_S + c] = s;
    m_tilde = fmaxf(m_tilde, s);
  }
  __syncwarp();

  // A row whose keys in this block are all masked (above the diagonal of a
  // diagonal block) gets P̃_ij = 0: lines 11-12 leave O_i, ℓ_i, m_i as they are.
  if (m_tilde != -INFINITY) {
    // line 11: m_i^new = max(m_i, m̃_ij).
    const float m_new = fmaxf(m_i, m_tilde);
    // line 12, rearranged to one pass over P̃_ij: O_i ← diag(ℓ_i) e^{m_i − m_new} O_i
    // + e^{m̃_ij − m_new} P̃_ij V_j, then divided by ℓ_i^new, with
    // P̃_ij = exp(S_ij − m̃_ij) and ℓ̃_ij = rowsum(P̃_ij) (line 10) summed on the way.
    const float old_weight = l_i * exp2f(m_i - m_new);  // diag(ℓ_i) e^{m_i − m_new}; 0 on the first visit
    const float new_weight = exp2f(m_tilde - m_new);    // e^{m̃_ij − m_new}
#pragma unroll
    for (int k = 0; k < Split::kDims; ++k) o[k] *= old_weight;
    float l_tilde = 0.f;
    for (int c = 0; c < cols; ++c) {
      const float p = exp2f(S_ij[r_S * ld_S + c] - m_tilde);  // P̃_ij
      l_tilde += p;
      row_axpy<Split>(o, new_weight * p, V_j + c * D, part);
    }
    // line 11: ℓ_i^new = e^{m_i − m_new} ℓ_i + e^{m̃_ij − m_new} ℓ̃_ij.
    const float l_new = old_weight + new_weight * l_tilde;
    const float inv = 1.f / l_new;
#pragma unroll
    for (int k = 0; k < Split::kDims; ++k) o[k] *= inv;
    l_i = l_new;
    m_i = m_new;
  }
  if (!row_valid) return;

  // lines 12-13: write O_i, ℓ_i, m_i to HBM. The last block of keys this row
  // block visits writes O in the problem dtype instead of the fp32 copy.
  const i64 T_c = (n_kv + Bc - 1) / Bc;
  const i64 last_row = min((i + 1) * Br, n_q) - 1;
  const i64 j_last = causal ? min(T_c - 1, last_row / Bc) : T_c - 1;
  if (j == j_last) store_row<Split, T>(O + (head * n_q + row) * D, o, part, 1.f);
  else store_row<Split, float>(O_acc + stat * D, o, part, 1.f);
  if (part == 0) {
    l_hbm[stat] = l_i;
    m_hbm[stat] = m_i;
  }
}

}  // namespace
}  // namespace detail

void fa1_forward(const LaunchArgs& a) {
  using namespace detail;
  const FaLaunchPlan plan = fa_launch_plan(a, "fa1", sim::Pass::fwd);
  const sim::TileGrid& G = plan.grid;
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  char* const base = checked_workspace(a, layout::fa1_workspace_bytes(p), "fa1", "O, ℓ, m");
  auto* O_acc = reinterpret_cast<float*>(base);                                       // (B, H, N_q, d) fp32
  auto* l = reinterpret_cast<float*>(base + layout::fa1_o_acc_bytes(p));              // (B, H, N_q) fp32
  auto* m = reinterpret_cast<float*>(base + layout::fa1_o_acc_bytes(p) + layout::fa1_stat_bytes(p));  // (B, H, N_q)

  dispatch_head_dim_and_dtype(p, [&](auto dim, auto tag) {
    constexpr int D = decltype(dim)::value;
    using T = typename decltype(tag)::type;
    auto kernel = fa1_step_kernel<T, D>;
    prepare_launch(kernel, a, plan.threads, plan.smem, plan.what);

    const i64 rows = layout::fa1_rows(p);
    fa1_init_kernel<D><<<static_cast<unsigned>(std::min<i64>((rows * D + 255) / 256, 65535)), 256, 0, stream_of(a)>>>(
        O_acc, l, m, rows);
    FLASHLAB_LAUNCH_CHECK("fa1_init_kernel");
    // line 5: for 1 ≤ j ≤ T_c — one launch per block of keys.
    for (i64 j = 0; j < G.T_c; ++j) {
      // Causal: row blocks wholly above the diagonal have nothing in K_j.
      const i64 i_first = G.first_row(j);
      for_each_head_chunk(p.head_count(), [&](i64 head0, unsigned heads) {
        const dim3 grid(static_cast<unsigned>(G.T_r - i_first), heads);
        kernel<<<grid, static_cast<unsigned>(plan.threads), static_cast<std::size_t>(plan.smem), stream_of(a)>>>(
            static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v),
            static_cast<T*>(a.o), O_acc, l, m, p.n_q(), p.n_kv(), static_cast<int>(t.Br), static_cast<int>(t.Bc),
            a.softmax_scale * kLog2e, p.causal, j, i_first, head0, plan.kv_group);
        FLASHLAB_LAUNCH_CHECK("fa1_step_kernel");
      });
    }
  });
}

}  // namespace flashlab::kernels
