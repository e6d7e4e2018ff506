// Measured profiles: the ceilings a set of figures gives, the JSON round
// trip, and clear errors for malformed or incomplete profiles.
#include <algorithm>
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <unistd.h>

#include <nlohmann/json.hpp>

#include "analysis/profile_fixture.hpp"
#include "flashlab/sim/hardware/measured_profile.hpp"

using namespace flashlab;
using namespace flashlab::sim;
using flashlab::test::h100_like_profile;

namespace {

// A folder of this process's own, removed when the tests end.
struct Scratch {
  std::filesystem::path dir =
      std::filesystem::temp_directory_path() / ("flashlab-profile-test-" + std::to_string(::getpid()));
  Scratch() { std::filesystem::create_directories(dir); }
  ~Scratch() {
    std::error_code ec;
    std::filesystem::remove_all(dir, ec);
  }
};

std::filesystem::path scratch() {
  static const Scratch s;
  return s.dir;
}

std::string error_of(const std::string& text) {
  try {
    profile_from_json(text, "p.json");
  } catch (const sim::HardwareError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("the ceilings of a profile are the best figure for each, capacities from the device", "[profile]") {
  const MeasuredProfile p = h100_like_profile();
  const sim::HardwareModel& hw = p.hw;
  CHECK(hw.kind == "measured");
  CHECK(hw.name == "measured-NVIDIA-H100-80GB-HBM3");
  CHECK(hw.sm_count == 132);
  CHECK(hw.sram_bytes_per_sm == 233472);
  CHECK(hw.l2_bytes == 52428800);
  CHECK(hw.l2_partitions == 2);  // Hopper: two partitions (the runtime does not say; the compute capability does)
  CHECK(l2_partitions_of(89) == 1);
  // HBM: the best of read 3,010, write 2,900, copy 2,750 and cudaMemcpy 2,800 GB/s.
  CHECK(hw.hbm_bandwidth == Approx(3010e9));
  CHECK(hw.l2_bandwidth == Approx(7400e9));
  CHECK(hw.sram_bandwidth == Approx(30100e9));
  // Tensor cores: cuBLAS (wgmma) beats mma.sync, and a ceiling is the best rate reached.
  CHECK(hw.peak(sim::DType::bf16, sim::ComputeUnit::tensor_core) == Approx(760e12));
  CHECK(hw.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core) == Approx(770e12));
  CHECK(hw.peak(sim::DType::fp32, sim::ComputeUnit::tensor_core) == Approx(250e12));
  CHECK(hw.peak(sim::DType::fp32, sim::ComputeUnit::cuda_core) == Approx(58e12));
  CHECK(hw.clock_mhz == Approx(1755));  // the FMA run's clock
  REQUIRE(hw.sources.size() >= 4);
  CHECK(hw.sources.front().find("measured by flashlab ceilings (full) on NVIDIA H100 80GB HBM3") == 0);
  CHECK(hw.provenance.find("driver 580.65.06") != std::string::npos);
  CHECK(hw.provenance.find("1755 MHz observed") != std::string::npos);
}

TEST_CASE("on Hopper the wgmma figures are the tensor-core ceilings, mma.sync stays a figure", "[profile]") {
  REQUIRE(find_figure_spec("fp16_wgmma"));
  CHECK(find_figure_spec("bf16_wgmma")->unit == sim::ComputeUnit::tensor_core);
  CHECK(find_figure_spec("bf16_wgmma")->dtype == sim::DType::bf16);
  CHECK_FALSE(find_figure_spec("bf16_wgmma")->reference);
  const MeasuredProfile p = flashlab::test::hopper_profile_with_wgmma();
  // wgmma 880 / 870 over cuBLAS 770 / 760 and mma.sync 570 / 560 TFLOP/s.
  CHECK(p.hw.peak(sim::DType::fp16, sim::ComputeUnit::tensor_core) == Approx(880e12));
  CHECK(p.hw.peak(sim::DType::bf16, sim::ComputeUnit::tensor_core) == Approx(870e12));
  CHECK(p.hw.peak(sim::DType::fp32, sim::ComputeUnit::tensor_core) == Approx(250e12));  // tf32: mma.sync alone
  const bool named = std::any_of(p.hw.sources.begin(), p.hw.sources.end(), [](const std::string& s) {
    return s == "bf16 tensor peak 870.0 TFLOP/s = bf16_wgmma (the best of bf16_mma, bf16_wgmma, bf16_cublas)";
  });
  CHECK(named);
  REQUIRE(p.figure("bf16_mma"));
  CHECK(p.figure("bf16_mma")->value == Approx(560e12));
}

TEST_CASE("a profile lacking a ceiling the simulator needs is refused with the reason", "[profile]") {
  MeasuredProfile p = h100_like_profile();
  std::vector<CeilingFigure> no_hbm;
  for (const CeilingFigure& f : p.figures)
    if (f.id.rfind("hbm", 0) != 0 && f.id != "memcpy_d2d") no_hbm.push_back(f);
  CHECK_THROWS_WITH(hardware_from_measurements(p.device, no_hbm, p.date, p.mode),
                    Catch::Contains("no figure measures the HBM bandwidth"));
  std::vector<CeilingFigure> bandwidth_only;
  for (const CeilingFigure& f : p.figures)
    if (is_bandwidth(find_figure_spec(f.id)->quantity)) bandwidth_only.push_back(f);
  CHECK_THROWS_WITH(hardware_from_measurements(p.device, bandwidth_only, p.date, p.mode),
                    Catch::Contains("no figure measures a compute peak"));
}

TEST_CASE("profile JSON round trip: every field back, and it loads as a preset", "[profile]") {
  const MeasuredProfile p = h100_like_profile();
  const std::string text = profile_to_json(p);
  const MeasuredProfile q = profile_from_json(text, "round-trip.json");
  CHECK(q.hw.name == p.hw.name);
  CHECK(q.hw.kind == "measured");
  CHECK(q.hw.hbm_bandwidth == Approx(p.hw.hbm_bandwidth));
  CHECK(q.hw.l2_bandwidth == Approx(p.hw.l2_bandwidth));
  CHECK(q.hw.peak_flops[1][0] == Approx(p.hw.peak_flops[1][0]));
  CHECK(q.hw.provenance == p.hw.provenance);
  CHECK(q.hw.sources == p.hw.sources);
  CHECK(q.device.name == p.device.name);
  CHECK(q.device.compute_capability == 90);
  CHECK(q.device.mem_bus_bits == 5120);
  CHECK(q.device.driver == "580.65.06");
  REQUIRE(q.figures.size() == p.figures.size());
  for (size_t k = 0; k < p.figures.size(); ++k) {
    INFO(p.figures[k].id);
    CHECK(q.figures[k].id == p.figures[k].id);
    CHECK(q.figures[k].value == Approx(p.figures[k].value));
    CHECK(q.figures[k].median_ms == Approx(p.figures[k].median_ms));
    CHECK(q.figures[k].repeats == p.figures[k].repeats);
    CHECK(q.figures[k].sm_clock_mhz == Approx(p.figures[k].sm_clock_mhz));
    CHECK(q.figures[k].method == p.figures[k].method);
  }
  REQUIRE(q.sweep.size() == 2);
  CHECK(q.sweep[1].loads == "ld.global.cg");
  REQUIRE(q.sweep[0].points.size() == p.sweep[0].points.size());
  CHECK(q.sweep[0].points.back().working_set_bytes == (sim::i64{1} << 32));
  CHECK(q.sweep[0].points.back().bandwidth == Approx(p.sweep[0].points.back().bandwidth));
  CHECK(q.mode == "full");
  CHECK(q.date == p.date);
  CHECK(q.notes == p.notes);
  CHECK(q.wall_s == Approx(p.wall_s));
  // Stored in readable units: GB/s and TFLOP/s.
  const auto j = nlohmann::json::parse(text);
  CHECK(j["measurements"][0]["unit"] == "GB/s");
  CHECK(j["measurements"][0]["value"].get<double>() == Approx(3010));

  // Anywhere a preset loads (--hw FILE), the profile loads.
  const auto path = (scratch() / "measured.json").string();
  std::ofstream(path, std::ios::binary) << text;
  const sim::HardwareModel hw = sim::load_hardware(path);
  CHECK(hw.kind == "measured");
  CHECK(hw.hbm_bandwidth == Approx(3010e9));
  CHECK(load_profile(path).figures.size() == p.figures.size());
  CHECK(looks_measured(text));
}

TEST_CASE("a malformed or incomplete profile gives a clear error naming the field", "[profile]") {
  const std::string good = profile_to_json(h100_like_profile());
  using Mutation = void (*)(nlohmann::json&);
  struct Case {
    const char* what;
    Mutation mutate;
    const char* message;
  };
  const Case cases[] = {
      {"a datasheet preset", [](nlohmann::json& j) { j["kind"] = "datasheet"; }, "not 'measured'"},
      {"no measurements", [](nlohmann::json& j) { j.erase("measurements"); }, "missing field 'measurements'"},
      {"empty measurements", [](nlohmann::json& j) { j["measurements"] = nlohmann::json::array(); },
       "'measurements' must be a non-empty array"},
      {"unknown figure", [](nlohmann::json& j) { j["measurements"][0]["id"] = "hbm_magic"; },
       "unknown measurement 'hbm_magic'"},
      {"wrong unit", [](nlohmann::json& j) { j["measurements"][0]["unit"] = "TFLOP/s"; },
       "measurements[0].unit: 'TFLOP/s' for hbm_read (expected GB/s)"},
      {"negative value", [](nlohmann::json& j) { j["measurements"][2]["value"] = -1; },
       "field 'measurements[2].value' must be a positive number"},
      {"zero repeats", [](nlohmann::json& j) { j["measurements"][1]["repeats"] = 0; },
       "field 'measurements[1].repeats' must be a positive integer"},
      {"a figure twice", [](nlohmann::json& j) { j["measurements"][1]["id"] = "hbm_read"; }, "appears twice"},
      {"no device", [](nlohmann::json& j) { j.erase("device"); }, "missing field 'device'"},
      {"device without SMs", [](nlohmann::json& j) { j["device"].erase("sm_count"); },
       "missing field 'device.sm_count'"},
      {"bad sweep point", [](nlohmann::json& j) { j["bandwidth_sweep"][0]["points"][3]["bytes"] = 0; },
       "field 'bandwidth_sweep[0].points[3].bytes' must be a positive integer"},
      {"sweep not an array", [](nlohmann::json& j) { j["bandwidth_sweep"] = 7; }, "'bandwidth_sweep' must be an array"},
      {"the preset part incomplete", [](nlohmann::json& j) { j.erase("hbm_bandwidth_gbs"); },
       "missing field 'hbm_bandwidth_gbs'"},
      {"notes not strings", [](nlohmann::json& j) { j["run"]["notes"] = {1, 2}; }, "'run.notes' must hold strings"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    nlohmann::json j = nlohmann::json::parse(good);
    c.mutate(j);
    const std::string err = error_of(j.dump());
    CHECK_THAT(err, Catch::StartsWith("p.json: "));
    CHECK_THAT(err, Catch::Contains(c.message));
  }
  CHECK_THAT(error_of("{\"format\": \"flashlab-hardware/1\", "), Catch::Contains("not valid JSON"));
  CHECK_THAT(error_of(good.substr(0, good.size() / 2)), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(load_profile((scratch() / "absent.json").string()), Catch::Contains("cannot read profile"));
  CHECK_FALSE(looks_measured("{\"kind\": \"datasheet\"}"));
  CHECK_FALSE(looks_measured("not json"));
}
