// A measured profile (sim/measured_profile.hpp: the figures, the device, the
// sweep, their JSON) read against datasheets: the matching preset, the
// targets, the report `flashlab ceilings` prints, and the side-by-side of
// `flashlab hw compare`. One header for all of it.
#pragma once

#include "flashlab/analysis/datasheet.hpp"
#include "flashlab/analysis/hardware_compare.hpp"
#include "flashlab/analysis/profile_report.hpp"
#include "flashlab/analysis/profile_targets.hpp"
#include "flashlab/sim/measured_profile.hpp"
