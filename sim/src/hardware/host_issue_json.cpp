#include "flashlab/sim/hardware/host_issue_json.hpp"

namespace flashlab::sim {

nlohmann::json host_issue_json(const HostIssueCosts& h) {
  nlohmann::json j{{"call_us", h.call_s * 1e6},
                   {"launch_us", h.launch_s * 1e6},
                   {"exchange_us", h.exchange_s * 1e6},
                   {"gpus", h.gpus},
                   {"source", h.source}};
  if (h.exchange_sms > 0) j["exchange_sms"] = h.exchange_sms;
  return j;
}

}  // namespace flashlab::sim
