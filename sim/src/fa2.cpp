// FlashAttention-2 forward, Algorithm 1 of Dao (2023): the outer loop over Q_i
// keeps O_i, ℓ_i, m_i on chip; K_j, V_j are streamed; O_i and the logsumexp
// L_i are written once.
#include "algorithm_model.hpp"

namespace flashlab::sim::detail {
namespace {

class Fa2 final : public AlgorithmModel {
 public:
  using AlgorithmModel::AlgorithmModel;

  bool outer_over_rows() const override { return true; }  // for 1 ≤ i ≤ T_r
  bool skips_masked_blocks() const override { return true; }

  void outer_begin(int, i64 i, Emitter& e) const override {
    e.load(4, e.Q(i));  // line 4: load Q_i
    // line 5: on chip, O_i = 0, ℓ_i = 0, m_i = −∞
    e.compute(5, e.O(i), {}, 0, 0, 0);
    e.compute(5, e.row_stat(Tensor::l, i), {}, 0, 0, 0);
    e.compute(5, e.row_stat(Tensor::m, i), {}, 0, 0, 0);
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = g_.rows(i), c = g_.cols(j), d = g_.d;
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
    const i64 r = g_.rows(i), d = g_.d;
    e.compute(12, Oi, {Oi, li}, 0, r * d, 0);  // line 12: O_i = diag(ℓ_i)⁻¹ O_i
    e.compute(13, Li, {mi, li}, 0, r, r);      // line 13: L_i = m_i + log(ℓ_i)
    e.store(14, Oi);                           // line 14: write O_i
    e.store(15, Li);                           // line 15: write L_i
    e.free(16, {Qi, Oi, li, mi, Li});
  }

  Counters cf_phase(int, const Sums& s) const override {
    Tally t(p_.dtype);
    const i64 d = g_.d;
    // Outer begin (lines 4-5), Σ r = begin_size.
    const i64 brd = mul(s.begin_size, d), br = s.begin_size;
    t.read(Level::HBM, Tensor::Q, brd);
    t.write(Level::SRAM, Tensor::Q, brd);
    t.write(Level::SRAM, Tensor::O, brd);
    t.write(Level::SRAM, Tensor::l, br);
    t.write(Level::SRAM, Tensor::m, br);
    // Visits (lines 7-10).
    const i64 rd = mul(s.v_r, d), cd = mul(s.v_c, d), rc = s.v_rc, r = s.v_r;
    for (Tensor x : {Tensor::K, Tensor::V}) {
      t.read(Level::HBM, x, cd);
      t.write(Level::SRAM, x, cd);
    }
    t.read(Level::SRAM, Tensor::Q, rd);  // line 8
    t.read(Level::SRAM, Tensor::K, cd);
    t.write(Level::SRAM, Tensor::S, rc);
    t.matmul(mul(2 * d, rc));
    t.softmax(rc);
    t.read(Level::SRAM, Tensor::S, mul(2, rc));  // line 9
    t.read(Level::SRAM, Tensor::m, mul(2, r));
    t.read(Level::SRAM, Tensor::m_new, mul(2, r));
    t.read(Level::SRAM, Tensor::l, r);
    t.read(Level::SRAM, Tensor::P, rc);
    t.write(Level::SRAM, Tensor::m_new, r);
    t.write(Level::SRAM, Tensor::P, rc);
    t.write(Level::SRAM, Tensor::l, r);
    t.softmax(checked_add(mul(3, rc), mul(4, r)));
    t.exps(checked_add(rc, r));
    t.read(Level::SRAM, Tensor::O, rd);  // line 10
    t.read(Level::SRAM, Tensor::P, rc);
    t.read(Level::SRAM, Tensor::V, cd);
    t.read(Level::SRAM, Tensor::m, r);
    t.read(Level::SRAM, Tensor::m_new, mul(2, r));
    t.write(Level::SRAM, Tensor::O, rd);
    t.write(Level::SRAM, Tensor::m, r);
    t.matmul(mul(2 * d, rc));
    t.softmax(rd);
    // Outer end (lines 12-15), Σ r = end_size.
    const i64 erd = mul(s.end_size, d), er = s.end_size;
    t.read(Level::SRAM, Tensor::O, mul(2, erd));
    t.read(Level::SRAM, Tensor::l, mul(2, er));
    t.read(Level::SRAM, Tensor::m, er);
    t.read(Level::SRAM, Tensor::LSE, er);
    t.write(Level::SRAM, Tensor::O, erd);
    t.write(Level::SRAM, Tensor::LSE, er);
    t.softmax(checked_add(erd, er));
    t.exps(er);
    t.write(Level::HBM, Tensor::O, erd);
    t.write(Level::HBM, Tensor::LSE, er);
    return t.done();
  }

  i64 ev_begin(int) const override { return 4; }
  i64 ev_visit(int) const override { return 9; }
  i64 ev_end(int) const override { return 5; }
};

}  // namespace

std::unique_ptr<AlgorithmModel> make_fa2(const AttentionProblem& p, TileShape t) {
  return std::make_unique<Fa2>(p, t);
}

}  // namespace flashlab::sim::detail
