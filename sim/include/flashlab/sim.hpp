// FlashLab's memory-hierarchy simulator: the whole model behind one include.
//
//   AttentionProblem + HardwareModel + TileShape
//     -> Schedule (tile events of one head; closed forms beside them)
//     -> visitors: Counters (CounterSink), SramTracker, Cursor, TraceCsvWriter
//     -> simulate(): tiles chosen and checked, counters for all B·H heads.
#pragma once

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/schedule/counters.hpp"
#include "flashlab/sim/schedule/cursor.hpp"
#include "flashlab/sim/schedule/event.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/hopper/hopper_bwd_pipeline.hpp"
#include "flashlab/sim/memory/l2.hpp"
#include "flashlab/sim/hardware/measured_profile.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/schedule/online_softmax.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/input/problem_text.hpp"
#include "flashlab/sim/schedule/schedule.hpp"
#include "flashlab/sim/memory/simulate.hpp"
#include "flashlab/sim/schedule/sram.hpp"
#include "flashlab/sim/problem/tiles.hpp"
#include "flashlab/sim/schedule/trace.hpp"
#include "flashlab/sim/core/types.hpp"
