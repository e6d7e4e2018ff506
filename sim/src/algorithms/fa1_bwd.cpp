// FlashAttention-1 backward, Algorithm 4 of Dao et al. (2022), as written,
// without dropout (p_drop = 0: its lines keep their numbers and emit nothing).
// dQ, dK, dV are initialised in HBM; the outer loop over K_j, V_j keeps d̃K_j,
// d̃V_j on chip; every visit reads Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i, recomputes
// S_ij, P_ij and D_i, and writes dQ_i back. As a GPU runs it, one thread block
// per K_j, V_j, the dQ_i update is an atomic add: the same read and write at
// the request level. When dQ accumulates in another type than the problem's
// (StorageTypes::dq_accumulator), dQaccum is converted by a pass of its own.
#include "kv_block_steps.hpp"

namespace flashlab::sim::detail {
namespace {

const AlgorithmInfo& fa1_bwd_info() {
  static const AlgorithmInfo i{
      Algorithm::fa1_bwd,
      "fa1_bwd",
      "FlashAttention-1 backward (Dao et al. 2022, Algorithm 4)",
      "Dao et al., FlashAttention (2022), Algorithm 4, without dropout (p_drop = 0); one thread block per K_j, V_j",
      {"Set the pseudo-random number generator state to R. (p_drop = 0 here: no dropout, nothing is computed.)",
       "Set block sizes B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d). (FlashLab takes B_c = ⌈M/8d⌉, B_r = min(⌈M/8d⌉, d): "
       "K_j, V_j, d̃K_j, d̃V_j are four B_c × d tiles on chip; shrunk to fit.)",
       "Divide Q into T_r = ⌈N/B_r⌉ blocks Q_1..Q_{T_r} of size B_r × d each, and divide K, V into "
       "T_c = ⌈N/B_c⌉ blocks K_1..K_{T_c} and V_1..V_{T_c}, of size B_c × d each.",
       "Divide O into T_r blocks O_i of size B_r × d each, divide dO into T_r blocks dO_i of size B_r × d each, "
       "divide ℓ into T_r blocks ℓ_i of size B_r each, divide m into T_r blocks m_i of size B_r each.",
       "Initialize dQ = (0)_{N×d} in HBM and divide it into T_r blocks dQ_1..dQ_{T_r} of size B_r × d each. "
       "Initialize dK = (0)_{N×d}, dV = (0)_{N×d} in HBM and divide dK, dV into T_c blocks dK_1..dK_{T_c} and "
       "dV_1..dV_{T_c}, of size B_c × d each.",
       "for 1 ≤ j ≤ T_c do",
       "  Load K_j, V_j from HBM to on-chip SRAM.",
       "  Initialize d̃K_j = (0)_{B_c×d}, d̃V_j = (0)_{B_c×d} on SRAM.",
       "  for 1 ≤ i ≤ T_r do",
       "    Load Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i from HBM to on-chip SRAM.",
       "    On chip, compute S_ij = τ Q_i K_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute S_ij^masked = MASK(S_ij). (Causal: applied as P_ij is computed; not counted apart.)",
       "    On chip, compute P_ij = diag(ℓ_i)⁻¹ exp(S_ij^masked − m_i) ∈ R^{B_r×B_c}.",
       "    On chip, compute dropout mask Z_ij ∈ R^{B_r×B_c} where each entry has value 1/(1 − p_drop) with "
       "probability 1 − p_drop and value 0 with probability p_drop. (p_drop = 0 here: nothing.)",
       "    On chip, compute P_ij^dropped = P_ij ∘ Z_ij (pointwise multiply). (p_drop = 0: P_ij itself, nothing.)",
       "    On chip, compute d̃V_j ← d̃V_j + (P_ij^dropped)ᵀ dO_i ∈ R^{B_c×d}.",
       "    On chip, compute dP_ij^dropped = dO_i V_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute dP_ij = dP_ij^dropped ∘ Z_ij (pointwise multiply). (p_drop = 0: nothing.)",
       "    On chip, compute D_i = rowsum(dO_i ∘ O_i) ∈ R^{B_r}.",
       "    On chip, compute dS_ij = P_ij ∘ (dP_ij − D_i) ∈ R^{B_r×B_c}.",
       "    Write dQ_i ← dQ_i + τ dS_ij K_j ∈ R^{B_r×d} to HBM.",
       "    On chip, compute d̃K_j ← d̃K_j + τ dS_ijᵀ Q_i ∈ R^{B_c×d}.",
       "  end for",
       "  Write dK_j ← d̃K_j, dV_j ← d̃V_j to HBM.",
       "end for",
       "Return dQ, dK, dV. (When dQ accumulates in fp32, a pass over the row blocks converts dQaccum to dQ first.)"},
      {"flash1_bwd", "flash1-bwd", "fa1-bwd"},
      /*outer_over_rows=*/false,  // for 1 ≤ j ≤ T_c
      /*skips_masked_blocks=*/true,
      /*materializes_scores=*/false,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "S_ij, P_ij, dP_ij, dS_ij stay on chip; dQ_i read and written back at every step",
      Marker::circle,
      GridShape::cta_per_outer_iteration,  // one thread block per K_j, V_j
      TileRule::paper_backward,
      Pass::bwd,
      Algorithm::fa1};
  return i;
}

class Fa1Bwd final : public LoopNest {
 public:
  explicit Fa1Bwd(bool convert_dq) : LoopNest(fa1_bwd_info()), convert_(convert_dq) {}

  int phases() const override { return convert_ ? 2 : 1; }
  std::string_view phase_title(int ph) const override {
    return ph == 0 ? fa1_bwd_info().strategy : kConvertDqTitle;
  }
  bool outer_over_rows(int ph) const override { return ph != 0; }
  bool has_visits(int ph) const override { return ph == 0; }

  void prologue(Emitter& e) const override {
    // line 5: dQ = 0, dK = 0, dV = 0 in HBM.
    const TileGrid& g = e.grid();
    e.store(5, e.whole_dQ_accumulator(), Level::none);
    e.store(5, e.whole(Tensor::dK, g.n_kv, g.d), Level::none);
    e.store(5, e.whole(Tensor::dV, g.n_kv, g.d), Level::none);
  }

  void outer_begin(int ph, i64 idx, Emitter& e) const override {
    if (ph == 0) begin_kv_block(e, idx, 7, 8);  // line 7: load K_j, V_j; line 8: d̃K_j = 0, d̃V_j = 0 on chip
    else convert_dq(e, idx, 26);                 // line 26: dQ_i = dQaccum_i in the problem's type
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const TileRef Qi = e.Q(i), Oi = e.O(i), dOi = e.dO(i), dQi = e.dQ_accumulator(i);
    const TileRef li = e.row_stat(Tensor::l, i), mi = e.row_stat(Tensor::m, i), Di = e.row_stat(Tensor::D, i);
    const TileRef Kj = e.K(j), Vj = e.V(j), dKj = e.dK(j), dVj = e.dV(j);
    const TileRef Sij = e.S(i, j), Pij = e.P(i, j), dPij = e.dP(i, j), dSij = e.dS(i, j);
    // line 10: load Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i
    e.load(10, Qi);
    e.load(10, Oi);
    e.load(10, dOi);
    e.load(10, dQi);
    e.load(10, li);
    e.load(10, mi);
    e.compute(11, Sij, {Qi, Kj}, 2 * r * c * d, r * c, 0);  // line 11: S = τ Q_i K_jᵀ
    // line 13: P = diag(ℓ_i)⁻¹ exp(S − m_i): subtract, exponentiate, scale by the row's 1/ℓ_i
    e.compute(13, Pij, {Sij, li, mi}, 0, 2 * r * c + r, r * c, &Sij);
    e.compute(16, dVj, {dVj, Pij, dOi}, 2 * r * c * d, 0, 0);     // line 16: d̃V_j += Pᵀ dO_i
    e.compute(17, dPij, {dOi, Vj}, 2 * r * c * d, 0, 0);          // line 17: dP = dO_i V_jᵀ
    e.compute(19, Di, {dOi, Oi}, 0, 2 * r * d, 0);               // line 19: D_i = rowsum(dO_i ∘ O_i)
    e.compute(20, dSij, {Pij, dPij, Di}, 0, 2 * r * c, 0, &dPij);  // line 20: dS = P ∘ (dP − D_i)
    // line 21: dQ_i ← dQ_i + τ dS K_j, written to HBM (τ scales dS: one multiply per element)
    e.compute(21, dQi, {dQi, dSij, Kj}, 2 * r * c * d, r * c, 0);
    e.store(21, dQi);
    e.compute(22, dKj, {dKj, dSij, Qi}, 2 * r * c * d, r * c, 0);  // line 22: d̃K_j += τ dSᵀ Q_i
    e.free(23, {Qi, Oi, dOi, dQi, li, mi, Di, Pij, dSij});
  }

  void outer_end(int ph, i64 idx, Emitter& e) const override {
    if (ph == 0) end_kv_block(e, idx, 24, 25);  // line 24: dK_j ← d̃K_j, dV_j ← d̃V_j
    else e.free(26, {e.dQ(idx)});
  }

 private:
  bool convert_;
};

}  // namespace

const AlgorithmEntry& fa1_bwd_entry() { return entry_of<fa1_bwd_info, make_converting<Fa1Bwd>>(); }

}  // namespace flashlab::sim::detail
