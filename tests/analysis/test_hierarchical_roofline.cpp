// The hierarchical roofline: ceilings per level and unit, the bytes
// each level moves, measured runs placed on it with the model beside them,
// the guards for points above a ceiling, and its charts.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/charts/hierarchical_roofline.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/export/chart_export.hpp"
#include "profile_fixture.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::test::h100_like_profile;
using sim::MeasuredProfile;

namespace {

sim::AttentionProblem problem(sim::i64 n, sim::i64 d, sim::DType t = sim::DType::fp16) {
  sim::AttentionProblem p;
  p.batch = 16;
  p.heads = 16;
  p.seq_q = n;
  p.head_dim = d;
  p.dtype = t;
  return p;
}

const Series* series_named(const ChartSpec& c, const std::string& name) {
  for (const Series& s : c.series)
    if (s.name == name) return &s;
  return nullptr;
}

bool has_note(const ChartSpec& c, const std::string& part) {
  for (const std::string& n : c.notes)
    if (n.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST_CASE("the presets' ridge points, among them the lecture's 312 TFLOP/s over 1,935 GB/s", "[hier]") {
  const HierarchicalCeilings a100 = hierarchical_ceilings(sim::load_hardware("A100-PCIe-80GB"));
  REQUIRE(a100.memory_of(sim::Level::HBM));
  const double ridge = ridge_point(a100.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core),
                                   a100.memory_of(sim::Level::HBM)->bandwidth);
  CHECK(ridge == Approx(161.24).epsilon(1e-3));
  // Every preset: one ceiling per positive peak, ridges of HBM above those of SMEM.
  for (const std::string& name : sim::list_presets()) {
    INFO(name);
    const sim::HardwareModel hw = sim::load_hardware(name);
    const HierarchicalCeilings c = hierarchical_ceilings(hw);
    int peaks = 0;
    for (const auto& by_dtype : hw.peak_flops)
      for (double p : by_dtype) peaks += p > 0;
    CHECK(static_cast<int>(c.compute.size()) == peaks);
    REQUIRE(c.memory_of(sim::Level::HBM));
    REQUIRE(c.memory_of(sim::Level::SRAM));
    const double top = hw.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core);
    CHECK(ridge_point(top, c.memory_of(sim::Level::HBM)->bandwidth) == Approx(top / hw.hbm_bandwidth));
    CHECK(ridge_point(top, c.memory_of(sim::Level::HBM)->bandwidth) >
          ridge_point(top, c.memory_of(sim::Level::SRAM)->bandwidth));
    // Datasheets give no L2 bandwidth: the level is left out, and a note says so.
    CHECK_FALSE(c.memory_of(sim::Level::L2));
    CHECK(c.notes.size() == 1);
    CHECK_FALSE(c.measured);
  }
}

TEST_CASE("a measured profile gives all three levels and mma.sync as a secondary ceiling", "[hier]") {
  const HierarchicalCeilings c = hierarchical_ceilings(h100_like_profile());
  CHECK(c.measured);
  REQUIRE(c.memory.size() == 3);
  CHECK(c.memory[0].label == "HBM 3,010 GB/s");
  CHECK(c.memory[1].label == "L2 7,400 GB/s");
  CHECK(c.memory[2].label == "SMEM 30,100 GB/s");
  CHECK(c.notes.empty());
  // bf16: cuBLAS 760 is the roof; mma.sync 560 is drawn below it but is no roof for the guards.
  CHECK(c.peak(sim::DType::bf16, sim::ComputeUnit::tensor_core) == Approx(760e12));
  int secondary = 0;
  for (const ComputeCeiling& k : c.compute) secondary += k.secondary;
  CHECK(secondary == 2);  // fp16 and bf16 mma.sync; tf32's mma.sync is the tf32 peak itself
  CHECK(c.clock_mhz == Approx(1755));
  // Each tensor-core roof names the figure behind it.
  auto labelled = [&](const HierarchicalCeilings& h, const std::string& label) {
    return std::any_of(h.compute.begin(), h.compute.end(), [&](const ComputeCeiling& k) { return k.label == label; });
  };
  CHECK(labelled(c, "bf16 tensor 760.0 TFLOP/s (cuBLAS)"));
  CHECK(labelled(c, "tf32 tensor 250.0 TFLOP/s (mma.sync)"));
  CHECK(labelled(c, "bf16 mma.sync 560.0 TFLOP/s (Ampere path)"));
}

TEST_CASE("with wgmma measured, wgmma is the tensor roof and mma.sync a labelled line below it", "[hier]") {
  const HierarchicalCeilings c = hierarchical_ceilings(flashlab::test::hopper_profile_with_wgmma());
  CHECK(c.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core) == Approx(880e12));
  const ComputeCeiling* roof = nullptr;
  const ComputeCeiling* ampere = nullptr;
  for (const ComputeCeiling& k : c.compute) {
    if (k.dtype != sim::DType::fp16 || k.unit != sim::ComputeUnit::tensor_core) continue;
    (k.secondary ? ampere : roof) = &k;
  }
  REQUIRE(roof);
  REQUIRE(ampere);
  CHECK(roof->label == "fp16 tensor 880.0 TFLOP/s (wgmma)");
  CHECK(ampere->label == "fp16 mma.sync 570.0 TFLOP/s (Ampere path)");
  CHECK(ampere->peak == Approx(570e12));
  // The chart draws both: the roof solid, mma.sync dotted, each with its label.
  const ChartSpec ch = hierarchical_roofline_chart(c, Placement{}, sim::DType::fp16);
  const RefLine* top = nullptr;
  const RefLine* below = nullptr;
  for (const RefLine& l : ch.ref_lines) {
    if (l.label == roof->label) top = &l;
    if (l.label == ampere->label) below = &l;
  }
  REQUIRE(top);
  REQUIRE(below);
  CHECK(top->dash == Dash::solid);
  CHECK(below->dash == Dash::dotted);
  CHECK(below->value == Approx(570e12));
}

TEST_CASE("bytes per level: HBM is the DRAM after the L2 model, L2 the requests and the model's L2 re-reads", "[hier]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  const sim::SimResult std_r = sim::simulate(sim::Algorithm::standard, problem(1024, 64), hw);
  REQUIRE(std_r.ok());
  REQUIRE(std_r.l2.modelled);
  const LevelBytes b = level_bytes(std_r);
  const double requests = static_cast<double>(std_r.total.level(sim::Level::HBM).bytes());
  const double l2_only = static_cast<double>(std_r.total.level(sim::Level::L2).bytes());
  CHECK(l2_only > 0);  // standard attention's GEMM re-reads of K_j and V_j
  CHECK(b.hbm == static_cast<double>(std_r.dram_bytes()));
  CHECK(b.l2 == requests + l2_only);
  // FlashAttention re-reads K_j, V_j per row block; the L2 keeps most of them from DRAM.
  const sim::SimResult fa2 = sim::simulate(sim::Algorithm::fa2, problem(4096, 64), hw);
  REQUIRE(fa2.ok());
  CHECK(level_bytes(fa2).hbm == static_cast<double>(fa2.dram_bytes()));
  CHECK(level_bytes(fa2).hbm < static_cast<double>(fa2.total.level(sim::Level::HBM).bytes()) / 2);
  // A hardware model without an L2: the two-level model, DRAM = the requests.
  sim::HardwareModel no_l2 = hw;
  no_l2.l2_bytes = 0;
  const sim::SimResult two = sim::simulate(sim::Algorithm::standard, problem(1024, 64), no_l2);
  REQUIRE(two.ok());
  CHECK_FALSE(two.l2.modelled);
  CHECK(level_bytes(two).hbm == static_cast<double>(two.total.level(sim::Level::HBM).bytes()));
  CHECK(b.smem == static_cast<double>(std_r.total.level(sim::Level::SRAM).bytes()));
  CHECK(b.of(sim::Level::L2) == b.l2);
  CHECK(b.of(sim::Level::none) == 0);
}

TEST_CASE("a run placed on the ceilings: AI per level, achieved and predicted FLOP/s", "[hier]") {
  const MeasuredProfile prof = h100_like_profile();
  const HierarchicalCeilings c = hierarchical_ceilings(prof);
  const sim::SimResult r = sim::simulate(sim::Algorithm::fa2, problem(4096, 64), prof.hw);
  REQUIRE(r.ok());
  const double flops = static_cast<double>(r.total.flops());
  const LevelBytes b = level_bytes(r);
  const double peak = 770e12;  // fp16 tensor: the cuBLAS figure
  const double t_model = std::max({flops / peak, b.hbm / 3010e9, b.l2 / 7400e9, b.smem / 30100e9});

  SECTION("at half the model's rate: no flag") {
    const PlacedRun run = place_run("fa2", r, 2 * t_model, c);
    CHECK(run.flops == flops);
    CHECK(run.achieved == Approx(flops / (2 * t_model)));
    CHECK(run.predicted_time_s == Approx(t_model));
    CHECK(run.predicted == Approx(flops / t_model));
    CHECK(run.achieved == Approx(run.predicted / 2));
    CHECK(run.peak == Approx(peak));
    REQUIRE(run.levels.size() == 3);
    CHECK(run.levels[0].ai == Approx(flops / b.hbm));
    CHECK(run.levels[1].ai == Approx(flops / b.l2));
    CHECK(run.levels[2].ai == Approx(flops / b.smem));
    CHECK(run.levels[0].roof == Approx(std::min(peak, flops / b.hbm * 3010e9)));
    CHECK(run.label == "fa2 N=4,096 d=64");
    CHECK_FALSE(run.flagged());
  }
  SECTION("faster than HBM allows on the model's DRAM bytes: flagged, the likely cause is the L2 model's DRAM") {
    const double t = b.hbm / (3010e9 * 1.5);
    const PlacedRun run = place_run("fa2", r, t, c);
    REQUIRE(run.flagged());
    bool hbm = false;
    for (const CeilingFlag& f : run.flags)
      if (f.ceiling == "HBM") {
        hbm = true;
        CHECK_FALSE(f.compute);
        CHECK(f.achieved == Approx(1.5 * 3010e9));
        CHECK(f.limit == Approx(3010e9));
        CHECK_THAT(f.cause, Catch::StartsWith("DRAM bytes the L2 model over-predicts"));
      }
    CHECK(hbm);
  }
  SECTION("with the DRAM bytes the counters measured: the point sits there, the model's prediction at its own") {
    const double measured = 3 * b.hbm;
    const PlacedRun run = place_run("fa2", r, 2 * t_model, c, 0, measured);
    const LevelPoint* hbm = run.level(sim::Level::HBM);
    REQUIRE(hbm);
    CHECK(hbm->measured);
    CHECK(hbm->bytes == measured);
    CHECK(hbm->ai == Approx(flops / measured));
    CHECK(hbm->model_bytes == b.hbm);
    CHECK(hbm->model_ai == Approx(flops / b.hbm));
    CHECK(run.predicted_time_s == Approx(t_model));  // the model's bound keeps the model's bytes
    CHECK_FALSE(run.level(sim::Level::L2)->measured);
    // Faster than the measured bytes allow: the cause is no longer the model.
    const PlacedRun fast = place_run("fa2", r, measured / (3010e9 * 1.5), c, 0, measured);
    bool flagged = false;
    for (const CeilingFlag& f : fast.flags)
      if (f.ceiling == "HBM") {
        flagged = true;
        CHECK_THAT(f.cause, Catch::StartsWith("a time or a bandwidth that does not hold"));
      }
    CHECK(flagged);
  }
  SECTION("above the compute ceiling: the FLOP count, or the clock when the run was faster") {
    const double t = flops / (peak * 1.2);
    const PlacedRun run = place_run("fa2", r, t, c);
    const CeilingFlag* compute = nullptr;
    for (const CeilingFlag& f : run.flags)
      if (f.compute) compute = &f;
    REQUIRE(compute);
    CHECK(compute->ceiling == "fp16 tensor");
    CHECK_THAT(compute->cause, Catch::StartsWith("the FLOP count"));
    const PlacedRun fast_clock = place_run("fa2", r, t, c, 1980);
    for (const CeilingFlag& f : fast_clock.flags)
      if (f.compute) CHECK_THAT(f.cause, Catch::StartsWith("clocks: the run's SM clock (1980 MHz) is above the 1755"));
  }
  SECTION("within the 2% timing tolerance: not flagged") {
    const PlacedRun run = place_run("fa2", r, flops / (peak * 1.01), c);
    for (const CeilingFlag& f : run.flags) CHECK_FALSE(f.compute);
  }
}

TEST_CASE("a result set placed: each run against a model of its own pass, every other row accounted for", "[hier]") {
  const MeasuredProfile prof = h100_like_profile();
  const HierarchicalCeilings c = hierarchical_ceilings(prof);
  BenchResults res;
  res.meta.sm_clock_mhz = 1700;
  // Each row names its model as `flashlab bench` writes it; "mystery" names none.
  auto row = [](const std::string& kernel, const std::string& dir, RunStatus st, double ms) {
    BenchRow r;
    r.kernel = kernel;
    r.model = kernel == "mystery" ? "" : kernel == "naive" ? "standard" : kernel == "fa2_tc" ? "fa2" : kernel;
    r.direction = dir;
    r.problem = problem(2048, 64);
    r.tiles = {64, 64};
    r.status = st;
    r.time_ms_median = ms;
    return r;
  };
  res.rows = {row("fa2", "fwd", RunStatus::ok, 1.9),      row("fa2", "bwd", RunStatus::ok, 5.1),
              row("naive", "fwd", RunStatus::oom, 0),     row("mystery", "fwd", RunStatus::ok, 2.0),
              row("fa1", "fwd", RunStatus::ok, 3.3),      row("fa2_tc", "fwd", RunStatus::failed, 0)};
  const Placement p = place_runs(res, prof.hw, c);
  REQUIRE(p.runs.size() == 2);
  CHECK(p.runs[0].kernel == "fa2");
  CHECK(p.runs[0].algorithm == sim::Algorithm::fa2);
  CHECK(p.runs[0].time_s == Approx(1.9e-3));
  CHECK(p.runs[1].algorithm == sim::Algorithm::fa1);
  REQUIRE(p.skipped.size() == 4);
  // A backward run whose model is a forward algorithm is not placed on it.
  CHECK_THAT(p.skipped[0], Catch::Contains("bwd: a backward run whose model 'fa2' is a forward algorithm"));
  CHECK_THAT(p.skipped[1], Catch::Contains("no simulator algorithm for kernel 'mystery'"));
  CHECK_THAT(p.skipped[2] + p.skipped[3], Catch::Contains("1 run(s) with status OOM"));
  CHECK_THAT(p.skipped[2] + p.skipped[3], Catch::Contains("1 run(s) with status failed"));
  // Tiles as they ran: FA1's traffic depends on them.
  sim::SimOptions opt;
  opt.tiles = sim::TileShape{64, 64};
  const sim::SimResult fa1 = sim::simulate(sim::Algorithm::fa1, problem(2048, 64), prof.hw, opt);
  CHECK(p.runs[1].levels[0].bytes == static_cast<double>(fa1.dram_bytes()));
  CHECK(p.runs[1].levels[1].bytes == static_cast<double>(fa1.total.level(sim::Level::HBM).bytes() +
                                                         fa1.total.level(sim::Level::L2).bytes()));
}

TEST_CASE("the hierarchical roofline chart: slopes, ceilings, runs and their flags", "[hier][chart]") {
  const MeasuredProfile prof = h100_like_profile();
  const HierarchicalCeilings c = hierarchical_ceilings(prof);
  const sim::SimResult r = sim::simulate(sim::Algorithm::fa2, problem(4096, 64), prof.hw);
  const double hbm = level_bytes(r).hbm;
  Placement placed;
  placed.runs.push_back(place_run("fa2", r, 4e-3, c));             // plausible
  placed.runs.push_back(place_run("fa2_tc", r, hbm / 6e12, c));    // twice the HBM ceiling: flagged
  placed.skipped.push_back("fa2 N=1,024 d=64 bwd: the simulator models the forward pass only");
  const ChartSpec ch = hierarchical_roofline_chart(c, placed, sim::DType::fp16);
  CHECK(ch.id == "roofline-hier");
  CHECK(ch.x.scale == Scale::log10);
  CHECK(ch.y.scale == Scale::log10);
  for (const char* slope : {"HBM 3,010 GB/s", "L2 7,400 GB/s", "SMEM 30,100 GB/s"}) {
    INFO(slope);
    const Series* s = series_named(ch, slope);
    REQUIRE(s);
    REQUIRE(s->x.size() == 2);
    CHECK(s->y[1] == Approx(770e12));                            // up to the highest ceiling
    CHECK(s->y[0] / s->x[0] == Approx(s->y[1] / s->x[1]));       // a slope of one bandwidth
  }
  // fp16 tensor, fp16 mma.sync, fp16 and fp32 CUDA cores, tf32; bf16's lie within 5% of fp16's.
  CHECK(ch.ref_lines.size() == 5);
  CHECK(has_note(ch, "3 ceiling(s) within 5% of one drawn are not drawn, e.g. bf16 tensor 760.0 TFLOP/s (cuBLAS)"));
  const Series* meas = series_named(ch, "measured @ HBM");
  const Series* model = series_named(ch, "model @ HBM");
  REQUIRE(meas);
  REQUIRE(model);
  REQUIRE(meas->x.size() == 2);
  CHECK(meas->y[0] == Approx(placed.runs[0].achieved));
  CHECK(model->y[0] == Approx(placed.runs[0].predicted));
  CHECK(meas->x[0] == Approx(placed.runs[0].levels[0].ai));
  CHECK(meas->point_labels[0] == "fa2 N=4,096 d=64");
  CHECK(series_named(ch, "measured @ SMEM"));
  REQUIRE(placed.runs[1].flagged());
  bool marked = false;
  for (const Marker& m : ch.markers)
    marked = marked || (m.shape == MarkerShape::cross && *m.y == Approx(placed.runs[1].achieved) &&
                        m.x == Approx(placed.runs[1].levels[0].ai));
  CHECK(marked);
  CHECK(has_note(ch, "fa2_tc N=4,096 d=64: above the HBM ceiling"));
  CHECK(has_note(ch, "likely DRAM the L2 model over-predicts"));
  CHECK_THAT(placed.runs[1].flags.front().cause, Catch::Contains("docs/model.md, section 7b"));
  CHECK(has_note(ch, "left out: fa2 N=1,024 d=64 bwd"));
  CHECK_FALSE(ch.empty());
  // Both renderers take it.
  CHECK_THAT(chart_to_csv(ch), Catch::Contains("roofline-hier"));
  CHECK_THAT(render_svg(ch), Catch::Contains("Hierarchical roofline"));

  const ChartSpec none = hierarchical_roofline_chart(c, Placement{}, sim::DType::fp16);
  CHECK(has_note(none, "no measured run placed"));
  HierarchicalCeilings bare;
  bare.hardware = "nothing";
  const ChartSpec nothing = hierarchical_roofline_chart(bare, Placement{}, sim::DType::fp16);
  CHECK(nothing.series.empty());
  CHECK(has_note(nothing, "no roofline to draw"));
}

TEST_CASE("the bandwidth sweep chart: a series per kind of load, cache sizes and ceilings marked", "[hier][chart]") {
  const MeasuredProfile prof = h100_like_profile();
  const ChartSpec ch = bandwidth_sweep_chart(prof);
  CHECK(ch.id == "bandwidth-sweep");
  REQUIRE(ch.series.size() == 2);
  CHECK(ch.series[0].name == "ld.global (L1 + L2)");
  CHECK(ch.series[1].name == "ld.global.cg (L2 only)");
  CHECK(ch.series[0].x.size() == 23);  // 1 KiB to 4 GiB
  CHECK(ch.series[0].y.front() == Approx(25000e9));
  CHECK(ch.series[1].y.back() == Approx(3000e9));
  bool l2_line = false, hbm_line = false;
  for (const RefLine& l : ch.ref_lines) {
    l2_line = l2_line || (l.vertical && l.value == 52428800);
    hbm_line = hbm_line || (!l.vertical && l.value == Approx(3010e9));
  }
  CHECK(l2_line);
  CHECK(hbm_line);
  CHECK_THAT(render_svg(ch), Catch::Contains("Bandwidth vs working set"));
  MeasuredProfile no_sweep = prof;
  no_sweep.sweep.clear();
  const ChartSpec empty = bandwidth_sweep_chart(no_sweep);
  CHECK(empty.empty());
  CHECK(has_note(empty, "has no bandwidth sweep"));
}
