// The power limit: a timed series' capped shares by hand, the ring's passes
// as a bench times them, the rung file's power fields, and the fit recovering
// the constants that made its runs (analysis/fits/power_cap_fit.hpp).
#include <catch2/catch.hpp>

#include "flashlab/analysis/fits/power_cap_fit.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/calibration/power_cap.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "../support/problems.hpp"

using namespace flashlab;
using sim::i64;

namespace {

sim::RungTiming rung(const std::string& name, i64 d, double tile_us, double rate = 1, double boost_ms = 0) {
  sim::RungTiming t;
  t.geometry = *sim::rung_geometry(name, d);
  t.launch_s = 5e-6;
  t.cta_s = 3e-6;
  t.tile_s = tile_us * 1e-6;
  t.capped_rate = rate;
  t.boost_s = boost_ms * 1e-3;
  if (rate < 1) t.power_source = "given";
  return t;
}

sim::AttentionProblem problem(int gpus, i64 n) {
  return flashlab::test::ring_problem(gpus, sim::RingLayout::zigzag, 1, 16, 16, n, 128);
}

}  // namespace

TEST_CASE("power cap: a series' capped shares by hand", "[power]") {
  // 10 ms a run, 55 ms at boost, 2 warm-ups and 10 timed runs: run i (warm-ups
  // first) is capped for clamp(((i + 1)·10 − 55) / 10): runs 0-4 not, run 5 half,
  // runs 6-11 whole. The timed runs' shares 0 0 0 0.5 1 1 1 1 1 1: the fastest 0,
  // the sixth of the sorted (the one reported) 1.
  sim::SeriesShares s = sim::capped_shares(10e-3, 55e-3, 0.9, {2, 10});
  CHECK(s.fastest == 0);
  CHECK(s.median == 1);
  // 6 ms a run: run 9 is capped for (60 − 55) / 6, runs 10 and 11 whole; the sixth sorted is still at boost.
  s = sim::capped_shares(6e-3, 55e-3, 0.9, {2, 10});
  CHECK(s.median == 0);
  CHECK(s.fastest == 0);
  // 11 ms: run 4 capped for (55 − 55) / 11 = 0, run 5 for 1: timed 0 0 0 1 ...: median 1.
  CHECK(sim::capped_shares(11e-3, 55e-3, 0.9, {2, 10}).median == 1);
  // 8 ms, 2 warm-ups and 3 timed runs: the last ends at 40 ms, none capped.
  CHECK(sim::capped_shares(8e-3, 55e-3, 0.9, {2, 3}).median == 0);
  // Everything capped from the start.
  s = sim::capped_shares(1e-3, 0, 0.9, {0, 5});
  CHECK(s.median == 1);
  CHECK(s.fastest == 1);
  CHECK(sim::capped_factor(0.5, 0.8) == Approx(1.125));
  CHECK(sim::capped_factor(0, 0.8) == 1);
  CHECK_THROWS_AS(sim::capped_shares(1e-3, 0, 0, {}), std::invalid_argument);
  CHECK_THROWS_AS(sim::capped_shares(1e-3, 0, 1.2, {}), std::invalid_argument);
  CHECK_THROWS_AS(sim::capped_shares(1e-3, -1, 0.9, {}), std::invalid_argument);
  CHECK_THROWS_AS(sim::capped_shares(1e-3, 0, 0.9, {2, 0}), std::invalid_argument);
}

TEST_CASE("power cap: a pass timed as a bench times it is the simulation with its rung slowed as its median run is",
          "[power][ring]") {
  const sim::AttentionProblem p = problem(2, 16384);
  const sim::RingTopology topo = sim::default_ring_topology();
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H200-SXM-141GB");
  cm.forward_rung = rung("fa3_hopper", 128, 1.75, 0.9, 0);  // capped from the first run
  cm.backward_rung = rung("fa2_tc_bwd", 128, 5.0);          // never capped
  sim::RingSeriesShares sh;
  const sim::RingSimulation timed = sim::simulate_ring_timed(p, topo, cm, {}, {}, &sh);
  CHECK(sh.forward.median == 1);
  CHECK(sh.backward.median == 0);
  sim::RingComputeModel slowed = cm;
  slowed.forward_rung = cm.forward_rung->slowed(1 / 0.9);
  const sim::RingSimulation by_hand = sim::simulate_ring(p, topo, slowed);
  CHECK(timed.forward.time_s == Approx(by_hand.forward.time_s).epsilon(1e-12));
  CHECK(timed.backward->time_s == Approx(by_hand.backward->time_s).epsilon(1e-12));
  const sim::RingSimulation boost = sim::simulate_ring(p, topo, cm);
  CHECK(timed.forward.time_s > boost.forward.time_s * 1.05);
  CHECK(timed.backward->time_s == Approx(boost.backward->time_s).epsilon(1e-12));
  // A boost longer than the whole series: nothing changes.
  cm.forward_rung->boost_s = 10;
  CHECK(sim::simulate_ring_timed(p, topo, cm, {}, {}).forward.time_s == boost.forward.time_s);
}

TEST_CASE("power cap: the rung file keeps the power fields, and refuses a bad one with its field", "[power]") {
  sim::RungTimingSet s;
  s.gpu = "NVIDIA H200";
  s.sm_count = 132;
  s.rungs.push_back(rung("fa3_hopper", 128, 1.75, 0.918, 55));
  s.rungs.back().power_source = "fitted to 56 one-GPU passes";
  s.rungs.push_back(rung("fa2_tc_bwd", 128, 5.0));
  const sim::RungTimingSet r = sim::parse_rung_timing_json(sim::to_rung_timing_json(s), "x.json");
  REQUIRE(r.rungs.size() == 2);
  CHECK(r.rungs[0].capped_rate == Approx(0.918));
  CHECK(r.rungs[0].boost_s == Approx(0.055));
  CHECK(r.rungs[0].power_source == "fitted to 56 one-GPU passes");
  CHECK(r.rungs[0].power_capped());
  CHECK_FALSE(r.rungs[1].power_capped());
  CHECK(r.rungs[1].power_source.empty());
  const std::string head = R"({"format":"flashlab-rung-timing/1","gpu":"x","sm_count":1,"rungs":[{"rung":"fa3_hopper","head_dim":128,"launch_us":1,"cta_us":1,"tile_us":1,)";
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(head + R"("capped_rate":1.5,"boost_ms":5,"power_source":"p"}]})", "y.json"),
                    Catch::Contains("rungs[0].capped_rate"));
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(head + R"("capped_rate":0.9,"boost_ms":5}]})", "y.json"),
                    Catch::Contains("power_source"));
  CHECK_THROWS_WITH(sim::parse_rung_timing_json(head + R"("capped_rate":0.9,"boost_ms":-1,"power_source":"p"}]})", "y.json"),
                    Catch::Contains("rungs[0].boost_ms"));
}

TEST_CASE("power cap: the fit recovers the boost time and the rates that made its runs", "[power]") {
  sim::RungTimingSet launch;
  launch.gpu = "NVIDIA H200";
  launch.sm_count = 132;
  launch.rungs = {rung("fa3_hopper", 128, 1.75), rung("fa2_tc_bwd", 128, 5.0)};
  const sim::HardwareModel hw = sim::load_hardware("H200-SXM-141GB");
  const double boost = 0.040, f_rate = 0.9, b_rate = 1.0;
  const sim::TimedSeries series{2, 10};
  sim::MeasuredRuns runs;
  runs.meta.gpu = "NVIDIA H200";
  auto set_pass_of = [&](sim::MeasuredRun& run, sim::Pass pass, double rate) {
    const sim::AttentionProblem& p = run.problem;
    sim::RingComputeModel cm;
    cm.hw = hw;
    if (pass == sim::Pass::fwd) cm.forward_rung = launch.rungs[0];
    else cm.backward_rung = launch.rungs[1];
    const double busy = sim::ring_single_gpu_cost(p, pass, cm).time_s;
    const sim::SeriesShares s = sim::capped_shares(busy, boost, rate, series);
    sim::PassTimes t;
    t.repeats = series.repeats;
    t.time_ms_median = busy * sim::capped_factor(s.median, rate) * 1e3;
    t.time_ms_min = busy * sim::capped_factor(s.fastest, rate) * 1e3;
    t.time_ms_max = t.time_ms_median;
    sim::PassTimeline m;
    m.warmup = series.warmup;
    sim::set_pass(run, pass, t, m);
  };
  for (i64 n : {4096, 8192, 12288, 16384, 24576, 32768, 49152}) {
    sim::MeasuredRun run;
    run.problem = problem(1, n);
    run.kernel = "fa3_hopper";
    run.parallel_part().backward_kernel = "fa2_tc_bwd";
    set_pass_of(run, sim::Pass::fwd, f_rate);
    set_pass_of(run, sim::Pass::bwd, b_rate);
    runs.runs.push_back(run);
  }
  const analysis::PowerCapFit f = analysis::fit_power_cap(runs, launch, hw, "synthetic.json");
  CHECK(f.points.size() == 14);
  CHECK(f.boost_s == Approx(boost).margin(2e-3));
  CHECK(f.set.find("fa3_hopper", 128)->capped_rate == Approx(f_rate).margin(2e-3));
  CHECK(f.set.find("fa2_tc_bwd", 128)->capped_rate == Approx(b_rate).margin(2e-3));
  CHECK(f.mean_abs_error < 2e-3);
  CHECK_THAT(f.set.find("fa3_hopper", 128)->power_source, Catch::Contains("14 one-GPU passes of synthetic.json"));
  CHECK_THAT(analysis::power_cap_fit_text(f), Catch::Contains("capped rate"));
  // Too few passes of a rung: refused, naming it.
  runs.runs.resize(2);
  CHECK_THROWS_WITH(analysis::fit_power_cap(runs, launch, hw, "short.json"),
                    Catch::Contains("short.json: fa2_tc_bwd at d 128 has 2 one-GPU passes"));
  runs.runs.clear();
  CHECK_THROWS_AS(analysis::fit_power_cap(runs, launch, hw, "none.json"), std::invalid_argument);
}

TEST_CASE("power cap: a measured run is placed beside its passes timed as it was, and says how much was capped",
          "[power][ring]") {
  sim::MeasuredRun run;
  run.problem = problem(1, 65536);
  run.kernel = "fa3_hopper";
  run.parallel_part().backward_kernel = "fa2_tc_bwd";
  run.time_ms_median = run.time_ms_min = run.time_ms_max = 20.0;
  run.repeats = 10;
  run.parallel_part().forward.warmup = 2;
  run.problem.parallel_part().passes = sim::PassSelection::fwd;
  const sim::RingTopology topo = sim::default_ring_topology();
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H200-SXM-141GB");
  cm.forward_rung = rung("fa3_hopper", 128, 1.75);
  const analysis::RingPlacement boost = analysis::place_ring_run(run, topo, cm);
  cm.forward_rung = rung("fa3_hopper", 128, 1.75, 0.9, 55);
  const analysis::RingPlacement capped = analysis::place_ring_run(run, topo, cm);
  REQUIRE(capped.passes.size() == 1);
  // About 29 ms a run at boost: the sixth timed run starts at 7 runs' time, past 55 ms.
  CHECK(capped.power_shares.forward.median == 1);
  CHECK(capped.passes[0].predicted_time_ms == Approx(boost.passes[0].predicted_time_ms / 0.9).epsilon(0.01));
  bool said = false;
  for (const std::string& n : capped.notes) said = said || n.find("100 % of its rung time under the power limit") != std::string::npos;
  CHECK(said);
  CHECK(analysis::ring_placement_json(capped)["power_capped_share"]["forward"]["median"] == 1.0);
  // Timed with no warm-ups and 3 runs of a shorter pass, nothing is capped.
  run.problem.seq_q = 8192;
  run.parallel_part().forward.warmup = 0;
  run.repeats = 3;
  CHECK(analysis::place_ring_run(run, topo, cm).power_shares.forward.median == 0);
}
