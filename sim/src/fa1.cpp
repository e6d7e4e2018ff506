// FlashAttention-1, Algorithm 1 of Dao et al. (2022), as written: O, ℓ, m live
// in HBM; the outer loop streams K_j, V_j; the inner loop reads Q_i, O_i, ℓ_i,
// m_i and writes O_i, ℓ_i, m_i back at every step.
#include "algorithm_model.hpp"

namespace flashlab::sim::detail {
namespace {

class Fa1 final : public AlgorithmModel {
 public:
  using AlgorithmModel::AlgorithmModel;

  bool outer_over_rows() const override { return false; }  // for 1 ≤ j ≤ T_c
  bool skips_masked_blocks() const override { return true; }

  void prologue(Emitter& e) const override {
    // line 2: initialise O = 0, ℓ = 0, m = −∞ in HBM.
    e.store(2, e.whole(Tensor::O, g_.n_q, g_.d), Level::none);
    e.store(2, e.whole(Tensor::l, g_.n_q, 1), Level::none);
    e.store(2, e.whole(Tensor::m, g_.n_q, 1), Level::none);
  }

  void outer_begin(int, i64 j, Emitter& e) const override {
    e.load(6, e.K(j));  // line 6: load K_j, V_j
    e.load(6, e.V(j));
  }

  void visit(int, i64 i, i64 j, bool, Emitter& e) const override {
    const i64 r = g_.rows(i), c = g_.cols(j), d = g_.d;
    const TileRef Qi = e.Q(i), Oi = e.O(i), li = e.row_stat(Tensor::l, i), mi = e.row_stat(Tensor::m, i);
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

  Counters cf_prologue() const override {
    Tally t(p_.dtype);
    t.write(Level::HBM, Tensor::O, mul(g_.n_q, g_.d));
    t.write(Level::HBM, Tensor::l, g_.n_q);
    t.write(Level::HBM, Tensor::m, g_.n_q);
    return t.done();
  }

  Counters cf_phase(int, const Sums& s) const override {
    Tally t(p_.dtype);
    const i64 d = g_.d;
    // line 6, once per outer iteration: K_j, V_j (begin_size = Σ c).
    for (Tensor x : {Tensor::K, Tensor::V}) {
      t.read(Level::HBM, x, mul(s.begin_size, d));
      t.write(Level::SRAM, x, mul(s.begin_size, d));
    }
    const i64 rd = mul(s.v_r, d), cd = mul(s.v_c, d), rc = s.v_rc, r = s.v_r;
    // line 8: load Q_i, O_i, ℓ_i, m_i.
    for (Tensor x : {Tensor::Q, Tensor::O}) {
      t.read(Level::HBM, x, rd);
      t.write(Level::SRAM, x, rd);
    }
    for (Tensor x : {Tensor::l, Tensor::m}) {
      t.read(Level::HBM, x, r);
      t.write(Level::SRAM, x, r);
    }
    // line 9: S = τ Q Kᵀ.
    t.read(Level::SRAM, Tensor::Q, rd);
    t.read(Level::SRAM, Tensor::K, cd);
    t.write(Level::SRAM, Tensor::S, rc);
    t.matmul(mul(2 * d, rc));
    t.softmax(rc);
    // line 10: m̃, P̃, ℓ̃.
    t.read(Level::SRAM, Tensor::S, rc);
    t.write(Level::SRAM, Tensor::m_tilde, r);
    t.read(Level::SRAM, Tensor::S, rc);
    t.read(Level::SRAM, Tensor::m_tilde, r);
    t.write(Level::SRAM, Tensor::P, rc);
    t.read(Level::SRAM, Tensor::P, rc);
    t.write(Level::SRAM, Tensor::l_tilde, r);
    t.softmax(mul(3, rc));
    t.exps(rc);
    // line 11: m_new, ℓ_new.
    t.read(Level::SRAM, Tensor::m, mul(2, r));
    t.read(Level::SRAM, Tensor::m_tilde, mul(2, r));
    t.read(Level::SRAM, Tensor::m_new, r);
    t.read(Level::SRAM, Tensor::l, r);
    t.read(Level::SRAM, Tensor::l_tilde, r);
    t.write(Level::SRAM, Tensor::m_new, r);
    t.write(Level::SRAM, Tensor::l_new, r);
    t.softmax(mul(6, r));
    t.exps(mul(2, r));
    // line 12: O update, then O_i to HBM.
    t.read(Level::SRAM, Tensor::O, rd);
    t.read(Level::SRAM, Tensor::P, rc);
    t.read(Level::SRAM, Tensor::V, cd);
    t.read(Level::SRAM, Tensor::l, r);
    t.read(Level::SRAM, Tensor::l_new, r);
    t.write(Level::SRAM, Tensor::O, rd);
    t.matmul(mul(2 * d, rc));
    t.softmax(checked_add(mul(3, rd), mul(3, r)));
    t.read(Level::SRAM, Tensor::O, rd);
    t.write(Level::HBM, Tensor::O, rd);
    // line 13: ℓ_i, m_i to HBM.
    for (Tensor x : {Tensor::l, Tensor::m}) {
      t.read(Level::SRAM, x, r);
      t.write(Level::HBM, x, r);
    }
    return t.done();
  }

  i64 ev_prologue() const override { return 3; }
  i64 ev_begin(int) const override { return 2; }
  i64 ev_visit(int) const override { return 15; }
  i64 ev_end(int) const override { return 1; }
};

}  // namespace

std::unique_ptr<AlgorithmModel> make_fa1(const AttentionProblem& p, TileShape t) {
  return std::make_unique<Fa1>(p, t);
}

}  // namespace flashlab::sim::detail
