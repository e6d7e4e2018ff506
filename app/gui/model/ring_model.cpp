#include "ring_model.hpp"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <limits>
#include <stdexcept>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/median.hpp"
#include "flashlab/sim/problem/attention_models.hpp"

namespace flashlab::gui {

bool Inputs::Ring::operator==(const Ring& o) const {
  return model == o.model && heads == o.heads && kv_heads == o.kv_heads && head_dim == o.head_dim &&
         batch == o.batch && seq == o.seq && gpus == o.gpus && gpus_per_node == o.gpus_per_node &&
         layout == o.layout && causal == o.causal && passes == o.passes && dtype == o.dtype &&
         intra == o.intra && inter == o.inter && efficiency == o.efficiency && compare_layouts == o.compare_layouts &&
         calibrate == o.calibrate && run_choice == o.run_choice && steps == o.steps;
}

std::string ring_hardware_key(const Inputs& in) { return in.use_hw_file ? "file:" + in.hw_file : in.hw_preset; }

bool ring_needs_recompute(const AppState& s) {
  const RingState& r = s.ring;
  return r.dirty || s.inputs.ring != r.applied || ring_hardware_key(s.inputs) != r.applied_hardware ||
         r.results.generation != r.applied_results;
}

std::string ring_model_label(const sim::AttentionModel& m) {
  return std::string(m.label) + " (H " + std::to_string(m.heads) + ", H_kv " + std::to_string(m.kv_heads) + ", d " +
         std::to_string(m.head_dim) + ")";
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

using sim::lower;

bool contains(const std::string& text, const char* what) { return text.find(what) != std::string::npos; }

// A typed whole number ≥ 1 (sizes take suffixes: "32K"); an error naming the field otherwise.
bool parse_count(const std::string& text, const std::string& name, const char* key, sim::i64& out, RingModel& m) {
  const auto v = sim::parse_size(text);
  if (!v || *v < 1) {
    m.errors.push_back(name + ": '" + text + "' is not a whole number ≥ 1");
    m.bad_fields.emplace_back(key);
    return false;
  }
  out = *v;
  return true;
}

// "0.6" or "60%": a finite number; the range is validate()'s to judge.
std::optional<double> parse_fraction(const std::string& text) {
  std::string t = text;
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.back()))) t.pop_back();
  while (!t.empty() && std::isspace(static_cast<unsigned char>(t.front()))) t.erase(t.begin());
  bool percent = false;
  if (!t.empty() && t.back() == '%') {
    percent = true;
    t.pop_back();
  }
  if (t.empty()) return std::nullopt;
  char* end = nullptr;
  const double v = std::strtod(t.c_str(), &end);
  if (end != t.c_str() + t.size() || !std::isfinite(v)) return std::nullopt;
  return percent ? v / 100 : v;
}

// What the ring's fields are called in messages.
const sim::ProblemFieldNames& ring_field_names() {
  static const sim::ProblemFieldNames names{"batch B", "heads H", "sequence length N", "key/value length",
                                            "head dim d", "dtype", "SRAM size M", "B_r", "B_c",
                                            "key/value heads H_kv", "GPUs P"};
  return names;
}

// A field the problem's errors are about, as the window's key: a model's
// shape (H, H_kv, d) is the model's choice unless the shape is custom.
void blame(const sim::ProblemError& e, bool custom, RingModel& m) {
  for (sim::ProblemField f : e.fields) {
    const bool shape = f == sim::ProblemField::heads || f == sim::ProblemField::kv_heads ||
                       f == sim::ProblemField::head_dim;
    m.bad_fields.emplace_back(shape && !custom ? std::string("model") : std::string(sim::problem_field_key(f)));
  }
}

// The ring's problem as typed: the model's shape (or the custom one), B, N, P,
// the layout, the mask, the dtype and the passes, parsed and checked by the
// simulator's own parser (what the one-GPU controls and flashlab ring use);
// false, with each error and its field in `m`, when it is not a usable problem.
bool parse_problem(const Inputs::Ring& in, sim::AttentionProblem& p, RingModel& m) {
  const bool custom = in.model == "custom";
  sim::ProblemText text;
  if (custom) {
    text.heads = in.heads;
    text.kv_heads = in.kv_heads;
    text.head_dim = in.head_dim;
  } else if (const sim::AttentionModel* am = sim::find_attention_model(in.model)) {
    text.heads = std::to_string(am->heads);
    text.kv_heads = std::to_string(am->kv_heads);
    text.head_dim = std::to_string(am->head_dim);
  } else {
    m.errors.push_back("unknown model '" + in.model + "' (" + sim::attention_model_ids() + ", or custom)");
    m.bad_fields.emplace_back("model");
    return false;
  }
  text.batch = in.batch;
  text.seq = in.seq;
  text.gpus = in.gpus;
  text.layout = in.layout;
  text.passes = in.passes;
  text.causal = in.causal;
  text.dtype = std::string(sim::to_string(in.dtype));
  const sim::ParsedProblem parsed = sim::parse_problem(text, ring_field_names());
  for (const sim::ProblemError& e : parsed.errors) {
    m.errors.push_back(e.message);
    blame(e, custom, m);
  }
  if (!parsed.ok()) return false;
  if (parsed.problem.gpus() > kRingMaxGpus) {
    m.errors.push_back("GPUs P: the view draws 1 to " + std::to_string(kRingMaxGpus) + " GPUs (a row each), not " +
                       std::to_string(parsed.problem.gpus()));
    m.bad_fields.emplace_back("gpus");
    return false;
  }
  p = parsed.problem;
  return true;
}

RingBarKind bar_kind(sim::RingEventKind k) {
  switch (k) {
    case sim::RingEventKind::compute: return RingBarKind::compute;
    case sim::RingEventKind::transfer: return RingBarKind::transfer;
    case sim::RingEventKind::wait: return RingBarKind::wait;
    case sim::RingEventKind::idle: return RingBarKind::idle;
  }
  return RingBarKind::idle;
}

void index_bars(RingLane& lane) {
  std::stable_sort(lane.bars.begin(), lane.bars.end(), [](const RingBar& a, const RingBar& b) {
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.start_s < b.start_s;
  });
  lane.first_bar.assign(static_cast<size_t>(lane.gpus) + 1, lane.bars.size());
  for (size_t k = lane.bars.size(); k-- > 0;) {
    const int g = lane.bars[k].gpu;
    if (g >= 0 && g < lane.gpus) lane.first_bar[static_cast<size_t>(g)] = k;
  }
  // A GPU without bars starts where the next one does.
  for (int g = lane.gpus - 1; g >= 0; --g)
    lane.first_bar[static_cast<size_t>(g)] = std::min(lane.first_bar[static_cast<size_t>(g)], lane.first_bar[static_cast<size_t>(g) + 1]);
}

std::string layout_words(sim::RingLayout l) { return std::string(sim::ring_layout_info(l).words); }

RingLane simulated_lane(const sim::RingSimulation& sim, const std::string& title) {
  RingLane lane;
  lane.title = title;
  lane.gpus = sim.problem.gpus();
  lane.end_s = sim.time_s;
  lane.backward_start_s = sim.backward ? sim.backward->start_s : -1;
  lane.bars.reserve(sim.events.size());
  for (const sim::RingEvent& e : sim.events) {
    RingBar b;
    b.gpu = e.gpu;
    b.step = e.step;
    b.pass = e.pass;
    b.kind = bar_kind(e.kind);
    b.start_s = e.start_s;
    b.end_s = e.end_s;
    b.kv_owner = e.kv_owner;
    b.peer = e.peer;
    b.gradients = e.gradients;
    b.crosses_nodes = e.crosses_nodes;
    b.bytes = e.bytes;
    b.pairs = e.pairs;
    b.predicted_s = b.error = kNaN;
    if (b.kind == RingBarKind::compute && !(b.end_s > b.start_s)) continue;  // every pair skipped: nothing to draw
    lane.bars.push_back(b);
    if (b.kind == RingBarKind::transfer && e.posted_s < e.start_s) {
      // Before it: the receive posted, the sender not there yet.
      RingBar w = b;
      w.kind = RingBarKind::posted;
      w.start_s = e.posted_s;
      w.end_s = e.start_s;
      w.bytes = 0;
      lane.bars.push_back(w);
    }
  }
  index_bars(lane);
  return lane;
}

bool is_example(const sim::MeasuredRuns& runs, const sim::MeasuredRun& r) {
  return contains(lower(r.parallel_part().transport), "example") || contains(lower(runs.meta.gpu), "example");
}

// The measured run's bars: the median run's steps, the backward's after the
// forward's measured time (each pass's times start at its own origin).
RingLane measured_lane(const sim::MeasuredRuns& runs, const analysis::RingPlacement& pl) {
  const sim::MeasuredRun& run = pl.run;
  const sim::ParallelRun& pr = run.parallel_part();
  const int P = run.problem.gpus();
  RingLane lane;
  lane.measured = true;
  lane.example = is_example(runs, run);
  lane.gpus = P;
  const std::string what = lane.example ? "EXAMPLE (not measured)"
                           : pr.transport == "local" ? "measured on ONE device (" + std::to_string(P) + " virtual GPUs)"
                                                      : "measured";
  // The part before the first ':' is what a narrow timeline keeps.
  lane.title = what + ", " + pr.steps + " steps: " + run.kernel +
               (pr.backward_kernel.empty() ? "" : " / " + pr.backward_kernel) +
               (lane.example || pr.transport == "local" ? "" : " on " + ring_run_machine(runs, run)) +
               (pr.transport.empty() || pr.transport == "nccl" ? "" : ", transport \"" + pr.transport + "\"");
  auto placed = [&](sim::Pass pass, int gpu, int step) -> const analysis::RingStepPlacement* {
    for (const analysis::RingPassPlacement& pp : pl.passes)
      if (pp.pass == pass)
        for (const analysis::RingStepPlacement& x : pp.steps)
          if (x.gpu == gpu && x.step == step) return &x;
    return nullptr;
  };
  double offset = 0;
  for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
    const sim::PassTimes* times = sim::pass_times(run, pass);
    const sim::PassTimeline* mp = sim::pass_timeline(run, pass);
    if (!times || !mp) continue;
    if (pass == sim::Pass::bwd) lane.backward_start_s = offset;
    for (const sim::MeasuredStep& st : mp->steps) {
      if (st.gpu < 0 || st.gpu >= P) continue;
      const analysis::RingStepPlacement* x = placed(pass, st.gpu, st.step);
      RingBar b;
      b.gpu = st.gpu;
      b.step = st.step;
      b.pass = pass;
      b.kv_owner = st.kv_owner;
      b.predicted_s = b.error = kNaN;
      if (st.step < P && st.compute_end_ms > st.compute_start_ms) {
        b.kind = RingBarKind::compute;
        b.start_s = offset + st.compute_start_ms * 1e-3;
        b.end_s = offset + st.compute_end_ms * 1e-3;
        if (x) {
          b.placed = true;
          b.predicted_s = x->predicted_compute_ms * 1e-3;
          b.error = x->compute_error;
        }
        lane.bars.push_back(b);
      }
      if (st.step < P && st.wait_ms > 0 && std::isfinite(st.wait_ms)) {
        RingBar w = b;
        w.kind = RingBarKind::wait;
        w.end_s = offset + st.compute_start_ms * 1e-3;
        w.start_s = w.end_s - st.wait_ms * 1e-3;
        w.placed = false;
        w.predicted_s = w.error = kNaN;
        if (x) w.predicted_s = x->predicted_wait_ms * 1e-3;
        lane.bars.push_back(w);
      }
      if (st.transfer_start_ms >= 0 && st.transfer_end_ms > st.transfer_start_ms) {
        RingBar t = b;
        t.kind = RingBarKind::transfer;
        t.start_s = offset + st.transfer_start_ms * 1e-3;
        t.end_s = offset + st.transfer_end_ms * 1e-3;
        t.bytes = st.bytes_received;
        t.gradients = pass == sim::Pass::bwd && st.step >= P;
        t.placed = false;
        t.predicted_s = t.error = kNaN;
        if (x) {
          t.placed = true;
          t.predicted_s = x->predicted_transfer_ms * 1e-3;
          t.error = x->transfer_error;
        }
        lane.bars.push_back(t);
      }
    }
    offset += times->time_ms_median * 1e-3;
    lane.end_s = offset;
  }
  for (const RingBar& b : lane.bars) lane.end_s = std::max(lane.end_s, b.end_s);
  index_bars(lane);
  return lane;
}

std::vector<RingMeasuredView::PassErrors> step_errors(const analysis::RingPlacement& pl) {
  std::vector<RingMeasuredView::PassErrors> out;
  for (const analysis::RingPassPlacement& pp : pl.passes) {
    RingMeasuredView::PassErrors e;
    e.pass = pp.pass;
    std::vector<double> ce, te;
    // A step's error of one kind: kept when placed (finite), and the worst so far with where it is.
    const auto take = [](const analysis::RingStepPlacement& x, double error, std::vector<double>& all, double& worst,
                         int& worst_gpu, int& worst_step) {
      if (!std::isfinite(error)) return;
      all.push_back(error);
      if (worst_gpu < 0 || std::fabs(error) > std::fabs(worst)) {
        worst = error;
        worst_gpu = x.gpu;
        worst_step = x.step;
      }
    };
    for (const analysis::RingStepPlacement& x : pp.steps) {
      take(x, x.compute_error, ce, e.worst_compute_error, e.worst_compute_gpu, e.worst_compute_step);
      take(x, x.transfer_error, te, e.worst_transfer_error, e.worst_transfer_gpu, e.worst_transfer_step);
    }
    e.placed_steps = static_cast<int>(std::max(ce.size(), te.size()));
    e.median_compute_error = sim::median(ce);
    e.median_transfer_error = sim::median(te);
    out.push_back(e);
  }
  return out;
}

// Which GPU computes each chunk pair, and when: the layout's steps, from ring_step_view.
void build_cells(RingModel& m) {
  const sim::RingPartition& part = m.simulation.partition;
  const int P = part.gpus;
  const int C = static_cast<int>(part.chunks.size());
  m.chunks = C;
  m.cells.assign(static_cast<size_t>(C) * static_cast<size_t>(C), RingPairCell{});
  m.pairs_total.assign(static_cast<size_t>(P), 0);
  m.blocks_total.assign(static_cast<size_t>(P), 0);
  for (int s = 0; s < P; ++s) {
    const sim::RingStepView v = sim::ring_step_view(part, s, m.problem.causal);
    for (int r = 0; r < P; ++r)
      for (const sim::RingPairView& b : v.blocks[static_cast<size_t>(r)]) {
        if (b.q_chunk < 0 || b.q_chunk >= C || b.kv_chunk < 0 || b.kv_chunk >= C) continue;
        m.cells[static_cast<size_t>(b.q_chunk) * static_cast<size_t>(C) + static_cast<size_t>(b.kv_chunk)] = {r, s, b.visibility, b.pairs};
        m.pairs_total[static_cast<size_t>(r)] += b.pairs;
        if (b.visibility != sim::ChunkVisibility::none) m.blocks_total[static_cast<size_t>(r)] += 1;
      }
  }
}

void place_measured(AppState& s, RingModel& m) {
  RingResults& res = s.ring.results;
  RingMeasuredView& mv = m.measured;
  if (!res.have) return;
  const Inputs::Ring& in = s.inputs.ring;
  const int k = match_ring_run(res.runs, m.problem, in.steps, in.run_choice);
  if (k < 0) {
    std::string why = "no run in " + res.source + " measured " + sim::describe(m.problem);
    for (size_t j = 0; j < res.runs.runs.size(); ++j)
      if (res.runs.runs[j].problem == m.problem)
        why = "run " + std::to_string(j + 1) + " of this problem is " + std::string(sim::to_string(res.runs.runs[j].status)) +
              (res.runs.runs[j].reason.empty() ? "" : ": " + res.runs.runs[j].reason);
    if (!res.runs.runs.empty()) {
      why += "; the file has ";
      for (size_t j = 0; j < res.runs.runs.size() && j < 3; ++j) why += (j ? "; " : "") + ring_run_label(res.runs.runs[j], j);
      if (res.runs.runs.size() > 3) why += "; … (pick one below)";
    }
    mv.why_none = why;
    return;
  }
  const sim::MeasuredRun& run = res.runs.runs[static_cast<size_t>(k)];
  const sim::ParallelRun& pr = run.parallel_part();
  try {
    mv.placement = in.calibrate ? analysis::place_ring_run(res.runs, static_cast<size_t>(k), m.topology, m.compute,
                                                           res.rungs ? &*res.rungs : nullptr)
                                : analysis::place_ring_run(run, m.topology, m.compute);
  } catch (const std::exception& e) {
    mv.why_none = "run " + std::to_string(k + 1) + " cannot be placed beside the model: " + e.what();
    return;
  }
  mv.run = k;
  const sim::ParallelMeta& meta = res.runs.meta.parallel_part();
  const bool example = is_example(res.runs, run);
  mv.label = run.kernel + (pr.backward_kernel.empty() ? "" : " / " + pr.backward_kernel) + ", " + pr.steps +
             " steps" + (example ? "" : ", on " + ring_run_machine(res.runs, run, true)) +
             (pr.transport == "nccl" ? " over NCCL" + (meta.nccl_version.empty() ? "" : " " + meta.nccl_version) : "");
  if (example)
    mv.warning = "EXAMPLE, NOT A MEASUREMENT (transport \"" + pr.transport +
                 "\"): it shows how a measured run is drawn; a file from flashlab bench --gpus replaces it";
  else if (pr.transport == "local")
    mv.warning = "transport \"local\": " + std::to_string(run.problem.gpus()) +
                 " virtual GPUs on ONE device: they share its SMs and memory, and its transfers are device copies, "
                 "not links; neither its compute nor its transfer times are those of GPUs over links";
  else if (pr.transport != "nccl")
    mv.warning = "transport \"" + pr.transport + "\": not a run over GPU links (flashlab bench --gpus writes \"nccl\")";
  mv.errors = step_errors(*mv.placement);
  if (const sim::MeasuredRun* one = analysis::ring_single_gpu_run(res.runs, run.problem, sim::Pass::fwd)) {
    double t1 = one->time_ms_median, t = run.time_ms_median;
    const sim::PassTimes* one_bwd = sim::pass_times(*one, sim::Pass::bwd);
    const bool both = !pr.backward || (one_bwd && one_bwd->time_ms_median > 0);
    if (pr.backward && both) {
      t1 += one_bwd->time_ms_median;
      t += pr.backward->time_ms_median;
    }
    if (both && t > 0) {
      mv.single_gpu_ms = t1;
      mv.scaling_efficiency = t1 / (run.problem.gpus() * t);
    }
  }
  // The prediction drawn above the run is the placement's: same efficiency as its errors.
  m.simulation = mv.placement->simulation;
  m.compute.efficiency = mv.placement->calibration.forward;
  m.compute.backward_efficiency = mv.placement->calibration.backward;
  m.efficiency_note = mv.placement->calibration.note;
  for (const std::string& n : mv.placement->notes)
    if (pr.transport != "local" || !contains(n, "local")) m.notes.push_back(n);
}

}  // namespace

int match_ring_run(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p, const std::string& steps,
                   int preferred) {
  auto usable = [&](size_t k) {
    const sim::MeasuredRun& r = runs.runs[k];
    return r.status == sim::RunStatus::ok && r.problem == p;
  };
  if (preferred >= 0 && static_cast<size_t>(preferred) < runs.runs.size() && usable(static_cast<size_t>(preferred)) &&
      (steps.empty() || runs.runs[static_cast<size_t>(preferred)].parallel_part().steps == steps))
    return preferred;
  const std::string wanted = steps.empty() ? "fused" : steps;
  for (size_t k = 0; k < runs.runs.size(); ++k)
    if (usable(k) && runs.runs[k].parallel_part().steps == wanted) return static_cast<int>(k);
  for (size_t k = 0; k < runs.runs.size(); ++k)
    if (usable(k)) return static_cast<int>(k);
  return -1;
}

std::vector<std::string> ring_run_steps(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p) {
  std::vector<std::string> out;
  for (const char* steps : {"fused", "pairwise"})
    for (const sim::MeasuredRun& r : runs.runs)
      if (r.status == sim::RunStatus::ok && r.problem == p && r.parallel_part().steps == steps) {
        out.emplace_back(steps);
        break;
      }
  return out;
}

int ring_run_to_open(const sim::MeasuredRuns& runs, const std::string& steps) {
  const std::string wanted = steps.empty() ? "fused" : steps;
  auto first = [&](auto&& take) {
    for (size_t k = 0; k < runs.runs.size(); ++k)
      if (runs.runs[k].status == sim::RunStatus::ok && take(runs.runs[k])) return static_cast<int>(k);
    return -1;
  };
  for (const auto& take : std::vector<std::function<bool(const sim::MeasuredRun&)>>{
           [&](const sim::MeasuredRun& r) { return r.problem.gpus() > 1 && r.parallel_part().steps == wanted; },
           [](const sim::MeasuredRun& r) { return r.problem.gpus() > 1; },
           [](const sim::MeasuredRun&) { return true; }})
    if (const int k = first(take); k >= 0) return k;
  return -1;
}

std::string ring_run_label(const sim::MeasuredRun& run, size_t k) {
  const sim::AttentionProblem& p = run.problem;
  const std::string id = analysis::ring_model_id(p);
  const sim::AttentionModel* m = id.empty() ? nullptr : sim::find_attention_model(id);
  const std::string model = m ? std::string(m->label)
                              : "H " + std::to_string(p.heads) + ", H_kv " + std::to_string(p.h_kv()) + ", d " +
                                    std::to_string(p.head_dim);
  return "run " + std::to_string(k + 1) + ": " + model + ", N " + analysis::format_tick(static_cast<double>(p.seq_q), analysis::TickFormat::binary) +
         (p.batch == 1 ? "" : ", B " + std::to_string(p.batch)) + ", " + std::to_string(p.gpus()) +
         (p.gpus() == 1 ? " GPU" : " GPUs") + (p.gpus() == 1 ? "" : " " + layout_words(p.layout())) +
         ", " + std::string(sim::to_string(p.passes())) + ", " + run.parallel_part().steps + " steps" +
         (run.status == sim::RunStatus::ok ? "" : " (" + std::string(sim::to_string(run.status)) + ")");
}

std::string ring_run_machine(const sim::MeasuredRuns& runs, const sim::MeasuredRun& run, bool brief) {
  const sim::ParallelMeta& meta = runs.meta.parallel_part();
  const std::string gpu = runs.meta.gpu.empty() ? std::string("an unnamed GPU") : runs.meta.gpu;
  if (run.parallel_part().transport == "local")
    return std::to_string(run.problem.gpus()) + " virtual GPUs on one " + gpu;
  if (meta.gpu_names.empty()) return gpu;
  if (brief) {
    const std::string code = analysis::uniform_link_code(meta.gpu_topology);
    return std::to_string(meta.gpu_names.size()) + "× " + analysis::gpu_kinds(meta.gpu_names) +
           (code.empty() ? "" : ", " + code + " links");
  }
  return analysis::gpus_and_links(meta.gpu_names, meta.gpu_topology, true);
}

void ring_inputs_from_run(Inputs::Ring& in, const sim::MeasuredRuns& runs, int k) {
  if (k < 0 || static_cast<size_t>(k) >= runs.runs.size()) return;
  const sim::MeasuredRun& run = runs.runs[static_cast<size_t>(k)];
  ring_inputs_from_problem(in, run.problem);
  in.steps = run.parallel_part().steps;
  in.run_choice = k;
}

void ring_inputs_from_problem(Inputs::Ring& in, const sim::AttentionProblem& p) {
  const std::string id = analysis::ring_model_id(p);
  in.model = id.empty() ? "custom" : id;
  in.heads = std::to_string(p.heads);
  in.kv_heads = std::to_string(p.h_kv());
  in.head_dim = std::to_string(p.head_dim);
  in.batch = std::to_string(p.batch);
  in.seq = std::to_string(p.seq_q);
  in.gpus = std::to_string(p.gpus());
  in.layout = p.layout();
  in.causal = p.causal;
  in.dtype = p.dtype;
  in.passes = p.passes();
}

void recompute_ring(AppState& s) {
  const auto t0 = Clock::now();
  RingState& rs = s.ring;
  const Inputs::Ring& in = s.inputs.ring;
  const int keep_step = rs.model.valid ? rs.model.step.step : 0;
  RingModel m;
  m.generation = rs.model.generation + 1;
  std::vector<std::string>& errors = m.errors;

  sim::AttentionProblem& p = m.problem;
  // The problem's errors and the machine's are reported together: one does not
  // hide the other.
  const bool problem_ok = parse_problem(in, p, m);
  bool parsed = true;
  sim::i64 per_node = 0;
  if (parse_count(in.gpus_per_node, "GPUs per node", "gpus_per_node", per_node, m)) {
    per_node = std::min<sim::i64>(per_node, 1 << 20);  // any count above P means one node
  } else {
    parsed = false;
  }

  m.topology.gpus_per_node = static_cast<int>(std::max<sim::i64>(per_node, 1));
  for (const auto& [text, link, key, name] :
       {std::tuple<const std::string&, sim::InterconnectModel*, const char*, const char*>{in.intra, &m.topology.intra, "intra", "intra-node link"},
        std::tuple<const std::string&, sim::InterconnectModel*, const char*, const char*>{in.inter, &m.topology.inter, "inter", "inter-node link"}}) {
    try {
      *link = analysis::with_measured_host(sim::load_interconnect(text));
    } catch (const std::exception& e) {
      errors.push_back(std::string(name) + ": " + e.what());
      m.bad_fields.emplace_back(key);
      parsed = false;
    }
  }
  // An open results file's own host and ring exchange, measured in its call,
  // over a measured link's (as flashlab ring --results places it).
  if (s.ring.results.have && m.topology.intra.kind == "measured") {
    analysis::RingFileModel own;
    own.topology = m.topology;
    analysis::RingFileTakes takes;
    takes.hw = takes.link = takes.rungs = false;
    m.topology = analysis::ring_file_model(s.ring.results.runs, own, takes).topology;
  }

  const auto eff = parse_fraction(in.efficiency);
  if (!eff) {
    errors.push_back("efficiency: '" + in.efficiency + "' is not a number (a fraction in (0, 1], e.g. 0.6 or 60%)");
    m.bad_fields.emplace_back("efficiency");
    parsed = false;
  } else {
    m.compute.efficiency = *eff;
  }

  // The hardware: the app's current preset or profile (the one-GPU controls' Memory section).
  const std::string hw_name = s.inputs.use_hw_file ? s.inputs.hw_file : s.inputs.hw_preset;
  if (hw_name.empty()) {
    errors.push_back(s.inputs.use_hw_file ? "hardware profile: type the path of a JSON profile"
                                          : "choose a hardware preset");
    parsed = false;
  } else if (s.model.hw.name == hw_name || (!s.model.hw.provenance.empty() && s.model.hw.provenance == "file:" + hw_name)) {
    m.compute.hw = s.model.hw;
  } else if (rs.model.compute.hw.name == hw_name || rs.model.compute.hw.provenance == "file:" + hw_name) {
    m.compute.hw = rs.model.compute.hw;
  } else {
    try {
      m.compute.hw = sim::load_hardware(hw_name);
      if (s.inputs.use_hw_file && m.compute.hw.provenance.empty()) m.compute.hw.provenance = "file:" + hw_name;
    } catch (const std::exception& e) {
      errors.push_back(std::string("hardware: ") + e.what());
      parsed = false;
    }
  }

  if (parsed) {
    // The machine's and the compute model's checks, each naming its field (the
    // hardware is the one-GPU controls' choice: no field of this panel).
    std::vector<sim::RingSetupError> setup = sim::validate(m.topology);
    for (sim::RingSetupError& e : sim::validate(m.compute, in.dtype)) setup.push_back(std::move(e));
    for (const sim::RingSetupError& e : setup) {
      errors.push_back(e.message);
      if (e.field != sim::RingSetupField::hardware) m.bad_fields.emplace_back(sim::ring_setup_field_key(e.field));
    }
  }

  if (problem_ok && errors.empty()) {
    try {
      m.simulation = sim::simulate_ring(p, m.topology, m.compute);
      m.efficiency_note = "compute efficiency " + sim::fixed(m.compute.efficiency, 3) + " as typed";
      place_measured(s, m);
      if (in.compare_layouts) {
        sim::AttentionProblem q = m.simulation.problem;
        q.parallel_part().layout = sim::next_ring_layout(q.layout());
        m.other_layout = sim::simulate_ring(q, m.topology, m.compute);
      }
      const sim::AttentionProblem& sp = m.simulation.problem;
      m.lanes.push_back(simulated_lane(m.simulation, "simulated: " + layout_words(sp.layout()) + " layout, " +
                                                         std::to_string(sp.gpus()) + (sp.gpus() == 1 ? " GPU" : " GPUs")));
      if (m.other_layout)
        m.lanes.push_back(simulated_lane(*m.other_layout, "simulated: " + layout_words(m.other_layout->problem.layout()) +
                                                              " layout, same problem"));
      if (m.measured.placement) m.lanes.push_back(measured_lane(rs.results.runs, *m.measured.placement));
      for (const RingLane& l : m.lanes) m.axis_end_s = std::max(m.axis_end_s, l.end_s);
      build_cells(m);
      if (!p.causal && sim::ring_layout_info(p.layout()).balances_causal)
        m.notes.push_back("without the causal mask every chunk pair is full: the " + layout_words(p.layout()) +
                          " layout balances nothing the contiguous one leaves unbalanced");
      const sim::i64 peak = *std::max_element(m.simulation.peak_bytes_per_gpu.begin(), m.simulation.peak_bytes_per_gpu.end());
      if (m.compute.hw.hbm_bytes > 0 && peak > m.compute.hw.hbm_bytes)
        m.notes.push_back("a GPU needs " + sim::bytes_iec(static_cast<double>(peak)) + " at its peak, more than the " +
                          sim::bytes_iec(static_cast<double>(m.compute.hw.hbm_bytes)) + " of " + m.compute.hw.name);
    } catch (const std::exception& e) {
      errors.push_back(std::string("cannot simulate this ring: ") + e.what());
      m.lanes.clear();
    }
  }
  std::sort(m.bad_fields.begin(), m.bad_fields.end());
  m.bad_fields.erase(std::unique(m.bad_fields.begin(), m.bad_fields.end()), m.bad_fields.end());
  m.valid = errors.empty();
  if (!m.valid) {
    m.lanes.clear();
    m.cells.clear();
    m.measured = RingMeasuredView{};
    m.other_layout.reset();
  }
  rs.model = std::move(m);
  rs.applied = s.inputs.ring;
  rs.applied_hardware = ring_hardware_key(s.inputs);
  rs.applied_results = rs.results.generation;
  rs.dirty = false;
  if (rs.model.valid) ring_seek_step(s, keep_step);
  rs.model.recompute_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

void ring_seek_step(AppState& s, int step) {
  RingModel& m = s.ring.model;
  if (!m.valid) return;
  const int P = m.simulation.problem.gpus();
  RingStepState& st = m.step;
  st.step = std::clamp(step, 0, P - 1);
  st.view = sim::ring_step_view(m.simulation.partition, st.step, m.simulation.problem.causal);
  st.pairs_so_far.assign(static_cast<size_t>(P), 0);
  st.blocks_so_far.assign(static_cast<size_t>(P), 0);
  st.skipped_so_far.assign(static_cast<size_t>(P), 0);
  for (const RingPairCell& c : m.cells) {
    if (c.gpu < 0 || c.gpu >= P || c.step > st.step) continue;
    const size_t g = static_cast<size_t>(c.gpu);
    st.pairs_so_far[g] += c.pairs;
    if (c.visibility == sim::ChunkVisibility::none) st.skipped_so_far[g] += 1;
    else st.blocks_so_far[g] += 1;
  }
  st.time_s = 0;
  for (const sim::RingEvent& e : m.simulation.events)
    if (e.pass == sim::Pass::fwd && e.kind == sim::RingEventKind::compute && e.step == st.step)
      st.time_s = std::max(st.time_s, e.end_s);
}

void ring_step_by(AppState& s, int delta) {
  if (!s.ring.model.valid) return;
  ring_seek_step(s, s.ring.model.step.step + delta);
}

void apply_ring_step_request(AppState& s) {
  if (s.ring.step_request < 0 || !s.ring.model.valid) return;
  ring_seek_step(s, s.ring.step_request);
  s.ring.step_request = -1;
}

void open_ring_results(AppState& s, const std::string& path) {
  RingResults& r = s.ring.results;
  try {
    r.runs = analysis::ring_results_from_file(path);
    r.rungs = sim::rung_timing_for_gpu(r.runs.meta.gpu);
    // The model's score on the whole file, as flashlab ring --results gives it.
    r.score_text.clear();
    try {
      r.score_text = analysis::ring_score_summary(analysis::score_ring_file(r.runs, analysis::ring_file_model(r.runs)));
    } catch (const std::exception& e) {
      r.score_text = std::string("every run of the file: not scored (") + e.what() + ")";
    }
    r.have = true;
    r.source = path;
    r.path = path;
    r.error.clear();
    ++r.generation;
    bool example = false;
    for (const sim::MeasuredRun& run : r.runs.runs) example = example || is_example(r.runs, run);
    // The problem on screen keeps its run (and the run picked) when the file
    // has one; else the file's first run of more than one GPU becomes the problem.
    Inputs::Ring& in = s.inputs.ring;
    RingModel scratch;
    sim::AttentionProblem on_screen;
    int shown = parse_problem(in, on_screen, scratch) ? match_ring_run(r.runs, on_screen, in.steps, in.run_choice) : -1;
    if (shown < 0) {
      // A run named before the file was opened (a scenario's "run"), else the file's first.
      const bool named = in.run_choice >= 0 && static_cast<size_t>(in.run_choice) < r.runs.runs.size() &&
                         r.runs.runs[static_cast<size_t>(in.run_choice)].status == sim::RunStatus::ok;
      shown = named ? in.run_choice : ring_run_to_open(r.runs, in.steps);
      ring_inputs_from_run(in, r.runs, shown);
    }
    // The link measured between GPUs of the file's kind, when one is in
    // assets/interconnects/measured, replaces the datasheet's default (as
    // flashlab ring --results does); a link chosen before stays.
    std::string link_note;
    if (in.intra == Inputs::Ring{}.intra)
      if (const auto link = analysis::measured_link_for(r.runs.meta)) {
        in.intra = link->id;
        link_note = "; the link inside a node: " + link->id + " (measured)";
      }
    s.view.status = "opened " + path + ": " + std::to_string(r.runs.runs.size()) + " ring runs" +
                    (example ? " (an EXAMPLE file: not measured)" : "") +
                    (shown >= 0 ? "; showing " + ring_run_label(r.runs.runs[static_cast<size_t>(shown)],
                                                                static_cast<size_t>(shown))
                                : "; none of them ok") +
                    link_note;
    s.view.status_is_error = false;
  } catch (const std::exception& e) {
    r.error = e.what();
    s.view.status = std::string("cannot open ring results: ") + e.what();
    s.view.status_is_error = true;
  }
}

void close_ring_results(AppState& s) {
  RingResults& r = s.ring.results;
  r.have = false;
  r.runs = {};
  r.source.clear();
  r.error.clear();
  r.rungs.reset();
  r.score_text.clear();
  ++r.generation;  // the model matches again: no run beside it
}

}  // namespace flashlab::gui
