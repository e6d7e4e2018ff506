// The JSON form of the host's issuing costs, for the files that carry them
// (measured links' "host", ring results' "host_issue"): {"call_us",
// "launch_us", "exchange_us", "gpus", "source", and "exchange_sms" when
// measured}. Each reader checks its own
// file's fields. Needs nlohmann-json (the sim library's one dependency).
#pragma once

#include <nlohmann/json.hpp>

#include "flashlab/sim/hardware/host_issue.hpp"

namespace flashlab::sim {

nlohmann::json host_issue_json(const HostIssueCosts& h);

}  // namespace flashlab::sim
