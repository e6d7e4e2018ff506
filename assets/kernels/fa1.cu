// FlashAttention-1 as Algorithm 1 of the paper writes it — a skeleton: the
// two tiling loops are yours to write. One thread block per head plays the
// paper's SRAM: the outer loop walks K_j, V_j (each loaded once), the inner
// loop walks Q_i and carries O_i, ℓ_i, m_i through global memory at every
// step (the workspace below: O_i in fp32, ℓ_i, m_i). One thread per row of Q_i.
//
//   flashlab bench --kernel-file fa1.cu -n 1000,2048 -d 64 --causal both --counters
//
// Until the loops exist nothing is written, and FlashLab says which element
// it found unwritten first. When it is right, the grade compares its bytes
// with what Algorithm 1 with 64 × 64 tiles asks for: K and V once, Q_i, O_i,
// ℓ_i, m_i once per K_j. Swap the loops and it says so.
//
// flashlab kernel
//   name:          my_fa1
//   algorithm:     fa1
//   tiles:         64 x 64
//   threads:       Br
//   smem:          (2 * Br + 2 * Bc) * d * 4
//   grid:          B * H
//   workspace:     B * H * N_q * (d + 2) * 4
//   o_accumulator: fp32
//   dtypes:        fp32, fp16, bf16
//   head_dims:     16, 32, 64, 96, 128

#include "flashlab.cuh"

extern "C" __global__ void flashlab_attention(FlashLabArgs a) {
  constexpr int Br = FLASHLAB_BR, Bc = FLASHLAB_BC, d = FLASHLAB_HEAD_DIM;
  float* Kj = flashlab::shared_memory<float>();  // (B_c, d) in shared memory
  float* Vj = Kj + Bc * d;                       // (B_c, d)
  float* Qi = Vj + Bc * d;                       // (B_r, d)
  float* Oi = Qi + Br * d;                       // (B_r, d)
  const int bh = blockIdx.x, b = bh / a.H, h = bh % a.H;
  const int kv_head = h / (a.H / a.H_kv);  // grouped-query heads: the K/V head of query head h
  const elem_t* q = a.q + b * a.q_stride_b + h * a.q_stride_h;  // row r of Q: q + r * a.q_stride_n
  const elem_t* k = a.k + b * a.kv_stride_b + kv_head * a.kv_stride_h;
  const elem_t* v = a.v + b * a.kv_stride_b + kv_head * a.kv_stride_h;
  elem_t* o = a.o + b * a.q_stride_b + h * a.q_stride_h;
  // O, ℓ, m in global memory between the steps (Algorithm 1 keeps them in HBM):
  // O_acc[r * d + x], ell[r], m[r] for row r of this head.
  const long long rows = (long long)a.B * a.H * a.N_q;
  float* O_acc = static_cast<float*>(a.workspace) + (long long)bh * a.N_q * d;
  float* ell = static_cast<float*>(a.workspace) + rows * d + (long long)bh * a.N_q;
  float* m = ell + rows;
  const int t = threadIdx.x;  // this thread's row of Q_i: row i·B_r + t of Q

  // Yours to write: Algorithm 1, lines 5-13.
  //   for j = 0 … T_c − 1:                          (line 5)
  //     K_j, V_j to Kj, Vj (zeros past N_kv)         (line 6; __syncthreads() around it)
  //     for i = 0 … T_r − 1:                         (line 7)
  //       causal: skip a block wholly above the diagonal (j·B_c > its last row)
  //       Q_i to Qi; O_i from O_acc to Oi, ℓ_i, m_i  (line 8; at j = 0 they are 0, 0, −∞: line 2)
  //       S_ij = τ Q_i K_jᵀ (−∞ past N_kv and, causal, above the diagonal)   (line 9)
  //       m̃_ij = rowmax(S_ij), P̃_ij = exp(S_ij − m̃_ij), ℓ̃_ij = rowsum(P̃_ij)  (line 10)
  //       m_new = max(m_i, m̃_ij), ℓ_new = e^{m_i − m_new} ℓ_i + e^{m̃_ij − m_new} ℓ̃_ij  (line 11)
  //       O_i ← diag(ℓ_new)⁻¹ (diag(ℓ_i) e^{m_i − m_new} O_i + e^{m̃_ij − m_new} P̃_ij V_j)  (line 12)
  //       O_i back to O_acc — or, at the last K_j this Q_i sees, to o in the
  //       problem's dtype with store(); ℓ_new, m_new back to ell, m      (lines 12-13)
  // Load and store whole rows with every thread on a column in turn
  // (for (e = t; e < B_r * d; e += B_r)): coalesced, as the L2 counts it.
  // Keep every thread at every __syncthreads(), rows past N_q included.
}
