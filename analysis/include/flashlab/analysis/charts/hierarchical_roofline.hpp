// The hierarchical roofline: one bandwidth ceiling per memory level (HBM, L2,
// shared memory) and one compute ceiling per dtype and unit
// (roofline_ceilings.hpp); every measured kernel run placed at its arithmetic
// intensity for each level — FLOPs and bytes from the simulator, time from the
// GPU — with the simulator's own prediction beside it (placement.hpp). Points
// above a ceiling are flagged with the likely cause, never drawn silently.
// Plain C++ (docs/roofline.md explains the reading).
#pragma once

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/roofline_ceilings.hpp"

namespace flashlab::analysis {

// ---- charts (roofline_hier_chart.cpp) ----------------------------------------------

// id "roofline-hier": a slope per memory level, a ceiling per compute peak
// (`dtype`'s tensor or CUDA-core peak drawn solid), each run as a row of points
// (one per level, same FLOP/s) with the model's prediction as crosses beside
// it; flagged points marked and explained in the notes.
ChartSpec hierarchical_roofline_chart(const HierarchicalCeilings& c, const Placement& placed,
                                      sim::DType dtype = sim::DType::fp16);
// id "bandwidth-sweep": bandwidth against working set for each kind of load,
// with the L1 (all SMs), L2 sizes and the measured ceilings marked. A profile
// without a sweep gives an empty chart whose note says so.
ChartSpec bandwidth_sweep_chart(const sim::MeasuredProfile& p);

}  // namespace flashlab::analysis
