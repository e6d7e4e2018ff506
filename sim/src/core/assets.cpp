#include "flashlab/sim/core/assets.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>
#include <utility>

#include "flashlab/sim/core/closest_name.hpp"

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

namespace {

// The *.json files of root/folder as (name, path), sorted by name.
std::vector<std::pair<std::string, std::string>> json_files(const std::string& root, std::string_view folder) {
  std::vector<std::pair<std::string, std::string>> files;
  if (root.empty()) return files;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(root) / folder, ec))
    if (e.is_regular_file() && e.path().extension() == ".json")
      files.emplace_back(e.path().stem().string(), e.path().string());
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace

std::vector<std::string> asset_names(std::string_view folder) {
  std::vector<std::string> names;
  for (auto& f : json_files(assets_dir(), folder)) names.push_back(std::move(f.first));
  return names;
}

std::vector<std::string> asset_files(const std::string& root, std::string_view folder) {
  std::vector<std::string> paths;
  for (auto& f : json_files(root, folder)) paths.push_back(std::move(f.second));
  return paths;
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

std::string find_asset(const AssetKind& kind, std::string_view name_or_path, std::string* why) {
  const std::string given(name_or_path);
  if (names_a_file(name_or_path)) {
    std::error_code ec;
    if (kind.absent_path != AssetKind::AbsentPath::read && !fs::is_regular_file(given, ec)) {
      *why = kind.absent_path == AssetKind::AbsentPath::not_found
                 ? std::string(kind.file) + " file '" + given + "' not found"
                 : "cannot read '" + given + "'";
      return {};
    }
    return given;
  }
  if (!kind.plural.empty() && assets_dir().empty()) {
    *why = "cannot find the assets folder with " + std::string(kind.plural) + " (set FLASHLAB_ASSETS)";
    return {};
  }
  std::string path = asset_path(kind.folder, name_or_path);
  if (path.empty()) {
    const std::vector<std::string> known = asset_names(kind.folder);
    *why = unknown_asset_message(kind.what, name_or_path, known, kind.more);
    if (kind.suggest) why->insert(("unknown " + std::string(kind.what) + " '" + given + "'").size(), did_you_mean(given, known));
  }
  return path;
}

bool read_asset_text(const AssetKind& kind, const std::string& path, std::string* text, std::string* why) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *why = "cannot read " + std::string(kind.file) + " file '" + path + "'";
    return false;
  }
  std::ostringstream s;
  s << in.rdbuf();
  *text = s.str();
  return true;
}

}  // namespace flashlab::sim
