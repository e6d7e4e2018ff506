// What the results files (bench results, ring results) share: a number as JSON
// (non-finite values as the strings sim::shortest writes, JSON having none) and
// one wording for a file's mistakes, "ORIGIN: WHERE: WHY".
#pragma once

#include <cmath>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/sim/format.hpp"

namespace flashlab::analysis::results_json {

inline nlohmann::json number_json(double v) {
  return std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(sim::shortest(v));
}

[[noreturn]] inline void fail(const std::string& origin, const std::string& where, const std::string& why) {
  throw std::runtime_error(origin + ": " + where + ": " + why);
}

}  // namespace flashlab::analysis::results_json
