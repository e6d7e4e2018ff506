// Rung 4 — fa2: FlashAttention-2 forward (Dao 2023, Algorithm 1) on CUDA cores.
//
// Changed from fa1: the loops are swapped. One block owns a row block Q_i for
// its whole life and streams K_j, V_j past it, so O_i, ℓ_i, m_i never leave the
// chip (registers): no O/ℓ/m traffic per step, one launch instead of T_c, and
// the rescaling by 1/ℓ_i happens once at the end. O_i and the logsumexp
// L_i = m_i + log ℓ_i are written once. Causal blocks above the diagonal are
// never visited.
//
// Expected bottleneck: fp32 FMA throughput of the CUDA cores and shared-memory
// bandwidth (every q·k and p·v reads a float4 of K_j / V_j per four FMAs); HBM
// traffic is Θ(N²d²/M), far below the materialising rungs. No tensor cores:
// that is rung 5 (fa2_tc).
//
// Measured (H100, fp16, 16k tokens, hidden 2048): 13–25 TFLOP/s on CUDA cores (2026-11-22) — see
// kernels/README.md.
#include <cmath>

#include "fa_common.cuh"
#include "flashlab/kernels/rungs/rungs.hpp"

namespace flashlab::kernels {
namespace detail {
namespace {

// Grid (T_r, heads); block: B_r query rows × RowSplit<D>::kLanes lanes, padded
// to whole warps. Dynamic shared memory: layout::fa_smem_bytes.
// kGrouped: query head h reads K/V head h / kv_group. Without grouped heads
// the kernel is compiled without the division: with it, the d = 128 kernel
// took 127 registers instead of 125 and ran 4.4% slower at N = 16K (one H100,
// two builds in one run; kernels/README.md).
template <class T, int D, bool kGrouped>
__global__ void __launch_bounds__(RowSplit<D>::kMaxThreads)
    fa2_forward_kernel(const T* __restrict__ Q, const T* __restrict__ K, const T* __restrict__ V, T* __restrict__ O,
                       float* __restrict__ lse, i64 n_q, i64 n_kv, int Br, int Bc, float scale_log2e, bool causal,
                       i64 head0, i64 kv_group) {
  using Split = RowSplit<D>;
  extern __shared__ float4 smem_f4[];
  const FaTiles tiles = carve_fa_tiles<D>(smem_f4, Bc);
  float* const K_j = tiles.K_j;  // (B_c, d) in shared memory
  float* const V_j = tiles.V_j;  // (B_c, d)
  float* const S_ij = tiles.S_ij;  // (B_r, B_c + 1)
  const int ld_S = tiles.ld_S;

  const i64 head = head0 + blockIdx.y;
  const i64 i = blockIdx.x;  // row block: rows [i·B_r, (i+1)·B_r)
  const int r = threadIdx.x / Split::kLanes, part = threadIdx.x % Split::kLanes;
  const i64 row = i * Br + r;
  const bool row_valid = r < Br && row < n_q;
  const int r_S = min(r, Br - 1);  // padding lanes read (never write) the last row of S_ij

  const T* Q_h = Q + head * n_q * D;    // (N_q, d) of this head
  const i64 kv_head = kGrouped ? head / kv_group : head;  // grouped-query attention: the group's K/V head
  const T* K_h = K + kv_head * n_kv * D;  // (N_kv, d)
  const T* V_h = V + kv_head * n_kv * D;  // (N_kv, d)

  // line 4: load Q_i (this row, in registers), pre-scaled by τ·log2 e.
  float q[Split::kDims];
  load_row<Split>(q, Q_h + min(row, n_q - 1) * D, part, scale_log2e);
  // line 5: O_i = 0, ℓ_i = 0, m_i = −∞, on chip.
  float o[Split::kDims];
#pragma unroll
  for (int k = 0; k < Split::kDims; ++k) o[k] = 0.f;
  float l = 0.f, m = -INFINITY;

  // Causal: column blocks past the diagonal of this row block are skipped
  // (TileGrid::last_col).
  const i64 T_c = (n_kv + Bc - 1) / Bc;
  const i64 last_row = min((i + 1) * Br, n_q) - 1;
  const i64 j_end = causal ? min(T_c, last_row / Bc + 1) : T_c;

  for (i64 j = 0; j < j_end; ++j) {
    // line 7: load K_j, V_j (after every lane is done with the previous ones).
    __syncthreads();
    load_tile<T, D>(K_j, K_h, j * Bc, Bc, n_kv);
    load_tile<T, D>(V_j, V_h, j * Bc, Bc, n_kv);
    __syncthreads();
    const int cols = static_cast<int>(min(static_cast<i64>(Bc), n_kv - j * Bc));  // partial last tile

    // line 8: S_ij = τ Q_i K_jᵀ (this row), masked above the diagonal.
    const float m_tile = score_row<D>(q, K_j, S_ij + r_S * ld_S, cols, j * Bc, row, causal, r < Br, part);
    __syncwarp();  // a row's S_ij entries were written by its own lanes, in this warp  // a row's S_ij entries were written by its own lanes, in this warp

    // line 9: m_i^(j) = max(m_i^(j−1), rowmax S_ij); rescale ℓ_i and O_i by
    // e^{m_i^(j−1) − m_i^(j)} (line 10's diag), then add P̃_ij = exp(S_ij − m_i^(j)).
    const float m_new = fmaxf(m, m_tile);
    const float m_base = m_new == -INFINITY ? 0.f : m_new;  // a row with nothing unmasked yet
    const float rescale = exp2f(m - m_base);                // 0 on the first visit (m = −∞)
    l *= rescale;
#pragma unroll
    for (int k = 0; k < Split::kDims; ++k) o[k] *= rescale;
    // line 10: O_i += P̃_ij V_j; ℓ_i += rowsum(P̃_ij).
    for (int c = 0; c < cols; ++c) {
      const float p = exp2f(S_ij[r_S * ld_S + c] - m_base);
      l += p;
      row_axpy<Split>(o, p, V_j + c * D, part);
    }
    m = m_new;
  }

  if (!row_valid) return;
  // lines 12-15: O_i = diag(ℓ_i)⁻¹ O_i and L_i = m_i + log ℓ_i, written once.
  store_row<Split, T>(O + (head * n_q + row) * D, o, part, 1.f / l);
  if (lse != nullptr && part == 0) lse[head * n_q + row] = (m + log2f(l)) * kLn2;
}

}  // namespace
}  // namespace detail

void fa2_forward(const LaunchArgs& a) {
  using namespace detail;
  const FaLaunchPlan plan = fa_launch_plan(a, "fa2", sim::Pass::fwd);
  const sim::AttentionProblem& p = a.problem;
  const sim::TileShape t = a.tiles;
  dispatch_head_dim_and_dtype(p, [&](auto dim, auto tag) {
    constexpr int D = decltype(dim)::value;
    using T = typename decltype(tag)::type;
    auto kernel = plan.kv_group > 1 ? fa2_forward_kernel<T, D, true> : fa2_forward_kernel<T, D, false>;
    prepare_launch(kernel, a, plan.threads, plan.smem, plan.what);
    for_each_head_chunk(p.head_count(), [&](i64 head0, unsigned heads) {
      const dim3 grid(static_cast<unsigned>(plan.grid.T_r), heads);
      kernel<<<grid, static_cast<unsigned>(plan.threads), static_cast<std::size_t>(plan.smem), stream_of(a)>>>(
          static_cast<const T*>(a.q), static_cast<const T*>(a.k), static_cast<const T*>(a.v), static_cast<T*>(a.o),
          a.lse, p.n_q(), p.n_kv(), static_cast<int>(t.Br), static_cast<int>(t.Bc),
          a.softmax_scale * kLog2e, p.causal, head0, plan.kv_group);
      FLASHLAB_LAUNCH_CHECK("fa2_forward_kernel");
    });
  });
}

}  // namespace flashlab::kernels
