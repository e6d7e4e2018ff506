#include "flashlab/sim/core/median.hpp"

#include <algorithm>
#include <limits>

namespace flashlab::sim {

double median(std::vector<double> v) {
  if (v.empty()) return std::numeric_limits<double>::quiet_NaN();
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

Spread spread(const std::vector<double>& values) {
  if (values.empty()) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return {nan, nan, nan};
  }
  const auto [lo, hi] = std::minmax_element(values.begin(), values.end());
  return {median(values), *lo, *hi};
}

}  // namespace flashlab::sim
