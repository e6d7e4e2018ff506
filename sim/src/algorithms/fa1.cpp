// FlashAttention-1, Algorithm 1 of Dao et al. (2022), as written: O, ℓ, m live
// in HBM; the outer loop streams K_j, V_j; the inner loop reads Q_i, O_i, ℓ_i,
// m_i and writes O_i, ℓ_i, m_i back at every step.
#include "schedule/loop_nest.hpp"

namespace flashlab::sim::detail {
namespace {

const AlgorithmInfo& fa1_info() {
  static const AlgorithmInfo i{
      Algorithm::fa1,
      "fa1",
      "FlashAttention-1 (Dao et al. 2022, Algorithm 1)",
      "Dao et al., FlashAttention (2022), Algorithm 1",
      {"Set block sizes B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d).",
       "Initialize O = (0)_{N×d}, ℓ = (0)_{N}, m = (−∞)_{N} in HBM.",
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
       "Return O."},
      {"flash1", "flashattention1", "flash-1"},
      /*outer_over_rows=*/false,  // for 1 ≤ j ≤ T_c
      /*skips_masked_blocks=*/true,
      /*materializes_scores=*/false,
      /*keeps_running_statistics=*/true,
      /*statistics_update_line=*/11,
      "S_ij and P̃_ij stay on chip; O_i, ℓ_i, m_i go to HBM each step",
      Marker::circle,
      GridShape::launch_per_outer_iteration,
      TileRule::paper,
      Pass::fwd,
      Algorithm::fa1,
      /*hopper_rung_runs_it=*/false,
      /*drawn_by_default=*/true};
  return i;
}

class Fa1 final : public LoopNest {
 public:
  Fa1() : LoopNest(fa1_info()) {}

  void prologue(Emitter& e) const override {
    // line 2: initialise O = 0, ℓ = 0, m = −∞ in HBM.
    const TileGrid& g = e.grid();
    e.store(2, e.whole_O_accumulator(), Level::none);
    e.store(2, e.whole(Tensor::l, g.n_q, 1), Level::none);
    e.store(2, e.whole(Tensor::m, g.n_q, 1), Level::none);
  }

  void outer_begin(int, i64 j, Emitter& e) const override {
    e.load(6, e.K(j));  // line 6: load K_j, V_j
    e.load(6, e.V(j));
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const TileRef Qi = e.Q(i), Oi = e.O_accumulator(i), li = e.row_stat(Tensor::l, i), mi = e.row_stat(Tensor::m, i);
    const TileRef Kj = e.K(j), Vj = e.V(j), Sij = e.S(i, j), Pij = e.P(i, j);
    const TileRef m_t = e.row_stat(Tensor::m_tilde, i, j), l_t = e.row_stat(Tensor::l_tilde, i, j);
    const TileRef m_n = e.row_stat(Tensor::m_new, i), l_n = e.row_stat(Tensor::l_new, i);
    // line 8: load Q_i, O_i, ℓ_i, m_i
    e.load(8, Qi);
    e.load(8, Oi);
    e.load(8, li);
    e.load(8, mi);
    // line 9: S_ij = τ Q_i K_jᵀ
    e.compute(9, Sij, {Qi, Kj}, 2 * r * c * d, r * c, 0);
    // line 10: m̃_ij = rowmax(S_ij), P̃_ij = exp(S_ij − m̃_ij), ℓ̃_ij = rowsum(P̃_ij)
    e.compute(10, m_t, {Sij}, 0, r * c, 0);
    e.compute(10, Pij, {Sij, m_t}, 0, r * c, r * c, &Sij);
    e.compute(10, l_t, {Pij}, 0, r * c, 0);
    // line 11: m_i^new = max(m_i, m̃_ij), ℓ_i^new = e^{m_i−m_i^new} ℓ_i + e^{m̃_ij−m_i^new} ℓ̃_ij
    e.compute(11, m_n, {mi, m_t}, 0, r, 0);
    e.compute(11, l_n, {mi, m_n, li, m_t, l_t}, 0, 5 * r, 2 * r);
    // line 12: O_i ← diag(ℓ_i^new)⁻¹ (diag(ℓ_i) e^{m_i−m_i^new} O_i + e^{m̃_ij−m_i^new} P̃_ij V_j)
    e.compute(12, Oi, {Oi, Pij, Vj, li, l_n}, 2 * r * c * d, 3 * r * d + 3 * r, 0);
    e.store(12, Oi);
    // line 13: ℓ_i ← ℓ_i^new, m_i ← m_i^new to HBM
    e.store(13, li);
    e.store(13, mi);
    e.free(13, {Qi, Oi, li, mi, Pij, m_t, l_t, m_n, l_n});
  }

  void outer_end(int, i64 j, Emitter& e) const override { e.free(15, {e.K(j), e.V(j)}); }
};

std::unique_ptr<LoopNest> make_fa1(const AttentionProblem&, const StorageTypes&) { return std::make_unique<Fa1>(); }

}  // namespace

const AlgorithmEntry& fa1_entry() { return entry_of<fa1_info, make_fa1>(); }

}  // namespace flashlab::sim::detail
