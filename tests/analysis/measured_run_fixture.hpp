// A run as the runner returns it, for the tests of what analysis makes of
// runs (placement, bench tables, grades).
#pragma once

#include <string>

#include "flashlab/sim.hpp"

namespace flashlab::test {

// `ms` its median, min and max over 10 repeats; a run without a time (ms 0:
// out of memory, failed, skipped) has no repeats.
inline sim::MeasuredRun measured_run(const std::string& kernel, const std::string& model,
                                     const sim::AttentionProblem& p, sim::TileShape tiles, double ms,
                                     sim::RunStatus status = sim::RunStatus::ok) {
  sim::MeasuredRun r;
  r.kernel = kernel;
  r.model = model;
  r.problem = p;
  r.tiles = tiles;
  r.status = status;
  r.time_ms_median = r.time_ms_min = r.time_ms_max = ms;
  r.repeats = ms > 0 ? 10 : 0;
  return r;
}

}  // namespace flashlab::test
