// Attention that materialises S and P in HBM, as a sequence of passes over the
// row blocks i:
//   standard — Algorithm 0 of Dao et al. (2022): S = QKᵀ; P = softmax(S); O = PV.
//   pytorch  — what eager PyTorch launches: S = QKᵀ; S = τS; [S = mask(S)];
//              P = softmax(S); O = PV, each a separate kernel.
// Inside the GEMM passes the model reads each K_j / V_j from HBM once (first
// row block) and counts the re-reads of later row blocks as L2 hits.
#include <vector>

#include "algorithm_model.hpp"

namespace flashlab::sim::detail {
namespace {

enum class Pass { gemm_qk, scale, mask, softmax, gemm_pv };

struct PassSpec {
  Pass pass;
  int line;
  i64 flops_per_element;  // GEMM passes: the fused scale of S; elementwise passes: their op
};

class Materialized final : public AlgorithmModel {
 public:
  Materialized(const AttentionProblem& p, TileShape t, std::vector<PassSpec> passes)
      : AlgorithmModel(p, t), passes_(std::move(passes)) {}

  int phases() const override { return static_cast<int>(passes_.size()); }
  bool outer_over_rows() const override { return true; }
  bool skips_masked_blocks() const override { return false; }  // GEMMs compute every block

  void outer_begin(int ph, i64 i, Emitter& e) const override {
    const PassSpec& s = passes_[static_cast<size_t>(ph)];
    if (s.pass == Pass::gemm_qk) e.load(s.line, e.Q(i));
    if (s.pass == Pass::gemm_pv) e.compute(s.line, e.O(i), {}, 0, 0, 0);  // O_i = 0 accumulator
  }

  void visit(int ph, i64 i, i64 j, bool first, Emitter& e) const override {
    const PassSpec& s = passes_[static_cast<size_t>(ph)];
    const i64 r = g_.rows(i), c = g_.cols(j), d = g_.d;
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
    const PassSpec& s = passes_[static_cast<size_t>(ph)];
    if (s.pass == Pass::gemm_qk) e.free(s.line, {e.Q(i)});
    if (s.pass == Pass::gemm_pv) {
      e.store(s.line, e.O(i));
      e.free(s.line, {e.O(i)});
    }
  }

  Counters cf_phase(int ph, const Sums& s) const override {
    const PassSpec& ps = passes_[static_cast<size_t>(ph)];
    Tally t(p_.dtype);
    const i64 d = g_.d, rc = s.v_rc;
    switch (ps.pass) {
      case Pass::gemm_qk:
        t.read(Level::HBM, Tensor::Q, mul(s.begin_size, d));
        t.write(Level::SRAM, Tensor::Q, mul(s.begin_size, d));
        t.read(Level::HBM, Tensor::K, mul(s.fv_c, d));
        t.read(Level::L2, Tensor::K, mul(s.v_c - s.fv_c, d));
        t.write(Level::SRAM, Tensor::K, mul(s.v_c, d));
        t.read(Level::SRAM, Tensor::Q, mul(s.v_r, d));
        t.read(Level::SRAM, Tensor::K, mul(s.v_c, d));
        t.write(Level::SRAM, Tensor::S, rc);
        t.matmul(mul(2 * d, rc));
        t.softmax(mul(ps.flops_per_element, rc));
        t.read(Level::SRAM, Tensor::S, rc);
        t.write(Level::HBM, Tensor::S, rc);
        break;
      case Pass::scale:
      case Pass::mask:
        t.read(Level::HBM, Tensor::S, rc);
        t.write(Level::SRAM, Tensor::S, rc);
        t.read(Level::SRAM, Tensor::S, rc);
        t.write(Level::SRAM, Tensor::S, rc);
        t.softmax(mul(ps.flops_per_element, rc));
        t.read(Level::SRAM, Tensor::S, rc);
        t.write(Level::HBM, Tensor::S, rc);
        break;
      case Pass::softmax:
        t.read(Level::HBM, Tensor::S, rc);
        t.write(Level::SRAM, Tensor::S, rc);
        t.read(Level::SRAM, Tensor::S, rc);
        t.write(Level::SRAM, Tensor::P, rc);
        t.softmax(mul(ps.flops_per_element, rc));
        t.exps(rc);
        t.read(Level::SRAM, Tensor::P, rc);
        t.write(Level::HBM, Tensor::P, rc);
        break;
      case Pass::gemm_pv:
        t.write(Level::SRAM, Tensor::O, mul(s.begin_size, d));
        t.read(Level::HBM, Tensor::P, rc);
        t.write(Level::SRAM, Tensor::P, rc);
        t.read(Level::HBM, Tensor::V, mul(s.fv_c, d));
        t.read(Level::L2, Tensor::V, mul(s.v_c - s.fv_c, d));
        t.write(Level::SRAM, Tensor::V, mul(s.v_c, d));
        t.read(Level::SRAM, Tensor::P, rc);
        t.read(Level::SRAM, Tensor::V, mul(s.v_c, d));
        t.read(Level::SRAM, Tensor::O, mul(s.v_r, d));
        t.write(Level::SRAM, Tensor::O, mul(s.v_r, d));
        t.matmul(mul(2 * d, rc));
        t.read(Level::SRAM, Tensor::O, mul(s.end_size, d));
        t.write(Level::HBM, Tensor::O, mul(s.end_size, d));
        break;
    }
    return t.done();
  }

  i64 ev_begin(int ph) const override {
    const Pass p = passes_[static_cast<size_t>(ph)].pass;
    return (p == Pass::gemm_qk || p == Pass::gemm_pv) ? 1 : 0;
  }
  i64 ev_visit(int) const override { return 4; }
  i64 ev_end(int ph) const override {
    const Pass p = passes_[static_cast<size_t>(ph)].pass;
    return p == Pass::gemm_qk ? 1 : p == Pass::gemm_pv ? 2 : 0;
  }

 private:
  std::vector<PassSpec> passes_;
};

// Softmax of one element: max, subtract, sum, divide (plus one exponential).
constexpr i64 kSoftmaxFlopsPerElement = 4;

}  // namespace

std::unique_ptr<AlgorithmModel> make_standard(const AttentionProblem& p, TileShape t) {
  // The scale τ is fused into the S = QKᵀ pass; the causal mask into softmax.
  return std::make_unique<Materialized>(
      p, t,
      std::vector<PassSpec>{{Pass::gemm_qk, 1, 1}, {Pass::softmax, 2, kSoftmaxFlopsPerElement},
                            {Pass::gemm_pv, 3, 0}});
}

std::unique_ptr<AlgorithmModel> make_pytorch(const AttentionProblem& p, TileShape t) {
  std::vector<PassSpec> passes{{Pass::gemm_qk, 1, 0}, {Pass::scale, 2, 1}};
  if (p.causal) passes.push_back({Pass::mask, 3, 0});
  passes.push_back({Pass::softmax, 4, kSoftmaxFlopsPerElement});
  passes.push_back({Pass::gemm_pv, 5, 0});
  return std::make_unique<Materialized>(p, t, std::move(passes));
}

}  // namespace flashlab::sim::detail
