#include "flashlab/sim/algorithm.hpp"

namespace flashlab::sim {

const AlgorithmInfo& algorithm_info(Algorithm a) {
  static const AlgorithmInfo standard{
      Algorithm::standard,
      "standard",
      "Standard attention (Algorithm 0)",
      "Dao et al., FlashAttention (2022), Algorithm 0",
      {"Load Q, K by blocks from HBM, compute S = QKᵀ, write S to HBM.",
       "Read S from HBM, compute P = softmax(S), write P to HBM.",
       "Load P and V by blocks from HBM, compute O = PV, write O to HBM.",
       "Return O."}};
  static const AlgorithmInfo pytorch{
      Algorithm::pytorch,
      "pytorch",
      "Eager PyTorch (one kernel per op)",
      "torch.matmul / mul / masked_fill / softmax / matmul, as eager PyTorch launches them",
      {"S = Q @ K.transpose(-2, -1)      # GEMM: read Q, K; write S",
       "S = S * τ                        # elementwise: read S; write S",
       "S = S.masked_fill(mask, -inf)    # causal only: read S; write S",
       "P = torch.softmax(S, dim=-1)     # read S; write P",
       "O = P @ V                        # GEMM: read P, V; write O"}};
  static const AlgorithmInfo fa1{
      Algorithm::fa1,
      "fa1",
      "FlashAttention-1 (Algorithm 1)",
      "Dao et al., FlashAttention (2022), Algorithm 1",
      {"Set block sizes B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d).",
       "Initialize O = (0)_{N×d}, ℓ = (0)_N, m = (−∞)_N in HBM.",
       "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_1..Q_{T_r} of size B_r × d each, and divide K, V into "
       "T_c = ⌈N/B_c⌉ blocks K_1..K_{T_c} and V_1..V_{T_c}, of size B_c × d each.",
       "Divide O into T_r blocks O_i of size B_r × d each, divide ℓ into T_r blocks ℓ_i of size B_r "
       "each, divide m into T_r blocks m_i of size B_r each.",
       "for 1 ≤ j ≤ T_c do",
       "  Load K_j, V_j from HBM to on-chip SRAM.",
       "  for 1 ≤ i ≤ T_r do",
       "    Load Q_i, O_i, ℓ_i, m_i from HBM to on-chip SRAM.",
       "    On chip, compute S_ij = τ Q_i K_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute m̃_ij = rowmax(S_ij), P̃_ij = exp(S_ij − m̃_ij), ℓ̃_ij = rowsum(P̃_ij).",
       "    On chip, compute m_i^new = max(m_i, m̃_ij), ℓ_i^new = e^{m_i − m_i^new} ℓ_i + "
       "e^{m̃_ij − m_i^new} ℓ̃_ij.",
       "    Write O_i ← diag(ℓ_i^new)⁻¹ (diag(ℓ_i) e^{m_i − m_i^new} O_i + e^{m̃_ij − m_i^new} P̃_ij V_j) "
       "to HBM.",
       "    Write ℓ_i ← ℓ_i^new, m_i ← m_i^new to HBM.",
       "  end for",
       "end for",
       "Return O."}};
  static const AlgorithmInfo fa2{
      Algorithm::fa2,
      "fa2",
      "FlashAttention-2 forward (Algorithm 1)",
      "Dao, FlashAttention-2 (2023), Algorithm 1",
      {"Divide Q into T_r = ⌈N/B_r⌉ blocks Q_1..Q_{T_r} of size B_r × d each, and divide K, V into "
       "T_c = ⌈N/B_c⌉ blocks of size B_c × d each.",
       "Divide the output O into T_r blocks O_i of size B_r × d each, and divide the logsumexp L into "
       "T_r blocks L_i of size B_r each.",
       "for 1 ≤ i ≤ T_r do",
       "  Load Q_i from HBM to on-chip SRAM.",
       "  On chip, initialize O_i^(0) = (0), ℓ_i^(0) = (0), m_i^(0) = (−∞).",
       "  for 1 ≤ j ≤ T_c do",
       "    Load K_j, V_j from HBM to on-chip SRAM.",
       "    On chip, compute S_i^(j) = τ Q_i K_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute m_i^(j) = max(m_i^(j−1), rowmax(S_i^(j))), P̃_i^(j) = exp(S_i^(j) − "
       "m_i^(j)), ℓ_i^(j) = e^{m_i^(j−1) − m_i^(j)} ℓ_i^(j−1) + rowsum(P̃_i^(j)).",
       "    On chip, compute O_i^(j) = diag(e^{m_i^(j−1) − m_i^(j)}) O_i^(j−1) + P̃_i^(j) V_j.",
       "  end for",
       "  On chip, compute O_i = diag(ℓ_i^(T_c))⁻¹ O_i^(T_c).",
       "  On chip, compute L_i = m_i^(T_c) + log(ℓ_i^(T_c)).",
       "  Write O_i to HBM as the i-th block of O.",
       "  Write L_i to HBM as the i-th block of L.",
       "end for",
       "Return the output O and the logsumexp L."}};
  switch (a) {
    case Algorithm::standard: return standard;
    case Algorithm::pytorch: return pytorch;
    case Algorithm::fa1: return fa1;
    case Algorithm::fa2: return fa2;
  }
  return standard;
}

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all{Algorithm::standard, Algorithm::pytorch, Algorithm::fa1,
                                          Algorithm::fa2};
  return all;
}

}  // namespace flashlab::sim
