// Measured profiles read against datasheets: the datasheet of a GPU, its
// figures at another clock, the targets of a ceilings run, and two models side
// by side. (The profile itself, its ceilings and its JSON: tests/sim.)
#include <algorithm>
#include <catch2/catch.hpp>

#include "flashlab/analysis/profiles/measured_profile.hpp"
#include "profile_fixture.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using flashlab::test::h100_like_profile;
using sim::CeilingFigure;
using sim::DeviceFacts;
using sim::find_figure_spec;
using sim::MeasuredProfile;
using sim::measured_profile_name;

TEST_CASE("the datasheet preset of a GPU: same SMs, the model's name, the best token overlap", "[profile]") {
  const std::vector<sim::HardwareModel> presets = datasheet_presets();
  REQUIRE(presets.size() >= 7);
  struct Case {
    const char* gpu;
    sim::i64 sms;
    const char* preset;  // "" = none
  };
  const Case cases[] = {
      {"NVIDIA H100 80GB HBM3", 132, "H100-SXM5-80GB"},
      {"NVIDIA H200", 132, "H200-SXM-141GB"},
      {"NVIDIA A100 80GB PCIe", 108, "A100-PCIe-80GB"},
      {"NVIDIA A100-SXM4-80GB", 108, "A100-SXM4-80GB"},
      {"NVIDIA A100-SXM4-40GB", 108, "A100-SXM4-40GB"},
      {"Tesla T4", 40, "T4"},
      {"NVIDIA GeForce RTX 4090", 128, "RTX-4090"},
      {"NVIDIA H100 PCIe", 114, ""},  // 114 SMs: not the SXM5 datasheet
      {"NVIDIA L4", 58, ""},
      {"NVIDIA", 132, ""},  // no model token at all
  };
  for (const Case& c : cases) {
    INFO(c.gpu);
    const auto m = match_datasheet(c.gpu, c.sms, presets);
    if (*c.preset) {
      REQUIRE(m);
      CHECK(m->name == c.preset);
    } else {
      CHECK_FALSE(m);
    }
  }
  // A measured profile is never its own datasheet.
  std::vector<sim::HardwareModel> with_measured{h100_like_profile().hw};
  CHECK_FALSE(match_datasheet("NVIDIA H100 80GB HBM3", 132, with_measured));
}

TEST_CASE("datasheet figures, clocks and the theoretical HBM rate", "[profile]") {
  const sim::HardwareModel h100 = sim::load_hardware("H100-SXM5-80GB");
  CHECK(*datasheet_value(h100, *find_figure_spec("hbm_copy")) == Approx(3350e9));
  CHECK(*datasheet_value(h100, *find_figure_spec("bf16_mma")) == Approx(989.4e12));
  CHECK(*datasheet_value(h100, *find_figure_spec("tf32_mma")) == Approx(494.7e12));
  CHECK(*datasheet_value(h100, *find_figure_spec("fp32_fma")) == Approx(66.9e12));
  CHECK_FALSE(datasheet_value(h100, *find_figure_spec("l2_read")));  // datasheets give no L2 bandwidth
  CHECK(rate_at_clock(66.9e12, 1980, 1755) == Approx(66.9e12 * 1755 / 1980));
  CHECK(rate_at_clock(66.9e12, 0, 1755) == Approx(66.9e12));
  DeviceFacts d;
  d.mem_clock_mhz = 2619;
  d.mem_bus_bits = 5120;
  CHECK(d.theoretical_hbm_bandwidth() == Approx(3.352e12).epsilon(1e-3));  // the 3.35 TB/s of the datasheet
  d.mem_bus_bits = 0;
  CHECK(d.theoretical_hbm_bandwidth() == 0);
  CHECK(measured_profile_name("NVIDIA H100 80GB HBM3") == "measured-NVIDIA-H100-80GB-HBM3");
  CHECK(measured_profile_name("  A100-SXM4 (80GB) ") == "measured-A100-SXM4-80GB");
  CHECK(measured_profile_name("") == "measured-GPU");
}

TEST_CASE("the targets of a ceilings run, checked on one run", "[profile]") {
  const MeasuredProfile p = h100_like_profile();
  const sim::HardwareModel h100 = sim::load_hardware("H100-SXM5-80GB");
  const std::vector<TargetCheck> t = check_targets(p, &h100);
  REQUIRE(t.size() == 3);
  // Copy 2,750 over cudaMemcpy 2,800 GB/s.
  CHECK(t[0].available);
  CHECK(t[0].ratio == Approx(2750.0 / 2800.0));
  CHECK(t[0].met);
  // mma.sync 560 over cuBLAS 760 TFLOP/s: Hopper's mma.sync misses the 0.85 goal.
  CHECK(t[1].ratio == Approx(560.0 / 760.0));
  CHECK_FALSE(t[1].met);
  // FMA 58 TFLOP/s against 66.9 scaled from 1,980 to the observed 1,755 MHz.
  CHECK(t[2].reference == Approx(66.9e12 * 1755 / 1980));
  CHECK(t[2].ratio == Approx(58e12 / (66.9e12 * 1755 / 1980)));
  CHECK(t[2].met);
  CHECK_THAT(t[2].detail, Catch::Contains("H100-SXM5-80GB"));
  // Without a datasheet: SMs × FP32 lanes (128 on cc 9.0) × 2 × clock.
  const std::vector<TargetCheck> u = check_targets(p, nullptr);
  CHECK(u[2].reference == Approx(2.0 * 128 * 132 * 1755e6));
  // Without the reference figures the targets say so instead of passing.
  MeasuredProfile q = p;
  q.figures.erase(std::remove_if(q.figures.begin(), q.figures.end(),
                                 [](const CeilingFigure& f) { return f.id == "memcpy_d2d" || f.id == "bf16_cublas"; }),
                  q.figures.end());
  const std::vector<TargetCheck> v = check_targets(q, &h100);
  CHECK_FALSE(v[0].available);
  CHECK_FALSE(v[0].met);
  CHECK_FALSE(v[1].available);
}

TEST_CASE("on Hopper the tensor-core target is wgmma over cuBLAS, goal 0.90", "[profile]") {
  const MeasuredProfile p = flashlab::test::hopper_profile_with_wgmma();
  const sim::HardwareModel h100 = sim::load_hardware("H100-SXM5-80GB");
  const std::vector<TargetCheck> t = check_targets(p, &h100);
  REQUIRE(t.size() == 3);
  CHECK(t[1].name == "bf16 wgmma / cuBLAS bf16 GEMM 8192^3");
  CHECK(t[1].goal == Approx(0.90));
  CHECK(t[1].measured == Approx(870e12));
  CHECK(t[1].ratio == Approx(870.0 / 760.0));
  CHECK(t[1].met);
  // A Hopper profile without wgmma (a build without sm_90a) falls back to mma.sync, and says so.
  const std::vector<TargetCheck> old = check_targets(h100_like_profile(), &h100);
  CHECK(old[1].name == "bf16 mma.sync / cuBLAS bf16 GEMM 8192^3");
  CHECK(old[1].goal == Approx(0.85));
  CHECK_THAT(old[1].detail, Catch::Contains("no wgmma figure"));
}

TEST_CASE("two hardware models side by side", "[profile]") {
  const sim::HardwareModel h100 = sim::load_hardware("H100-SXM5-80GB");
  const sim::HardwareModel a100 = sim::load_hardware("A100-PCIe-80GB");
  const std::vector<ComparisonRow> rows = compare_hardware(h100_like_profile().hw, h100);
  auto row = [&](const std::vector<ComparisonRow>& rs, const std::string& name) {
    for (const ComparisonRow& r : rs)
      if (r.figure == name) return r;
    FAIL("no row " << name);
    return ComparisonRow{};
  };
  CHECK(row(rows, "HBM bandwidth").a == Approx(3010));
  CHECK(row(rows, "HBM bandwidth").b == Approx(3350));
  CHECK(row(rows, "HBM bandwidth").ratio() == Approx(3010.0 / 3350));
  CHECK(row(rows, "L2 bandwidth").b == 0);  // the datasheet gives none
  CHECK(row(rows, "L2 bandwidth").ratio() == 0);
  const std::vector<ComparisonRow> ab = compare_hardware(h100, a100);
  CHECK(row(ab, "ridge, fp16 tensor / HBM").b == Approx(161.24).epsilon(1e-3));  // the lecture's 312 / 1,935
  CHECK(row(ab, "SMs").ratio() == Approx(132.0 / 108));
}
