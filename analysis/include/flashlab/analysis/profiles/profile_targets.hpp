// The targets a run of `flashlab ceilings` is held to: our copy kernel within
// 0.90× of cudaMemcpy; the tensor-core micro-benchmark within 0.90× of cuBLAS
// where it is wgmma (Hopper), within 0.85× where it is mma.sync (before
// Hopper, or a profile without wgmma); FP32 FMA within 0.85× of the datasheet
// at the observed clock.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::analysis {

struct TargetCheck {
  std::string name;        // "HBM copy vs cudaMemcpy"
  double measured = 0, reference = 0;
  double ratio = 0, goal = 0;
  bool available = false;  // both figures present
  bool met = false;
  std::string detail;      // how the reference was obtained, or why unavailable
};
inline constexpr double kCopyVsMemcpyGoal = 0.90;
inline constexpr double kWgmmaVsCublasGoal = 0.90;
inline constexpr double kMmaVsCublasGoal = 0.85;
inline constexpr double kFmaVsDatasheetGoal = 0.85;
std::vector<TargetCheck> check_targets(const sim::MeasuredProfile& p, const sim::HardwareModel* datasheet);

}  // namespace flashlab::analysis
