// What the results files (bench results, ring results) share: a number as JSON
// (non-finite values as the strings sim::shortest writes, JSON having none),
// one wording for a file's mistakes, "ORIGIN: WHERE: WHY", and the readers of
// a JSON object's fields, one per kind, each naming the field it found wrong.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::analysis::results_json {

inline nlohmann::json number_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(sim::shortest(v));
}

[[noreturn]] inline void fail(const std::string& origin, const std::string& where, const std::string& why) {
  throw std::runtime_error(origin + ": " + where + ": " + why);
}

// The fields of one file's objects: `where` is the object's path ("runs[2].problem",
// "meta"), the key is joined to it in messages; a missing field without a
// fallback, or one of another kind, fails naming it.

class Reader {
 public:
  using json = nlohmann::json;
  using i64 = sim::i64;
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  const json& member(const json& o, const std::string& where, const char* key) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) fail(origin_, join(where, key), "missing");
    return *it;
  }
  bool has(const json& o, const char* key) const { return o.contains(key) && !o[key].is_null(); }

  const json& object(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_object()) fail(origin_, join(where, key), "expected an object (got " + v.dump() + ")");
    return v;
  }
  const json& array(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_array()) fail(origin_, join(where, key), "expected a list (got " + brief(v) + ")");
    return v;
  }
  std::string text(const json& o, const std::string& where, const char* key, bool required = false) const {
    if (!required && !has(o, key)) return {};
    const json& v = member(o, where, key);
    if (!v.is_string()) fail(origin_, join(where, key), "expected a string (got " + brief(v) + ")");
    return v.get<std::string>();
  }
  i64 whole(const json& o, const std::string& where, const char* key, std::optional<i64> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    return whole_value(member(o, where, key), join(where, key));
  }
  i64 whole_value(const json& v, const std::string& where) const {
    if (!v.is_number_integer()) fail(origin_, where, "expected a whole number (got " + brief(v) + ")");
    return v.get<i64>();
  }
  double real(const json& o, const std::string& where, const char* key, std::optional<double> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    const json& v = member(o, where, key);
    const std::string w = join(where, key);
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(origin_, w, "expected a number (got " + brief(v) + ")");
  }
  bool flag(const json& o, const std::string& where, const char* key, std::optional<bool> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    const json& v = member(o, where, key);
    if (!v.is_boolean()) fail(origin_, join(where, key), "expected true or false (got " + brief(v) + ")");
    return v.get<bool>();
  }
  [[noreturn]] void error(const std::string& where, const std::string& why) const { fail(origin_, where, why); }
  const std::string& origin() const { return origin_; }

 private:
  static std::string join(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }
  static std::string brief(const json& v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }
  std::string origin_;
};


}  // namespace flashlab::analysis::results_json
