#include "state/bench_backend.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

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
  std::error_code ec;
  const fs::path dir = fs::path(sim::assets_dir()) / "sweeps";
  if (!fs::is_directory(dir, ec)) return out;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.path().extension() != ".json") continue;
    BenchSweepEntry e;
    e.name = entry.path().stem().string();
    std::ifstream in(entry.path());
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
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.name < b.name; });
  return out;
}

}  // namespace flashlab::gui
