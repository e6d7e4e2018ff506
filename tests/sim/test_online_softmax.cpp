// Online softmax (sim/online_softmax): seeded inputs, m_i and ℓ_i against the
// two-pass softmax after every block, the rescale factor, incremental and
// budgeted evaluation.
#include <catch2/catch.hpp>

#include <cmath>
#include <vector>

#include "flashlab/sim/schedule/online_softmax.hpp"

using namespace flashlab;

TEST_CASE("online softmax: Q and K are seeded standard normals", "[softmax]") {
  sim::AttentionProblem p;
  p.seq_q = 256;
  p.head_dim = 64;
  sim::OnlineSoftmax a(p, {64, 64}, 1), b(p, {64, 64}, 1), c(p, {64, 64}, 2);
  double sum = 0, sq = 0;
  int n = 0;
  for (sim::i64 r = 0; r < 256; ++r)
    for (sim::i64 k = 0; k < 64; ++k) {
      const double x = a.k(r, k);
      sum += x;
      sq += x * x;
      ++n;
      CHECK(x == b.k(r, k));  // the same seed, the same matrix
    }
  CHECK(std::fabs(sum / n) < 0.05);
  CHECK(std::fabs(sq / n - 1) < 0.05);
  CHECK(a.q(3, 5) == b.q(3, 5));
  CHECK(a.q(3, 5) != c.q(3, 5));
  CHECK(a.q(3, 5) != a.k(3, 5));
}

TEST_CASE("online softmax: after every block, m_i and ℓ_i equal the two-pass softmax", "[softmax]") {
  for (bool causal : {false, true})
    for (sim::i64 n : {1, 17, 64, 65, 200}) {
      sim::AttentionProblem p;
      p.seq_q = n;
      p.head_dim = 32;
      p.causal = causal;
      const sim::TileShape t{16, 24};
      sim::OnlineSoftmax os(p, t, 42, 4);
      const sim::TileGrid& g = os.grid();
      for (sim::i64 i = 0; i < g.T_r; ++i) {
        const sim::OnlineSoftmaxState& st = os.state(i, os.visits_total(i));
        REQUIRE(!st.rows.empty());
        for (const sim::OnlineSoftmaxRow& r : st.rows) {
          const sim::OnlineSoftmaxRow e = os.exact(r.row);
          INFO("N=" << n << " causal=" << causal << " row " << r.row);
          CHECK(r.m == Approx(e.m).epsilon(1e-12));
          CHECK(r.l == Approx(e.l).epsilon(1e-10));
          CHECK(r.keys == e.keys);
          CHECK(r.keys == (causal ? r.row + 1 : n));
        }
      }
    }
}

TEST_CASE("online softmax: m_i never decreases and the rescale factor is e^(m_old − m_new)", "[softmax]") {
  sim::AttentionProblem p;
  p.seq_q = 512;
  p.head_dim = 64;
  sim::OnlineSoftmax os(p, {64, 32}, 9, 4);
  std::vector<double> prev_m(4, -INFINITY);
  bool saw_rescale = false;
  for (sim::i64 v = 1; v <= os.visits_total(3); ++v) {
    const sim::OnlineSoftmaxState& st = os.state(3, v);  // incremental: one block per step
    CHECK(st.visits == v);
    CHECK(st.last_j == v - 1);
    for (size_t r = 0; r < st.rows.size(); ++r) {
      const auto& row = st.rows[r];
      CHECK(row.m >= prev_m[r]);
      CHECK(row.m_prev == prev_m[r]);
      if (v == 1) CHECK(row.rescale == 0);  // ℓ_i and O_i were 0
      else CHECK(row.rescale == Approx(std::exp(row.m_prev - row.m)));
      CHECK(row.rescale <= 1);
      saw_rescale = saw_rescale || (v > 1 && row.rescale < 1);
      prev_m[r] = row.m;
    }
  }
  CHECK(saw_rescale);  // with 16 blocks of random keys the max moves at least once
  // Going back recomputes from the start and agrees with stepping forward.
  const sim::OnlineSoftmaxState back = os.state(3, 5);
  sim::OnlineSoftmax fresh(p, {64, 32}, 9, 4);
  const sim::OnlineSoftmaxState direct = fresh.state(3, 5);
  CHECK(back.rows[2].m == direct.rows[2].m);
  CHECK(back.rows[2].l == direct.rows[2].l);
  // A small budget spreads the work over calls and ends where one call would.
  sim::OnlineSoftmax slow(p, {64, 32}, 9, 4);
  int calls = 0;
  while (!slow.state(3, 16, 1).complete()) ++calls;
  CHECK(calls == 15);  // one new block per call
  CHECK(slow.state(3, 16).rows[1].l == os.state(3, 16).rows[1].l);
  // Out-of-range requests are clamped, not errors.
  CHECK(os.state(99, 99).i == os.grid().T_r - 1);
  CHECK(os.state(0, -5).visits == 0);
}
