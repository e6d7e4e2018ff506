#include "flashlab/sim/measurement/measurement.hpp"

#include <utility>

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

ParallelRun& MeasuredRun::parallel_part() {
  if (!parallel) parallel.emplace();
  return *parallel;
}

const ParallelRun& MeasuredRun::parallel_part() const {
  static const ParallelRun none;
  return parallel ? *parallel : none;
}

ParallelMeta& RunMeta::parallel_part() {
  if (!parallel) parallel.emplace();
  return *parallel;
}

const ParallelMeta& RunMeta::parallel_part() const {
  static const ParallelMeta none;
  return parallel ? *parallel : none;
}

const PassTimes* pass_times(const MeasuredRun& r, Pass p) {
  if (!r.parallel) return (r.direction == "bwd") == (p == Pass::bwd) ? &r : nullptr;
  if (p == Pass::fwd) return &r;
  return r.parallel->backward ? &*r.parallel->backward : nullptr;
}

void set_pass(MeasuredRun& r, Pass p, const PassTimes& times, PassTimeline timeline) {
  timeline.pass = p;
  ParallelRun& pr = r.parallel_part();
  if (p == Pass::fwd) {
    static_cast<PassTimes&>(r) = times;
    pr.forward = std::move(timeline);
    return;
  }
  MeasuredBackward& b = pr.backward.emplace();
  static_cast<PassTimes&>(b) = times;
  b.timeline = std::move(timeline);
}

const PassTimeline* pass_timeline(const MeasuredRun& r, Pass p) {
  if (!r.parallel) return nullptr;
  if (p == Pass::fwd) return &r.parallel->forward;
  return r.parallel->backward ? &r.parallel->backward->timeline : nullptr;
}

}  // namespace flashlab::sim
