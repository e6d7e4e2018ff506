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

namespace {

// A part made when absent, and read as an empty one when absent.
template <class T>
T& made(std::optional<T>& part) {
  if (!part) part.emplace();
  return *part;
}

template <class T>
const T& or_empty(const std::optional<T>& part) {
  static const T none;
  return part ? *part : none;
}

}  // namespace

ParallelRun& MeasuredRun::parallel_part() { return made(parallel); }
const ParallelRun& MeasuredRun::parallel_part() const { return or_empty(parallel); }
ParallelMeta& RunMeta::parallel_part() { return made(parallel); }
const ParallelMeta& RunMeta::parallel_part() const { return or_empty(parallel); }

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
