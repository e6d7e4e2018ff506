// Attention that materialises S and P in HBM, as a sequence of passes over the
// row blocks i:
//   standard — Algorithm 0 of Dao et al. (2022): S = QKᵀ; P = softmax(S); O = PV.
//   pytorch  — what eager PyTorch launches: S = QKᵀ; S = τS; [S = mask(S)];
//              P = softmax(S); O = PV, each a separate kernel.
// Inside the GEMM passes the model reads each K_j / V_j from HBM once (first
// row block) and counts the re-reads of later row blocks as L2 hits.
#include <vector>

#include "pass_sequence.hpp"

namespace flashlab::sim::detail {
namespace {

// A pass's flops_per_element: the GEMM passes' fused scale of S, the elementwise passes' op.
enum class FwdKind { gemm_qk, scale, mask, softmax, gemm_pv };

class Materialized final : public PassSequence<FwdKind> {
 public:
  using PassSequence::PassSequence;

  void outer_begin(int ph, i64 i, Emitter& e) const override {
    const PassSpec<FwdKind>& s = spec(ph);
    if (s.kind == FwdKind::gemm_qk) e.load(s.line, e.Q(i));
    if (s.kind == FwdKind::gemm_pv) e.compute(s.line, e.O(i), {}, 0, 0, 0);  // O_i = 0 accumulator
  }

  void visit(int ph, i64 i, i64 j, bool first, Emitter& e) const override {
    const PassSpec<FwdKind>& s = spec(ph);
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const Level kv_from = first ? Level::HBM : Level::L2;
    const TileRef Sij = e.S(i, j), Pij = e.P(i, j);
    switch (s.kind) {
      case FwdKind::gemm_qk: {
        const TileRef Kj = e.K(j);
        e.load(s.line, Kj, kv_from);
        e.compute(s.line, Sij, {e.Q(i), Kj}, 2 * r * c * d, s.flops_per_element * r * c, 0);
        e.store(s.line, Sij);
        e.free(s.line, {Kj, Sij});
        break;
      }
      case FwdKind::scale:
      case FwdKind::mask: in_place(e, s.line, Sij, s.flops_per_element * r * c); break;
      case FwdKind::softmax:
        e.load(s.line, Sij);
        e.compute(s.line, Pij, {Sij}, 0, s.flops_per_element * r * c, r * c, &Sij);
        e.store(s.line, Pij);
        e.free(s.line, {Pij});
        break;
      case FwdKind::gemm_pv: {
        const TileRef Vj = e.V(j), Oi = e.O(i);
        e.load(s.line, Pij);
        e.load(s.line, Vj, kv_from);
        e.compute(s.line, Oi, {Pij, Vj, Oi}, 2 * r * c * d, 0, 0);
        e.free(s.line, {Pij, Vj});
        break;
      }
    }
  }

  void outer_end(int ph, i64 i, Emitter& e) const override {
    const PassSpec<FwdKind>& s = spec(ph);
    if (s.kind == FwdKind::gemm_qk) e.free(s.line, {e.Q(i)});
    if (s.kind == FwdKind::gemm_pv) {
      e.store(s.line, e.O(i));
      e.free(s.line, {e.O(i)});
    }
  }
};

// Softmax of one element: max, subtract, sum, divide (plus one exponential).
constexpr i64 kSoftmaxFlopsPerElement = 4;

const AlgorithmInfo& standard_info() {
  static const AlgorithmInfo i{
      Algorithm::standard,
      "standard",
      "Standard attention (Dao et al. 2022, Algorithm 0)",
      "Dao et al., FlashAttention (2022), Algorithm 0",
      {"Load Q, K by blocks from HBM, compute S = QKᵀ, write S to HBM.",
       "Read S from HBM, compute P = softmax(S), write P to HBM.",
       "Load P and V by blocks from HBM, compute O = PV, write O to HBM.",
       "Return O."},
      {"naive", "algorithm0"},
      /*outer_over_rows=*/true,
      /*skips_masked_blocks=*/false,  // the GEMMs compute every block, the mask comes after
      /*materializes_scores=*/true,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "S and P go to HBM; softmax reads whole rows back",
      Marker::square,
      GridShape::cta_per_outer_iteration,
      TileRule::paper,
      sim::Pass::fwd,
      Algorithm::standard,
      /*hopper_rung_runs_it=*/false,
      /*drawn_by_default=*/true};
  return i;
}

const AlgorithmInfo& pytorch_info() {
  static const AlgorithmInfo i{
      Algorithm::pytorch,
      "pytorch",
      "Eager PyTorch (one kernel per op)",
      "torch.matmul / mul / masked_fill / softmax / matmul, as eager PyTorch launches them",
      {"S = Q @ K.transpose(-2, -1)      # GEMM: read Q, K; write S",
       "S = S * τ                        # elementwise: read S; write S",
       "S = S.masked_fill(mask, -inf)    # causal only: read S; write S",
       "P = torch.softmax(S, dim=-1)     # read S; write P",
       "O = P @ V                        # GEMM: read P, V; write O"},
      {},
      /*outer_over_rows=*/true,
      /*skips_masked_blocks=*/false,
      /*materializes_scores=*/true,
      /*keeps_running_statistics=*/false,
      /*statistics_update_line=*/0,
      "one kernel per op: S and P go to HBM between them",
      Marker::triangle};
  return i;
}

std::unique_ptr<LoopNest> make_standard(const AttentionProblem&, const StorageTypes&) {
  // The scale τ is fused into the S = QKᵀ pass; the causal mask into softmax.
  return std::make_unique<Materialized>(
      standard_info(),
      std::vector<PassSpec<FwdKind>>{{FwdKind::gemm_qk, 1, 1, "S = QKᵀ, written to HBM"},
                                     {FwdKind::softmax, 2, kSoftmaxFlopsPerElement, "P = softmax(S), S read, P written"},
                                     {FwdKind::gemm_pv, 3, 0, "O = PV, P read from HBM"}},
      PassCount::of_total);
}

std::unique_ptr<LoopNest> make_pytorch(const AttentionProblem& p, const StorageTypes&) {
  std::vector<PassSpec<FwdKind>> passes{{FwdKind::gemm_qk, 1, 0, "S = Q @ Kᵀ"}, {FwdKind::scale, 2, 1, "S = S·τ"}};
  if (p.causal) passes.push_back({FwdKind::mask, 3, 0, "mask"});
  passes.push_back({FwdKind::softmax, 4, kSoftmaxFlopsPerElement, "P = softmax(S)"});
  passes.push_back({FwdKind::gemm_pv, 5, 0, "O = P @ V"});
  return std::make_unique<Materialized>(pytorch_info(), std::move(passes), PassCount::kernels);
}

}  // namespace

const AlgorithmEntry& standard_entry() { return entry_of<standard_info, make_standard>(); }

const AlgorithmEntry& pytorch_entry() { return entry_of<pytorch_info, make_pytorch>(); }

}  // namespace flashlab::sim::detail
