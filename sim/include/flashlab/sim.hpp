// FlashLab's memory-hierarchy simulator: the whole model behind one include.
//
//   AttentionProblem + HardwareModel + TileShape
//     -> Schedule (tile events of one head; closed forms beside them)
//     -> visitors: Counters (CounterSink), SramTracker, Cursor, TraceCsvWriter
//     -> simulate(): tiles chosen and checked, counters for all B·H heads.
#pragma once

#include "flashlab/sim/algorithm.hpp"
#include "flashlab/sim/checked.hpp"
#include "flashlab/sim/counters.hpp"
#include "flashlab/sim/cursor.hpp"
#include "flashlab/sim/event.hpp"
#include "flashlab/sim/footprint.hpp"
#include "flashlab/sim/format.hpp"
#include "flashlab/sim/hardware.hpp"
#include "flashlab/sim/hopper_pipeline.hpp"
#include "flashlab/sim/hopper_bwd_pipeline.hpp"
#include "flashlab/sim/l2.hpp"
#include "flashlab/sim/measured_profile.hpp"
#include "flashlab/sim/measurement.hpp"
#include "flashlab/sim/online_softmax.hpp"
#include "flashlab/sim/problem.hpp"
#include "flashlab/sim/problem_text.hpp"
#include "flashlab/sim/schedule.hpp"
#include "flashlab/sim/simulate.hpp"
#include "flashlab/sim/sram.hpp"
#include "flashlab/sim/tiles.hpp"
#include "flashlab/sim/trace.hpp"
#include "flashlab/sim/types.hpp"
