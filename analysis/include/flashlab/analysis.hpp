// FlashLab analysis: FLOPs, arithmetic intensity, roofline, sweeps, printers.
#pragma once

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/model/pass_run.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/analysis/model/sweep.hpp"
