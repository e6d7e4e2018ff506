#include "flashlab/sim/measurement/measurement.hpp"

#include <utility>

#include "core/enum_names.hpp"

namespace flashlab::sim {

namespace {
constexpr detail::EnumName<RunStatus> kRunStatusNames[] = {
    {RunStatus::ok, "ok"}, {RunStatus::oom, "OOM"}, {RunStatus::skipped, "skipped"}, {RunStatus::failed, "failed"}};
static_assert(detail::lists_through(kRunStatusNames, RunStatus::failed));
}  // namespace

std::string_view to_string(RunStatus s) { return detail::name_of(kRunStatusNames, s); }

std::optional<RunStatus> parse_run_status(std::string_view s) { return detail::value_named(kRunStatusNames, s); }

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
