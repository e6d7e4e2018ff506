#include "flashlab/sim/measurement/measurement.hpp"

namespace flashlab::sim {

std::string_view to_string(RunStatus s) {
  switch (s) {
    case RunStatus::ok: return "ok";
    case RunStatus::oom: return "OOM";
    case RunStatus::skipped: return "skipped";
    case RunStatus::failed: return "failed";
  }
  return "?";
}

std::optional<RunStatus> parse_run_status(std::string_view s) {
  for (RunStatus r : {RunStatus::ok, RunStatus::oom, RunStatus::skipped, RunStatus::failed})
    if (s == to_string(r)) return r;
  return std::nullopt;
}

std::optional<Algorithm> model_algorithm(const MeasuredRun& r) {
  if (r.model.empty()) return std::nullopt;
  return parse_algorithm(r.model);
}

}  // namespace flashlab::sim
