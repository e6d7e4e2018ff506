// What the results files (bench results, ring results, labs) share: their text
// parsed, a number as JSON (non-finite values as the strings sim::shortest
// writes, JSON having none), one wording for a file's mistakes, "ORIGIN: WHERE:
// WHY", and the reader of a JSON object's fields in that wording.
#pragma once

#include <cmath>
#include <limits>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::analysis::results_json {

// `text` as JSON, or "ORIGIN: not valid JSON: " and the parser's reason.
inline nlohmann::json parse(const std::string& text, const std::string& origin) {
  try {
    return nlohmann::json::parse(text);
  } catch (const nlohmann::json::parse_error& e) {
    throw std::runtime_error(origin + ": not valid JSON: " + e.what());
  }
}

inline nlohmann::json number_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(sim::shortest(v));
}

[[noreturn]] inline void fail(const std::string& origin, const std::string& where, const std::string& why) {
  sim::JsonFields<std::runtime_error>(origin).error(where, why);
}

// The fields of one file's objects: `where` is the object's path ("runs[2].problem",
// "meta"), the key is joined to it in messages; a missing field without a
// fallback, or one of another kind, fails naming it (sim/core/json_fields.hpp).
using Reader = sim::JsonFields<std::runtime_error>;

}  // namespace flashlab::analysis::results_json
