// A measured ring run beside the ring's simulation: the efficiency calibrated
// from the file's one-GPU run, then per pass, GPU and step what the model
// predicts against what the events measured; as text, JSON and CSV.
#include <algorithm>
#include <cmath>
#include <limits>
#include <tuple>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/hardware/default_hardware.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/calibration/rung_timing.hpp"
#include "text/missing.hpp"
#include "text/results_json.hpp"
#include "text/ring_text.hpp"

namespace flashlab::analysis {

using nlohmann::json;

namespace {
using results_json::number_json;
using ring_text::ms;
using ring_text::rel_error;
using ring_text::signed_pct;
// What the runner's events see of a predicted pass, the busiest GPU's: its
// exchanges from its own posting to their end, summed (the comm stream's
// x_start to x_end), and its compute stream's stalls on them: after step s's
// compute until exchange s has ended, and for the backward's homecoming from
// the last step's end. A GPU waiting for its peer's matching call waits here,
// as on the GPU, where the simulation calls that time idle.
struct StreamView {
  double comm_ms = 0, exposed_ms = 0;
};
StreamView stream_view(const std::vector<sim::RingEvent>& events, sim::Pass pass, int P, int steps,
                       const std::vector<double>& t0, const std::vector<double>& t1) {
  auto cell = [&](int g, int st) { return static_cast<std::size_t>(g * steps + st); };
  std::vector<double> compute_end(t1.size(), kNaN);
  for (const sim::RingEvent& e : events)
    if (e.pass == pass && e.kind == sim::RingEventKind::compute && e.step < steps)
      compute_end[cell(e.gpu, e.step)] = e.end_s;
  StreamView v;
  for (int g = 0; g < P; ++g) {
    double comm = 0, stalled = 0, after = kNaN;
    for (int st = 0; st < steps; ++st) {
      const std::size_t c = cell(g, st);
      if (!std::isnan(compute_end[c])) after = compute_end[c];
      if (!(t1[c] >= 0)) continue;
      comm += t1[c] - t0[c];
      if (!std::isnan(after)) stalled += std::max(0.0, t1[c] - after);
      after = std::isnan(after) ? t1[c] : std::max(after, t1[c]);
    }
    v.comm_ms = std::max(v.comm_ms, comm * 1e3);
    v.exposed_ms = std::max(v.exposed_ms, stalled * 1e3);
  }
  return v;
}
}  // namespace

// ---- placement -----------------------------------------------------------------------

RingCalibration calibrate_ring_efficiency(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p,
                                          const sim::RingTopology& topo, const sim::RingComputeModel& given) {
  RingCalibration c;
  c.forward = given.efficiency;
  c.backward = given.backward_efficiency;
  const sim::MeasuredRun* one = ring_single_gpu_run(runs, p, sim::Pass::fwd);
  if (one == nullptr) {
    c.note = "compute efficiency " + sim::fixed(given.efficiency, 3) +
             " as given: no P = 1 run of the same attention in the file to calibrate it";
    return c;
  }
  sim::RingComputeModel bound = given;
  bound.efficiency = 1.0;
  bound.backward_efficiency.reset();
  sim::AttentionProblem q = one->problem;
  const sim::PassTimes* one_bwd = sim::pass_times(*one, sim::Pass::bwd);
  q.parallel_part().passes = p.backward() && one_bwd ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd;
  const sim::RingSimulation s = sim::simulate_ring(q, topo, bound);
  std::vector<std::string> capped;
  auto eff = [&](double bound_s, double measured_ms, const char* name) {
    const double e = bound_s / (measured_ms * 1e-3);
    if (e > 1) capped.push_back(std::string(name) + " " + sim::fixed(e, 2));
    return std::min(e, 1.0);
  };
  c.from_single_gpu_run = true;
  c.forward = eff(s.forward.time_s, one->time_ms_median, "forward");
  std::string what = "forward " + sim::fixed(c.forward, 3);
  if (s.backward) {
    c.backward = eff(s.backward->time_s, one_bwd->time_ms_median, "backward");
    what += ", backward " + sim::fixed(*c.backward, 3);
  }
  c.note = "compute efficiency calibrated from the P = 1 run (" + std::string(sim::ring_layout_name(q.layout())) +
           ", " + one->kernel + "): its bound over its measured time, " + what;
  if (!capped.empty()) {
    std::string list;
    for (const std::string& x : capped) list += (list.empty() ? "" : ", ") + x;
    c.note += " (capped at 1: measured faster than the bound, " + list + ")";
  }
  return c;
}

RingPlacement place_ring_run(const sim::MeasuredRun& run, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm) {
  if (run.status != sim::RunStatus::ok)
    throw std::invalid_argument("the run is " + std::string(sim::to_string(run.status)) +
                                (run.reason.empty() ? "" : ": " + run.reason) + "; nothing to place");
  RingPlacement pl;
  pl.run = run;
  pl.calibration.forward = cm.efficiency;
  pl.calibration.backward = cm.backward_efficiency;
  pl.calibration.note = "compute efficiency " + sim::fixed(cm.efficiency, 3) + " as given";
  sim::AttentionProblem p = run.problem;
  const sim::ParallelRun& pr = run.parallel_part();
  p.parallel_part().passes = pr.backward ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd;
  // The prediction launches its steps as the run did: the scratch memory and
  // the homecoming's bytes differ between fused and pairwise steps.
  sim::RingComputeModel as_run = cm;
  if (const auto steps = sim::parse_ring_steps(pr.steps)) as_run.steps = *steps;
  const auto series_of = [&](sim::Pass pass) {
    sim::TimedSeries t;
    const sim::PassTimes* times = sim::pass_times(run, pass);
    const sim::PassTimeline* m = sim::pass_timeline(run, pass);
    if (times != nullptr && times->repeats > 0) t.repeats = times->repeats;
    if (m != nullptr && m->warmup >= 0) t.warmup = m->warmup;
    return t;
  };
  pl.simulation = sim::simulate_ring_timed(p, topo, as_run, series_of(sim::Pass::fwd), series_of(sim::Pass::bwd),
                                           &pl.power_shares);
  for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
    const sim::SeriesShares& sh = pass == sim::Pass::fwd ? pl.power_shares.forward : pl.power_shares.backward;
    const sim::RungTiming* rt = sim::ring_rung(as_run, pass, p.head_dim);
    if (sh.median > 0 && rt != nullptr)
      pl.notes.push_back(std::string(pass == sim::Pass::fwd ? "the forward's" : "the backward's") +
                         " median timed run: " +
                         sim::fixed(100 * sh.median, 0) + " % of its rung time under the power limit (" +
                         rt->geometry.rung + " at " + sim::fixed(rt->capped_rate, 3) + " of its boost rate), " +
                         "its fastest " + sim::fixed(100 * sh.fastest, 0) + " %");
  }
  const sim::RingSimulation& s = pl.simulation;
  const int P = p.gpus();
  for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
    const sim::PassTimes* t = sim::pass_times(run, pass);
    const sim::PassTimeline* m = sim::pass_timeline(run, pass);
    if (t == nullptr || m == nullptr) continue;
    const sim::RingPassResult& sp = s.pass(pass);
    RingPassPlacement pp;
    pp.pass = pass;
    pp.predicted_time_ms = sp.time_s * 1e3;
    pp.measured_time_ms = t->time_ms_median;
    pp.time_error = rel_error(pp.predicted_time_ms, pp.measured_time_ms);
    pp.predicted_compute_ms = sp.compute_s * 1e3;
    pp.measured_compute_ms = m->compute_ms;
    pp.compute_error = rel_error(pp.predicted_compute_ms, pp.measured_compute_ms);
    // Communication and exposed time as the events see them (stream_view, below).
    pp.measured_comm_ms = m->comm_ms;
    pp.measured_exposed_ms = m->exposed_comm_ms;
    // The prediction per (gpu, step): its compute bar, the wait before the
    // next step, and the span of the transfers it sends or receives.
    const int steps = pass == sim::Pass::bwd && P > 1 ? P + 1 : P;
    std::vector<RingStepPlacement> grid(static_cast<std::size_t>(P * steps));
    std::vector<double> t0(grid.size(), std::numeric_limits<double>::infinity()), t1(grid.size(), -1.0);
    for (int g = 0; g < P; ++g)
      for (int st = 0; st < steps; ++st) {
        RingStepPlacement& x = grid[static_cast<std::size_t>(g * steps + st)];
        x.gpu = g;
        x.step = st;
        x.pass = pass;
        x.kv_owner = st < P ? sim::ring_kv_source(g, st, P) : g;
        x.predicted_compute_ms = x.measured_compute_ms = kNaN;
        x.predicted_compute_start_ms = x.measured_compute_start_ms = kNaN;
        x.predicted_transfer_ms = x.measured_transfer_ms = kNaN;
        x.predicted_wait_ms = 0;
        x.measured_wait_ms = kNaN;
      }
    auto cell = [&](int g, int st) -> std::size_t { return static_cast<std::size_t>(g * steps + st); };
    for (const sim::RingEvent& e : s.events) {
      if (e.pass != pass || e.step >= steps) continue;
      if (e.kind == sim::RingEventKind::compute) {
        RingStepPlacement& x = grid[cell(e.gpu, e.step)];
        x.predicted_compute_ms = e.duration_s() * 1e3;
        x.predicted_compute_start_ms = (e.start_s - sp.start_s) * 1e3;
      } else if (e.kind == sim::RingEventKind::wait) {
        // A wait after step s's compute delays step s + 1: the measured wait_ms
        // of a step is the wait before it.
        if (e.step + 1 < P) grid[cell(e.gpu, e.step + 1)].predicted_wait_ms += e.duration_s() * 1e3;
      } else if (e.kind == sim::RingEventKind::transfer) {
        // Each side's span runs from its own posting, as its comm stream's
        // events measure it: the wait for the peer's matching call included.
        for (int g : {e.gpu, e.peer}) {
          const std::size_t c = cell(g, e.step);
          t0[c] = std::min(t0[c], g == e.gpu ? e.posted_s : e.peer_posted_s);
          t1[c] = std::max(t1[c], e.end_s);
        }
      }
    }
    for (std::size_t c = 0; c < grid.size(); ++c)
      if (t1[c] >= 0) grid[c].predicted_transfer_ms = (t1[c] - t0[c]) * 1e3;
    const StreamView view = stream_view(s.events, pass, P, steps, t0, t1);
    pp.predicted_comm_ms = view.comm_ms;
    pp.comm_error = rel_error(pp.predicted_comm_ms, pp.measured_comm_ms);
    pp.predicted_exposed_ms = view.exposed_ms;
    for (const sim::MeasuredStep& ms_ : m->steps) {
      if (ms_.gpu < 0 || ms_.gpu >= P || ms_.step < 0 || ms_.step >= steps) continue;
      RingStepPlacement& x = grid[cell(ms_.gpu, ms_.step)];
      if (ms_.step < P) {
        x.measured_compute_ms = ms_.compute_end_ms - ms_.compute_start_ms;
        x.measured_compute_start_ms = ms_.compute_start_ms;
        x.measured_wait_ms = ms_.wait_ms;
      }
      if (ms_.transfer_start_ms >= 0 && ms_.transfer_end_ms >= ms_.transfer_start_ms)
        x.measured_transfer_ms = ms_.transfer_end_ms - ms_.transfer_start_ms;
    }
    for (RingStepPlacement& x : grid) {
      x.compute_error = rel_error(x.predicted_compute_ms, x.measured_compute_ms);
      x.transfer_error = rel_error(x.predicted_transfer_ms, x.measured_transfer_ms);
    }
    pp.steps = std::move(grid);
    pl.passes.push_back(std::move(pp));
  }
  if (pr.transport == "local")
    pl.notes.push_back("transport \"local\": P virtual GPUs share one device's SMs and memory; neither its compute nor "
                       "its transfer times are those of P GPUs over links");
  if (pr.forward.steps.empty()) pl.notes.push_back("the run recorded no steps: only the pass totals are placed");
  return pl;
}

RingPlacement place_ring_run(const sim::MeasuredRuns& runs, std::size_t index, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm, const sim::RungTimingSet* rungs) {
  if (index >= runs.runs.size())
    throw std::invalid_argument("run " + std::to_string(index) + " is not in the file (" +
                                std::to_string(runs.runs.size()) + " runs)");
  const sim::MeasuredRun& run = runs.runs[index];
  const sim::ParallelRun& pr = run.parallel_part();
  const sim::i64 d = run.problem.head_dim;
  const sim::RungTiming* fwd = rungs ? rungs->find(run.kernel, d) : nullptr;
  const sim::RungTiming* bwd =
      rungs && pr.backward && !pr.backward_kernel.empty() ? rungs->find(pr.backward_kernel, d) : nullptr;
  if (fwd != nullptr && (!pr.backward || bwd != nullptr)) {
    // The run's own rungs, each entry of theirs at d (one per mask where the
    // set has them: a diagonal chunk pair is timed with the causal one's).
    sim::RingComputeModel launched = cm;
    launched.forward_rung.reset();
    launched.backward_rung.reset();
    sim::RungTimingSet own{rungs->gpu, rungs->sm_count, {}};
    for (const sim::RungTiming& t : rungs->rungs)
      if (t.geometry.head_dim == d && (t.geometry.rung == run.kernel || (bwd && t.geometry.rung == pr.backward_kernel)))
        own.rungs.push_back(t);
    launched.rung_set = std::move(own);
    // The host's issuing, when the link was measured with it: one host for
    // every GPU, or one per GPU for a run of a process per GPU.
    if (!launched.host.measured()) launched.host = topo.intra.host;
    launched.host.host_per_gpu = !runs.meta.parallel_part().launcher.empty();
    RingPlacement pl = place_ring_run(run, topo, launched);
    pl.calibration = RingCalibration{};
    pl.calibration.launch_model = true;
    pl.calibration.note = "the rungs' launch model (" + run.kernel + (bwd ? " and " + pr.backward_kernel : "") +
                          " at d " + std::to_string(d) + "): " + fwd->source;
    if (launched.host.measured())
      pl.calibration.note += "; the host's issuing (" +
                             std::string(launched.host.host_per_gpu ? "a process per GPU" : "one process for every GPU") +
                             "): " + launched.host.source;
    if (!topo.intra.ring_curve.empty())
      pl.calibration.note += "; the ring's exchange: " + topo.intra.ring_curve_source;
    if (launched.host.exchange_sms > 0)
      pl.calibration.note += "; " + std::to_string(launched.host.exchange_sms) + " SMs held by the exchange's kernel";
    if (fwd->power_capped())
      pl.calibration.note += "; the power limit, fitted on one GPU: " + run.kernel + " at " +
                             sim::fixed(fwd->capped_rate, 3) + " of boost after " + sim::fixed(fwd->boost_s * 1e3, 0) +
                             " ms" + (bwd != nullptr && bwd->power_capped()
                                          ? ", " + pr.backward_kernel + " at " + sim::fixed(bwd->capped_rate, 3)
                                          : std::string());
    return pl;
  }
  RingCalibration cal = calibrate_ring_efficiency(runs, run.problem, topo, cm);
  sim::RingComputeModel calibrated = cm;
  calibrated.efficiency = cal.forward;
  calibrated.backward_efficiency = cal.backward;
  RingPlacement pl = place_ring_run(run, topo, calibrated);
  pl.calibration = std::move(cal);
  return pl;
}

std::string ring_placement_text(const RingPlacement& pl, bool per_step) {
  const sim::MeasuredRun& run = pl.run;
  const sim::ParallelRun& pr = run.parallel_part();
  const sim::RingSimulation& s = pl.simulation;
  std::string out = "Ring run " + sim::describe(s.problem) + " (" + run.kernel +
                    (pr.backward_kernel.empty() ? "" : " / " + pr.backward_kernel) +
                    (pr.transport.empty() ? "" : ", " + pr.transport) + ")\n";
  out += "  model     " + pl.calibration.note + "\n";
  for (const std::string& n : pl.notes) out += "  note      " + n + "\n";
  TextTable totals({"pass", "time ms", "predicted", "error", "compute ms", "predicted", "error", "comm ms", "predicted",
                    "error", "exposed ms", "predicted"});
  for (const RingPassPlacement& p : pl.passes)
    totals.add({std::string(sim::to_string(p.pass)), ms(p.measured_time_ms), ms(p.predicted_time_ms),
                signed_pct(p.time_error), ms(p.measured_compute_ms), ms(p.predicted_compute_ms),
                signed_pct(p.compute_error), ms(p.measured_comm_ms), ms(p.predicted_comm_ms),
                signed_pct(p.comm_error), ms(p.measured_exposed_ms), ms(p.predicted_exposed_ms)});
  out += totals.str();
  if (!per_step) return out;
  for (const RingPassPlacement& p : pl.passes) {
    out += "\n" + std::string(p.pass == sim::Pass::fwd ? "Forward" : "Backward") +
           ", per GPU and step (measured beside predicted; transfer: the span of the step's sends and receives)\n";
    TextTable t({"GPU", "step", "K/V of", "compute ms", "predicted", "error", "transfer ms", "predicted", "error",
                 "wait ms", "predicted"});
    for (const RingStepPlacement& x : p.steps)
      t.add({std::to_string(x.gpu), x.step == s.problem.gpus() ? std::to_string(x.step) + " (home)" : std::to_string(x.step),
             std::to_string(x.kv_owner), ms(x.measured_compute_ms), ms(x.predicted_compute_ms),
             signed_pct(x.compute_error), ms(x.measured_transfer_ms), ms(x.predicted_transfer_ms),
             signed_pct(x.transfer_error), ms(x.measured_wait_ms), ms(x.predicted_wait_ms)});
    out += t.str();
  }
  return out;
}

nlohmann::json ring_placement_json(const RingPlacement& pl) {
  json passes = json::array();
  for (const RingPassPlacement& p : pl.passes) {
    json steps = json::array();
    for (const RingStepPlacement& x : p.steps)
      steps.push_back(json{{"gpu", x.gpu},
                           {"step", x.step},
                           {"kv_owner", x.kv_owner},
                           {"predicted_compute_ms", number_json(x.predicted_compute_ms)},
                           {"measured_compute_ms", number_json(x.measured_compute_ms)},
                           {"compute_error", number_json(x.compute_error)},
                           {"predicted_compute_start_ms", number_json(x.predicted_compute_start_ms)},
                           {"measured_compute_start_ms", number_json(x.measured_compute_start_ms)},
                           {"predicted_transfer_ms", number_json(x.predicted_transfer_ms)},
                           {"measured_transfer_ms", number_json(x.measured_transfer_ms)},
                           {"transfer_error", number_json(x.transfer_error)},
                           {"predicted_wait_ms", number_json(x.predicted_wait_ms)},
                           {"measured_wait_ms", number_json(x.measured_wait_ms)}});
    passes.push_back(json{{"pass", std::string(sim::to_string(p.pass))},
                          {"predicted_time_ms", number_json(p.predicted_time_ms)},
                          {"measured_time_ms", number_json(p.measured_time_ms)},
                          {"time_error", number_json(p.time_error)},
                          {"predicted_compute_ms", number_json(p.predicted_compute_ms)},
                          {"measured_compute_ms", number_json(p.measured_compute_ms)},
                          {"compute_error", number_json(p.compute_error)},
                          {"predicted_comm_ms", number_json(p.predicted_comm_ms)},
                          {"measured_comm_ms", number_json(p.measured_comm_ms)},
                          {"comm_error", number_json(p.comm_error)},
                          {"predicted_exposed_ms", number_json(p.predicted_exposed_ms)},
                          {"measured_exposed_ms", number_json(p.measured_exposed_ms)},
                          {"steps", std::move(steps)}});
  }
  return json{{"problem", ring_problem_json(pl.simulation.problem)},
              {"kernel", pl.run.kernel},
              {"backward_kernel", pl.run.parallel_part().backward_kernel},
              {"transport", pl.run.parallel_part().transport},
              {"efficiency",
               {{"forward", pl.calibration.forward},
                {"backward", pl.calibration.backward ? json(*pl.calibration.backward) : json(nullptr)},
                {"from_single_gpu_run", pl.calibration.from_single_gpu_run},
                {"launch_model", pl.calibration.launch_model},
                {"note", pl.calibration.note}}},
              {"notes", pl.notes},
              // The share of each pass's rung time under the power limit in the
              // median and the fastest timed run (power_cap.hpp).
              {"power_capped_share",
               {{"forward", {{"median", pl.power_shares.forward.median}, {"fastest", pl.power_shares.forward.fastest}}},
                {"backward",
                 {{"median", pl.power_shares.backward.median}, {"fastest", pl.power_shares.backward.fastest}}}}},
              {"passes", std::move(passes)}};
}

std::vector<std::string> ring_placement_csv_header() {
  return {"pass",          "gpu",           "step",
          "kv_owner",      "compute_ms",    "predicted_compute_ms",
          "compute_error", "transfer_ms",   "predicted_transfer_ms",
          "transfer_error", "wait_ms",      "predicted_wait_ms"};
}

std::vector<std::vector<std::string>> ring_placement_csv_rows(const RingPlacement& pl) {
  std::vector<std::vector<std::string>> rows;
  auto opt = [](double v) { return std::isfinite(v) ? sim::shortest(v) : std::string(); };
  for (const RingPassPlacement& p : pl.passes)
    for (const RingStepPlacement& x : p.steps)
      rows.push_back({std::string(sim::to_string(p.pass)), std::to_string(x.gpu), std::to_string(x.step),
                      std::to_string(x.kv_owner), opt(x.measured_compute_ms), opt(x.predicted_compute_ms),
                      opt(x.compute_error), opt(x.measured_transfer_ms), opt(x.predicted_transfer_ms),
                      opt(x.transfer_error), opt(x.measured_wait_ms), opt(x.predicted_wait_ms)});
  return rows;
}

namespace {

// Every GPU of `names` is of one kind (letter case aside); "" when they differ.
std::string one_kind(const std::vector<std::string>& names) {
  if (names.empty()) return "";
  const std::string kind = sim::lower(names.front());
  for (const std::string& g : names)
    if (sim::lower(g) != kind) return "";
  return kind;
}

}  // namespace

std::optional<sim::InterconnectModel> measured_link_for(const sim::RunMeta& meta) {
  const sim::ParallelMeta& m = meta.parallel_part();
  const std::string kind = one_kind(m.gpu_names);
  if (kind.empty()) return std::nullopt;  // no GPUs, or GPUs of two kinds: no one link fits
  // Of the links measured between such GPUs: one of as many GPUs as the runs
  // had, else the most GPUs; on a tie the one with the host's issuing, then
  // the latest (the presets come sorted by id, which ends in the date).
  auto rank = [&](const sim::InterconnectModel& l) {
    return std::make_tuple(l.gpus.size() == m.gpu_names.size(), l.gpus.size(), l.host.measured());
  };
  const sim::InterconnectModel* best = nullptr;
  for (const sim::InterconnectModel& link : sim::interconnect_presets()) {
    if (link.kind != "measured" || one_kind(link.gpus) != kind) continue;
    if (best == nullptr || rank(link) >= rank(*best)) best = &link;
  }
  if (best == nullptr) return std::nullopt;
  return with_measured_host(*best);
}

sim::InterconnectModel with_measured_host(sim::InterconnectModel link) {
  const std::string kind = one_kind(link.gpus);
  if (link.host.measured() || kind.empty()) return link;
  // A link measured before the host's issuing was: the host of another
  // machine of the same GPUs (the most GPUs, then the latest), said so.
  const sim::InterconnectModel* with_host = nullptr;
  for (const sim::InterconnectModel& other : sim::interconnect_presets())
    if (other.kind == "measured" && other.host.measured() && one_kind(other.gpus) == kind &&
        (with_host == nullptr || other.gpus.size() >= with_host->gpus.size()))
      with_host = &other;
  if (with_host == nullptr) return link;
  link.host = with_host->host;
  link.host.source += " (from " + with_host->id + ": " + std::to_string(with_host->gpus.size()) +
                      " GPUs, another machine of the same kind; the exchange scaled to the GPUs of the run)";
  return link;
}

RingFileModel ring_file_model(const sim::MeasuredRuns& runs, RingFileModel m, RingFileTakes take) {
  const sim::ParallelMeta& pm = runs.meta.parallel_part();
  if (take.hw)
    if (auto hw = results_hardware(runs.meta, datasheet_presets())) m.compute.hw = *hw;
  if (take.link)
    if (auto link = measured_link_for(runs.meta)) m.topology.intra = *link;
  if (take.rungs) m.rungs = sim::rung_timing_for_gpu(runs.meta.gpu);
  if (take.host && pm.host.measured()) {
    m.topology.intra.host = pm.host;
    m.topology.intra.host.source += " (the file's own, measured after its runs)";
  }
  if (take.host && !pm.ring_exchange.empty()) {
    m.topology.intra.ring_curve = pm.ring_exchange;
    m.topology.intra.ring_curve_source = "the file's own, measured after its runs over " +
                                         std::to_string(pm.host.gpus) + " GPUs";
  }
  return m;
}

RingFileModel ring_file_model(const sim::MeasuredRuns& runs) {
  RingFileModel m;
  m.topology = sim::default_ring_topology();
  m.compute.hw = sim::load_hardware(sim::kDefaultRingHardware);
  return ring_file_model(runs, std::move(m));
}

RingScore score_ring_file(const sim::MeasuredRuns& runs, const RingFileModel& m) {
  std::vector<RingPlacement> placed;
  std::vector<std::size_t> index;
  for (std::size_t k = 0; k < runs.runs.size(); ++k) {
    if (runs.runs[k].status != sim::RunStatus::ok) continue;
    placed.push_back(place_ring_run(runs, k, m.topology, m.compute, m.rungs ? &*m.rungs : nullptr));
    index.push_back(k);
  }
  return score_ring_placements(placed, index);
}

}  // namespace flashlab::analysis
