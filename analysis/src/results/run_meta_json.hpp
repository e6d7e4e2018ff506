// Where a set of runs was measured (sim::RunMeta, the device's part) as the
// results files write it: one object of the same keys, the bench's "meta"
// and the ring's "meta.device".
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "flashlab/sim/measurement/measurement.hpp"
#include "text/results_json.hpp"

namespace flashlab::analysis {

nlohmann::json run_meta_json(const sim::RunMeta& m);
// The fields of `o` into `m` (absent ones keep m's), errors naming `where`.
void run_meta_from(const results_json::Reader& rd, const nlohmann::json& o, const std::string& where, sim::RunMeta& m);

}  // namespace flashlab::analysis
