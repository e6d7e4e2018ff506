// FlashLab analysis: FLOPs, arithmetic intensity, roofline, sweeps, printers.
#pragma once

#include "flashlab/analysis/csv.hpp"
#include "flashlab/analysis/pass_run.hpp"
#include "flashlab/analysis/report.hpp"
#include "flashlab/analysis/roofline.hpp"
#include "flashlab/analysis/sweep.hpp"
