// The ceilings' checked CUDA calls: kernels/src/device/cuda_check.hpp throwing
// MeasureError, so that `flashlab ceilings` prints one line (file:line, the
// call) and exits 2 instead of crashing, and one failed figure leaves the
// others standing.
#pragma once

#include "device/cuda_check.hpp"
#include "flashlab/ceilings/ceilings.hpp"

#define CEILINGS_CHECK(call) FLASHLAB_CUDA_CHECK_AS(::flashlab::ceilings::MeasureError, call)
#define CEILINGS_LAUNCH_CHECK(name) FLASHLAB_LAUNCH_CHECK_AS(::flashlab::ceilings::MeasureError, name)
