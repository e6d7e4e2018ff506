// FlashAttention-2 forward, Algorithm 1 of Dao (2023): the outer loop over Q_i
// keeps O_i, ℓ_i, m_i on chip; K_j, V_j are streamed; O_i and the logsumexp
// L_i are written once.
#include "schedule/loop_nest.hpp"

namespace flashlab::sim::detail {
namespace {

const AlgorithmInfo& fa2_info() {
  static const AlgorithmInfo i{
      Algorithm::fa2,
      "fa2",
      "FlashAttention-2 (Dao 2023, Algorithm 1)",
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
       "Return the output O and the logsumexp L."},
      {"flash2", "flashattention2", "flash-2"},
      /*outer_over_rows=*/true,  // for 1 ≤ i ≤ T_r
      /*skips_masked_blocks=*/true,
      /*materializes_scores=*/false,
      /*keeps_running_statistics=*/true,
      /*statistics_update_line=*/9,
      "S_ij and P̃_ij stay on chip; O_i written once per row block",
      Marker::diamond,
      GridShape::cta_per_outer_iteration,
      TileRule::paper_transposed,
      Pass::fwd,
      Algorithm::fa2,
      /*hopper_rung_runs_it=*/true,
      /*drawn_by_default=*/true};
  return i;
}

class Fa2 final : public LoopNest {
 public:
  Fa2() : LoopNest(fa2_info()) {}

  void outer_begin(int, i64 i, Emitter& e) const override {
    e.load(4, e.Q(i));  // line 4: load Q_i
    // line 5: on chip, O_i = 0, ℓ_i = 0, m_i = −∞
    e.compute(5, e.O(i), {}, 0, 0, 0);
    e.compute(5, e.row_stat(Tensor::l, i), {}, 0, 0, 0);
    e.compute(5, e.row_stat(Tensor::m, i), {}, 0, 0, 0);
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const TileRef Qi = e.Q(i), Oi = e.O(i), li = e.row_stat(Tensor::l, i), mi = e.row_stat(Tensor::m, i);
    const TileRef Kj = e.K(j), Vj = e.V(j), Sij = e.S(i, j), Pij = e.P(i, j);
    const TileRef m_n = e.row_stat(Tensor::m_new, i);
    // line 7: load K_j, V_j
    e.load(7, Kj);
    e.load(7, Vj);
    // line 8: S_i^(j) = τ Q_i K_jᵀ
    e.compute(8, Sij, {Qi, Kj}, 2 * r * c * d, r * c, 0);
    // line 9: m_i^(j) = max(m_i^(j−1), rowmax(S)), P̃ = exp(S − m_i^(j)),
    //         ℓ_i^(j) = e^{m_i^(j−1) − m_i^(j)} ℓ_i^(j−1) + rowsum(P̃)
    e.compute(9, m_n, {Sij, mi}, 0, r * c + r, 0);
    e.compute(9, Pij, {Sij, m_n}, 0, r * c, r * c, &Sij);
    e.compute(9, li, {mi, m_n, li, Pij}, 0, r * c + 3 * r, r);
    // line 10: O_i^(j) = diag(e^{m_i^(j−1) − m_i^(j)}) O_i^(j−1) + P̃ V_j
    e.compute(10, Oi, {Oi, Pij, Vj, mi, m_n}, 2 * r * c * d, r * d, 0);
    e.compute(10, mi, {m_n}, 0, 0, 0, &m_n);  // m_i^(j) becomes the running max
    e.free(11, {Kj, Vj, Pij});
  }

  void outer_end(int, i64 i, Emitter& e) const override {
    const TileRef Qi = e.Q(i), Oi = e.O(i), li = e.row_stat(Tensor::l, i), mi = e.row_stat(Tensor::m, i);
    const TileRef Li = e.row_stat(Tensor::LSE, i);
    const i64 r = e.rows(i), d = e.d();
    e.compute(12, Oi, {Oi, li}, 0, r * d, 0);  // line 12: O_i = diag(ℓ_i)⁻¹ O_i
    e.compute(13, Li, {mi, li}, 0, r, r);      // line 13: L_i = m_i + log(ℓ_i)
    e.store(14, Oi);                           // line 14: write O_i
    e.store(15, Li);                           // line 15: write L_i
    e.free(16, {Qi, Oi, li, mi, Li});
  }
};

std::unique_ptr<LoopNest> make_fa2(const AttentionProblem&, const StorageTypes&) { return std::make_unique<Fa2>(); }

}  // namespace

const AlgorithmEntry& fa2_entry() { return entry_of<fa2_info, make_fa2>(); }

}  // namespace flashlab::sim::detail
