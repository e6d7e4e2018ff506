#include <catch2/catch.hpp>

#include "flashlab/analysis.hpp"

using namespace flashlab;

TEST_CASE("the lecture's ridge point: A100 PCIe 80GB, 312 TFLOP/s over 1,935 GB/s", "[analysis][roofline]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-PCIe-80GB");
  const double peak = hw.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core);
  CHECK(peak == Approx(312e12));
  CHECK(hw.hbm_bandwidth == Approx(1935e9));
  CHECK(analysis::ridge_point(peak, hw.hbm_bandwidth) == Approx(161.24).epsilon(1e-3));
}

TEST_CASE("roofline arithmetic", "[analysis][roofline]") {
  CHECK(analysis::arithmetic_intensity(100, 0) == 0);
  CHECK(analysis::arithmetic_intensity(1000, 10) == 100);
  CHECK(analysis::attainable_flops(10, 100e12, 2e12) == Approx(20e12));   // memory roof
  CHECK(analysis::attainable_flops(500, 100e12, 2e12) == Approx(100e12)); // compute roof
  CHECK(analysis::time_lower_bound_s(1e12, 1e9, 100e12, 1e12) == Approx(0.01));
  CHECK(analysis::time_lower_bound_s(1e12, 1e11, 100e12, 1e12) == Approx(0.1));
}

TEST_CASE("FLOP convention: 4·B·H·N²·d, halved when causal", "[analysis][flops]") {
  sim::AttentionProblem p;
  p.batch = 64;
  p.heads = 16;
  p.seq_q = 1024;
  p.head_dim = 64;
  CHECK(analysis::convention_flops(p) == 4LL * 64 * 16 * 1024 * 1024 * 64);
  p.causal = true;
  CHECK(analysis::convention_flops(p) == 2LL * 64 * 16 * 1024 * 1024 * 64);
  p.causal = false;
  p.seq_kv = 10;
  CHECK(analysis::convention_flops(p) == 4LL * 64 * 16 * 1024 * 10 * 64);
}

TEST_CASE("roofline of a simulated run: bound and time agree with the counts", "[analysis][roofline]") {
  const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  sim::AttentionProblem p;
  p.batch = 64;
  p.heads = 16;
  const sim::SimResult std_r = sim::simulate(sim::Algorithm::standard, p, hw);
  const sim::SimResult fa1_r = sim::simulate(sim::Algorithm::fa1, p, hw);
  REQUIRE(std_r.ok());
  REQUIRE(fa1_r.ok());
  const auto a = analysis::roofline(std_r, hw);
  const auto b = analysis::roofline(fa1_r, hw);
  CHECK(a.memory_bound);
  CHECK(a.request_bytes == Approx(static_cast<double>(std_r.total.level(sim::Level::HBM).bytes())));
  CHECK(a.dram_bytes == Approx(static_cast<double>(std_r.dram_bytes())));
  CHECK(a.time_s == Approx(a.dram_bytes / hw.hbm_bandwidth));
  CHECK(b.ai > a.ai * 4);  // FlashAttention moves far fewer bytes for the same work
  CHECK(b.time_s < a.time_s);
  CHECK(a.ridge == Approx(312e12 / 1555e9));
}

TEST_CASE("the bound uses what reaches DRAM: FlashAttention-2 at 16k tokens, d 128, is compute-bound on an H200",
          "[analysis][roofline][l2]") {
  const sim::HardwareModel hw = sim::load_hardware("H200-SXM-141GB");
  sim::AttentionProblem p;
  p.batch = 4;
  p.heads = 16;
  p.seq_q = 16384;
  p.head_dim = 128;
  sim::SimOptions opt;
  opt.tiles = sim::TileShape{128, 64};
  const sim::SimResult with_l2 = sim::simulate(sim::Algorithm::fa2, p, hw, opt);
  REQUIRE(with_l2.ok());
  REQUIRE(with_l2.l2.modelled);
  const auto e = analysis::roofline(with_l2, hw);
  CHECK_FALSE(e.memory_bound);
  // K and V of the 64 heads are re-read T_r = 128 times as requests, but the
  // blocks of a wave share them in the L2: DRAM sees little more than Q, K, V, O once.
  const double once = 4.0 * 4 * 16 * 16384 * 128 * 2;
  CHECK(e.dram_bytes < 1.5 * once);
  CHECK(e.request_bytes > 50 * e.dram_bytes);
  // The paper's two-level model (requests = HBM traffic) calls it memory-bound.
  opt.l2 = false;
  const sim::SimResult two_level = sim::simulate(sim::Algorithm::fa2, p, hw, opt);
  REQUIRE(two_level.ok());
  CHECK_FALSE(two_level.l2.modelled);
  CHECK(analysis::roofline(two_level, hw).memory_bound);
  CHECK(two_level.dram_bytes() == two_level.total.level(sim::Level::HBM).bytes());
}

TEST_CASE("hardware without an L2 size: the two-level model, said so in the messages and the JSON",
          "[analysis][roofline][l2]") {
  sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  hw.l2_bytes = 0;
  sim::AttentionProblem p;
  const sim::SimResult r = sim::simulate(sim::Algorithm::fa2, p, hw);
  REQUIRE(r.ok());
  CHECK_FALSE(r.l2.modelled);
  CHECK_THAT(r.l2.why_not, Catch::Contains("no L2 size"));
  bool said = false;
  for (const std::string& m : r.messages()) said = said || m.find("two-level") != std::string::npos;
  CHECK(said);
  CHECK(analysis::roofline(r, hw).dram_bytes == Approx(static_cast<double>(r.total.level(sim::Level::HBM).bytes())));
  // The JSON says why, and its DRAM equals the requests.
  const nlohmann::json j = analysis::sim_json(r, hw);
  CHECK(j["l2"]["modelled"] == false);
  CHECK_THAT(j["l2"]["why_not"].get<std::string>(), Catch::Contains("no L2 size"));
  CHECK(j["dram"]["read_bytes"] == j["hbm"]["read_bytes"]);
  CHECK(j["dram"]["write_bytes"] == j["hbm"]["write_bytes"]);
}
