// Where a measured run meets the model: rates from the simulator's counts with
// the tiles that ran, the model's memory beside the measured peak, rows the
// model cannot count, and one rule for a point above its roof, shared by the
// flat roofline (the HBM slice) and the hierarchical one.
#include "flashlab/analysis/placement/measured_checks.hpp"
#include <catch2/catch.hpp>

#include <algorithm>
#include <limits>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/hierarchical_roofline.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/memory/simulate.hpp"
#include "measured_run_fixture.hpp"
#include "support/problems.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::test::measured_run;
using flashlab::test::problem;
using sim::i64;

namespace {

// The device of the runner's CPU tests, as the simulator sees it: an H100's M.
sim::HardwareModel h100_device() {
  sim::HardwareModel hw;
  hw.name = "Fake H100 (host memory)";
  hw.sram_bytes_per_sm = 233472;
  return hw;
}

bool has_note(const ChartSpec& c, const std::string& part) {
  return std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}

}  // namespace

TEST_CASE("a timed run's rates: the convention, and the simulator's FLOPs and bytes with the tiles that ran",
          "[analysis][placement]") {
  const auto p = problem(4, 8, 1000, 64, true);
  const sim::MeasuredRun measured = measured_run("fa2", "fa2", p, {128, 64}, 3.25);
  const BenchRow row = bench_row(measured, h100_device());
  CHECK(row.kernel == "fa2");
  CHECK(row.time_ms_median == 3.25);
  CHECK(row.reason.empty());

  // One source of truth: the convention from analysis/, the exact FLOPs and
  // the HBM bytes from the simulator with the tiles that ran.
  const double s = 3.25e-3;
  CHECK(row.tflops == Approx(static_cast<double>(convention_flops(p)) / s / 1e12));
  sim::SimOptions so;
  so.tiles = row.tiles;
  const sim::SimResult model = sim::simulate(sim::Algorithm::fa2, p, h100_device(), so);
  REQUIRE(model.ok());
  CHECK(row.tflops_exact == Approx(static_cast<double>(exact_flops(model.total)) / s / 1e12));
  CHECK(row.gbps == Approx(static_cast<double>(model.total.level(sim::Level::HBM).bytes()) / s / 1e9));
  CHECK(row.tflops_exact > row.tflops);  // causal: diagonal blocks computed in full, plus softmax

  // Memory: Q, K, V, O and the logsumexp of the model, each its own allocation: the
  // four tensors of 3.9 MB in whole 2 MiB granules, the logsumexp (128 kB) inside a granule
  // the process already holds.
  const i64 tensor = 4 * 8 * 1000 * 64 * 2, lse = 4 * 8 * 1000 * 4, g = sim::kAllocationGranuleBytes;
  CHECK(row.predicted_memory_bytes == std::max(4 * ((tensor + g - 1) / g * g), 4 * tensor + lse));
  CHECK(row.predicted_memory_bytes == 16 * 1024 * 1024);

  // The placement gives the bench table's rates, exactly.
  const PlacedRun placed = place_runs(BenchResults{{}, {row}}, h100_device(), hierarchical_ceilings(h100_device())).runs.at(0);
  CHECK(placed.rates.tflops == row.tflops);
  CHECK(placed.rates.tflops_exact == row.tflops_exact);
  CHECK(placed.rates.gbps == row.gbps);
  CHECK(placed.achieved == Approx(row.tflops_exact * 1e12));
}

TEST_CASE("the model's memory is its HBM tensors, exactly, for every row past the support checks",
          "[analysis][placement]") {
  const sim::HardwareModel hw = h100_device();
  const i64 B = 3, H = 5, N = 1000, d = 64;
  const auto p16 = problem(B, H, N, d, false, sim::DType::fp16);
  const i64 qkvo = 4 * B * H * N * d * 2;
  auto predicted = [&](const char* kernel, const char* model, const sim::AttentionProblem& p) {
    return bench_row(measured_run(kernel, model, p, {}, 1.0), hw).predicted_memory_bytes;
  };
  CHECK(predicted("naive", "standard", p16) == qkvo + 2 * B * H * N * N * 2);
  CHECK(predicted("naive_cublas", "standard", p16) == qkvo + 2 * B * H * N * N * 2);
  CHECK(predicted("fa1", "fa1", p16) == qkvo + 2 * B * H * N * 4);  // ℓ, m fp32
  CHECK(predicted("fa2", "fa2", p16) == qkvo + B * H * N * 4);      // logsumexp fp32
  const auto p32 = problem(B, H, N, d, false, sim::DType::fp32, 17);
  CHECK(predicted("naive", "standard", p32) == (2 * B * H * N * d + 2 * B * H * 17 * d) * 4 + 2 * B * H * N * 17 * 4);
  for (const char* m : {"standard", "pytorch", "fa1", "fa2"})
    CHECK(predicted("any", m, p16) == sim::hbm_footprint_bytes(*sim::parse_algorithm(m), p16));

  // What naive_cublas holds on 1 × 2 heads × 300: Q, K, V, O, S and P.
  CHECK(predicted("naive_cublas", "standard", problem(1, 2, 300, 64)) ==
        4 * 2 * 300 * 64 * 2 + 2 * 2 * 300 * 300 * 2);
  // An OOM row keeps the model's memory: that is why it ran out.
  const BenchRow oom =
      bench_row(measured_run("naive", "standard", problem(64, 32, 2048, 64), {}, 0, RunStatus::oom), hw);
  CHECK(oom.predicted_memory_bytes > (15ll << 30));
  CHECK(oom.tflops == 0);
  // A skipped row never got that far; a row without a model has none.
  CHECK(bench_row(measured_run("fa2", "fa2", p16, {}, 0, RunStatus::skipped), hw).predicted_memory_bytes == 0);
  CHECK(bench_row(measured_run("fa2", "", p16, {}, 1.0), hw).predicted_memory_bytes == 0);
}

TEST_CASE("a check-only run has no rates", "[analysis][placement]") {
  const BenchRow row = bench_row(measured_run("fa1", "fa1", problem(1, 1, 64, 64), {64, 64}, 0), h100_device());
  CHECK(row.repeats == 0);
  CHECK(row.tflops == 0);
  CHECK(row.tflops_exact == 0);
  CHECK(row.gbps == 0);
}

TEST_CASE("a run the model cannot count keeps its measurement and says why", "[analysis][placement]") {
  const sim::HardwareModel hw = h100_device();
  const auto p = problem(1, 2, 4096, 128, false, sim::DType::fp32);
  SECTION("tiles the model's SRAM cannot hold") {
    const BenchRow row = bench_row(measured_run("fa1", "fa1", p, {512, 512}, 2.0), hw);
    CHECK(row.tflops > 0);
    CHECK(row.tflops_exact == 0);
    CHECK(row.gbps == 0);
    CHECK_THAT(row.reason, Catch::StartsWith("no simulator count (") && Catch::Contains("do not fit in SRAM") &&
                               Catch::EndsWith("GB/s and exact FLOPs not given"));
  }
  SECTION("a kernel's tiles over M but within its SRAM and registers; a reason an earlier placement wrote goes") {
    // The Hopper backward's 80 × 128 at d = 128: 234,112 B in fa2_bwd's accounting, M = 233,472 B.
    sim::MeasuredRun run = measured_run("fa3_hopper_bwd", "fa2_bwd", problem(1, 2, 4096, 128), {80, 128}, 2.0);
    run.direction = "bwd";
    run.reason = "no simulator count (tiles B_r=80, B_c=128 do not fit in SRAM: …); GB/s and exact FLOPs not given";
    const BenchRow row = bench_row(run, hw);
    CHECK(row.gbps > 0);
    CHECK(row.tflops_exact > 0);
    CHECK(row.reason.empty());
    run.reason = "a reason of the run's own";
    CHECK(bench_row(run, hw).reason == "a reason of the run's own");
  }
  SECTION("no model in the row: no algorithm, and no guess from the kernel's name") {
    const BenchRow row = bench_row(measured_run("fa2", "", p, {64, 64}, 2.0), hw);
    CHECK(row.tflops > 0);
    CHECK(row.gbps == 0);
    CHECK_THAT(row.reason, Catch::Contains("no simulator algorithm for kernel 'fa2'") &&
                               Catch::Contains("names no model"));
    CHECK_THAT(bench_row(measured_run("fa2", "fa3", p, {64, 64}, 2.0), hw).reason,
               Catch::Contains("unknown model 'fa3'"));
  }
  SECTION("a failed row keeps its own reason") {
    sim::MeasuredRun failed = measured_run("fa1", "fa1", p, {512, 512}, 2.0, RunStatus::failed);
    failed.reason = "wrong result";
    CHECK(bench_row(failed, hw).reason == "wrong result");
  }
}

TEST_CASE("a run's model comes from the row: any kernel name, tiles as they ran or the simulator's",
          "[analysis][placement]") {
  const sim::HardwareModel hw = sim::load_hardware("H100-SXM5-80GB");
  const auto p = problem(2, 4, 2048, 64);
  SECTION("the model key, whatever the kernel is called") {
    const RunModel m = model_of(measured_run("my_kernel_v7", "fa1", p, {64, 64}, 1.0), hw);
    REQUIRE(m.result);
    CHECK(m.result->algorithm == sim::Algorithm::fa1);
    CHECK(m.result->tiles == sim::TileShape{64, 64});
  }
  SECTION("no tiles: the simulator's own choice on this hardware") {
    const RunModel m = model_of(measured_run("sdpa_flash", "fa2", p, {}, 1.0), hw);
    REQUIRE(m.result);
    CHECK(m.result->tiles == sim::choose_tiles(sim::Algorithm::fa2, p, hw.sram_bytes_per_sm, std::nullopt).tiles);
  }
  SECTION("materialising rows never fail on tiles: their HBM bytes and FLOPs do not depend on them") {
    sim::HardwareModel small = hw;
    small.sram_bytes_per_sm = 48 << 10;
    const auto wide = problem(1, 2, 256, 4096, false, sim::DType::fp32);  // even 1×1 tiles of FA1 exceed 48 KiB
    CHECK_FALSE(model_of(measured_run("fa2", "fa2", wide, {}, 1.0), small).result);
    const RunModel m = model_of(measured_run("naive", "standard", wide, {}, 1.0), small);
    REQUIRE(m.result);
    sim::HardwareModel big = hw;
    big.sram_bytes_per_sm = i64{1} << 40;
    sim::SimOptions any;
    any.tiles = sim::TileShape{64, 32};
    const sim::SimResult ref = sim::simulate(sim::Algorithm::standard, wide, big, any);
    REQUIRE(ref.ok());
    CHECK(m.result->total.level(sim::Level::HBM).bytes() == ref.total.level(sim::Level::HBM).bytes());
    CHECK(m.result->total.flops() == ref.total.flops());
  }
}

TEST_CASE("the flat roofline is the HBM slice of the hierarchical one: same points, one rule above the roof",
          "[analysis][placement][chart]") {
  ChartContext ctx;
  ctx.problem = problem(1, 1, 1024, 64);
  ctx.hw = sim::load_hardware("A100-PCIe-80GB");
  BenchResults r;
  const auto p = problem(4, 16, 2048, 64);
  const BenchRow slow = bench_row(measured_run("fa2", "fa2", p, {128, 64}, 5.0), ctx.hw);
  // far above any roof
  BenchRow fast = bench_row(measured_run("fa2", "fa2", problem(4, 16, 4096, 64), {128, 64}, 1e-3), ctx.hw);
  BenchRow old = bench_row(measured_run("fa2_old", "", p, {128, 64}, 5.0), ctx.hw);  // a file without models
  r.rows = {slow, fast, old};

  const HierarchicalCeilings c = hierarchical_ceilings(ctx.hw);
  const Placement placed = place_runs(r, ctx.hw, c);
  REQUIRE(placed.runs.size() == 2);
  CHECK_FALSE(placed.runs[0].above_flat_roof());
  CHECK(placed.runs[1].above_flat_roof());
  CHECK(placed.without_model == std::vector<std::string>{"fa2_old"});
  CHECK_THAT(placed.skipped.at(0), Catch::Contains("fa2_old") && Catch::Contains("names no model"));

  const ChartSpec flat = roofline_chart(ctx, &r);
  const auto it = std::find_if(flat.series.begin(), flat.series.end(), [](const Series& s) { return s.name == "fa2 — measured"; });
  REQUIRE(it != flat.series.end());
  REQUIRE(it->x.size() == 2);
  for (size_t k = 0; k < 2; ++k) {
    CHECK(it->x[k] == placed.runs[k].level(sim::Level::HBM)->ai);
    CHECK(it->y[k] == placed.runs[k].rates.tflops_exact * 1e12);
    CHECK(it->y[k] == Approx(placed.runs[k].achieved));
  }
  CHECK(has_note(flat, "1 measured point(s) above the roof, e.g. fa2 at B=4 H=16 N=4096"));
  CHECK(has_note(flat, "fa2_old: left out, its rows name no model"));

  // The hierarchical chart flags the same run, at HBM and at the compute peak.
  const ChartSpec hier = hierarchical_roofline_chart(c, placed, sim::DType::fp16);
  CHECK(has_note(hier, "fa2 N=4,096 d=64: above the HBM ceiling"));
  CHECK(has_note(hier, "fa2 N=4,096 d=64: above the fp16 tensor ceiling"));
  CHECK_FALSE(has_note(hier, "fa2 N=2,048 d=64: above"));
  CHECK(has_note(hier, "left out: fa2_old N=2,048 d=64 fwd: no simulator algorithm for kernel 'fa2_old'"));
}

TEST_CASE("the flat roofline places a run at its DRAM bytes: the counters' when it has them, else the L2 model's",
          "[analysis][placement][chart]") {
  ChartContext ctx;
  ctx.problem = problem(1, 1, 1024, 64);
  ctx.hw = sim::load_hardware("H200-SXM-141GB");
  const auto p = problem(4, 16, 4096, 64);
  const BenchRow predicted = bench_row(measured_run("fa2", "fa2", p, {128, 64}, 5.0), ctx.hw);
  sim::MeasuredRun with_counters = measured_run("fa2_tc", "fa2", p, {128, 64}, 5.0);
  with_counters.dram_read_bytes = 400'000'000;
  with_counters.dram_write_bytes = 130'000'000;
  BenchResults r;
  r.rows = {predicted, bench_row(with_counters, ctx.hw)};
  const Placement placed = place_runs(r, ctx.hw, hierarchical_ceilings(ctx.hw));
  REQUIRE(placed.runs.size() == 2);
  const RunModel model = model_of(r.rows[0], ctx.hw);
  REQUIRE(model.result);
  REQUIRE(model.result->l2.modelled);
  const double flops = static_cast<double>(model.result->total.flops());
  // Not the requests: with 128 × 64 tiles FA2 re-reads K, V per row block, and the L2 keeps most of it.
  const double requests = static_cast<double>(model.result->total.level(sim::Level::HBM).bytes());
  const double dram = static_cast<double>(model.result->dram_bytes());
  CHECK(dram < requests / 2);
  const LevelPoint* hbm0 = placed.runs[0].level(sim::Level::HBM);
  const LevelPoint* hbm1 = placed.runs[1].level(sim::Level::HBM);
  CHECK_FALSE(hbm0->measured);
  CHECK(hbm0->ai == Approx(flops / dram));
  CHECK(hbm1->measured);
  CHECK(hbm1->ai == Approx(flops / 530e6));
  CHECK(hbm1->model_ai == Approx(flops / dram));

  const ChartSpec flat = roofline_chart(ctx, &r);
  const std::pair<const char*, double> expected[] = {{"fa2 — measured", hbm0->ai}, {"fa2_tc — measured", hbm1->ai}};
  for (const auto& [name, ai] : expected) {
    const auto it = std::find_if(flat.series.begin(), flat.series.end(), [&](const Series& s) { return s.name == name; });
    REQUIRE(it != flat.series.end());
    CHECK(it->x.front() == ai);
  }
  CHECK(flat.x.label == "arithmetic intensity (FLOP/byte of DRAM traffic)");
  CHECK(has_note(flat, "measured points: exact FLOPs / measured time over DRAM bytes counted by the GPU (1 of 2 runs"));
  CHECK(has_note(flat, "model points: exact FLOPs over the DRAM bytes the L2 model predicts"));
  // Without an L2 size the model points are the two-level model's, and the chart says so.
  ctx.hw.l2_bytes = 0;
  CHECK(has_note(roofline_chart(ctx), "the hardware model has no L2 size"));
}

TEST_CASE("above a ceiling means beyond the timing tolerance", "[analysis][placement]") {
  CHECK_FALSE(above_ceiling(1.0, 1.0));
  CHECK_FALSE(above_ceiling(1.0 + kAboveCeilingTolerance / 2, 1.0));
  CHECK(above_ceiling(1.0 + 2 * kAboveCeilingTolerance, 1.0));
  CHECK_FALSE(above_ceiling(5.0, 0.0));  // no ceiling, nothing to be above
}

TEST_CASE("measured DRAM: the forward rows of the problem and the algorithm with counters, or why there are none",
          "[analysis][placement]") {
  const sim::AttentionProblem p = problem(4, 16, 4096, 128);
  auto row = [&](const std::string& kernel, const std::string& model, const sim::AttentionProblem& q, bool counters) {
    BenchRow r;
    static_cast<sim::MeasuredRun&>(r) = measured_run(kernel, model, q, {128, 64}, 1.0);
    if (counters) {
      r.dram_read_bytes = 900;
      r.dram_write_bytes = 100;
    }
    return r;
  };
  BenchResults results;
  CHECK(measured_dram(results, "r.json", p, sim::Algorithm::fa2).why_none == "no counters in r.json");
  results.rows.push_back(row("fa2", "fa2", p, false));
  results.rows.back().counters_note = "CUPTI: no permission to read the counters";
  CHECK(measured_dram(results, "r.json", p, sim::Algorithm::fa2).why_none ==
        "no counters in r.json (fa2: CUPTI: no permission to read the counters)");
  results.rows.clear();

  sim::AttentionProblem causal = p;
  causal.causal = true;
  results.rows.push_back(row("fa2_tc", "fa2", causal, true));
  CHECK(measured_dram(results, "r.json", p, sim::Algorithm::fa2).why_none == "no run of this problem");
  results.rows.push_back(row("naive", "standard", p, true));
  CHECK(measured_dram(results, "r.json", p, sim::Algorithm::fa2).runs.empty());
  results.rows.push_back(row("fa2", "fa2", p, true));
  results.rows.push_back(row("fa2_tc", "fa2", p, true));
  results.rows.push_back(row("fa2_tc", "fa2", p, true));
  results.rows.back().direction = "bwd";
  results.rows.push_back(row("fa2_tc", "fa2", p, true));
  results.rows.back().status = RunStatus::oom;
  const MeasuredLookup m = measured_dram(results, "r.json", p, sim::Algorithm::fa2);
  REQUIRE(m.runs.size() == 3);  // fa2, fa2_tc, and the OOM run with its reason; the backward row is not a forward run
  CHECK(m.runs[0].kernel == "fa2");
  CHECK(m.runs[0].measured);
  CHECK(m.runs[0].read_bytes == 900);
  CHECK(m.runs[1].kernel == "fa2_tc");
  CHECK_FALSE(m.runs[2].measured);
  CHECK_THAT(m.runs[2].why_not, Catch::StartsWith("OOM"));
  CHECK(m.why_none.empty());
  REQUIRE(first_measured(m) != nullptr);
  CHECK(first_measured(m)->kernel == "fa2");
  CHECK(measured_dram(results, "r.json", p, sim::Algorithm::standard).runs.size() == 1);
  sim::AttentionProblem longer_kv = p;
  longer_kv.seq_kv = 8192;
  CHECK_FALSE(p == longer_kv);
  sim::AttentionProblem explicit_kv = p;
  explicit_kv.seq_kv = p.seq_q;
  CHECK(p == explicit_kv);
  CHECK(dram_target(sim::Algorithm::standard) == 0.05);
  CHECK(dram_target(sim::Algorithm::fa1) == 0.15);
}
