// Attention that materialises S and P in HBM, as a sequence of passes over the
// row blocks i:
//   standard — Algorithm 0 of Dao et al. (2022): S = QKᵀ; P = softmax(S); O = PV.
//   pytorch  — what eager PyTorch launches: S = QKᵀ; S = τS; [S = mask(S)];
//              P = softmax(S); O = PV, each a separate kernel.
// Inside the GEMM passes the model reads each K_j / V_j from HBM once (first
// row block) and counts the re-reads of later row blocks as L2 hits.
#include <vector>

#include "schedule/loop_nest.hpp"

namespace flashlab::sim::detail {
namespace {

enum class Pass { gemm_qk, scale, mask, softmax, gemm_pv };

struct PassSpec {
  Pass pass;
  int line;
  i64 flops_per_element;  // GEMM passes: the fused scale of S; elementwise passes: their op
  std::string_view title;  // the step-through's title of this pass
};

class Materialized final : public LoopNest {
 public:
  Materialized(const AlgorithmInfo& info, std::vector<PassSpec> passes) : LoopNest(info), passes_(std::move(passes)) {}

  int phases() const override { return static_cast<int>(passes_.size()); }
  std::string_view phase_title(int ph) const override { return spec(ph).title; }

  void outer_begin(int ph, i64 i, Emitter& e) const override {
    const PassSpec& s = spec(ph);
    if (s.pass == Pass::gemm_qk) e.load(s.line, e.Q(i));
    if (s.pass == Pass::gemm_pv) e.compute(s.line, e.O(i), {}, 0, 0, 0);  // O_i = 0 accumulator
  }

  void visit(int ph, i64 i, i64 j, bool first, Emitter& e) const override {
    const PassSpec& s = spec(ph);
    const i64 r = e.rows(i), c = e.cols(j), d = e.d();
    const Level kv_from = first ? Level::HBM : Level::L2;
    const TileRef Sij = e.S(i, j), Pij = e.P(i, j);
    switch (s.pass) {
      case Pass::gemm_qk: {
        const TileRef Kj = e.K(j);
        e.load(s.line, Kj, kv_from);
        e.compute(s.line, Sij, {e.Q(i), Kj}, 2 * r * c * d, s.flops_per_element * r * c, 0);
        e.store(s.line, Sij);
        e.free(s.line, {Kj, Sij});
        break;
      }
      case Pass::scale:
      case Pass::mask:
        e.load(s.line, Sij);
        e.compute(s.line, Sij, {Sij}, 0, s.flops_per_element * r * c, 0);
        e.store(s.line, Sij);
        e.free(s.line, {Sij});
        break;
      case Pass::softmax:
        e.load(s.line, Sij);
        e.compute(s.line, Pij, {Sij}, 0, s.flops_per_element * r * c, r * c, &Sij);
        e.store(s.line, Pij);
        e.free(s.line, {Pij});
        break;
      case Pass::gemm_pv: {
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
    const PassSpec& s = spec(ph);
    if (s.pass == Pass::gemm_qk) e.free(s.line, {e.Q(i)});
    if (s.pass == Pass::gemm_pv) {
      e.store(s.line, e.O(i));
      e.free(s.line, {e.O(i)});
    }
  }

 private:
  const PassSpec& spec(int ph) const { return passes_[static_cast<size_t>(ph)]; }
  std::vector<PassSpec> passes_;
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
  return std::make_unique<Materialized>(standard_info(), std::vector<PassSpec>{
      {Pass::gemm_qk, 1, 1, "pass 1/3: S = QKᵀ, written to HBM"},
      {Pass::softmax, 2, kSoftmaxFlopsPerElement, "pass 2/3: P = softmax(S), S read, P written"},
      {Pass::gemm_pv, 3, 0, "pass 3/3: O = PV, P read from HBM"}});
}

std::unique_ptr<LoopNest> make_pytorch(const AttentionProblem& p, const StorageTypes&) {
  std::vector<PassSpec> passes{{Pass::gemm_qk, 1, 0, "kernel 1: S = Q @ Kᵀ"}, {Pass::scale, 2, 1, "kernel 2: S = S·τ"}};
  if (p.causal) passes.push_back({Pass::mask, 3, 0, "kernel 3: mask"});
  passes.push_back({Pass::softmax, 4, kSoftmaxFlopsPerElement,
                    p.causal ? "kernel 4: P = softmax(S)" : "kernel 3: P = softmax(S)"});
  passes.push_back({Pass::gemm_pv, 5, 0, p.causal ? "kernel 5: O = P @ V" : "kernel 4: O = P @ V"});
  return std::make_unique<Materialized>(pytorch_info(), std::move(passes));
}

}  // namespace

const AlgorithmEntry& standard_entry() {
  static const AlgorithmEntry e{standard_info(), &make_standard};
  return e;
}

const AlgorithmEntry& pytorch_entry() {
  static const AlgorithmEntry e{pytorch_info(), &make_pytorch};
  return e;
}

}  // namespace flashlab::sim::detail
