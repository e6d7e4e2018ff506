// Reading the fields of a JSON object, for every file and setting the tree
// reads (hardware presets, interconnects, rung timings, measured profiles,
// results files, labs, sweeps, scenarios): each reader names the field it
// found missing or wrong, in the wording of its file kind, and throws the file
// kind's own error type.
//
//   quoted  "ORIGIN: missing field 'A.B'"   "ORIGIN: field 'A.B' must be WHAT (got V)"
//   path    "ORIGIN: A.B: missing"          "ORIGIN: A.B: expected WHAT (got V)"
//   plain   "A.B is missing"                "A.B must be WHAT"
//
// (without an origin, no "ORIGIN: "). A field is named by the place of its
// object (`where`: "runs[2].problem", empty at the top) joined to its key; a
// null value counts as missing.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

enum class FieldWording { path, quoted, plain };

template <class Error = std::runtime_error>
class JsonFields {
 public:
  using json = nlohmann::json;

  explicit JsonFields(std::string origin, FieldWording wording = FieldWording::path)
      : origin_(std::move(origin)), wording_(wording) {}
  const std::string& origin() const { return origin_; }

  // "ORIGIN: MSG".
  [[noreturn]] void fail(const std::string& msg) const { throw Error(origin_.empty() ? msg : origin_ + ": " + msg); }
  // "ORIGIN: WHERE: WHY".
  [[noreturn]] void error(const std::string& where, const std::string& why) const { fail(where + ": " + why); }
  // The field `name` is absent.
  [[noreturn]] void missing(const std::string& name) const {
    switch (wording_) {
      case FieldWording::quoted: fail("missing field '" + name + "'");
      case FieldWording::path: fail(name + ": missing");
      case FieldWording::plain: fail(name + " is missing");
    }
    fail(name + ": missing");
  }
  // The field `name` is not WHAT; `got` (as written in the file) follows in
  // parentheses when given.
  [[noreturn]] void wrong(const std::string& name, const std::string& what, const std::string& got = {}) const {
    const std::string shown = got.empty() ? std::string() : " (got " + got + ")";
    switch (wording_) {
      case FieldWording::quoted: fail("field '" + name + "' must be " + what + shown);
      case FieldWording::path: fail(name + ": expected " + what + shown);
      case FieldWording::plain: fail(name + " must be " + what + shown);
    }
    fail(name + ": expected " + what + shown);
  }

  // "where.key", or the key alone at the top.
  static std::string join(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }
  // A value as the messages show it: the whole of it (quoted), its first 40
  // characters (path), nothing (plain).
  std::string got(const json& v) const {
    if (wording_ == FieldWording::plain) return {};
    std::string s = v.dump();
    return wording_ == FieldWording::path && s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }

  // The text as one JSON object: "not valid JSON (…)", "expected a JSON object".
  json parse_object(const std::string& text) const {
    json j;
    try {
      j = json::parse(text);
    } catch (const json::parse_error& e) {
      fail(std::string("not valid JSON (") + e.what() + ")");
    }
    if (!j.is_object()) fail("expected a JSON object");
    return j;
  }

  // The field, or nullptr when absent or null.
  const json* find(const json& o, const char* key) const {
    auto it = o.find(key);
    return it == o.end() || it->is_null() ? nullptr : &*it;
  }
  bool has(const json& o, const char* key) const { return find(o, key) != nullptr; }
  const json& member(const json& o, const std::string& where, const char* key) const {
    if (const json* v = find(o, key)) return *v;
    missing(join(where, key));
  }

  const json& object(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_object()) wrong(join(where, key), "an object", wording_ == FieldWording::plain ? "" : v.dump());
    return v;
  }
  const json& array(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_array()) wrong(join(where, key), "a list", got(v));
    return v;
  }
  // Empty when absent, unless required.
  std::string text(const json& o, const std::string& where, const char* key, bool required = false) const {
    if (!required && !has(o, key)) return {};
    return text_of(member(o, where, key), join(where, key));
  }
  std::string text_of(const json& v, const std::string& name) const {
    if (!v.is_string()) wrong(name, "a string", got(v));
    return v.get<std::string>();
  }
  i64 whole(const json& o, const std::string& where, const char* key, std::optional<i64> fallback = {}) const {
    return read_or(o, where, key, fallback, &JsonFields::whole_value);
  }
  i64 whole_value(const json& v, const std::string& name) const {
    if (!v.is_number_integer()) wrong(name, "a whole number", got(v));
    return v.get<i64>();
  }
  // A number, or "nan", "inf", "-inf" (JSON has no non-finite numbers).
  double real(const json& o, const std::string& where, const char* key, std::optional<double> fallback = {}) const {
    return read_or(o, where, key, fallback, &JsonFields::real_of);
  }
  double real_of(const json& v, const std::string& name) const {
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "nan") return std::numeric_limits<double>::quiet_NaN();
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    wrong(name, "a number", got(v));
  }
  // A JSON number.
  double number_of(const json& v, const std::string& name) const {
    if (!v.is_number()) wrong(name, "a number", got(v));
    return v.get<double>();
  }
  // A number that must be positive (or, with `positive` false, non-negative).
  double number(const json& o, const std::string& where, const char* key, bool positive = true) const {
    const std::string name = join(where, key);
    const json& v = member(o, where, key);
    const double d = number_of(v, name);
    if (positive ? !(d > 0) : !(d >= 0)) wrong(name, positive ? "positive" : "non-negative", got(v));
    return d;
  }
  bool flag(const json& o, const std::string& where, const char* key, std::optional<bool> fallback = {}) const {
    return read_or(o, where, key, fallback, &JsonFields::flag_of);
  }
  bool flag_of(const json& v, const std::string& name) const {
    if (!v.is_boolean()) wrong(name, "true or false", got(v));
    return v.get<bool>();
  }
  // A list of strings; `non_empty`: at least one.
  std::vector<std::string> strings(const json& v, const std::string& name, bool non_empty) const {
    if (!v.is_array() || (non_empty && v.empty()))
      wrong(name, non_empty ? "a non-empty array of strings" : "an array of strings");
    std::vector<std::string> out;
    for (const json& s : v) {
      if (!s.is_string()) fail(wording_ == FieldWording::quoted ? "field '" + name + "' must hold strings"
                                                                : name + ": expected strings");
      out.push_back(s.get<std::string>());
    }
    return out;
  }

 private:
  // The field read by `read`, or `fallback` when one is given and the field is absent.
  template <class T>
  T read_or(const json& o, const std::string& where, const char* key, const std::optional<T>& fallback,
            T (JsonFields::*read)(const json&, const std::string&) const) const {
    if (fallback && !has(o, key)) return *fallback;
    return (this->*read)(member(o, where, key), join(where, key));
  }

  std::string origin_;
  FieldWording wording_;
};

}  // namespace flashlab::sim
