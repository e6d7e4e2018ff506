#include "flashlab/sim/core/assets.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <system_error>

namespace flashlab::sim {

namespace fs = std::filesystem;

namespace {

fs::path exe_dir() {
  std::error_code ec;
  const fs::path p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : p.parent_path();
}

}  // namespace

std::string lower(std::string_view s) {
  std::string r(s);
  std::transform(r.begin(), r.end(), r.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return r;
}

std::string assets_dir() {
  auto has_hw = [](const fs::path& p) {
    std::error_code ec;
    return !p.empty() && fs::is_directory(p / "hardware", ec);
  };
  if (const char* env = std::getenv("FLASHLAB_ASSETS"); env != nullptr && *env != '\0') return env;
#ifdef FLASHLAB_SOURCE_ASSETS
  if (has_hw(FLASHLAB_SOURCE_ASSETS)) return FLASHLAB_SOURCE_ASSETS;
#endif
  const fs::path exe = exe_dir();
  for (const fs::path& p : {exe / "assets", exe / ".." / "assets", exe / ".." / "share" / "flashlab" / "assets"})
    if (has_hw(p)) return p.lexically_normal().string();
  return {};
}

bool names_a_file(std::string_view s) {
  constexpr std::string_view kJson = ".json";
  return s.find('/') != std::string_view::npos ||
         (s.size() > kJson.size() && s.substr(s.size() - kJson.size()) == kJson);
}

std::vector<std::string> asset_names(std::string_view folder) {
  std::vector<std::string> names;
  const std::string dir = assets_dir();
  if (dir.empty()) return names;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / folder, ec))
    if (e.is_regular_file() && e.path().extension() == ".json") names.push_back(e.path().stem().string());
  std::sort(names.begin(), names.end());
  return names;
}

std::string asset_path(std::string_view folder, std::string_view name) {
  const std::string want = lower(name);
  for (const std::string& n : asset_names(folder))
    if (lower(n) == want) return (fs::path(assets_dir()) / folder / (n + ".json")).string();
  return {};
}

std::string unknown_asset_message(std::string_view what, std::string_view name, const std::vector<std::string>& known,
                                  std::string_view more) {
  std::string list;
  for (const std::string& n : known) list += (list.empty() ? "" : ", ") + n;
  std::string m = "unknown " + std::string(what) + " '" + std::string(name) + "' (known: " + list;
  if (!more.empty()) m += "; " + std::string(more);
  return m + ")";
}

}  // namespace flashlab::sim
