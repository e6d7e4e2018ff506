// How the ring's tables write their numbers: "-" for what is not known.
#pragma once

#include <cmath>
#include <limits>
#include <string>

#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis::ring_text {

inline std::string ms(double v, int decimals = 3) { return std::isfinite(v) ? sim::fixed(v, decimals) : std::string("-"); }

inline std::string pct(double f) { return std::isfinite(f) ? sim::fixed(100.0 * f, 0) + "%" : std::string("-"); }

inline std::string signed_pct(double f) {
  if (!std::isfinite(f)) return "-";
  return (f >= 0 ? "+" : "") + sim::fixed(100.0 * f, 1) + "%";
}

// (predicted − measured) / measured; NaN when either is unknown.
inline double rel_error(double predicted, double measured) {
  return measured > 0 && std::isfinite(predicted) ? (predicted - measured) / measured
                                                  : std::numeric_limits<double>::quiet_NaN();
}

}  // namespace flashlab::analysis::ring_text
