// The event streams equal the closed forms: exactly, for every counter, over
// random shapes (ragged N, N smaller than a tile, causal, N_q ≠ N_kv); and the
// HBM counts equal the formulas of docs/model.md.
#include "sim/support.hpp"

using namespace flashlab::sim;
using flashlab::test::Case;
using flashlab::test::stream_counters;

namespace {

i64 hbm_read_elements(const Counters& c) { return c.level(Level::HBM).read_elements; }
i64 hbm_write_elements(const Counters& c) { return c.level(Level::HBM).write_elements; }

// Σ f(r_i, c_j) over the blocks a FlashAttention schedule visits, by brute force.
template <class F>
i64 sum_visited(const TileGrid& g, F f) {
  i64 s = 0;
  for (i64 i = 0; i < g.T_r; ++i)
    for (i64 j = 0; j < g.T_c; ++j)
      if (flashlab::test::brute_visited(g, i, j)) s += f(g.rows(i), g.cols(j));
  return s;
}

}  // namespace

TEST_CASE("event streams equal the closed forms on 250 random shapes", "[sim][closed-form]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 250; ++n) {
    const Case c = flashlab::test::random_case(rng);
    for (Algorithm a : all_algorithms()) {
      INFO(describe_case(c) << " algo " << to_string(a));
      const Schedule s(a, c.problem, c.tiles);
      const Counters stream = stream_counters(s);
      const Counters closed = s.closed_form();
      REQUIRE(stream.events == closed.events);
      for (int l = 0; l < kLevelCount; ++l)
        for (int t = 0; t < kTensorCount; ++t) {
          INFO("level " << to_string(static_cast<Level>(l)) << " tensor " << to_string(static_cast<Tensor>(t)));
          REQUIRE(stream.traffic[l][t] == closed.traffic[l][t]);
        }
      REQUIRE(stream.matmul_flops == closed.matmul_flops);
      REQUIRE(stream.softmax_flops == closed.softmax_flops);
      REQUIRE(stream.exps == closed.exps);
      REQUIRE(stream == closed);
    }
  }
}

TEST_CASE("HBM traffic equals the paper's formulas (non-causal, any N)", "[sim][closed-form]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 200; ++n) {
    Case c = flashlab::test::random_case(rng);
    c.problem.causal = false;
    c.problem.seq_kv = c.problem.seq_q;
    const AttentionProblem& p = c.problem;
    const i64 N = p.n_q(), d = p.d();
    const i64 q = dtype_bytes(p.dtype);
    const TileGrid g(p, c.tiles);
    const i64 Tr = g.T_r, Tc = g.T_c;
    INFO(describe_case(c));

    const Counters std_c = Schedule(Algorithm::standard, p, c.tiles).closed_form();
    CHECK(hbm_read_elements(std_c) == 3 * N * d + 2 * N * N);
    CHECK(hbm_write_elements(std_c) == 2 * N * N + N * d);
    CHECK(std_c.level(Level::HBM).bytes() == (4 * N * d + 4 * N * N) * q);

    const Counters pt = Schedule(Algorithm::pytorch, p, c.tiles).closed_form();
    CHECK(hbm_read_elements(pt) == 3 * N * d + 3 * N * N);
    CHECK(hbm_write_elements(pt) == 3 * N * N + N * d);

    // fa1: reads 2Nd + T_c(2Nd + 2N), writes (Nd + 2N) + T_c(Nd + 2N); ℓ, m are fp32.
    const Counters f1 = stream_counters(Schedule(Algorithm::fa1, p, c.tiles));
    CHECK(hbm_read_elements(f1) == 2 * N * d + Tc * (2 * N * d + 2 * N));
    CHECK(hbm_write_elements(f1) == (N * d + 2 * N) + Tc * (N * d + 2 * N));
    CHECK(f1.level(Level::HBM).read_bytes == 2 * N * d * q + Tc * (2 * N * d * q + 2 * N * 4));
    CHECK(f1.level(Level::HBM).write_bytes == (N * d * q + 2 * N * 4) + Tc * (N * d * q + 2 * N * 4));

    // fa2: reads Nd + 2Nd·T_r, writes Nd + N (the LSE, fp32).
    const Counters f2 = stream_counters(Schedule(Algorithm::fa2, p, c.tiles));
    CHECK(hbm_read_elements(f2) == N * d + 2 * N * d * Tr);
    CHECK(hbm_write_elements(f2) == N * d + N);
    CHECK(f2.level(Level::HBM).bytes() == (N * d + 2 * N * d * Tr + N * d) * q + N * 4);

    // Every algorithm computes the same two GEMMs when nothing is skipped.
    for (const Counters* x : {&std_c, &pt, &f1, &f2}) CHECK(x->matmul_flops == 4 * N * N * d);
  }
}

TEST_CASE("fa1 with O accumulated in fp32 moves 4-byte O and nothing else changes", "[sim][closed-form]") {
  auto rng = flashlab::test::test_rng();
  StorageTypes fp32_o;
  fp32_o.o_accumulator = DType::fp32;
  for (int n = 0; n < 100; ++n) {
    Case c = flashlab::test::random_case(rng);
    if (c.problem.dtype == DType::fp32) c.problem.dtype = DType::fp16;
    const AttentionProblem& p = c.problem;
    INFO(describe_case(c));
    const Schedule paper(Algorithm::fa1, p, c.tiles), kernel(Algorithm::fa1, p, c.tiles, fp32_o);
    const Counters a = paper.closed_form(), b = stream_counters(kernel);
    REQUIRE(b == kernel.closed_form());
    // The same elements move; O's bytes double (fp16/bf16 to fp32), in HBM and SRAM.
    const Traffic o_paper = a.at(Level::HBM, Tensor::O), o_kernel = b.at(Level::HBM, Tensor::O);
    CHECK(o_kernel.read_elements == o_paper.read_elements);
    CHECK(o_kernel.write_elements == o_paper.write_elements);
    CHECK(o_kernel.read_bytes == 2 * o_paper.read_bytes);
    CHECK(o_kernel.write_bytes == 2 * o_paper.write_bytes);
    for (Tensor t : {Tensor::Q, Tensor::K, Tensor::V, Tensor::l, Tensor::m})
      CHECK(b.at(Level::HBM, t) == a.at(Level::HBM, t));
    CHECK(b.matmul_flops == a.matmul_flops);
    CHECK(b.events == a.events);
    // fa2 writes O once and never reads it back: the accumulator type does not apply.
    CHECK(Schedule(Algorithm::fa2, p, c.tiles, fp32_o).closed_form() == Schedule(Algorithm::fa2, p, c.tiles).closed_form());
  }
}

TEST_CASE("HBM traffic with N_kv different from N_q", "[sim][closed-form]") {
  AttentionProblem p;
  p.seq_q = 1;
  p.seq_kv = 1000;
  p.head_dim = 64;
  for (TileShape t : {TileShape{64, 64}, TileShape{1, 7}, TileShape{128, 384}}) {
    p.seq_q = p.seq_q == 1 ? 77 : 1;
    const i64 Nq = p.n_q(), Nk = p.n_kv(), d = p.d();
    const TileGrid g(p, t);
    const Counters std_c = stream_counters(Schedule(Algorithm::standard, p, t));
    CHECK(hbm_read_elements(std_c) == Nq * d + 2 * Nk * d + 2 * Nq * Nk);
    const Counters f1 = stream_counters(Schedule(Algorithm::fa1, p, t));
    CHECK(hbm_read_elements(f1) == 2 * Nk * d + g.T_c * (2 * Nq * d + 2 * Nq));
    const Counters f2 = stream_counters(Schedule(Algorithm::fa2, p, t));
    CHECK(hbm_read_elements(f2) == Nq * d + 2 * Nk * d * g.T_r);
    CHECK(hbm_write_elements(f2) == Nq * d + Nq);
  }
}

TEST_CASE("causal HBM traffic follows from the visited blocks", "[sim][closed-form][causal]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 150; ++n) {
    Case c = flashlab::test::random_case(rng, 200);
    c.problem.causal = true;
    c.problem.seq_kv = c.problem.seq_q;
    const AttentionProblem& p = c.problem;
    const TileGrid g(p, c.tiles);
    const i64 N = p.n_q(), d = p.d();
    INFO(describe_case(c));
    const Counters f1 = stream_counters(Schedule(Algorithm::fa1, p, c.tiles));
    const Counters f2 = stream_counters(Schedule(Algorithm::fa2, p, c.tiles));
    const Counters st = stream_counters(Schedule(Algorithm::standard, p, c.tiles));
    const Counters pt = stream_counters(Schedule(Algorithm::pytorch, p, c.tiles));
    // fa1 (every column block has a visited row, so K and V are read once):
    CHECK(hbm_read_elements(f1) ==
          2 * N * d + sum_visited(g, [&](i64 r, i64) { return 2 * r * d + 2 * r; }));
    CHECK(hbm_write_elements(f1) ==
          N * d + 2 * N + sum_visited(g, [&](i64 r, i64) { return r * d + 2 * r; }));
    // fa2: Q once, K_j and V_j once per visited block.
    CHECK(hbm_read_elements(f2) == N * d + sum_visited(g, [&](i64, i64 cc) { return 2 * cc * d; }));
    CHECK(hbm_write_elements(f2) == N * d + N);
    // Exact matmul FLOPs: 4·r·c·d per visited block.
    const i64 mm = sum_visited(g, [&](i64 r, i64 cc) { return 4 * r * cc * d; });
    CHECK(f1.matmul_flops == mm);
    CHECK(f2.matmul_flops == mm);
    // Materialising algorithms compute every block and mask afterwards.
    CHECK(hbm_read_elements(st) == 3 * N * d + 2 * N * N);
    CHECK(hbm_read_elements(pt) == 3 * N * d + 4 * N * N);  // + the mask pass
    CHECK(hbm_write_elements(pt) == 4 * N * N + N * d);
    CHECK(st.matmul_flops == 4 * N * N * d);
  }
}

TEST_CASE("standard attention counts GEMM re-reads of K and V as L2 hits", "[sim][closed-form]") {
  AttentionProblem p;
  p.seq_q = 1000;
  p.head_dim = 64;
  const TileShape t{64, 128};
  const TileGrid g(p, t);
  const Counters c = Schedule(Algorithm::standard, p, t).closed_form();
  CHECK(c.at(Level::L2, Tensor::K).read_elements == (g.T_r - 1) * p.n_kv() * p.d());
  CHECK(c.at(Level::L2, Tensor::V).read_elements == (g.T_r - 1) * p.n_kv() * p.d());
  CHECK(c.level(Level::L2).write_bytes == 0);
  const Counters f2 = Schedule(Algorithm::fa2, p, t).closed_form();
  CHECK(f2.level(Level::L2).bytes() == 0);
}

TEST_CASE("simulate() gives the same totals by stream and by closed form, times B·H", "[sim]") {
  auto rng = flashlab::test::test_rng();
  HardwareModel hw;
  hw.name = "test";
  hw.sram_bytes_per_sm = 1 << 30;
  for (int n = 0; n < 60; ++n) {
    const Case c = flashlab::test::random_case(rng);
    for (Algorithm a : all_algorithms()) {
      INFO(describe_case(c) << " " << to_string(a));
      SimOptions by_stream;
      by_stream.tiles = c.tiles;
      SimOptions by_closed = by_stream;
      by_closed.stream_event_limit = 0;
      const SimResult r1 = simulate(a, c.problem, hw, by_stream);
      const SimResult r2 = simulate(a, c.problem, hw, by_closed);
      REQUIRE(r1.ok());
      REQUIRE(r2.ok());
      CHECK(r1.method == "event stream");
      CHECK(r2.method == "closed form");
      CHECK(r1.total == r2.total);
      CHECK(r1.sram_peak_bytes == r2.sram_peak_bytes);
      CHECK(r1.total == r1.per_head.scaled(c.problem.batch * c.problem.heads));
    }
  }
}
