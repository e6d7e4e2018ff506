#include <algorithm>
#include <fstream>
#include <sstream>

#include "sim/support.hpp"

using namespace flashlab::sim;

namespace {
std::string data(const char* name) { return std::string(FLASHLAB_TEST_DATA) + "/" + name; }
}  // namespace

TEST_CASE("every preset loads, has sources, and round-trips through JSON", "[sim][hardware]") {
  const auto names = list_presets();
  for (const char* want : {"A100-SXM4-40GB", "A100-SXM4-80GB", "A100-PCIe-80GB", "H100-SXM5-80GB", "H200-SXM-141GB",
                           "T4", "RTX-4090"})
    CHECK(std::find(names.begin(), names.end(), want) != names.end());
  for (const std::string& n : names) {
    INFO(n);
    const HardwareModel hw = load_hardware(n);
    CHECK(hw.name == n);
    CHECK(hw.sm_count > 0);
    CHECK(hw.sram_bytes_per_sm > 0);
    CHECK(hw.hbm_bandwidth > 0);
    CHECK(hw.peak(DType::fp16, ComputeUnit::tensor_core) > 0);
    CHECK_FALSE(hw.sources.empty());
    const HardwareModel back = parse_hardware_json(to_hardware_json(hw), "round trip");
    CHECK(back.name == hw.name);
    CHECK(back.hbm_bandwidth == Approx(hw.hbm_bandwidth));
    CHECK(back.peak_flops == hw.peak_flops);
    CHECK(back.sources == hw.sources);
  }
}

TEST_CASE("presets load case-insensitively and from a path", "[sim][hardware]") {
  CHECK(load_hardware("a100-pcie-80gb").name == "A100-PCIe-80GB");
  const std::string path = assets_dir() + "/hardware/T4.json";
  CHECK(load_hardware(path).name == "T4");
}

TEST_CASE("bad hardware files give one clear error each", "[sim][hardware]") {
  CHECK_THROWS_WITH(load_hardware("Z80"), Catch::Contains("unknown hardware preset 'Z80'") &&
                                              Catch::Contains("A100-PCIe-80GB"));
  CHECK_THROWS_WITH(load_hardware("/nonexistent/gpu.json"), Catch::Contains("not found"));
  CHECK_THROWS_WITH(load_hardware(data("malformed.json")), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(load_hardware(data("missing-field.json")),
                    Catch::Contains("missing field 'hbm_bandwidth_gbs'"));
  CHECK_THROWS_WITH(load_hardware(data("bad-value.json")), Catch::Contains("'sm_count' must be a positive integer"));
  CHECK_THROWS_WITH(parse_hardware_json("[1,2]", "x"), Catch::Contains("expected a JSON object"));
  CHECK_THROWS_WITH(parse_hardware_json(R"({"format":"other/2"})", "x"), Catch::Contains("unknown format"));
}
