#include "flashlab/sim/host_issue_json.hpp"

namespace flashlab::sim {

nlohmann::json host_issue_json(const HostIssueCosts& h) {
  return {{"call_us", h.call_s * 1e6},
          {"launch_us", h.launch_s * 1e6},
          {"exchange_us", h.exchange_s * 1e6},
          {"gpus", h.gpus},
          {"source", h.source}};
}

}  // namespace flashlab::sim
