#include "scenario_values.hpp"

#include <filesystem>
#include <stdexcept>

#include "flashlab/sim/core/json_fields.hpp"

namespace flashlab::gui {

using nlohmann::json;

namespace {
// A setting's value: "KEY must be …", the scenario's file named by its loader.
const sim::JsonFields<std::runtime_error> kSettings(std::string(), sim::FieldWording::plain);
}  // namespace

std::string text_of(const json& v, const std::string& what) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return json(v).dump();
  kSettings.wrong(what, "a number or a string like \"16K\"");
}

bool bool_of(const json& v, const std::string& what) { return kSettings.flag_of(v, what); }

double number_of(const json& v, const std::string& what) { return kSettings.number_of(v, what); }

std::string resolve_path(const std::string& p, const std::string& base_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (p.empty() || fs::path(p).is_absolute() || fs::exists(p, ec) || base_dir.empty()) return p;
  const fs::path alt = fs::path(base_dir) / p;
  return fs::exists(alt, ec) ? alt.string() : p;
}

}  // namespace flashlab::gui
