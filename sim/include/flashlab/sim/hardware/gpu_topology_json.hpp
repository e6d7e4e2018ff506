// The JSON form of a GpuTopology, for the files that carry one (measured
// links, ring results): {"gpu_count", "gpus_per_node", "summary", "links":
// [[code, ...], ...], "problem" (only when the text could not be read)}.
// Derived fields: a reader parses the topology's text again rather than
// trusting them. Needs nlohmann-json (the sim library's one dependency).
#pragma once

#include <nlohmann/json.hpp>

#include "flashlab/sim/hardware/gpu_topology.hpp"

namespace flashlab::sim {

nlohmann::json gpu_topology_json(const GpuTopology& t);

}  // namespace flashlab::sim
