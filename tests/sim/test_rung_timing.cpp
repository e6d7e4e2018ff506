// The rungs' launch model: CTAs, visits and waves from the compiled tiles,
// the makespan by hand on small launches, the file format; and the fit
// recovering constants it was given (analysis/fits/rung_timing_fit.hpp).
#include <catch2/catch.hpp>

#include "flashlab/analysis/fits/rung_timing_fit.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "../support/problems.hpp"

using namespace flashlab;
using sim::i64;

namespace {
sim::RungTiming timing(const std::string& rung, i64 d, double launch_us, double cta_us, double tile_us) {
  sim::RungTiming t;
  t.geometry = *sim::rung_geometry(rung, d);
  t.launch_s = launch_us * 1e-6;
  t.cta_s = cta_us * 1e-6;
  t.tile_s = tile_us * 1e-6;
  return t;
}

// A bench row of `t`'s rung on 16 heads × N tokens, timed as the launch model says it takes.
analysis::BenchRow timed_row(const sim::RungTiming& t, i64 n, bool causal) {
  analysis::BenchRow row;
  row.kernel = t.geometry.rung;
  row.problem.batch = 1;
  row.problem.heads = 16;
  row.problem.seq_q = row.problem.seq_kv = n;
  row.problem.head_dim = t.geometry.head_dim;
  row.problem.causal = causal;
  row.repeats = 10;
  row.time_ms_median = sim::rung_launch(t, 16, n, n, causal, 132).time_s * 1e3;
  row.tiles = t.geometry.tiles;
  return row;
}
}  // namespace

TEST_CASE("rung timing: the geometry is the compiled configuration's") {
  const auto f = sim::rung_geometry("fa3_hopper", 128);
  REQUIRE(f);
  CHECK(f->tiles == sim::tiles_of(*sim::hopper_config(128)));
  CHECK(f->ctas_per_sm == 1);
  CHECK(f->axis == sim::CtaAxis::row_blocks);
  const auto b = sim::rung_geometry("fa2_tc_bwd", 128);
  REQUIRE(b);
  CHECK(b->axis == sim::CtaAxis::column_blocks);
  CHECK(b->pass == sim::Pass::bwd);
  // The Hopper backward: its table's B_r × B_c, one CTA an SM (its shared memory), over column blocks.
  const auto hb = sim::rung_geometry("fa3_hopper_bwd", 64);
  REQUIRE(hb);
  CHECK(hb->tiles.Br == sim::hopper_bwd_config(64, true)->Br);
  CHECK(hb->tiles.Bc == sim::hopper_bwd_config(64, true)->Bc);
  CHECK(hb->ctas_per_sm == 1);
  CHECK(2 * sim::hopper_bwd_smem_bytes(*sim::hopper_bwd_config(64, true)) > 228 * 1024);
  CHECK(hb->axis == sim::CtaAxis::column_blocks);
  CHECK(hb->pass == sim::Pass::bwd);
  CHECK_FALSE(sim::rung_geometry("fa3_hopper_bwd", 96));
  CHECK_FALSE(sim::rung_geometry("fa3_hopper", 96));
  CHECK_FALSE(sim::rung_geometry("fa1", 64));
}

TEST_CASE("rung timing: whole waves when every CTA is alike, the makespan by hand under the mask") {
  sim::RungTiming t = timing("fa3_hopper", 128, 5, 3, 2);
  t.geometry.tiles = {128, 128};  // a fit of a 128 × 128 build
  // 2 heads × 1024 tokens: 8 row blocks of 8 column blocks each, 16 CTAs on 10 SMs: 2 waves of 3 + 2·8 µs.
  sim::RungLaunch l = sim::rung_launch(t, 2, 1024, 1024, false, 10);
  CHECK(l.ctas == 16);
  CHECK(l.slots == 10);
  CHECK(l.tiles == Approx(128));
  CHECK(l.time_s == Approx((5 + 2 * (3 + 16)) * 1e-6));
  // One head, causal, 4 row blocks visiting 4, 3, 2, 1 column blocks (heaviest first) on 2 SMs:
  // SM a: 4 (11 µs), then 1 (+5) = 16; SM b: 3 (9), then 2 (+7) = 16.
  l = sim::rung_launch(t, 1, 512, 512, true, 2);
  CHECK(l.ctas == 4);
  CHECK(l.tiles == Approx(10));
  CHECK(l.time_s == Approx((5 + 16) * 1e-6));
  // The backward's CTAs go over column blocks: column block j sees T_r − j row blocks under the mask.
  const sim::RungTiming b = timing("fa2_tc_bwd", 128, 0, 0, 1);  // B_c 128, B_r 64: 8 row blocks a 512-token chunk
  l = sim::rung_launch(b, 1, 512, 512, true, 100);
  CHECK(l.ctas == 4);
  CHECK(l.tiles == Approx(8 + 6 + 4 + 2));
  CHECK(l.time_s == Approx(8e-6));
  // What the ring adds to each CTA.
  CHECK(sim::rung_launch(t, 2, 1024, 1024, false, 10, 1e-6).time_s == Approx((5 + 2 * (4 + 16)) * 1e-6));
  CHECK_THROWS_AS(sim::rung_launch(t, 1, 512, 1024, true, 2), std::invalid_argument);
}

TEST_CASE("rung timing: the file round-trips, a bad one is refused with its field") {
  sim::RungTimingSet s;
  s.gpu = "NVIDIA H200";
  s.sm_count = 132;
  s.rungs.push_back(timing("fa3_hopper", 128, 4.9, 3.2, 1.731));
  s.rungs.back().source = "fitted to 30 runs";
  s.rungs.back().host_launch_s = 4.08e-6;
  const sim::RungTimingSet r = sim::parse_rung_timing_json(sim::to_rung_timing_json(s), "x.json");
  REQUIRE(r.rungs.size() == 1);
  CHECK(r.rungs[0].host_launch_s == Approx(4.08e-6));
  CHECK(r.gpu == "NVIDIA H200");
  CHECK(r.find("fa3_hopper", 128)->tile_s == Approx(1.731e-6));
  CHECK(r.find("fa3_hopper", 64) == nullptr);
  CHECK(r.rungs[0].geometry.tiles == s.rungs[0].geometry.tiles);
  // A fit made from another build's tiles keeps them; without the field, the compiled ones.
  const std::string fit128 = R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":1,"tiles":[128,128]}]})";
  CHECK(sim::parse_rung_timing_json(fit128, "y.json").rungs[0].geometry.tiles == sim::TileShape{128, 128});
  CHECK(sim::parse_rung_timing_json(R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":1}]})", "y.json")
            .rungs[0].geometry.tiles == sim::tiles_of(*sim::hopper_config(128)));
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":1,"tiles":[128,0]}]})", "y.json"),
                    Catch::Contains("rungs[0].tiles' must be [B_r, B_c]"));
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper","head_dim":96,"launch_us":1,"cta_us":1,"tile_us":1}]})", "y.json"),
                    Catch::Contains("y.json: rungs[0]: no compiled configuration of 'fa3_hopper' at head dim 96"));
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":0}]})", "y.json"),
                    Catch::Contains("rungs[0].tile_us"));
}

TEST_CASE("rung timing: the fit recovers the constants that made its runs") {
  const sim::RungTiming truth = timing("fa3_hopper", 128, 4.0, 6.0, 1.7);
  std::vector<analysis::RungTimingPoint> pts;
  for (i64 heads : {4, 16, 64})
    for (i64 n : {1024, 4096, 16384})
      for (bool causal : {false, true})
        pts.push_back({heads, n, n, causal, sim::rung_launch(truth, heads, n, n, causal, 132).time_s});
  const analysis::RungTimingFit f = analysis::fit_rung_timing(truth.geometry, pts, 132);
  CHECK(f.timing.launch_s == Approx(truth.launch_s).epsilon(0.02));
  CHECK(f.timing.cta_s == Approx(truth.cta_s).epsilon(0.02));
  CHECK(f.timing.tile_s == Approx(truth.tile_s).epsilon(0.01));
  CHECK(f.mean_abs_error < 1e-3);
  CHECK_THROWS_AS(analysis::fit_rung_timing(truth.geometry, {pts[0], pts[1]}, 132), std::invalid_argument);
}

TEST_CASE("rung timing: a results file's runs give the fit, and the host's launch call is their median") {
  const sim::RungTiming truth = timing("fa3_hopper", 128, 4.0, 6.0, 1.7);
  analysis::BenchResults r;
  r.meta.gpu = "Test GPU";
  r.meta.sm_count = 132;
  const double host_us[] = {3.0, 12.0, 4.0, 0, 5.0};  // 0: a run that did not record it
  int k = 0;
  for (i64 n : {1024, 2048, 4096, 8192, 16384}) {
    analysis::BenchRow row = timed_row(truth, n, false);
    row.launch_host_us = host_us[k++];
    r.rows.push_back(row);
  }
  // A run of other tiles (another build's, or a row for short sequences) is not
  // fitted with these, even when it comes first: the longest run's tiles are the model's.
  analysis::BenchRow other = r.rows.front();
  other.tiles = {64, 64};
  other.problem.heads = 8;
  r.rows.insert(r.rows.begin(), other);
  const analysis::RungTimingFits f = analysis::fit_rung_timings(r, "t.json");
  REQUIRE(f.set.rungs.size() == 1);
  CHECK(f.set.rungs[0].tile_s == Approx(truth.tile_s).epsilon(0.02));
  CHECK(f.set.rungs[0].geometry.tiles == truth.geometry.tiles);
  REQUIRE(f.notes.size() == 1);
  CHECK_THAT(f.notes[0], Catch::Contains("tiles 64 × 64 where the longest run had") && Catch::Contains("left out"));
  CHECK(f.set.rungs[0].host_launch_s == Approx(5.0e-6));  // the median of 3, 12, 4, 5 (the upper middle)
  CHECK_THAT(analysis::rung_timing_fits_text(f), Catch::Contains("host us"));
}

TEST_CASE("rung timing: with the launch model a ring's one-GPU time is the rung's launch, and a folding pair costs more") {
  const sim::AttentionProblem p = flashlab::test::ring_problem(2, sim::RingLayout::zigzag, 1, 16, 16, 8192, 128, true,
                                                               sim::DType::bf16, sim::PassSelection::fwd);
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H200-SXM-141GB");
  cm.forward_rung = timing("fa3_hopper", 128, 4.9, 3.2, 1.731);
  const double one = sim::ring_single_gpu_cost(p, sim::Pass::fwd, cm).time_s;
  CHECK(one == Approx(sim::rung_launch(*cm.forward_rung, 16, 8192, 8192, true, cm.hw.sm_count).time_s));
  const double plain = sim::ring_block_cost(p, 2048, 2048, sim::ChunkVisibility::full, sim::Pass::fwd, cm).time_s;
  const double folding =
      sim::ring_block_cost(p, 2048, 2048, sim::ChunkVisibility::full, sim::Pass::fwd, cm, true).time_s;
  CHECK(folding > plain);
  // The efficiency no longer enters the pass it times.
  cm.efficiency = 0.5;
  CHECK(sim::ring_single_gpu_cost(p, sim::Pass::fwd, cm).time_s == Approx(one));
}

TEST_CASE("rung timing: a GPU's set prices the rungs the ring runs there, the Hopper ones where the set has them") {
  sim::RingComputeModel cm;
  cm.rung_set = sim::RungTimingSet{};
  cm.rung_set->rungs = {timing("fa2_tc", 128, 1, 1, 1), timing("fa2_tc_bwd", 128, 1, 1, 2)};
  CHECK(sim::ring_rung(cm, sim::Pass::fwd, 128)->geometry.rung == "fa2_tc");
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 128)->geometry.rung == "fa2_tc_bwd");
  cm.rung_set->rungs.push_back(timing("fa3_hopper", 128, 1, 1, 3));
  cm.rung_set->rungs.push_back(timing("fa3_hopper_bwd", 128, 1, 1, 4));
  CHECK(sim::ring_rung(cm, sim::Pass::fwd, 128)->geometry.rung == "fa3_hopper");
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 128)->geometry.rung == "fa3_hopper_bwd");
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 64) == nullptr);  // nothing fitted at d 64
  // A model's own rung comes first.
  cm.backward_rung = timing("fa2_tc_bwd", 128, 1, 1, 5);
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 128)->tile_s == Approx(5e-6));
}

TEST_CASE("rung timing: where a rung's tiles differ by mask, each mask has its own geometry, fit and entry") {
  // fa3_hopper_bwd at d 128: its own tiles per mask (the table), one geometry at d 64.
  const auto full = sim::rung_geometry("fa3_hopper_bwd", 128, false), causal = sim::rung_geometry("fa3_hopper_bwd", 128, true);
  REQUIRE(full);
  REQUIRE(causal);
  CHECK(full->tiles.Br == sim::hopper_bwd_config(128, false)->Br);
  CHECK(causal->tiles.Br == sim::hopper_bwd_config(128, true)->Br);
  CHECK((full->tiles == causal->tiles) ==
        (sim::hopper_bwd_config(128, false)->Br == sim::hopper_bwd_config(128, true)->Br));
  CHECK(sim::rung_geometry("fa3_hopper", 128, false)->tiles == sim::rung_geometry("fa3_hopper", 128, true)->tiles);
  CHECK(sim::head_dim_and_mask(*causal) == "128 causal");
  CHECK(sim::head_dim_and_mask(*sim::rung_geometry("fa3_hopper_bwd", 128)) == "128");

  // find: the entry of the mask asked, else the one for both; asked without a mask, the unmasked one.
  sim::RungTimingSet s;
  s.gpu = "x";
  s.sm_count = 132;
  s.rungs.push_back(timing("fa3_hopper", 128, 1, 1, 1));
  sim::RungTiming f = timing("fa3_hopper_bwd", 128, 1, 1, 2), c = timing("fa3_hopper_bwd", 128, 1, 1, 3);
  f.geometry = *full;
  c.geometry = *causal;
  s.rungs.push_back(f);
  s.rungs.push_back(c);
  CHECK(s.find("fa3_hopper_bwd", 128, true)->tile_s == Approx(3e-6));
  CHECK(s.find("fa3_hopper_bwd", 128, false)->tile_s == Approx(2e-6));
  CHECK(s.find("fa3_hopper_bwd", 128)->tile_s == Approx(2e-6));
  CHECK(s.find("fa3_hopper", 128, true)->tile_s == Approx(1e-6));
  // The file keeps the mask and the tiles; a mask other than the two is refused.
  const sim::RungTimingSet back = sim::parse_rung_timing_json(sim::to_rung_timing_json(s), "m.json");
  REQUIRE(back.rungs.size() == 3);
  CHECK_FALSE(back.rungs[0].geometry.causal);
  CHECK(back.rungs[2].geometry.causal == std::optional<bool>(true));
  CHECK(back.find("fa3_hopper_bwd", 128, true)->geometry.tiles == causal->tiles);
  CHECK(back.find("fa3_hopper_bwd", 128, false)->geometry.tiles == full->tiles);
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,
      "rungs":[{"rung":"fa3_hopper_bwd","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":1,"mask":"yes"}]})", "y.json"),
                    Catch::Contains("rungs[0].mask' must be \"causal\" or \"full\""));

  // The ring prices a diagonal pair with the causal entry, an off-diagonal one with the unmasked.
  const sim::AttentionProblem p = flashlab::test::ring_problem(2, sim::RingLayout::zigzag, 1, 16, 16, 8192, 128, true,
                                                               sim::DType::bf16, sim::PassSelection::fwd_bwd);
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H200-SXM-141GB");
  cm.rung_set = s;
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 128, true)->tile_s == Approx(3e-6));
  CHECK(sim::ring_rung(cm, sim::Pass::bwd, 128, false)->tile_s == Approx(2e-6));
  const double diag =
      sim::ring_block_cost(p, 2048, 2048, sim::ChunkVisibility::diagonal, sim::Pass::bwd, cm).time_s;
  CHECK(diag == Approx(sim::rung_launch(c, 16, 2048, 2048, true, cm.hw.sm_count).time_s));
  const double off = sim::ring_block_cost(p, 2048, 2048, sim::ChunkVisibility::full, sim::Pass::bwd, cm).time_s;
  CHECK(off == Approx(sim::rung_launch(f, 16, 2048, 2048, false, cm.hw.sm_count).time_s));
}

TEST_CASE("rung timing: runs whose tiles differ by mask are fitted per mask, each with its own tiles") {
  sim::RungTiming full = timing("fa3_hopper_bwd", 128, 4.0, 6.0, 3.0), causal = timing("fa3_hopper_bwd", 128, 4.0, 5.0, 2.5);
  full.geometry.tiles = {80, 128};
  causal.geometry.tiles = {64, 128};
  analysis::BenchResults r;
  r.meta.gpu = "Test GPU";
  r.meta.sm_count = 132;
  for (bool mask : {false, true})
    for (i64 n : {1024, 2048, 4096, 8192, 16384}) r.rows.push_back(timed_row(mask ? causal : full, n, mask));
  const analysis::RungTimingFits f = analysis::fit_rung_timings(r, "t.json");
  CHECK(f.notes.empty());
  REQUIRE(f.set.rungs.size() == 2);
  const sim::RungTiming* ff = f.set.find("fa3_hopper_bwd", 128, false);
  const sim::RungTiming* fc = f.set.find("fa3_hopper_bwd", 128, true);
  REQUIRE(ff);
  REQUIRE(fc);
  CHECK(ff != fc);
  CHECK(ff->geometry.tiles == sim::TileShape{80, 128});
  CHECK(fc->geometry.tiles == sim::TileShape{64, 128});
  CHECK(ff->tile_s == Approx(full.tile_s).epsilon(0.02));
  CHECK(fc->tile_s == Approx(causal.tile_s).epsilon(0.02));
  CHECK_THAT(analysis::rung_timing_fits_text(f), Catch::Contains("128 causal") && Catch::Contains("128 full"));
  // One mask's tiles alone (or both alike): one fit for both, as before.
  analysis::BenchResults one = r;
  for (analysis::BenchRow& row : one.rows) row.tiles = {64, 128};
  const analysis::RungTimingFits g = analysis::fit_rung_timings(one, "t.json");
  REQUIRE(g.set.rungs.size() == 1);
  CHECK_FALSE(g.set.rungs[0].geometry.causal);
}
