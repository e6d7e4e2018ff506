// FlashAttention-2 on CUDA cores — a skeleton: the loop over K_j, V_j is
// yours to write. One thread block per Q_i (B_r rows of one head), one thread
// per row of Q_i. Q_i is loaded and O_i is written for you; in between, the
// online softmax of the FlashAttention-2 paper (Algorithm 1, lines 6-10).
//
//   flashlab bench --kernel-file fa2.cu -n 1000,4096 -d 64 --causal both --counters
//
// Until the loop exists every row's ℓ_i is 0 and O = O_i / ℓ_i is NaN:
// FlashLab says "first NaN or ∞ computed … a row whose ℓ is 0". When it is
// right, the grade compares its time with the fa2 rung's and its bytes with
// what the model of FlashAttention-2 with 64 × 64 tiles asks for.
//
// flashlab kernel
//   name:      my_fa2
//   algorithm: fa2
//   tiles:     64 x 64
//   threads:   Br
//   smem:      (Br + 2 * Bc) * d * 4
//   grid:      T_r, B * H
//   dtypes:    fp32, fp16, bf16
//   head_dims: 16, 32, 64, 96, 128

#include "flashlab.cuh"

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  constexpr int Br = FLASHLAB_BR, Bc = FLASHLAB_BC, d = FLASHLAB_HEAD_DIM;
  float* Qi = flashlab::shared_memory<float>();  // (B_r, d) in shared memory
  float* Kj = Qi + Br * d;                       // (B_c, d): K_j, yours to load
  float* Vj = Kj + Bc * d;                       // (B_c, d): V_j, yours to load
  const int i = blockIdx.x, bh = blockIdx.y, b = bh / a.H, h = bh % a.H;
  const int kv_head = h / (a.H / a.H_kv);  // grouped-query heads: the K/V head of query head h
  const elem_t* q = a.q + b * a.q_stride_b + h * a.q_stride_h;
  const elem_t* k = a.k + b * a.kv_stride_b + kv_head * a.kv_stride_h;  // row c of K: k + c * a.kv_stride_n
  const elem_t* v = a.v + b * a.kv_stride_b + kv_head * a.kv_stride_h;
  elem_t* o = a.o + b * a.q_stride_b + h * a.q_stride_h;
  const int t = threadIdx.x;  // this thread's row of Q_i
  const int r = i * Br + t;   // ... and of Q

  // Q_i to shared memory, every thread a column of each row in turn (coalesced).
  for (int e = t; e < Br * d; e += Br) {
    const int row = i * Br + e / d;
    Qi[e] = row < a.N_q ? load(q + row * a.q_stride_n + e % d) : 0.f;
  }
  float o_acc[d];  // this row of O_i, not yet divided by ℓ_i
  for (int x = 0; x < d; ++x) o_acc[x] = 0.f;
  float m_i = flashlab::neg_infinity(), l_i = 0.f;

  // Yours to write: the loop over the column blocks j = 0 … T_c − 1.
  //   1. __syncthreads(); K_j and V_j to Kj, Vj (rows j·B_c + c, zeros past N_kv),
  //      every thread a column in turn as Q_i above; __syncthreads().
  //   2. This thread's row of S_ij = τ Q_i K_jᵀ (τ = a.scale), B_c values; an entry
  //      whose key is past N_kv, or above the diagonal (a.causal and c > r), is −∞.
  //   3. m_new = max(m_i, rowmax(S_ij)); P̃_ij = exp(S_ij − m_new);
  //      ℓ_i = e^{m_i − m_new} ℓ_i + rowsum(P̃_ij).
  //   4. O_i = e^{m_i − m_new} O_i + P̃_ij V_j; m_i = m_new.
  // A row past N_q (r >= a.N_q) computes nothing, but its thread still meets
  // every __syncthreads(). Causal: stop after the last block holding a key at
  // or below this block's last row; the model skips the rest, and so should you.

  // O_i = diag(ℓ_i)⁻¹ O_i, staged in shared memory (Q_i's place) so that the
  // stores are coalesced.
  __syncthreads();
  if (r < a.N_q)
    for (int x = 0; x < d; ++x) Qi[t * d + x] = o_acc[x] / l_i;
  __syncthreads();
  for (int e = t; e < Br * d; e += Br) {
    const int row = i * Br + e / d;
    if (row < a.N_q) store(o + row * a.q_stride_n + e % d, Qi[e]);
  }
}
