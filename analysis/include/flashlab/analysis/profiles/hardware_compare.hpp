// Two hardware models figure by figure (flashlab hw compare): a measured
// profile beside its datasheet, or two presets.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::analysis {

struct ComparisonRow {
  std::string figure, unit;
  double a = 0, b = 0;
  double ratio() const { return b > 0 ? a / b : 0.0; }  // a / b
};
std::vector<ComparisonRow> compare_hardware(const sim::HardwareModel& a, const sim::HardwareModel& b);

}  // namespace flashlab::analysis
