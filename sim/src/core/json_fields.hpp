// Reading the fields of a preset file (hardware, interconnect): one wording
// for every mistake, each message "ORIGIN: field 'NAME' ...", thrown as the
// file kind's own error type.
#pragma once

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace flashlab::sim::json_fields {

using nlohmann::json;

template <class Error>
[[noreturn]] void fail(const std::string& origin, const std::string& msg) {
  throw Error(origin + ": " + msg);
}

// The text as one JSON object; throws Error "ORIGIN: not valid JSON (...)" or
// "ORIGIN: expected a JSON object".
template <class Error>
json parse_object(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail<Error>(origin, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail<Error>(origin, "expected a JSON object");
  return j;
}

// `shown` names the field in messages when it sits inside a list ("curve[3].gbs").
template <class Error>
const json& field(const json& j, const char* name, const std::string& origin, const std::string& shown = {}) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null())
    fail<Error>(origin, "missing field '" + (shown.empty() ? std::string(name) : shown) + "'");
  return *it;
}

// A number that must be positive (or, with `positive` false, non-negative).
template <class Error>
double number(const json& j, const char* name, const std::string& origin, bool positive = true,
              const std::string& shown = {}) {
  const std::string n = shown.empty() ? std::string(name) : shown;
  const json& v = field<Error>(j, name, origin, n);
  if (!v.is_number()) fail<Error>(origin, "field '" + n + "' must be a number (got " + v.dump() + ")");
  const double d = v.get<double>();
  if (positive ? !(d > 0) : !(d >= 0))
    fail<Error>(origin, "field '" + n + "' must be " + (positive ? "positive" : "non-negative") + " (got " +
                            v.dump() + ")");
  return d;
}

// A list of strings; `non_empty`: at least one.
template <class Error>
std::vector<std::string> strings(const json& v, const char* name, const std::string& origin, bool non_empty) {
  if (!v.is_array() || (non_empty && v.empty()))
    fail<Error>(origin, std::string("field '") + name + "' must be " +
                            (non_empty ? "a non-empty array of strings" : "an array of strings"));
  std::vector<std::string> out;
  for (const json& s : v) {
    if (!s.is_string()) fail<Error>(origin, std::string("field '") + name + "' must hold strings");
    out.push_back(s.get<std::string>());
  }
  return out;
}

// The whole file; throws Error "cannot read WHAT file 'PATH'".
template <class Error>
std::string read_file(const std::filesystem::path& p, const std::string& what) {
  std::ifstream in(p, std::ios::binary);
  if (!in) throw Error("cannot read " + what + " file '" + p.string() + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace flashlab::sim::json_fields
