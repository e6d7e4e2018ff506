#include <algorithm>

#include "sim/support.hpp"

using namespace flashlab::sim;

TEST_CASE("a name or a path: a path has a '/' or ends in .json", "[sim][assets]") {
  CHECK(names_a_file("T4.json"));
  CHECK(names_a_file("./T4"));
  CHECK(names_a_file("/tmp/x/T4"));
  CHECK_FALSE(names_a_file("T4"));
  CHECK_FALSE(names_a_file(".json"));  // only the suffix: a name
  CHECK_FALSE(names_a_file("ring-llama2-7b"));
}

TEST_CASE("the assets' names: one listing for every folder, a name letter case aside", "[sim][assets]") {
  REQUIRE_FALSE(assets_dir().empty());
  CHECK(asset_names("hardware") == list_presets());
  const std::vector<std::string> sweeps = asset_names("sweeps");
  CHECK(std::is_sorted(sweeps.begin(), sweeps.end()));
  CHECK(std::find(sweeps.begin(), sweeps.end(), "ring-llama2-7b") != sweeps.end());
  CHECK(asset_path("sweeps", "RING-LLAMA2-7B") == assets_dir() + "/sweeps/ring-llama2-7b.json");
  CHECK(asset_path("hardware", "t4") == assets_dir() + "/hardware/T4.json");
  CHECK(asset_path("hardware", "T5").empty());
  CHECK(asset_path("no-such-folder", "T4").empty());
  CHECK(asset_names("no-such-folder").empty());
}

TEST_CASE("an unknown name: one message, the known names listed", "[sim][assets]") {
  CHECK(unknown_asset_message("sweep", "x", {"a", "b"}) == "unknown sweep 'x' (known: a, b)");
  CHECK(unknown_asset_message("link", "x", {"a"}, "or a JSON file") == "unknown link 'x' (known: a; or a JSON file)");
  CHECK_THROWS_WITH(load_hardware("T5"), Catch::Contains("unknown hardware preset 'T5' (known: ") &&
                                             Catch::Contains("T4"));
  CHECK(lower("A100-PCIe") == "a100-pcie");
}
