#include "sim/support.hpp"

using namespace flashlab::sim;

TEST_CASE("the paper's tile rule: B_c = ⌈M/4d⌉, B_r = min(B_c, d)", "[sim][tiles]") {
  AttentionProblem p;
  const i64 a100 = 192 * 1024;
  p.dtype = DType::fp16;
  p.head_dim = 64;  // M = 98,304 elements
  CHECK(paper_tile_rule(a100, p) == TileShape{64, 384});
  p.head_dim = 128;
  CHECK(paper_tile_rule(a100, p) == TileShape{128, 192});
  p.head_dim = 96;  // ⌈98304/384⌉ = 256
  CHECK(paper_tile_rule(a100, p) == TileShape{96, 256});
  p.head_dim = 100;  // ⌈98304/400⌉ = 246 (245.76 rounded up)
  CHECK(paper_tile_rule(a100, p) == TileShape{100, 246});
  p.dtype = DType::fp32;
  p.head_dim = 64;  // M = 49,152 elements
  CHECK(paper_tile_rule(a100, p) == TileShape{64, 192});
  p.head_dim = 20000;  // M/4d < 1: one row
  CHECK(paper_tile_rule(a100, p) == TileShape{1, 1});
}

TEST_CASE("default tiles fit, and the rule is shrunk with a note when it does not", "[sim][tiles]") {
  AttentionProblem p;
  p.head_dim = 64;
  const i64 M = 192 * 1024;
  TileChoice c = choose_tiles(Algorithm::fa1, p, M, std::nullopt);
  CHECK(c.ok());
  CHECK(c.rule == "paper");
  CHECK(c.tiles == TileShape{64, 384});
  CHECK(c.findings.empty());

  p.head_dim = 128;  // 128×192 needs 216,064 B with S_ij resident: more than 196,608
  c = choose_tiles(Algorithm::fa1, p, M, std::nullopt);
  CHECK(c.ok());
  CHECK(c.rule == "paper, shrunk to fit");
  CHECK(c.tiles == TileShape{64, 192});
  REQUIRE(c.findings.size() == 1);
  CHECK_THAT(c.findings[0].message, Catch::Contains("216,064"));
  CHECK(sram_peak_probe(Schedule(Algorithm::fa1, p, c.tiles)) <= M);

  p.head_dim = 30000;  // 4·d·2 bytes alone exceed M
  c = choose_tiles(Algorithm::fa1, p, M, std::nullopt);
  CHECK_FALSE(c.ok());
  CHECK_THAT(c.findings.at(0).message, Catch::Contains("does not fit"));

  c = choose_tiles(Algorithm::fa1, p, M, TileShape{0, 4});
  CHECK_FALSE(c.ok());
}

TEST_CASE("default tiles fit every algorithm on every preset shape", "[sim][tiles]") {
  for (i64 sram : {i64{96} * 1024, i64{128} * 1024, i64{192} * 1024, i64{256} * 1024})
    for (DType dt : {DType::fp16, DType::bf16, DType::fp32})
      for (i64 d : {16, 32, 64, 96, 128, 256}) {
        AttentionProblem p;
        p.dtype = dt;
        p.head_dim = d;
        p.seq_q = 4096;
        const TileChoice c = choose_tiles(Algorithm::fa1, p, sram, std::nullopt);
        INFO("sram " << sram << " " << to_string(dt) << " d=" << d);
        REQUIRE(c.ok());
        // FlashAttention-1's tiles hold every forward working set.
        for (Algorithm a : algorithms_of(Pass::fwd)) CHECK(sram_peak_probe(Schedule(a, p, c.tiles)) <= sram);
        // Each algorithm's own rule, shrunk when it must be, fits its own working set.
        for (Algorithm a : all_algorithms()) {
          INFO(to_string(a));
          const TileChoice own = choose_tiles(a, p, sram, std::nullopt);
          REQUIRE(own.ok());
          CHECK(sram_peak_probe(Schedule(a, p, own.tiles)) <= sram);
        }
      }
}

TEST_CASE("the backward rule: B_c = ⌈M/8d⌉, B_r = min(B_c, d), shrunk to fit with a note", "[sim][tiles]") {
  AttentionProblem p;
  p.seq_q = 4096;
  const i64 M = 192 * 1024;  // 98,304 fp16 elements
  p.head_dim = 64;
  CHECK(tile_rule_shape(TileRule::paper_backward, M, p) == TileShape{64, 192});
  for (Algorithm a : {Algorithm::fa1_bwd, Algorithm::fa2_bwd}) {
    INFO(to_string(a));
    const TileChoice c = choose_tiles(a, p, M, std::nullopt);
    CHECK(c.tiles == TileShape{64, 192});  // K_j, V_j, dK_j, dV_j: 4·192·64·2 = 98,304 B, half of M
    CHECK(c.rule == "paper, backward");
    CHECK(c.findings.empty());
  }
  // d = 128: 96 × 96 holds four K_j-shaped tiles, but not with fa2_bwd's Q_i, dO_i,
  // dQ_i (3·96·128·2 B) and the two score tiles beside them: B_r is halved.
  p.head_dim = 128;
  CHECK(tile_rule_shape(TileRule::paper_backward, M, p) == TileShape{96, 96});
  const TileChoice c = choose_tiles(Algorithm::fa2_bwd, p, M, std::nullopt);
  CHECK(c.tiles == TileShape{48, 96});
  CHECK(c.rule == "paper, backward, shrunk to fit");
  REQUIRE(c.findings.size() == 1);
  CHECK_THAT(c.findings[0].message, Catch::Contains("the backward rule"));
  CHECK_THAT(c.findings[0].message, Catch::Contains("shrunk to B_r=48, B_c=96"));
  // The materialising backward passes take the paper's rule: their working set is a few tiles.
  CHECK(choose_tiles(Algorithm::standard_bwd, p, M, std::nullopt).tiles == paper_tile_rule(M, p));
}

TEST_CASE("the block grid: sizes, partial tiles and causal visiting match brute force", "[sim][tiles]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 300; ++n) {
    flashlab::test::Case c = flashlab::test::random_case(rng, 120);
    if (n % 2 == 0) {
      c.problem.causal = true;
      c.problem.seq_kv = c.problem.seq_q;
    }
    const TileGrid g(c.problem, c.tiles);
    INFO(flashlab::test::describe_case(c));
    REQUIRE(g.T_r == (g.n_q + g.Br - 1) / g.Br);
    REQUIRE(g.rows_sum(0, g.T_r) == g.n_q);
    REQUIRE(g.cols_sum(0, g.T_c) == g.n_kv);
    REQUIRE(g.rows(g.T_r - 1) >= 1);
    i64 visited = 0, partial = 0, with_mask = 0;
    for (i64 i = 0; i < g.T_r; ++i) {
      i64 first_masked = g.T_c;
      for (i64 j = 0; j < g.T_c; ++j) {
        const bool v = flashlab::test::brute_visited(g, i, j);
        const bool m = flashlab::test::brute_has_masked(g, i, j);
        REQUIRE(g.visited(i, j) == v);
        REQUIRE(g.has_masked(i, j) == m);
        REQUIRE(g.partially_masked(i, j) == (v && m));
        if (v) REQUIRE(j <= g.last_col(i));
        if (m && first_masked == g.T_c) first_masked = j;
        visited += v;
        partial += v && m;
        with_mask += m;
      }
      REQUIRE(g.first_masked_col(i) == first_masked);
      REQUIRE(g.visited(i, g.last_col(i)));
    }
    for (i64 j = 0; j < g.T_c; ++j) {
      REQUIRE(g.visited(g.first_row(j), j));
      if (g.first_row(j) > 0) REQUIRE_FALSE(g.visited(g.first_row(j) - 1, j));
    }
    CHECK(g.visited_blocks() == visited);
    CHECK(g.partially_masked_blocks() == partial);
    CHECK(g.blocks_with_mask() == with_mask);
  }
}

TEST_CASE("causal visiting of a square grid: T(T+1)/2 blocks when B_r = B_c divides N", "[sim][tiles]") {
  AttentionProblem p;
  p.causal = true;
  p.seq_q = 1024;
  const TileGrid g(p, {64, 64});
  CHECK(g.visited_blocks() == 16 * 17 / 2);
  CHECK(g.partially_masked_blocks() == 16);
}
