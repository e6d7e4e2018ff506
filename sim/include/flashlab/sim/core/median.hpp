// The median of a set of numbers, and its spread: the one definition every
// measurement, table and chart of the tree uses (timed runs, link figures,
// errors against the model, the GUI's step errors).
#pragma once

#include <vector>

namespace flashlab::sim {

// The middle value, or the mean of the two middle ones for an even count;
// NaN for none (missing is not zero).
double median(std::vector<double> values);

// The median, the least and the largest of a set; NaN each for none.
struct Spread {
  double median;
  double min;
  double max;
};
Spread spread(const std::vector<double>& values);

}  // namespace flashlab::sim
