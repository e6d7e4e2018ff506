// A measured profile (sim/hardware/measured_profile.hpp: the figures, the device, the
// sweep, their JSON) read against datasheets: the matching preset, the
// targets, the report `flashlab ceilings` prints, and the side-by-side of
// `flashlab hw compare`. One header for all of it.
#pragma once

#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/profiles/hardware_compare.hpp"
#include "flashlab/analysis/profiles/profile_report.hpp"
#include "flashlab/analysis/profiles/profile_targets.hpp"
#include "flashlab/sim/hardware/measured_profile.hpp"
