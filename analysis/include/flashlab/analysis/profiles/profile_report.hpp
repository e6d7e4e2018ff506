// What `flashlab ceilings` prints about a measured profile.
#pragma once

#include <string>

#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::analysis {

// The device, every figure beside the datasheet's (and the ratio), the
// targets, the sweep and the notes.
std::string profile_report(const sim::MeasuredProfile& p, const sim::HardwareModel* datasheet);

}  // namespace flashlab::analysis
