// FlashAttention-2 backward, Algorithm 2 of Dao (2023), as implementations run
// it (flash-attn's flash_bwd kernels):
//   a pre-pass over the row blocks, a launch of its own: D_i = rowsum(dO_i ∘ O_i)
//     written to HBM, dQ_i zeroed (the paper's lines 3 and 4);
//   the main loop, one thread block per K_j, V_j: dK_j, dV_j accumulate on
//     chip; every visit loads Q_i, dO_i, L_i, D_i, recomputes S_ij and P_ij,
//     and adds dS_ij K_j into dQ_i in global memory — an atomic add, counted as
//     a read and a write of the dQ_i tile per visit;
//   when dQ accumulates in another type than the problem's (fp32 dQaccum,
//     StorageTypes::dq_accumulator), a post-pass over the row blocks converts it.
// Grouped heads (G = H / H_kv > 1) whose kernel runs each query head in blocks
// of its own (StorageTypes::dkv_accumulator: fa2_tc_bwd, fa3_hopper_bwd): the
// G blocks of K_j, V_j cannot sum their dK_j, dV_j on chip, so each adds them
// atomically into dKaccum_j, dVaccum_j of the K/V head — a read and a write of
// the tiles, as dQ_i's adds — which a pass once per K/V head zeroes before
// (a memset) and another converts to dK, dV after.
// Grouped heads summed on chip (fa2_bwd): one block of K_j, V_j runs the
// group's G query heads in turn (LoopNest::walks_group), which the L2 model
// walks as such; the pieces stay per query head.
// Causal: column block j visits row blocks first_row(j) … T_r − 1, ascending.
#include <vector>

#include "kv_block_steps.hpp"

namespace flashlab::sim::detail {
namespace {

const AlgorithmInfo& fa2_bwd_info() {
  static const AlgorithmInfo i{
      Algorithm::fa2_bwd,
      "fa2_bwd",
      "FlashAttention-2 backward (Dao 2023, Algorithm 2)",
      "Dao, FlashAttention-2 (2023), Algorithm 2, as implementations run it: D and the zeroed dQ in a pre-pass "
      "launch of their own; each visit loads Q_i, dO_i, L_i, D_i (not O_i, dQ_i) and adds into dQ_i in global "
      "memory atomically; an fp32 dQ accumulator is converted by a post-pass",
      {"Divide Q into T_r = ⌈N/B_r⌉ blocks Q_1..Q_{T_r} of size B_r × d each, and divide K, V into "
       "T_c = ⌈N/B_c⌉ blocks K_1..K_{T_c} and V_1..V_{T_c}, of size B_c × d each.",
       "Divide O into T_r blocks O_i of size B_r × d each, divide dO into T_r blocks dO_i of size B_r × d each, "
       "and divide L into T_r blocks L_i of size B_r each.",
       "Initialize dQ = (0)_{N×d} in HBM and divide it into T_r blocks dQ_1..dQ_{T_r} of size B_r × d each. "
       "Divide dK, dV ∈ R^{N×d} into T_c blocks dK_1..dK_{T_c} and dV_1..dV_{T_c}, of size B_c × d each. "
       "(As run: the pre-pass zeroes dQ_i, or dQaccum_i in fp32, beside D_i; with grouped heads added apart, "
       "a pass before it zeroes each K/V head's dKaccum, dVaccum.)",
       "Compute D = rowsum(dO ∘ O) ∈ R^N (pointwise multiply), write D to HBM and divide it into T_r blocks "
       "D_1..D_{T_r} of size B_r each. (As run: a pre-pass launch over the row blocks.)",
       "for 1 ≤ j ≤ T_c do",
       "  Load K_j, V_j from HBM to on-chip SRAM.",
       "  Initialize dK_j = (0)_{B_c×d}, dV_j = (0)_{B_c×d} on SRAM.",
       "  for 1 ≤ i ≤ T_r do",
       "    Load Q_i, O_i, dO_i, dQ_i, L_i, D_i from HBM to on-chip SRAM. (As run: Q_i, dO_i, L_i, D_i; O_i "
       "entered through D_i at line 4, dQ_i is added to in global memory at line 15.)",
       "    On chip, compute S_i^(j) = τ Q_i K_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute P_i^(j) = exp(S_ij − L_i) ∈ R^{B_r×B_c}.",
       "    On chip, compute dV_j ← dV_j + (P_i^(j))ᵀ dO_i ∈ R^{B_c×d}.",
       "    On chip, compute dP_i^(j) = dO_i V_jᵀ ∈ R^{B_r×B_c}.",
       "    On chip, compute dS_i^(j) = P_i^(j) ∘ (dP_i^(j) − D_i) ∈ R^{B_r×B_c}. (τ, which dQ and dK carry, "
       "is folded in here: one multiply per element.)",
       "    Load dQ_i from HBM to SRAM, then on chip, update dQ_i ← dQ_i + dS_i^(j) K_j ∈ R^{B_r×d}, and write "
       "back to HBM. (As run: an atomic add into dQ_i, or dQaccum_i in fp32, in global memory.)",
       "    On chip, compute dK_j ← dK_j + dS_i^(j)ᵀ Q_i ∈ R^{B_c×d}.",
       "  end for",
       "  Write dK_j, dV_j to HBM. (As run with grouped heads added apart: add them atomically into the K/V "
       "head's dKaccum_j, dVaccum_j in global memory.)",
       "end for",
       "Return dQ, dK, dV. (As run: when dQ accumulates in fp32, a post-pass over the row blocks converts "
       "dQaccum to dQ first; with grouped heads added apart, a pass per K/V head converts dKaccum, dVaccum.)"},
      {"flash2_bwd", "flash2-bwd", "fa2-bwd"},
      /*outer_over_rows=*/false,  // the main loop: for 1 ≤ j ≤ T_c
      /*skips_masked_blocks=*/true,
      /*materializes_scores=*/false,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "S_ij, P_ij, dP_ij, dS_ij stay on chip; dK_j, dV_j accumulate on chip, dQ_i in global memory",
      Marker::diamond,
      GridShape::cta_per_outer_iteration,  // one thread block per K_j, V_j (and per row block in the passes)
      TileRule::paper_backward,
      Pass::bwd,
      Algorithm::fa2,
      /*hopper_rung_runs_it=*/true};  // fa3_hopper_bwd (hopper_bwd_pipeline.hpp)
  return i;
}

// The phases, in launch order; the optional ones only when the storage asks for them.
enum class Phase { zero_dkv, pre_pass, main_loop, convert_dq, convert_dkv };

class Fa2Bwd final : public LoopNest {
 public:
  Fa2Bwd(bool convert_dq, bool dkv_apart, bool grouped)
      : LoopNest(fa2_bwd_info()), dkv_apart_(dkv_apart), walks_group_(grouped && !dkv_apart) {
    if (dkv_apart) phases_.push_back(Phase::zero_dkv);
    phases_.push_back(Phase::pre_pass);
    phases_.push_back(Phase::main_loop);
    if (convert_dq) phases_.push_back(Phase::convert_dq);
    if (dkv_apart) phases_.push_back(Phase::convert_dkv);
  }

  int phases() const override { return static_cast<int>(phases_.size()); }
  std::string_view phase_title(int ph) const override {
    switch (of(ph)) {
      case Phase::zero_dkv: return "before: dKaccum_j, dVaccum_j (fp32) of each K/V head zeroed (a memset)";
      case Phase::pre_pass:
        return "pre-pass: D_i = rowsum(dO_i ∘ O_i) written, dQ_i zeroed (a launch over the row blocks)";
      case Phase::main_loop:
        return dkv_apart_ ? "main loop: one thread block per K_j, V_j of each query head; dQ_i, and the group's "
                            "dK_j, dV_j, added to in HBM"
                          : "main loop: one thread block per K_j, V_j; dK_j, dV_j on chip, dQ_i added to in HBM";
      case Phase::convert_dq: return kConvertDqTitle;
      case Phase::convert_dkv: return "post-pass: dKaccum_j, dVaccum_j of each K/V head converted to dK_j, dV_j";
    }
    return "";
  }
  bool outer_over_rows(int ph) const override { return of(ph) == Phase::pre_pass || of(ph) == Phase::convert_dq; }
  bool has_visits(int ph) const override { return of(ph) == Phase::main_loop; }
  bool once_per_kv_head(int ph) const override { return of(ph) == Phase::zero_dkv || of(ph) == Phase::convert_dkv; }
  // A group summed on chip: the block of K_j, V_j runs the group's query heads in turn.
  bool walks_group(int ph) const override { return walks_group_ && of(ph) == Phase::main_loop; }

  void outer_begin(int ph, i64 idx, Emitter& e) const override {
    switch (of(ph)) {
      case Phase::zero_dkv: {
        const i64 j = idx;
        e.store(3, e.dK_accumulator(j), Level::none);  // line 3 (as run): dKaccum_j = 0, dVaccum_j = 0 in HBM
        e.store(3, e.dV_accumulator(j), Level::none);
        break;
      }
      case Phase::pre_pass: {
        const i64 i = idx, r = e.rows(i), d = e.d();
        const TileRef Oi = e.O(i), dOi = e.dO(i), Di = e.row_stat(Tensor::D, i);
        e.store(3, e.dQ_accumulator(i), Level::none);  // line 3: dQ_i = 0 in HBM
        e.load(4, Oi);                                  // line 4: D_i = rowsum(dO_i ∘ O_i)
        e.load(4, dOi);
        e.compute(4, Di, {dOi, Oi}, 0, 2 * r * d, 0);
        e.store(4, Di);
        break;
      }
      case Phase::main_loop:
        begin_kv_block(e, idx, 6, 7);  // line 6: load K_j, V_j; line 7: dK_j = 0, dV_j = 0 on chip
        break;
      case Phase::convert_dq:
        convert_dq(e, idx, 20);  // line 20: dQ_i = dQaccum_i in the problem's type
        break;
      case Phase::convert_dkv: {
        const i64 j = idx;
        const TileRef dKacc = e.dK_accumulator(j), dVacc = e.dV_accumulator(j), dKj = e.dK(j), dVj = e.dV(j);
        e.load(20, dKacc);  // line 20 (as run): dK_j, dV_j = dKaccum_j, dVaccum_j in the problem's type
        e.compute(20, dKj, {dKacc}, 0, 0, 0, &dKacc);
        e.store(20, dKj);
        e.load(20, dVacc);
        e.compute(20, dVj, {dVacc}, 0, 0, 0, &dVacc);
        e.store(20, dVj);
        break;
      }
    }
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const TileRef Qi = e.Q(i), dOi = e.dO(i), Li = e.row_stat(Tensor::LSE, i), Di = e.row_stat(Tensor::D, i);
    const TileRef Kj = e.K(j), Vj = e.V(j), dKj = e.dK(j), dVj = e.dV(j);
    const TileRef Sij = e.S(i, j), Pij = e.P(i, j), dPij = e.dP(i, j), dSij = e.dS(i, j);
    const TileRef dQi = e.dQ_accumulator(i);
    // line 9 (as run): load Q_i, dO_i, L_i, D_i
    e.load(9, Qi);
    e.load(9, dOi);
    e.load(9, Li);
    e.load(9, Di);
    e.compute(10, Sij, {Qi, Kj}, 2 * r * c * d, r * c, 0);        // line 10: S = τ Q_i K_jᵀ
    e.compute(11, Pij, {Sij, Li}, 0, r * c, r * c, &Sij);         // line 11: P = exp(S − L_i)
    e.compute(12, dVj, {dVj, Pij, dOi}, 2 * r * c * d, 0, 0);      // line 12: dV_j += Pᵀ dO_i
    e.compute(13, dPij, {dOi, Vj}, 2 * r * c * d, 0, 0);           // line 13: dP = dO_i V_jᵀ
    e.compute(14, dSij, {Pij, dPij, Di}, 0, 3 * r * c, 0, &dPij);  // line 14: dS = τ P ∘ (dP − D_i)
    // line 15: dQ_i += dS K_j, added in global memory: a read and a write of the tile
    e.load(15, dQi);
    e.compute(15, dQi, {dQi, dSij, Kj}, 2 * r * c * d, 0, 0);
    e.store(15, dQi);
    e.compute(16, dKj, {dKj, dSij, Qi}, 2 * r * c * d, 0, 0);  // line 16: dK_j += dSᵀ Q_i
    e.free(17, {Qi, dOi, Li, Di, Pij, dSij, dQi});
  }

  void outer_end(int ph, i64 idx, Emitter& e) const override {
    switch (of(ph)) {
      case Phase::zero_dkv: break;
      case Phase::pre_pass: e.free(4, {e.O(idx), e.dO(idx), e.row_stat(Tensor::D, idx)}); break;
      case Phase::main_loop: {
        if (dkv_apart_) {
          const TileRef dKj = e.dK(idx), dVj = e.dV(idx);
          // line 18 (as run): dK_j, dV_j added into the group's dKaccum_j, dVaccum_j in
          // global memory — like dQ_i's adds, a read and a write of each tile
          // (K_j, V_j are done with first: the SRAM never holds more than before).
          const TileRef dKacc = e.dK_accumulator(idx), dVacc = e.dV_accumulator(idx);
          e.free(18, {e.K(idx), e.V(idx)});
          e.load(18, dKacc);
          e.compute(18, dKacc, {dKacc, dKj}, 0, 0, 0);
          e.store(18, dKacc);
          e.free(18, {dKacc, dKj});
          e.load(18, dVacc);
          e.compute(18, dVacc, {dVacc, dVj}, 0, 0, 0);
          e.store(18, dVacc);
          e.free(19, {dVacc, dVj});
        } else {
          end_kv_block(e, idx, 18, 19);  // line 18: write dK_j, dV_j
        }
        break;
      }
      case Phase::convert_dq: e.free(20, {e.dQ(idx)}); break;
      case Phase::convert_dkv: e.free(20, {e.dK(idx), e.dV(idx)}); break;
    }
  }

 private:
  Phase of(int ph) const { return phases_[static_cast<size_t>(ph)]; }
  bool dkv_apart_, walks_group_;
  std::vector<Phase> phases_;
};

std::unique_ptr<LoopNest> make_fa2_bwd(const AttentionProblem& p, const StorageTypes& st) {
  return std::make_unique<Fa2Bwd>(st.dq_accumulator.has_value() && *st.dq_accumulator != p.dtype,
                                  st.dkv_accumulator.has_value() && p.group_size() > 1, p.group_size() > 1);
}

}  // namespace

const AlgorithmEntry& fa2_bwd_entry() { return entry_of<fa2_bwd_info, make_fa2_bwd>(); }

}  // namespace flashlab::sim::detail
