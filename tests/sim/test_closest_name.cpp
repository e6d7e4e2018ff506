#include <catch2/catch.hpp>

#include "flashlab/sim/core/closest_name.hpp"

using flashlab::sim::closest_name;
using flashlab::sim::did_you_mean;

TEST_CASE("a name typed a letter or two wrong finds the known one and a far one finds nothing", "[sim][names]") {
  const std::vector<std::string> flags{"--causal", "--batch", "--heads", "--head-dim", "--kv-heads"};
  CHECK(closest_name("--casual", flags) == std::string("--causal"));  // two letters swapped
  CHECK(closest_name("--hads", flags) == std::string("--heads"));     // one missing
  CHECK(closest_name("--BATCH", flags) == std::nullopt);              // letter case aside: it is known
  CHECK(closest_name("--colour", flags) == std::nullopt);
  CHECK(closest_name("flash2", {"naive", "fa1", "fa2", "fa2_tc"}) == std::nullopt);  // three edits from fa2: too far
  CHECK(closest_name("torch_eagre", {"torch_eager", "fa2"}) == std::string("torch_eager"));
  CHECK(did_you_mean("--kv-head", flags) == " (did you mean --kv-heads?)");
  CHECK(did_you_mean("--zzz", flags).empty());
  CHECK(closest_name("x", {}) == std::nullopt);
}
