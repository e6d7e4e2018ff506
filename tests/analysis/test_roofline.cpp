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
  CHECK(a.hbm_bytes == Approx(static_cast<double>(std_r.total.level(sim::Level::HBM).bytes())));
  CHECK(a.time_s == Approx(a.hbm_bytes / hw.hbm_bandwidth));
  CHECK(b.ai > a.ai * 4);  // FlashAttention moves far fewer bytes for the same work
  CHECK(b.time_s < a.time_s);
  CHECK(a.ridge == Approx(312e12 / 1555e9));
}
