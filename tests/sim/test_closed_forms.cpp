// The event streams equal the closed forms: exactly, for every counter, over
// random shapes (ragged N, N smaller than a tile, causal, N_q ≠ N_kv); and the
// HBM counts equal the formulas of docs/model.md.
#include <array>

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
  flashlab::test::for_random_schedules(rng, 250, 300, [](const Case&, const Schedule& s) {
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
  });
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

// ---- the backward pass ---------------------------------------------------------
//
// Each backward algorithm's HBM reads and writes per tensor, written out from
// its pseudocode and summed over the blocks by brute force (element-level
// causal visiting, extents from N and the tiles), independently of the
// emission; and its exact FLOPs.

namespace {

struct Expected {
  std::array<i64, kTensorCount> read{}, write{}, element{};
  void add(Tensor t, i64 r, i64 w, i64 element_bytes) {
    const auto k = static_cast<size_t>(t);
    read[k] += r;
    write[k] += w;
    element[k] = element_bytes;
  }
};

// Σ over the visited blocks (all of them when `skip` is false) of 1, r_i, c_j, r_i·c_j.
struct BlockSums {
  i64 n = 0, r = 0, c = 0, rc = 0;
};
BlockSums block_sums(const AttentionProblem& p, TileShape t, bool skip) {
  const i64 Nq = p.n_q(), Nk = p.n_kv();
  const TileGrid g(p, t);  // for the element-level brute force only
  BlockSums s;
  for (i64 i = 0; i * t.Br < Nq; ++i)
    for (i64 j = 0; j * t.Bc < Nk; ++j) {
      if (skip && !flashlab::test::brute_visited(g, i, j)) continue;
      const i64 r = std::min(t.Br, Nq - i * t.Br), c = std::min(t.Bc, Nk - j * t.Bc);
      s.n += 1;
      s.r += r;
      s.c += c;
      s.rc += r * c;
    }
  return s;
}

void check_hbm(const Counters& got, const Expected& want) {
  for (int k = 0; k < kTensorCount; ++k) {
    const Traffic& x = got.at(Level::HBM, static_cast<Tensor>(k));
    INFO("tensor " << to_string(static_cast<Tensor>(k)));
    const auto u = static_cast<size_t>(k);
    CHECK(x.read_elements == want.read[u]);
    CHECK(x.write_elements == want.write[u]);
    CHECK(x.read_bytes == want.read[u] * want.element[u]);
    CHECK(x.write_bytes == want.write[u] * want.element[u]);
  }
}

// A random case, with N from the list of awkward lengths half the time.
Case backward_case(std::mt19937_64& rng) {
  Case c = flashlab::test::random_case(rng, 300);
  static const i64 lengths[] = {1, 17, 63, 64, 65, 127, 129, 1000};
  auto pick = [&](i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); };
  if (pick(0, 1) == 0) {
    c.problem.seq_q = lengths[pick(0, 7)];
    c.problem.seq_kv = c.problem.causal || pick(0, 1) == 0 ? c.problem.seq_q : lengths[pick(0, 7)];
  }
  if (c.problem.seq_q * c.problem.seq_kv > 300 * 300) {  // long: tiles of 17 and more keep the stream short
    c.problem.head_dim = std::min<i64>(c.problem.head_dim, 32);
    c.tiles = {pick(17, 130), pick(17, 130)};
  }
  return c;
}

// A FlashAttention backward case: every other one keeps dQ in an fp32
// accumulator (`acc`, `acc_bytes`), as the kernels do; its sizes and the sums
// over the blocks it visits (causal: blocks above the diagonal skipped).
struct FlashBwdCase {
  Case c;
  StorageTypes st;
  bool apart = false;
  i64 Nq = 0, Nk = 0, d = 0, s = 0;
  Tensor acc = Tensor::dQ;
  i64 acc_bytes = 0;
  BlockSums v;
};

FlashBwdCase flash_bwd_case(std::mt19937_64& rng, int n) {
  FlashBwdCase b;
  b.c = backward_case(rng);
  const AttentionProblem& p = b.c.problem;
  if (n % 2 == 1) b.st.dq_accumulator = DType::fp32;
  b.apart = b.st.dq_accumulator && *b.st.dq_accumulator != p.dtype;
  b.Nq = p.n_q();
  b.Nk = p.n_kv();
  b.d = p.d();
  b.s = dtype_bytes(p.dtype);
  b.acc = b.apart ? Tensor::dQaccum : Tensor::dQ;
  b.acc_bytes = b.apart ? 4 : b.s;
  b.v = block_sums(p, b.c.tiles, true);
  return b;
}

// The algorithm run on the case against `e` and what every FlashAttention
// backward shares: K_j, V_j read once and dK_j, dV_j written once by the
// outer loop over column blocks, dQaccum read once and dQ written once in the
// problem's type after the loop, nothing through the L2 model, five GEMMs of
// 2·r·c·d per visit and one exp per score. The counters, for the checks of
// each algorithm.
Counters check_flash_bwd(Algorithm a, const FlashBwdCase& b, Expected e) {
  e.add(Tensor::K, b.Nk * b.d, 0, b.s);
  e.add(Tensor::V, b.Nk * b.d, 0, b.s);
  e.add(Tensor::dK, 0, b.Nk * b.d, b.s);
  e.add(Tensor::dV, 0, b.Nk * b.d, b.s);
  if (b.apart) {
    e.add(Tensor::dQaccum, b.Nq * b.d, 0, 4);
    e.add(Tensor::dQ, 0, b.Nq * b.d, b.s);
  }
  const Counters got = stream_counters(Schedule(a, b.c.problem, b.c.tiles, b.st));
  check_hbm(got, e);
  CHECK(got.level(Level::L2).bytes() == 0);
  CHECK(got.matmul_flops == 10 * b.v.rc * b.d);
  CHECK(got.exps == b.v.rc);
  return got;
}

}  // namespace

TEST_CASE("FlashAttention-2 backward: HBM traffic per tensor and FLOPs equal Algorithm 2 as run", "[sim][closed-form][bwd]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 200; ++n) {
    const FlashBwdCase b = flash_bwd_case(rng, n);
    INFO(describe_case(b.c) << (b.apart ? " dQaccum fp32" : ""));
    const i64 Nq = b.Nq, d = b.d, s = b.s;
    Expected e;
    // pre-pass (lines 3, 4): read O_i, dO_i; write D_i and the zeroed dQ_i
    e.add(Tensor::O, Nq * d, 0, s);
    e.add(Tensor::dO, Nq * d, 0, s);
    e.add(Tensor::D, 0, Nq, 4);
    e.add(b.acc, 0, Nq * d, b.acc_bytes);
    // main loop: K_j, V_j once (line 6), dK_j, dV_j once (line 18): check_flash_bwd
    // per visited block: Q_i, dO_i, L_i, D_i (line 9), dQ_i read and written (line 15)
    e.add(Tensor::Q, b.v.r * d, 0, s);
    e.add(Tensor::dO, b.v.r * d, 0, s);
    e.add(Tensor::LSE, b.v.r, 0, 4);
    e.add(Tensor::D, b.v.r, 0, 4);
    e.add(b.acc, b.v.r * d, b.v.r * d, b.acc_bytes);
    // post-pass (line 20): dQaccum read once, dQ written once in the problem's type: check_flash_bwd
    const Counters got = check_flash_bwd(Algorithm::fa2_bwd, b, e);
    // τ·S, S − L, dS = τP ∘ (dP − D) per element; D_i's multiply and add per element of dO.
    CHECK(got.softmax_flops == 5 * b.v.rc + 2 * Nq * d);
  }
}

// Grouped heads, G = H / H_kv query heads per K/V head. Without a dK, dV
// accumulator every query head's blocks write their dK_j, dV_j (the requests
// of a kernel that sums the group on chip are counted per query head, as the
// L2 model's are). With one (StorageTypes::dkv_accumulator: fa2_tc_bwd,
// fa3_hopper_bwd) each query head's blocks add dK_j, dV_j into the group's
// dKaccum_j, dVaccum_j in fp32 — a read and a write per tile, as dQ_i's adds —
// and a pass per K/V head zeroes them before, another converts them after.
// The run's totals, tensor by tensor: the stream (its passes per K/V head
// apart) and the closed form against the sums written out here.
TEST_CASE("FlashAttention-2 backward with grouped heads: dK, dV added apart in fp32 per query head, zeroed and "
          "converted per K/V head",
          "[sim][closed-form][bwd][gqa]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 200; ++n) {
    FlashBwdCase b = flash_bwd_case(rng, n);
    AttentionProblem& p = b.c.problem;
    const i64 G = std::uniform_int_distribution<i64>(1, 4)(rng);
    p.kv_heads = p.heads;
    p.heads *= G;
    const bool dkv_apart = n % 4 < 2;
    if (dkv_apart) b.st.dkv_accumulator = DType::fp32;
    const bool adds = dkv_apart && G > 1;  // only a group adds apart
    INFO(describe_case(b.c) << " G " << G << (b.apart ? " dQaccum fp32" : "") << (dkv_apart ? " dKVaccum fp32" : ""));
    const i64 Nq = b.Nq, Nk = b.Nk, d = b.d, s = b.s;
    const i64 BH = p.batch * p.heads, BHkv = p.batch * p.h_kv();
    // Per query head: Algorithm 2 as run (the test above), dK_j, dV_j written
    // or, added apart, read and written in fp32.
    Expected e;
    e.add(Tensor::O, Nq * d, 0, s);
    e.add(Tensor::dO, Nq * d + b.v.r * d, 0, s);
    e.add(Tensor::D, b.v.r, Nq, 4);
    e.add(b.acc, b.v.r * d, Nq * d + b.v.r * d, b.acc_bytes);
    e.add(Tensor::Q, b.v.r * d, 0, s);
    e.add(Tensor::LSE, b.v.r, 0, 4);
    e.add(Tensor::K, Nk * d, 0, s);
    e.add(Tensor::V, Nk * d, 0, s);
    if (b.apart) {
      e.add(Tensor::dQaccum, Nq * d, 0, 4);
      e.add(Tensor::dQ, 0, Nq * d, s);
    }
    if (adds) {
      e.add(Tensor::dKaccum, Nk * d, Nk * d, 4);
      e.add(Tensor::dVaccum, Nk * d, Nk * d, 4);
    } else {
      e.add(Tensor::dK, 0, Nk * d, s);
      e.add(Tensor::dV, 0, Nk * d, s);
    }
    // Per K/V head: the memset of dKaccum, dVaccum; the convert pass reads them
    // and writes dK, dV in the problem's type.
    Expected kv;
    if (adds) {
      kv.add(Tensor::dKaccum, Nk * d, Nk * d, 4);
      kv.add(Tensor::dVaccum, Nk * d, Nk * d, 4);
      kv.add(Tensor::dK, 0, Nk * d, s);
      kv.add(Tensor::dV, 0, Nk * d, s);
    }
    const Schedule sch(Algorithm::fa2_bwd, p, b.c.tiles, b.st);
    CounterSink kv_stream;
    for (int ph = 0; ph < sch.phases(); ++ph)
      if (sch.once_per_kv_head(ph))
        for (i64 o = sch.phase_begin(ph); o < sch.phase_begin(ph) + sch.phase_outer_count(ph); ++o)
          sch.emit_outer(o, kv_stream);
    const Counters stream = stream_counters(sch);
    const Counters run = sch.over_heads(stream, kv_stream.counters);
    CHECK(kv_stream.counters == sch.cost_of_kv_head_outers(0, sch.outer_count()));
    CHECK(run == sch.run_total());
    for (int k = 0; k < kTensorCount; ++k) {
      const auto t = static_cast<Tensor>(k);
      const auto u = static_cast<size_t>(k);
      INFO("tensor " << to_string(t));
      const Traffic& x = run.at(Level::HBM, t);
      CHECK(x.read_elements == BH * e.read[u] + BHkv * kv.read[u]);
      CHECK(x.write_elements == BH * e.write[u] + BHkv * kv.write[u]);
      CHECK(x.read_bytes == BH * e.read[u] * e.element[u] + BHkv * kv.read[u] * kv.element[u]);
      CHECK(x.write_bytes == BH * e.write[u] * e.element[u] + BHkv * kv.write[u] * kv.element[u]);
    }
    CHECK(run.level(Level::L2).bytes() == 0);
    CHECK(run.matmul_flops == BH * 10 * b.v.rc * d);
    // simulate() gives the run's totals by stream and by closed form alike.
    HardwareModel hw;
    hw.name = "test";
    hw.sram_bytes_per_sm = i64{1} << 30;
    SimOptions by_stream;
    by_stream.tiles = b.c.tiles;
    by_stream.storage = b.st;
    by_stream.l2 = false;
    SimOptions by_closed = by_stream;
    by_closed.stream_event_limit = 0;
    const SimResult r1 = simulate(Algorithm::fa2_bwd, p, hw, by_stream), r2 = simulate(Algorithm::fa2_bwd, p, hw, by_closed);
    REQUIRE(r1.ok());
    REQUIRE(r2.ok());
    CHECK(r1.total == run);
    CHECK(r2.total == run);
  }
}

TEST_CASE("FlashAttention-1 backward: HBM traffic per tensor and FLOPs equal Algorithm 4", "[sim][closed-form][bwd]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 200; ++n) {
    const FlashBwdCase b = flash_bwd_case(rng, n);
    INFO(describe_case(b.c) << (b.apart ? " dQaccum fp32" : ""));
    const i64 Nq = b.Nq, Nk = b.Nk, d = b.d, s = b.s;
    Expected e;
    // line 5: dQ, dK, dV = 0 in HBM
    e.add(b.acc, 0, Nq * d, b.acc_bytes);
    e.add(Tensor::dK, 0, Nk * d, s);
    e.add(Tensor::dV, 0, Nk * d, s);
    // line 7: K_j, V_j once; line 24: dK_j, dV_j once: check_flash_bwd
    // line 10 per visited block: Q_i, O_i, dO_i, dQ_i, ℓ_i, m_i; line 21: dQ_i written
    e.add(Tensor::Q, b.v.r * d, 0, s);
    e.add(Tensor::O, b.v.r * d, 0, s);
    e.add(Tensor::dO, b.v.r * d, 0, s);
    e.add(b.acc, b.v.r * d, b.v.r * d, b.acc_bytes);
    e.add(Tensor::l, b.v.r, 0, 4);
    e.add(Tensor::m, b.v.r, 0, 4);
    const Counters got = check_flash_bwd(Algorithm::fa1_bwd, b, e);
    // Per visit: τS (1), P = exp(S − m)/ℓ (2 per element + a reciprocal per row),
    // D_i (2 per element of dO_i), dS (2), the τ of lines 21 and 22 (1 each).
    CHECK(got.softmax_flops == 7 * b.v.rc + b.v.r + 2 * b.v.r * d);
  }
}

TEST_CASE("standard and eager PyTorch backward: every intermediate through HBM", "[sim][closed-form][bwd]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 200; ++n) {
    const Case c = backward_case(rng);
    const AttentionProblem& p = c.problem;
    INFO(describe_case(c));
    const i64 Nq = p.n_q(), Nk = p.n_kv(), d = p.d(), s = dtype_bytes(p.dtype);
    const i64 Tr = (Nq + c.tiles.Br - 1) / c.tiles.Br, Tc = (Nk + c.tiles.Bc - 1) / c.tiles.Bc;
    const i64 NN = Nq * Nk;
    // Algorithm 3: (1) P, dO → dV; (2) dO, V → dP; (3) P, dP → dS; (4) dS, K → dQ; (5) dS, Q → dK.
    Expected e;
    e.add(Tensor::P, 2 * NN, 0, s);
    e.add(Tensor::dO, 2 * Nq * d, 0, s);
    e.add(Tensor::V, Nk * d, 0, s);
    e.add(Tensor::K, Nk * d, 0, s);
    e.add(Tensor::Q, Nq * d, 0, s);
    e.add(Tensor::dP, NN, NN, s);
    e.add(Tensor::dS, 2 * NN, NN, s);
    e.add(Tensor::dV, 0, Nk * d, s);
    e.add(Tensor::dQ, 0, Nq * d, s);
    e.add(Tensor::dK, 0, Nk * d, s);
    const Counters st = stream_counters(Schedule(Algorithm::standard_bwd, p, c.tiles));
    check_hbm(st, e);
    // The GEMMs' re-reads after the first outer iteration go to the L2: dO_i and Q_i
    // for every column block but the first, V_j and K_j for every row block but the first.
    CHECK(st.at(Level::L2, Tensor::dO).read_elements == (Tc - 1) * Nq * d);
    CHECK(st.at(Level::L2, Tensor::Q).read_elements == (Tc - 1) * Nq * d);
    CHECK(st.at(Level::L2, Tensor::V).read_elements == (Tr - 1) * Nk * d);
    CHECK(st.at(Level::L2, Tensor::K).read_elements == (Tr - 1) * Nk * d);
    CHECK(st.level(Level::L2).read_elements == 2 * (Tc - 1) * Nq * d + 2 * (Tr - 1) * Nk * d);
    CHECK(st.level(Level::L2).write_bytes == 0);
    // Four GEMMs of 2·N_q·N_kv·d, every block (the mask is already in P); τ folded into the dS pass.
    CHECK(st.matmul_flops == 8 * NN * d);
    CHECK(st.softmax_flops == 5 * NN);
    CHECK(st.exps == 0);

    // Eager PyTorch: dP, dV, softmax_backward, [masked_fill], ·τ, dQ, dK — one kernel each.
    const i64 mask = p.causal ? 1 : 0;
    Expected t = e;
    t.add(Tensor::dS, (1 + mask) * NN, (1 + mask) * NN, s);  // the mask and scale passes read and write dS
    const Counters pt = stream_counters(Schedule(Algorithm::pytorch_bwd, p, c.tiles));
    check_hbm(pt, t);
    CHECK(pt.level(Level::L2).read_elements == st.level(Level::L2).read_elements);
    CHECK(pt.matmul_flops == 8 * NN * d);
    CHECK(pt.softmax_flops == 5 * NN);  // softmax_backward 4 per element, the scale 1, the mask 0
  }
}

TEST_CASE("backward FLOPs: 5 GEMMs per visited block where the forward has 2 — the 2.5× convention", "[sim][closed-form][bwd]") {
  auto rng = flashlab::test::test_rng();
  for (int n = 0; n < 100; ++n) {
    const Case c = backward_case(rng);
    INFO(describe_case(c));
    for (Algorithm f : {Algorithm::fa1, Algorithm::fa2}) {
      const Algorithm b = *backward_of(f);
      // Same tiles for both: the same blocks are visited, causal or not.
      const i64 fwd = Schedule(f, c.problem, c.tiles).closed_form().matmul_flops;
      const i64 bwd = Schedule(b, c.problem, c.tiles).closed_form().matmul_flops;
      CHECK(2 * bwd == 5 * fwd);
      if (!c.problem.causal) CHECK(bwd == 10 * c.problem.n_q() * c.problem.n_kv() * c.problem.d());
    }
    // The materialising backward has no S to recompute: four GEMMs, twice the forward's two.
    for (Algorithm f : {Algorithm::standard, Algorithm::pytorch}) {
      const i64 fwd = Schedule(f, c.problem, c.tiles).closed_form().matmul_flops;
      CHECK(Schedule(*backward_of(f), c.problem, c.tiles).closed_form().matmul_flops == 2 * fwd);
    }
  }
}

TEST_CASE("backward closed forms at N_q ≠ N_kv and at the awkward lengths, fixed shapes", "[sim][closed-form][bwd]") {
  // A worked example by hand: N_q = 65, N_kv = 1000, d = 64, fp16, B_r = 64, B_c = 96:
  // T_r = 2 (64 + 1 rows), T_c = 11 (10·96 + 40 keys).
  AttentionProblem p;
  p.seq_q = 65;
  p.seq_kv = 1000;
  p.head_dim = 64;
  const TileShape t{64, 96};
  const Counters f2 = stream_counters(Schedule(Algorithm::fa2_bwd, p, t));
  // Q_i, dO_i per visit: T_c · N_q · d = 11 · 65 · 64 = 45,760; dO also once in the pre-pass.
  CHECK(f2.at(Level::HBM, Tensor::Q).read_elements == 45760);
  CHECK(f2.at(Level::HBM, Tensor::dO).read_elements == 45760 + 65 * 64);
  CHECK(f2.at(Level::HBM, Tensor::dQ).write_elements == 45760 + 65 * 64);
  CHECK(f2.at(Level::HBM, Tensor::K).read_elements == 64000);
  CHECK(f2.at(Level::HBM, Tensor::LSE).read_bytes == 11 * 65 * 4);
  CHECK(f2.matmul_flops == 10 * 65 * 1000 * 64);
  const Counters f1 = stream_counters(Schedule(Algorithm::fa1_bwd, p, t));
  CHECK(f1.at(Level::HBM, Tensor::dK).write_elements == 2 * 64000);  // zeroed, then written
  CHECK(f1.at(Level::HBM, Tensor::O).read_elements == 45760);
  // One query row against a long key sequence, and a single key.
  for (const auto& [nq, nk] : {std::pair<i64, i64>{1, 1000}, std::pair<i64, i64>{1000, 1}, std::pair<i64, i64>{1, 1}}) {
    p.seq_q = nq;
    p.seq_kv = nk;
    for (Algorithm a : algorithms_of(Pass::bwd)) {
      INFO(to_string(a) << " " << nq << "×" << nk);
      const Schedule s(a, p, TileShape{17, 63});
      CHECK(stream_counters(s) == s.closed_form());
      CHECK(s.closed_form().at(Level::HBM, Tensor::dV).write_elements >= nk * 64);
    }
  }
}
