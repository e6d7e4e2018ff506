#include "state/bench_backend.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::gui {

namespace {
const BenchBackend* g_backend = nullptr;
}

void register_bench_backend(const BenchBackend* backend) { g_backend = backend; }
const BenchBackend* bench_backend() { return g_backend; }

std::vector<BenchSweepEntry> list_sweep_files() {
  namespace fs = std::filesystem;
  std::vector<BenchSweepEntry> out;
  for (const std::string& path : sim::asset_files(sim::assets_dir(), "sweeps")) {
    BenchSweepEntry e;
    e.name = fs::path(path).stem().string();
    std::ifstream in(path);
    std::stringstream ss;
    ss << in.rdbuf();
    const auto j = nlohmann::json::parse(ss.str(), nullptr, false);
    if (j.is_object()) {
      if (j.contains("title") && j["title"].is_string()) e.title = j["title"].get<std::string>();
      if (j.contains("source") && j["source"].is_string()) e.source = j["source"].get<std::string>();
    } else {
      e.title = "(not valid JSON)";
    }
    out.push_back(std::move(e));
  }
  return out;
}

}  // namespace flashlab::gui
