// A number nobody measured or could compute: NaN in memory, an empty cell or
// "-" when written, never 0.
#pragma once

#include <limits>

namespace flashlab::analysis {

inline constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

}  // namespace flashlab::analysis
