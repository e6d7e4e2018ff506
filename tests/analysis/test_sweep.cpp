#include <catch2/catch.hpp>

#include "flashlab/analysis.hpp"

using namespace flashlab;

TEST_CASE("sweep specifications", "[analysis][sweep]") {
  auto s = analysis::parse_sweep("seq=512:65536:x2");
  CHECK(s.axis == analysis::SweepAxis::seq);
  CHECK(s.values == std::vector<sim::i64>{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536});
  s = analysis::parse_sweep("head-dim=32:128:+32");
  CHECK(s.axis == analysis::SweepAxis::head_dim);
  CHECK(s.values == std::vector<sim::i64>{32, 64, 96, 128});
  s = analysis::parse_sweep("sram=64KiB,100KiB,192K");
  CHECK(s.axis == analysis::SweepAxis::sram);
  CHECK(s.values == std::vector<sim::i64>{65536, 102400, 196608});
  s = analysis::parse_sweep("seq=1K:16K:x4");
  CHECK(s.values == std::vector<sim::i64>{1024, 4096, 16384});
  s = analysis::parse_sweep("seq=100:1000:x3");
  CHECK(s.values == std::vector<sim::i64>{100, 300, 900});
  for (const char* bad : {"seq", "seq=", "speed=1,2", "seq=0:8:x2", "seq=8:4:x2", "seq=1:8:x1", "seq=1:8",
                          "seq=1:8:y2", "seq=a,b", "seq=1:10000000:+1", "seq=4,-1"})
    CHECK_THROWS_AS(analysis::parse_sweep(bad), std::invalid_argument);
}

TEST_CASE("an IO sweep: exact counts beside the Θ curves", "[analysis][sweep]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  sim::AttentionProblem p;
  p.head_dim = 64;
  const auto spec = analysis::parse_sweep("seq=256:65536:x2");
  const std::vector<sim::Algorithm> algos{sim::Algorithm::standard, sim::Algorithm::fa1, sim::Algorithm::fa2};
  const auto rows = analysis::run_sweep(p, hw, spec, algos, {});
  REQUIRE(rows.size() == spec.values.size() * algos.size());
  std::vector<double> std_exact, std_theta, fa1_exact, fa1_theta;
  for (const auto& r : rows) {
    REQUIRE(r.result.ok());
    CHECK(r.result.method == "closed form");
    const double bytes = static_cast<double>(r.result.total.level(sim::Level::HBM).bytes());
    if (r.result.algorithm == sim::Algorithm::standard) {
      std_exact.push_back(bytes);
      std_theta.push_back(r.theta_standard);
    }
    if (r.result.algorithm == sim::Algorithm::fa1) {
      fa1_exact.push_back(bytes);
      fa1_theta.push_back(r.theta_flash);
    }
  }
  // Standard attention: 4Nd + 4N² elements against Θ(Nd + N²): c → 4 exactly.
  CHECK(analysis::fitted_constant(std_exact, std_theta) == Approx(4.0));
  // FA1 at large N follows Θ(N²d²/M): its constant settles (T_c = ⌈N/B_c⌉ rounds at small N).
  // Per K_j block it moves Q, O in, O out (3Nd·2 B) and ℓ, m in and out (4N·4 B):
  // (6d + 16)·N·N/B_c bytes against N²d²/M·2 B, with B_c = ⌈M/4d⌉ = 384, M = 98,304.
  const double c_fa1 = (6.0 * 64 + 16) / 384.0 / (64.0 * 64 / 98304 * 2);
  const size_t last = fa1_exact.size() - 1;
  CHECK(fa1_exact[last] / fa1_theta[last] == Approx(c_fa1).epsilon(0.01));
  CHECK(fa1_exact[last - 1] / fa1_theta[last - 1] == Approx(c_fa1).epsilon(0.03));
}

TEST_CASE("a sweep's point is the simulation of its problem: the same DRAM bytes and bound as flashlab sim's",
          "[analysis][sweep]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-PCIe-80GB");
  sim::AttentionProblem p;
  p.batch = 64;
  p.heads = 16;
  p.head_dim = 64;
  const auto spec = analysis::parse_sweep("seq=1024,4096");
  const std::vector<sim::Algorithm> algos{sim::Algorithm::standard, sim::Algorithm::fa1, sim::Algorithm::fa2};
  std::vector<std::size_t> calls;
  const auto rows = analysis::run_sweep(p, hw, spec, algos, {}, [&](std::size_t done, std::size_t total) {
    CHECK(total == 6);
    calls.push_back(done);
  });
  // One call per row, counting up.
  CHECK(calls == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
  for (const analysis::SweepRow& r : rows) {
    CAPTURE(r.value, sim::to_string(r.result.algorithm));
    const sim::SimResult one = sim::simulate(r.result.algorithm, analysis::apply_axis(p, spec.axis, r.value), hw, {});
    REQUIRE(one.ok());
    REQUIRE(r.result.l2.modelled);
    CHECK(r.result.dram_bytes() == one.dram_bytes());
    CHECK(r.roof.ai == analysis::roofline(one, hw).ai);
  }
}

TEST_CASE("an SRAM sweep changes the tiles and FlashAttention's traffic", "[analysis][sweep]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  sim::AttentionProblem p;
  p.seq_q = 8192;
  const auto rows = analysis::run_sweep(p, hw, analysis::parse_sweep("sram=32K:256K:x2"), {sim::Algorithm::fa1}, {});
  REQUIRE(rows.size() == 4);
  for (size_t k = 1; k < rows.size(); ++k) {
    REQUIRE(rows[k].result.ok());
    CHECK(rows[k].result.tiles.Bc > rows[k - 1].result.tiles.Bc);
    CHECK(rows[k].result.total.level(sim::Level::HBM).bytes() < rows[k - 1].result.total.level(sim::Level::HBM).bytes());
  }
}

TEST_CASE("sweep points that do not fit are marked, the sweep goes on", "[analysis][sweep]") {
  const sim::HardwareModel hw = sim::load_hardware("T4");
  sim::AttentionProblem p;
  sim::SimOptions o;
  o.tiles = sim::TileShape{64, 64};
  const auto rows = analysis::run_sweep(p, hw, analysis::parse_sweep("head-dim=64,512,64"), {sim::Algorithm::fa2}, o);
  REQUIRE(rows.size() == 3);
  CHECK(rows[0].result.ok());
  CHECK_FALSE(rows[1].result.ok());
  CHECK(rows[2].result.ok());
}
