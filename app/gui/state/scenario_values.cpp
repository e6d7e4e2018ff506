#include "scenario_values.hpp"

#include <filesystem>
#include <stdexcept>

namespace flashlab::gui {

using nlohmann::json;

std::string text_of(const json& v, const std::string& what) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return json(v).dump();
  throw std::runtime_error(what + " must be a number or a string like \"16K\"");
}

bool bool_of(const json& v, const std::string& what) {
  if (!v.is_boolean()) throw std::runtime_error(what + " must be true or false");
  return v.get<bool>();
}

double number_of(const json& v, const std::string& what) {
  if (!v.is_number()) throw std::runtime_error(what + " must be a number");
  return v.get<double>();
}

std::string resolve_path(const std::string& p, const std::string& base_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (p.empty() || fs::path(p).is_absolute() || fs::exists(p, ec) || base_dir.empty()) return p;
  const fs::path alt = fs::path(base_dir) / p;
  return fs::exists(alt, ec) ? alt.string() : p;
}

}  // namespace flashlab::gui
