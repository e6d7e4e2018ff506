// The scenario files FlashLab ships (assets/scenarios/*.json), the results
// files kept beside them (bench-results*) left out: what the scenario tests walk.
#pragma once

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "flashlab/sim/core/assets.hpp"

namespace flashlab::test {

inline std::vector<std::filesystem::path> shipped_scenarios() {
  std::vector<std::filesystem::path> out;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(sim::assets_dir()) / "scenarios"))
    if (e.path().extension() == ".json" && e.path().filename().string().find("bench-results") != 0)
      out.push_back(e.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace flashlab::test
