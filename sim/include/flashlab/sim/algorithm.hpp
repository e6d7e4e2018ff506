// The algorithms the simulator knows, with the pseudocode their events point into.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashlab::sim {

enum class Algorithm : std::uint8_t { standard, pytorch, fa1, fa2 };

struct AlgorithmInfo {
  Algorithm id;
  std::string_view key;     // CLI name: "standard", "pytorch", "fa1", "fa2"
  std::string_view title;   // "FlashAttention-1 (Algorithm 1)"
  std::string_view source;  // where the loop nest comes from
  std::vector<std::string> pseudocode;  // line k of the paper is pseudocode[k-1]
};

const AlgorithmInfo& algorithm_info(Algorithm a);
const std::vector<Algorithm>& all_algorithms();
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::string_view to_string(Algorithm a);

}  // namespace flashlab::sim
