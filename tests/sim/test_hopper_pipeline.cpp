// The Hopper rung's schedule inside one CTA: the waits hold, each unit runs one
// op at a time, the ring never holds more than its stages, the work of each op
// is the loop nest's, K_{j+1} lands while S_ij is computed, the warpgroups
// alternate, and the step-through's events map onto the timeline.
#include <algorithm>
#include <map>

#include "hopper_fixture.hpp"

using namespace flashlab::sim;
using namespace flashlab::test;  // hopper_fixture.hpp

namespace {

bool overlaps(const PipeInterval& a, const PipeInterval& b) {
  return a.start_ns < b.start_ns + b.busy_ns && b.start_ns < a.start_ns + a.busy_ns;
}

}  // namespace

TEST_CASE("the compiled configurations fit a Hopper SM and name whole warpgroups", "[sim][hopper]") {
  std::map<int, int> any_seq;  // rows serving every sequence length, per head dim
  for (std::size_t k = 0; k < std::size(kHopperConfigs); ++k) {
    const HopperConfig& c = kHopperConfigs[k];
    CAPTURE(k);
    if (c.max_seq == 0) CHECK(++any_seq[c.head_dim] == 1);
    CHECK(c.Br % 64 == 0);
    CHECK(c.consumers() * 64 == c.Br);
    CHECK(c.stages >= 2);
    CHECK(static_cast<i64>(hopper_smem_bytes(c)) <= h200().max_smem_per_block_bytes);
    // Each row runs the sequences it is for: a row for short ones up to its
    // length, the one for any length beyond every such row.
    const i64 seq = c.max_seq > 0 ? c.max_seq : 1 << 20;
    const bool causal = c.mask == HopperMask::causal;
    REQUIRE(hopper_row(c.head_dim, seq, causal).has_value());
    CHECK(*hopper_row(c.head_dim, seq, causal) == k);
    CHECK(hopper_config(c.head_dim, seq, causal)->Bc == c.Bc);
  }
  for (const auto& [d, rows] : any_seq) CHECK(hopper_config(d)->max_seq == 0);  // no length given: the long row
  CHECK(any_seq.size() == 2);
  CHECK_FALSE(hopper_config(96).has_value());
  CHECK(hopper_head_dims_text() == "64, 128");
  // d = 64: 256 × 64 up to 1K tokens (no row of 192 pads them), 192 × 128 beyond.
  CHECK(hopper_config(64, 1024)->Br == 256);
  CHECK(hopper_config(64, 1025)->Br == 192);
  CHECK(hopper_config(64, 1024, true)->Br == 256);  // either mask
  // d = 128: 128 × 128 up to 1K tokens (for causal problems one key block on
  // each diagonal), 128 × 176 beyond.
  CHECK(hopper_config(128, 1024, true)->Bc == 128);
  CHECK(hopper_config(128, 1024, false)->Bc == 128);
  CHECK(hopper_config(128, 1025, true)->Bc == 176);
  CHECK(hopper_config(128, 1025, false)->Bc == 176);
  AttentionProblem p = hopper_problem(1024, 128, true);
  CHECK(hopper_config(p)->Bc == 128);
  p.seq_kv = 2048;  // the longer of N_q, N_kv picks the row
  CHECK(hopper_config(p)->Bc == 176);
  // Persistent: exactly the problems up to 1K tokens (at d 128 the unmasked
  // ones), with Q_i twice in shared memory.
  for (i64 d : {64, 128})
    for (bool causal : {false, true})
      for (i64 seq : {1, 1024, 1025, 16384}) {
        CAPTURE(d, causal, seq);
        const HopperConfig c = *hopper_config(d, seq, causal);
        CHECK(c.persistent == (seq <= 1024 && (d == 64 || !causal)));
        CHECK(c.q_buffers() == (c.persistent ? 2 : 1));
        HopperConfig one = c;
        one.persistent = false;
        CHECK(hopper_smem_bytes(c) - hopper_smem_bytes(one) ==
              (c.persistent ? static_cast<std::size_t>(c.Br * d * 2) : 0u));
      }
}

TEST_CASE("the Hopper schedule: waits, one op per unit, a ring of s stages", "[sim][hopper]") {
  for (i64 d : {64, 128})
    for (bool causal : {false, true})
      for (i64 n : {1, 100, 1000, 4096}) {
        CAPTURE(d, causal, n);
        const AttentionProblem p = hopper_problem(n, d, causal);
        const HopperConfig& c = config_of(kHopperConfigs, d);
        const TileGrid g(p, tiles_of(c));
        for (i64 i : {i64{0}, g.T_r - 1}) {
          const HopperPipeline h = simulate_hopper_pipeline(p, i, c, h200());
          i64 visited = 0;
          for (i64 j = 0; j < g.T_c; ++j) visited += g.visited(i, j) ? 1 : 0;
          REQUIRE(h.visits == visited);
          REQUIRE(static_cast<i64>(h.stage_uses.size()) == h.visits);
          // One op at a time on each unit.
          for (PipeUnit u : {PipeUnit::copy_engine, PipeUnit::tensor_cores, PipeUnit::softmax_units}) {
            const auto v = on_unit(h, u);
            for (size_t k = 1; k < v.size(); ++k) CHECK(v[k].start_ns >= v[k - 1].start_ns + v[k - 1].busy_ns - 1e-9);
          }
          const PipeInterval* q = h.find(PipeOp::copy_Q, -1);
          REQUIRE(q != nullptr);
          for (i64 j = 0; j < h.visits; ++j) {
            const PipeInterval* K = h.find(PipeOp::copy_K, j);
            const PipeInterval* V = h.find(PipeOp::copy_V, j);
            REQUIRE(K != nullptr);
            REQUIRE(V != nullptr);
            for (int w = 0; w < c.consumers(); ++w) {
              const PipeInterval* S = h.find(PipeOp::gemm_S, j, w);
              const PipeInterval* X = h.find(PipeOp::softmax, j, w);
              const PipeInterval* PV = h.find(PipeOp::gemm_PV, j, w);
              REQUIRE(S != nullptr);
              REQUIRE(X != nullptr);
              REQUIRE(PV != nullptr);
              CHECK(S->start_ns >= K->end_ns);   // the mbarrier of K_j
              CHECK(S->start_ns >= q->end_ns);   // and of Q_i
              CHECK(X->start_ns >= S->end_ns);   // the softmax reads S_ij
              CHECK(PV->start_ns >= X->end_ns);  // P̃_ij from registers
              CHECK(PV->start_ns >= V->end_ns);  // the mbarrier of V_j
            }
            // The ring: block j enters stage j mod s once block j − s has left it.
            const StageUse& u = h.stage_uses[static_cast<size_t>(j)];
            CHECK(u.stage == j % c.stages);
            CHECK(u.issued_ns <= u.k_arrived_ns);
            CHECK(u.k_arrived_ns <= u.arrived_ns);
            CHECK(u.arrived_ns <= u.released_ns);
            CHECK(u.k_arrived_ns <= u.k_released_ns);
            CHECK(u.k_released_ns <= u.released_ns);
            if (j >= c.stages) CHECK(u.issued_ns >= h.stage_uses[static_cast<size_t>(j - c.stages)].k_released_ns);
            if (j >= c.stages) CHECK(V->start_ns >= h.stage_uses[static_cast<size_t>(j - c.stages)].released_ns);
          }
          const PipelineState end = h.state_at(h.end_ns);
          for (const auto& s : end.stages) {
            CHECK((s.K == StageStatus::released || s.K == StageStatus::empty));
            CHECK(s.V == s.K);
          }
        }
      }
}

TEST_CASE("the work of each op is the loop nest's: 4·B_r·B_c·d FLOPs per visit on the tensor cores", "[sim][hopper]") {
  for (const HopperConfig& c : kHopperConfigs)
    for (DType dt : {DType::fp16, DType::bf16}) {
      const AttentionProblem p = hopper_problem(4096, c.head_dim, false, dt);
      const HopperPipeline h = simulate_hopper_pipeline(p, 0, c, h200());
      const double per_sm = h200().peak(dt, ComputeUnit::tensor_core) / static_cast<double>(h200().sm_count) * 1e-9;
      const double flops = 4.0 * c.Br * c.Bc * c.head_dim;  // S_ij and P̃_ij V_j of one full block
      CHECK(h.gemm_ns_per_visit * c.consumers() == Approx(flops / per_sm).epsilon(1e-12));
      CHECK(h.tensor_busy_ns == Approx(flops / per_sm * static_cast<double>(h.visits)).epsilon(1e-9));
      // The softmax: B_r·B_c exponentials of P̃_ij plus one per row for the rescale, at 16 per clock.
      const double exps = static_cast<double>(c.Br) * c.Bc + c.Br;
      CHECK(h.softmax_ns_per_visit * c.consumers() ==
            Approx(exps / (kExpPerClockPerSm * h200().clock_mhz * 1e-3)).epsilon(0.02));
    }
}

TEST_CASE("d = 64 spends twice d = 128's share of a visit on the exponentials", "[sim][hopper]") {
  // The FlashAttention-3 argument: the products scale with d, the exponentials do not.
  const HopperPipeline h64 =
      simulate_hopper_pipeline(hopper_problem(16384, 64, false), 0, config_of(kHopperConfigs, 64), h200());
  const HopperPipeline h128 =
      simulate_hopper_pipeline(hopper_problem(16384, 128, false), 0, config_of(kHopperConfigs, 128), h200());
  const double r64 = h64.softmax_ns_per_visit / h64.gemm_ns_per_visit;
  const double r128 = h128.softmax_ns_per_visit / h128.gemm_ns_per_visit;
  CHECK(r64 / r128 == Approx(2.0).epsilon(0.02));
  CHECK(r64 > 0.7);   // on an H200 the exponentials of d = 64 take most of the products' time,
  CHECK(r128 < 0.45);  // of d = 128 less than half: two warpgroups hide them
}

TEST_CASE("K_{j+1} lands while S_ij is computed, and the warpgroups alternate", "[sim][hopper]") {
  for (const HopperConfig& c : kHopperConfigs) {
    CAPTURE(c.head_dim);
    const HopperPipeline h = simulate_hopper_pipeline(hopper_problem(16384, c.head_dim, false), 0, c, h200());
    REQUIRE(h.visits == (16384 + c.Bc - 1) / c.Bc);
    i64 prefetched = 0, ping_pong = 0;
    const int last = c.consumers() - 1;
    for (i64 j = 1; j + 1 < h.visits; ++j) {
      // The last warpgroup's S_ij: with two stages K_{j+1} waits for block j − 1 to leave
      // its stage, which the first warpgroup's S_ij may precede.
      const PipeInterval* S = h.find(PipeOp::gemm_S, j, last);
      const PipeInterval* K_next = h.find(PipeOp::copy_K, j + 1);
      // K_{j+1} was issued before S_ij ends: the copy runs under the products.
      if (K_next->start_ns < S->end_ns) ++prefetched;
      const PipelineState st = h.state_at(S->start_ns);
      const auto& next = st.stages[static_cast<size_t>((j + 1) % c.stages)];
      CHECK(next.j == j + 1);
      CHECK((next.K == StageStatus::loading || next.K == StageStatus::full));
      // S_ij itself reads a K_j that has landed.
      CHECK(st.stages[static_cast<size_t>(j % c.stages)].K == StageStatus::full);
      // Warpgroup 0's softmax overlaps another warpgroup's product, or, with the
      // overlap inside a warpgroup, its own P̃ V.
      const PipeInterval* X = h.find(PipeOp::softmax, j, 0);
      for (int w = c.overlap ? 0 : 1; w < c.consumers(); ++w)
        for (PipeOp op : {PipeOp::gemm_S, PipeOp::gemm_PV})
          for (i64 jj : {j - 1, j, j + 1})
            if (const PipeInterval* other = h.find(op, jj, w); other && overlaps(*X, *other)) ++ping_pong;
    }
    CHECK(prefetched == h.visits - 2);
    CHECK(ping_pong >= h.visits - 2);
    // The ring fills: right after Q_i, block 0 loads and the following stages are issued behind it.
    const PipelineState start = h.state_at(h.find(PipeOp::copy_Q, -1)->start_ns + 1e-3);
    CHECK(start.copy >= 0);
    // Nearly all the time the tensor cores are the bottleneck at d = 128.
    if (c.head_dim == 128) CHECK(h.tensor_utilisation() > 0.85);
  }
}

TEST_CASE("the step-through's events map onto the Hopper timeline", "[sim][hopper]") {
  for (const HopperConfig& c : kHopperConfigs) {
    CAPTURE(c.head_dim);
    const AttentionProblem p = hopper_problem(1000, c.head_dim, true);
    const Schedule s(Algorithm::fa2, p, tiles_of(c));
    const i64 i = s.grid().T_r - 1;
    const HopperPipeline h = simulate_hopper_pipeline(p, i, c, h200());
    const auto events = timed_events(s, i, h);
    REQUIRE(!events.empty());
    double last = -1;
    i64 last_j = -2;
    for (const auto& [e, time] : events) {
      CAPTURE(e.line, e.j, static_cast<int>(e.kind));
      CHECK(time >= 0);
      CHECK(time <= h.end_ns);
      // Without the overlap, never back in time; with it, only at a visit's first event.
      if (time < last) CHECK((c.overlap && e.j != last_j));
      last = time;
      last_j = e.j;
    }
    CHECK(events.back().second == Approx(h.end_ns));
    // Another row block's events are not on this timeline.
    if (s.grid().T_r > 1) {
      struct First final : EventSink {
        const HopperPipeline* h;
        double t = 0;
        void on_event(const TileEvent& e) override { t = h->time_of(e); }
      } f;
      f.h = &h;
      s.emit_outer_begin(0, f);
      CHECK(f.t == -1);
    }
  }
}

TEST_CASE("the Hopper schedule refuses what it cannot model", "[sim][hopper]") {
  const HopperConfig& c = config_of(kHopperConfigs, 128);
  CHECK_THROWS_WITH(simulate_hopper_pipeline(hopper_problem(1024, 64, false), 0, c, h200()), Catch::Contains("d=128"));
  CHECK_THROWS_WITH(simulate_hopper_pipeline(hopper_problem(1024, 128, false), 8, c, h200()),
                    Catch::Contains("row block 8"));
  HardwareModel none = h200();
  none.clock_mhz = 0;
  CHECK_THROWS_WITH(simulate_hopper_pipeline(hopper_problem(1024, 128, false), 0, c, none), Catch::Contains("clock"));
  HopperConfig one_stage = c;
  one_stage.stages = 1;
  CHECK_THROWS_WITH(simulate_hopper_pipeline(hopper_problem(1024, 128, false), 0, one_stage, h200()),
                    Catch::Contains("two stages"));
}

TEST_CASE("a persistent causal launch: one row block of each rank per block and section of heads", "[sim][hopper]") {
  HopperConfig c = *hopper_config(64, 1024, true);
  REQUIRE(c.persistent);
  // 132 heads of 4 row blocks: one section; block b takes tiles b, b + 132, ...,
  // one of each row block, so every block's time is the four row blocks' sum.
  AttentionProblem p = problem(1, 132, 1024, 64, true);
  const HopperLaunchEstimate e = estimate_hopper_launch(p, c, h200());
  CHECK(e.ctas == 528);
  CHECK(e.blocks == 132);
  double sum = 0;
  for (i64 i = 0; i < 4; ++i) sum += simulate_hopper_pipeline(p, i, c, h200()).end_ns * 1e-9;
  CHECK(e.time_s == Approx(sum).epsilon(1e-12));
  CHECK_THAT(e.method, Catch::Contains("in sections of 132 heads, heaviest row block first"));
  // 133 heads: a second section of one head, its 4 row blocks on blocks 0..3.
  p.heads = 133;
  const HopperLaunchEstimate e2 = estimate_hopper_launch(p, c, h200());
  CHECK(e2.time_s == Approx(sum + simulate_hopper_pipeline(p, 3, c, h200()).end_ns * 1e-9).epsilon(1e-12));
  // Unmasked, every tile alike: whole waves of tiles, at any size.
  p = problem(100000, 132, 1024, 64, false);
  c = *hopper_config(64, 1024, false);
  const HopperLaunchEstimate big = estimate_hopper_launch(p, c, h200());
  CHECK(big.ctas == 52'800'000);
  CHECK(big.time_s == Approx(400000 * simulate_hopper_pipeline(p, 0, c, h200()).end_ns * 1e-9).epsilon(1e-12));
}

TEST_CASE("the launch: whole waves without masking, within the list-scheduling bounds with it", "[sim][hopper]") {
  for (const HopperConfig& c : kHopperConfigs) {
    CAPTURE(c.head_dim);
    AttentionProblem p = hopper_problem(4096, c.head_dim, false);
    p.batch = 4;
    p.heads = 2048 / c.head_dim;
    const TileGrid g(p, tiles_of(c));
    const HopperLaunchEstimate e = estimate_hopper_launch(p, c, h200());
    CHECK(e.ctas == p.batch * p.heads * g.T_r);
    CHECK(e.sms == 132);
    CHECK(e.blocks == (c.persistent ? 132 : e.ctas));
    const HopperPipeline one = simulate_hopper_pipeline(p, 0, c, h200());
    const i64 waves = (e.ctas + e.sms - 1) / e.sms;
    CHECK(e.time_s == Approx(one.end_ns * 1e-9 * static_cast<double>(waves)).epsilon(1e-12));
    CHECK(e.tensor_busy_fraction > 0);
    CHECK(e.tensor_busy_fraction <= 1);

    if (c.persistent) continue;  // serves unmasked problems; its causal launch is the case above
    p.causal = true;
    const HopperLaunchEstimate ec = estimate_hopper_launch(p, c, h200());
    double total = 0, longest = 0;
    for (i64 i = 0; i < g.T_r; ++i) {
      const double t = simulate_hopper_pipeline(p, i, c, h200()).end_ns * 1e-9;
      total += t * static_cast<double>(p.batch * p.heads);
      longest = std::max(longest, t);
    }
    CHECK(ec.cta_time_max_s == Approx(longest));
    CHECK(ec.time_s >= total / 132 * (1 - 1e-12));
    CHECK(ec.time_s >= longest);
    CHECK(ec.time_s <= total / 132 + longest);
    // Causal masking halves the work, not quite the time: the diagonal blocks are computed whole.
    CHECK(ec.time_s < e.time_s * 0.6);
    CHECK(ec.time_s > e.time_s * 0.45);
  }
}
