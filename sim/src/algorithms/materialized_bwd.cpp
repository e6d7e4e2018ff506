// The backward passes of the attention that materialises S and P, as a
// sequence of passes over blocks, every intermediate through HBM:
//   standard_bwd — Algorithm 3 of Dao et al. (2022): dV = PᵀdO; dP = dO Vᵀ;
//                  dS = P ∘ (dP − rowsum(P ∘ dP)); dQ = dS K; dK = dSᵀ Q.
//   pytorch_bwd  — what eager PyTorch's autograd launches for our pytorch
//                  forward, kernel by kernel in autograd's order.
// A GEMM whose output is a K_j-shaped tile (dV_j, dK_j) runs its outer loop
// over the column blocks j, accumulating the tile on chip; the others run over
// the row blocks i. As in the forward's GEMMs, the operand that every outer
// iteration re-reads (dO_i, Q_i over column blocks; V_j, K_j over row blocks)
// comes from HBM in the first outer iteration and from the L2 after it.
#include <vector>

#include "pass_sequence.hpp"

namespace flashlab::sim::detail {
namespace {

// A pass's flops_per_element: the elementwise passes' work per dS element.
enum class Kind {
  gemm_dv,      // dV_j += P_ijᵀ dO_i   (outer loop over column blocks)
  gemm_dp,      // dP_ij = dO_i V_jᵀ    (over row blocks)
  softmax_bwd,  // dS_ij from P_ij, dP_ij and the row's Σ_l P_il dP_il
  scale_ds,     // dS_ij elementwise: the mask, the scale τ
  gemm_dq,      // dQ_i += dS_ij K_j    (over row blocks)
  gemm_dk,      // dK_j += dS_ijᵀ Q_i   (over column blocks)
};

class MaterializedBwd final : public PassSequence<Kind> {
 public:
  // ds_over_dp: the dS pass writes dS where dP was (dP's last reader is that
  // pass, and both are N_q × N_kv in the problem's dtype).
  MaterializedBwd(const AlgorithmInfo& info, std::vector<PassSpec<Kind>> passes, PassCount count, bool ds_over_dp)
      : PassSequence(info, std::move(passes), count), ds_over_dp_(ds_over_dp) {}

  std::optional<Tensor> stored_over(Tensor t) const override {
    if (ds_over_dp_ && t == Tensor::dS) return Tensor::dP;
    return std::nullopt;
  }

  bool outer_over_rows(int ph) const override {
    return spec(ph).kind != Kind::gemm_dv && spec(ph).kind != Kind::gemm_dk;
  }

  void outer_begin(int ph, i64 idx, Emitter& e) const override {
    const PassSpec<Kind>& s = spec(ph);
    switch (s.kind) {
      case Kind::gemm_dv: e.compute(s.line, e.dV(idx), {}, 0, 0, 0); break;  // dV_j = 0 accumulator
      case Kind::gemm_dk: e.compute(s.line, e.dK(idx), {}, 0, 0, 0); break;  // dK_j = 0 accumulator
      case Kind::gemm_dq: e.compute(s.line, e.dQ(idx), {}, 0, 0, 0); break;  // dQ_i = 0 accumulator
      case Kind::gemm_dp: e.load(s.line, e.dO(idx)); break;
      case Kind::softmax_bwd:
      case Kind::scale_ds: break;
    }
  }

  void visit(int ph, i64 i, i64 j, bool first, Emitter& e) const override {
    const PassSpec<Kind>& s = spec(ph);
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const Level reread_from = first ? Level::HBM : Level::L2;
    const TileRef Pij = e.P(i, j), dPij = e.dP(i, j), dSij = e.dS(i, j);
    // acc += a·b over the block: a read from HBM, b (which every outer iteration re-reads) from HBM, then the L2.
    auto accumulate = [&](const TileRef& acc, const TileRef& a, const TileRef& b) {
      e.load(s.line, a);
      e.load(s.line, b, reread_from);
      e.compute(s.line, acc, {acc, a, b}, 2 * r * c * d, 0, 0);
      e.free(s.line, {a, b});
    };
    switch (s.kind) {
      case Kind::gemm_dv: accumulate(e.dV(j), Pij, e.dO(i)); break;
      case Kind::gemm_dp: {
        const TileRef Vj = e.V(j);
        e.load(s.line, Vj, reread_from);
        e.compute(s.line, dPij, {e.dO(i), Vj}, 2 * r * c * d, 0, 0);
        e.store(s.line, dPij);
        e.free(s.line, {Vj, dPij});
        break;
      }
      case Kind::softmax_bwd:
        e.load(s.line, Pij);
        e.load(s.line, dPij);
        e.compute(s.line, dSij, {Pij, dPij}, 0, s.flops_per_element * r * c, 0, &dPij);
        e.store(s.line, dSij);
        e.free(s.line, {Pij, dSij});
        break;
      case Kind::scale_ds: in_place(e, s.line, dSij, s.flops_per_element * r * c); break;
      case Kind::gemm_dq: accumulate(e.dQ(i), dSij, e.K(j)); break;
      case Kind::gemm_dk: accumulate(e.dK(j), dSij, e.Q(i)); break;
    }
  }

  void outer_end(int ph, i64 idx, Emitter& e) const override {
    const PassSpec<Kind>& s = spec(ph);
    auto write = [&](const TileRef& t) {
      e.store(s.line, t);
      e.free(s.line, {t});
    };
    switch (s.kind) {
      case Kind::gemm_dv: write(e.dV(idx)); break;
      case Kind::gemm_dk: write(e.dK(idx)); break;
      case Kind::gemm_dq: write(e.dQ(idx)); break;
      case Kind::gemm_dp: e.free(s.line, {e.dO(idx)}); break;
      case Kind::softmax_bwd:
      case Kind::scale_ds: break;
    }
  }

 private:
  bool ds_over_dp_;
};

// dS_ij = P_ij (dP_ij − Σ_l P_il dP_il) per element: the product P ∘ dP, its
// row sum, the subtraction and the product with P.
constexpr i64 kSoftmaxBackwardFlopsPerElement = 4;

const AlgorithmInfo& standard_bwd_info() {
  static const AlgorithmInfo i{
      Algorithm::standard_bwd,
      "standard_bwd",
      "Standard attention backward (Dao et al. 2022, Algorithm 3)",
      "Dao et al., FlashAttention (2022), Algorithm 3; the scale τ is folded into the dS pass",
      {"Load P, dO by blocks from HBM, compute dV = Pᵀ dO ∈ R^{N×d}, write dV to HBM.",
       "Load dO, V by blocks from HBM, compute dP = dO Vᵀ ∈ R^{N×N}, write dP to HBM.",
       "Read P, dP from HBM, compute dS ∈ R^{N×N} where dS_ij = P_ij (dP_ij − Σ_l P_il dP_il), write dS to HBM. "
       "(τ, which dQ and dK carry, is folded in here: one multiply per element.)",
       "Load dS and K by blocks from HBM, compute dQ = dS K, write dQ to HBM.",
       "Load dS and Q by blocks from HBM, compute dK = dSᵀ Q, write dK to HBM.",
       "Return dQ, dK, dV."},
      {"naive_bwd", "algorithm3"},
      /*outer_over_rows=*/true,  // passes 2–4; the dV and dK GEMMs run over the column blocks
      /*skips_masked_blocks=*/false,  // every block is computed; P is zero where the forward masked
      /*materializes_scores=*/true,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "P read from HBM; dP and dS go to HBM between the passes",
      Marker::square,
      GridShape::cta_per_outer_iteration,
      TileRule::paper,
      Pass::bwd,
      Algorithm::standard};
  return i;
}

const AlgorithmInfo& pytorch_bwd_info() {
  static const AlgorithmInfo i{
      Algorithm::pytorch_bwd,
      "pytorch_bwd",
      "Eager PyTorch backward (autograd, one kernel per op)",
      "what eager PyTorch's autograd launches for the pytorch forward, in its order: matmul backward, softmax "
      "backward, masked_fill backward, mul backward, matmul backward",
      {"dP = dO @ V.transpose(-2, -1)     # matmul backward (self): read dO, V; write dP",
       "dV = P.transpose(-2, -1) @ dO     # matmul backward (mat2): read P, dO; write dV",
       "dS = softmax_backward(dP, P)      # read dP, P; write dS",
       "dS = dS.masked_fill(mask, 0)      # causal only: read dS; write dS",
       "dS = dS * τ                       # mul backward: read dS; write dS",
       "dQ = dS @ K                       # matmul backward (self): read dS, K; write dQ",
       "dK = dS.transpose(-2, -1) @ Q     # matmul backward (mat2): read dS, Q; write dK"},
      {"torch_bwd"},
      /*outer_over_rows=*/true,
      /*skips_masked_blocks=*/false,
      /*materializes_scores=*/true,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "one kernel per op: dP and dS go to HBM between them",
      Marker::triangle,
      GridShape::cta_per_outer_iteration,
      TileRule::paper,
      Pass::bwd,
      Algorithm::pytorch};
  return i;
}

std::unique_ptr<LoopNest> make_standard_bwd(const AttentionProblem&, const StorageTypes&) {
  return std::make_unique<MaterializedBwd>(
      standard_bwd_info(),
      std::vector<PassSpec<Kind>>{
          {Kind::gemm_dv, 1, 0, "dV = Pᵀ dO (outer loop over K_j, V_j), P read from HBM"},
          {Kind::gemm_dp, 2, 0, "dP = dO Vᵀ, written to HBM"},
          {Kind::softmax_bwd, 3, kSoftmaxBackwardFlopsPerElement + 1,
           "dS = τ P ∘ (dP − rowsum(P ∘ dP)), P and dP read, dS written"},
          {Kind::gemm_dq, 4, 0, "dQ = dS K, dS read from HBM"},
          {Kind::gemm_dk, 5, 0, "dK = dSᵀ Q (outer loop over K_j, V_j), dS read from HBM"}},
      PassCount::of_total, /*ds_over_dp=*/true);  // as the naive_bwd rung stores it: one N² buffer for both
}

std::unique_ptr<LoopNest> make_pytorch_bwd(const AttentionProblem& p, const StorageTypes&) {
  std::vector<PassSpec<Kind>> passes{
      {Kind::gemm_dp, 1, 0, "dP = dO @ Vᵀ"},
      {Kind::gemm_dv, 2, 0, "dV = Pᵀ @ dO (outer loop over K_j, V_j)"},
      {Kind::softmax_bwd, 3, kSoftmaxBackwardFlopsPerElement, "dS = softmax_backward(dP, P)"}};
  if (p.causal) passes.push_back({Kind::scale_ds, 4, 0, "dS = dS.masked_fill(mask, 0)"});
  passes.push_back({Kind::scale_ds, 5, 1, "dS = dS·τ"});
  passes.push_back({Kind::gemm_dq, 6, 0, "dQ = dS @ K"});
  passes.push_back({Kind::gemm_dk, 7, 0, "dK = dSᵀ @ Q (outer loop over K_j, V_j)"});
  // softmax_backward allocates its result: dP and dS are two tensors.
  return std::make_unique<MaterializedBwd>(pytorch_bwd_info(), std::move(passes), PassCount::kernels,
                                           /*ds_over_dp=*/false);
}

}  // namespace

const AlgorithmEntry& standard_bwd_entry() { return entry_of<standard_bwd_info, make_standard_bwd>(); }

const AlgorithmEntry& pytorch_bwd_entry() { return entry_of<pytorch_bwd_info, make_pytorch_bwd>(); }

}  // namespace flashlab::sim::detail
