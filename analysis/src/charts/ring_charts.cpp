// Ring charts from a results file's rows: the scaling efficiency against the
// tokens per GPU, and where a pass's time goes. The rows (ring_rows) hold every
// number; here they are chosen, grouped into series and labelled.
#include "flashlab/analysis/charts/ring_charts.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <set>
#include <stdexcept>

#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/problem/attention_models.hpp"
#include "flashlab/sim/core/format.hpp"
#include "text/missing.hpp"

namespace flashlab::analysis {

namespace {

std::string layout_words(sim::RingLayout l) { return std::string(sim::ring_layout_info(l).words); }

std::string tokens(sim::i64 n) { return format_tick(static_cast<double>(n), TickFormat::binary); }

// "LLaMA-2-7B", or the shape when no model of attention_models() has it.
std::string model_label(const sim::AttentionProblem& p) {
  if (const sim::AttentionModel* m = sim::find_attention_model(ring_model_id(p))) return std::string(m->label);
  return "H=" + std::to_string(p.heads) + " H_kv=" + std::to_string(p.h_kv()) + " d=" + std::to_string(p.head_dim);
}

// What tells the drawn runs apart besides the model and N: P, B, the mask and
// the dtype where they differ between runs; the rest is said once in the subtitle.
struct RingVarying {
  bool gpus = false, batch = false, causal = false, dtype = false, steps = false;
};

RingVarying ring_varying(const std::vector<const sim::MeasuredRun*>& shown) {
  std::set<sim::i64> gpus, batch;
  std::set<int> causal, dtype;
  std::set<std::string> steps;
  for (const sim::MeasuredRun* r : shown) {
    gpus.insert(r->problem.gpus());
    batch.insert(r->problem.batch);
    causal.insert(r->problem.causal ? 1 : 0);
    dtype.insert(static_cast<int>(r->problem.dtype));
    steps.insert(r->parallel_part().steps);
  }
  return {gpus.size() > 1, batch.size() > 1, causal.size() > 1, dtype.size() > 1, steps.size() > 1};
}

// " P=4 B=2": the varying parts of a run's problem.
std::string varying_suffix(const sim::AttentionProblem& p, const RingVarying& v) {
  std::string s;
  if (v.gpus) s += " P=" + std::to_string(p.gpus());
  if (v.batch) s += " B=" + std::to_string(p.batch);
  if (v.causal) s += p.causal ? " causal" : " full";
  if (v.dtype) s += " " + std::string(sim::to_string(p.dtype));
  return s;
}

// "zig-zag · 4× NVIDIA H200 (NVLink, 18 links between every pair) · B=1 bf16 causal · fused steps".
std::string subtitle(const sim::MeasuredRuns& runs, const std::vector<const sim::MeasuredRun*>& shown,
                     sim::RingLayout layout, const RingVarying& v) {
  std::string s = layout_words(layout);
  const sim::ParallelMeta& m = runs.meta.parallel_part();
  std::string machine = gpus_and_links(m.gpu_names, m.gpu_topology, true);
  if (machine.empty()) machine = runs.meta.gpu;
  if (!machine.empty()) s += " · " + machine;
  if (!shown.empty()) {
    const sim::AttentionProblem& p = shown.front()->problem;
    std::string same;
    if (!v.gpus) same += " P=" + std::to_string(p.gpus());
    if (!v.batch) same += " B=" + std::to_string(p.batch);
    if (!v.dtype) same += " " + std::string(sim::to_string(p.dtype));
    if (!v.causal) same += p.causal ? " causal" : " full";
    if (!same.empty()) s += " ·" + same;
    s += " · " + (v.steps ? std::string("fused and pairwise") : shown.front()->parallel_part().steps) + " steps";
  }
  return s;
}

bool wanted_steps(const sim::MeasuredRun& r, const std::string& steps) { return steps.empty() || r.parallel_part().steps == steps; }

// The runs of more than one GPU a chart draws, in file order; `why` says why none are.
std::vector<const sim::MeasuredRun*> multi_gpu_runs(const sim::MeasuredRuns& runs, sim::RingLayout layout,
                                                        const std::string& steps, std::string& why) {
  std::vector<const sim::MeasuredRun*> out;
  std::set<std::string> other_layouts, other_steps;
  for (const sim::MeasuredRun& r : runs.runs) {
    if (r.problem.gpus() < 2) continue;
    if (r.problem.layout() != layout) {
      other_layouts.insert(layout_words(r.problem.layout()));
      continue;
    }
    if (!wanted_steps(r, steps)) {
      other_steps.insert(r.parallel_part().steps);
      continue;
    }
    out.push_back(&r);
  }
  if (out.empty()) {
    why = "the file holds no " + layout_words(layout) + " runs of more than one GPU" +
          (steps.empty() ? "" : " with " + steps + " steps");
    if (!other_steps.empty()) why += " (it has " + *other_steps.begin() + " steps)";
    else if (!other_layouts.empty()) why += " (it has " + *other_layouts.begin() + " runs)";
  }
  return out;
}

bool shown_run(const std::vector<const sim::MeasuredRun*>& shown, const sim::MeasuredRun& r) {
  return std::find(shown.begin(), shown.end(), &r) != shown.end();
}

std::string ms_text(double v) { return format_tick(v, TickFormat::plain) + " ms"; }

}  // namespace

// ---- ring-scaling --------------------------------------------------------------------

ChartSpec ring_scaling_chart(const sim::MeasuredRuns& runs, const RingChartOptions& opt) {
  ChartSpec c;
  c.id = "ring-scaling";
  c.title = "Ring attention: scaling efficiency against the tokens each GPU holds";
  c.x = {"tokens per GPU, N / P", Scale::log2, TickFormat::binary, {}, {}, false};
  c.y = {"scaling efficiency  t(P = 1) / (P · t)", Scale::linear, TickFormat::plain, 0.0, {}, true};
  c.ref_lines.push_back({false, 1.0, "1: P GPUs, P times faster", Color{90, 90, 90, 255}, Dash::dashed, 1.5, {}});
  std::string why;
  const std::vector<const sim::MeasuredRun*> shown = multi_gpu_runs(runs, opt.layout, opt.steps, why);
  const RingVarying v = ring_varying(shown);
  c.subtitle = subtitle(runs, shown, opt.layout, v);
  if (shown.empty()) {
    c.notes.push_back(why);
    return c;
  }

  // One series per model (first appearance), step mode (fused first), pass, and what else varies.
  struct Key {
    std::string model, steps, rest;
    sim::Pass pass;
    int model_index;
  };
  std::vector<std::string> models;
  std::vector<Key> keys;
  std::vector<std::vector<std::pair<double, double>>> points;
  std::set<std::string> no_single, baseline_steps;
  int not_measured = 0;
  // Models whose one-GPU baseline ran pairwise with grouped K/V heads: that run
  // copies K, V to H heads, a slower baseline than the rung alone.
  std::set<std::string> slow_baseline;
  for (const RingRow& row : ring_rows(runs)) {
    const sim::MeasuredRun& run = runs.runs[row.run];
    if (!shown_run(shown, run) || (opt.pass && row.pass != *opt.pass)) continue;
    if (!row.measured) {
      ++not_measured;
      continue;
    }
    const std::string model = model_label(run.problem);
    if (!row.scaling_efficiency) {
      no_single.insert(model + " N=" + tokens(run.problem.seq_q));
      continue;
    }
    if (const sim::MeasuredRun* one = ring_single_gpu_run(runs, run.problem, row.pass)) {
      baseline_steps.insert(one->parallel_part().steps);
      if (one->parallel_part().steps == "pairwise" && one->problem.h_kv() < one->problem.heads) slow_baseline.insert(model);
    }
    if (std::find(models.begin(), models.end(), model) == models.end()) models.push_back(model);
    const Key k{model, run.parallel_part().steps, varying_suffix(run.problem, {v.gpus, v.batch, v.causal, v.dtype, false}), row.pass,
                static_cast<int>(std::find(models.begin(), models.end(), model) - models.begin())};
    auto it = std::find_if(keys.begin(), keys.end(), [&](const Key& x) {
      return x.model == k.model && x.steps == k.steps && x.rest == k.rest && x.pass == k.pass;
    });
    if (it == keys.end()) {
      keys.push_back(k);
      points.emplace_back();
      it = keys.end() - 1;
    }
    points[static_cast<size_t>(it - keys.begin())].emplace_back(
        static_cast<double>(run.problem.seq_q) / run.problem.gpus(), *row.scaling_efficiency);
  }
  std::vector<size_t> order(keys.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = k;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    const Key &x = keys[a], &y = keys[b];
    if (x.model_index != y.model_index) return x.model_index < y.model_index;
    if (x.rest != y.rest) return x.rest < y.rest;
    if (x.steps != y.steps) return x.steps == "fused";
    return x.pass == sim::Pass::fwd && y.pass == sim::Pass::bwd;
  });
  for (size_t k : order) {
    const Key& key = keys[k];
    std::vector<std::pair<double, double>>& pts = points[k];
    std::stable_sort(pts.begin(), pts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const bool bwd = key.pass == sim::Pass::bwd;
    const bool pairwise = key.steps == "pairwise";
    Series s;
    s.name = key.model + key.rest + (bwd ? " bwd" : " fwd") + (v.steps ? ", " + key.steps : "");
    s.style = SeriesStyle::line_points;
    s.marker = bwd ? MarkerShape::square : MarkerShape::circle;
    s.color = palette(key.model_index);
    if (pairwise && v.steps) {
      s.color = with_alpha(s.color, 140);
      s.dash = Dash::dotted;
      s.width = 1.5;
    } else {
      s.dash = bwd ? Dash::dashed : Dash::solid;
    }
    for (const auto& [x, y] : pts) {
      s.x.push_back(x);
      s.y.push_back(y);
    }
    c.series.push_back(std::move(s));
  }
  if (c.series.empty()) {
    c.notes.push_back(no_single.empty()
                          ? "no multi-GPU run of the file was measured (every one is OOM, skipped or failed)"
                          : "the file holds no P = 1 run of the attention its multi-GPU runs measured: the scaling "
                            "efficiency t(P = 1) / (P · t) is measured against one (flashlab bench --gpus 1,P)");
    return c;
  }
  std::string base;
  for (const std::string& st : baseline_steps) base += (base.empty() ? "" : " and ") + st;
  c.notes.push_back("t(P = 1): the file's P = 1 run of the same attention (" + base + " steps)");
  if (!slow_baseline.empty()) {
    std::string list;
    for (const std::string& x : slow_baseline) list += (list.empty() ? "" : ", ") + x;
    c.notes.push_back("the P = 1 run of " + list + " ran pairwise and copied the grouped K/V heads to H heads: a "
                      "slower baseline than the rung alone, so their efficiencies read high");
  }
  if (!no_single.empty()) {
    std::string list;
    for (const std::string& x : no_single) list += (list.empty() ? "" : ", ") + x;
    c.notes.push_back("not drawn, no P = 1 run of the same attention: " + list);
  }
  if (not_measured > 0)
    c.notes.push_back("not drawn: " + std::to_string(not_measured) + (not_measured == 1 ? " pass" : " passes") +
                      " not measured (OOM, skipped or failed)");
  return c;
}

// ---- ring-time -----------------------------------------------------------------------

ChartSpec ring_time_chart(const sim::MeasuredRuns& runs, const RingChartOptions& opt) {
  const sim::Pass pass = opt.pass.value_or(sim::Pass::fwd);
  const bool bwd = pass == sim::Pass::bwd;
  ChartSpec c;
  c.id = "ring-time";
  c.kind = ChartKind::bars;
  c.stacked = true;
  c.title = std::string("Ring attention: where the ") + (bwd ? "backward" : "forward") + " pass's time goes";
  c.x = {"", Scale::linear, TickFormat::plain, {}, {}, false};
  c.y = {"share of the pass's time (%)", Scale::linear, TickFormat::plain, 0.0, {}, true, "%"};
  std::string steps = opt.steps;
  if (steps.empty()) {
    std::string unused;
    if (!multi_gpu_runs(runs, opt.layout, "fused", unused).empty()) steps = "fused";  // else the runs there are
  }
  std::string why;
  const std::vector<const sim::MeasuredRun*> shown = multi_gpu_runs(runs, opt.layout, steps, why);
  const RingVarying v = ring_varying(shown);
  c.subtitle = subtitle(runs, shown, opt.layout, v);
  if (shown.empty()) {
    c.notes.push_back(why);
    return c;
  }

  auto segment = [](const char* name, int colour) {
    Series s;
    s.name = name;
    s.style = SeriesStyle::bars;
    s.color = palette(colour);
    return s;
  };
  Series rung = segment("rung", 0);
  Series whole = segment("compute (rung not recorded)", 2);
  Series other = segment("other compute", 5);
  Series exposed = segment("exposed communication", 1);
  Series rest = segment("rest of the time", 6);
  auto add = [](Series& s, double cat, double ms, double time_ms) {
    s.x.push_back(cat);
    s.y.push_back(100.0 * ms / time_ms);
    s.point_labels.push_back(ms_text(ms));
  };
  int not_measured = 0, clipped = 0;
  for (const RingRow& row : ring_rows(runs)) {
    const sim::MeasuredRun& run = runs.runs[row.run];
    if (!shown_run(shown, run) || row.pass != pass) continue;
    if (!row.measured) {
      ++not_measured;
      continue;
    }
    const double cat = static_cast<double>(c.categories.size());
    c.categories.push_back(model_label(run.problem) + " " + tokens(run.problem.seq_q) + varying_suffix(run.problem, v) +
                           (v.steps ? " " + run.parallel_part().steps : ""));
    const double t = row.time_ms;
    if (row.rung_ms >= 0) {
      add(rung, cat, row.rung_ms, t);
      add(other, cat, row.compute_ms - row.rung_ms, t);
    } else {
      add(whole, cat, row.compute_ms, t);
    }
    // The longest wait may be another GPU's than the busiest one's compute:
    // what the critical path can hold is what that compute leaves of the time.
    const double room = std::max(0.0, t - row.compute_ms);
    if (row.exposed_comm_ms > room) ++clipped;
    const double shown_exposed = std::min(row.exposed_comm_ms, room);
    add(exposed, cat, shown_exposed, t);
    add(rest, cat, room - shown_exposed, t);
    c.annotations.push_back({cat, 100.0, ms_text(t), Color{40, 40, 40, 255}, Annotation::Anchor::above});
  }
  for (Series* s : {&rung, &whole, &other, &exposed, &rest})
    if (!s->x.empty()) c.series.push_back(std::move(*s));
  if (c.categories.empty()) {
    c.notes.push_back(std::string("no ") + (bwd ? "backward" : "forward") + " pass of the file's multi-GPU runs was measured");
    return c;
  }
  c.notes.push_back("rung: the busiest GPU's time in the rung's launches; other compute: the rest of its compute (the "
                    "step's other kernels, launch gaps)");
  c.notes.push_back("exposed: the longest any GPU's compute waited for data; rest: time − compute − exposed; above each "
                    "bar the pass's median time");
  if (clipped > 0)
    c.notes.push_back("in " + std::to_string(clipped) + (clipped == 1 ? " bar" : " bars") +
                      " the longest wait (another GPU's) exceeds what the busiest GPU's compute leaves of the time: "
                      "drawn as that remainder");
  if (not_measured > 0)
    c.notes.push_back("not drawn: " + std::to_string(not_measured) + (not_measured == 1 ? " run" : " runs") +
                      " not measured (OOM, skipped or failed)");
  return c;
}

// ---- the table -----------------------------------------------------------------------

const std::vector<RingChartEntry>& ring_chart_table() {
  static const std::vector<RingChartEntry> table{
      {"ring-scaling", "scaling efficiency against the tokens per GPU, per model and pass", &ring_scaling_chart},
      {"ring-time", "where one pass's time goes (--pass fwd or bwd), a stacked bar per run", &ring_time_chart},
  };
  return table;
}

std::string ring_chart_id_list(std::string_view separator) {
  std::string s;
  for (const RingChartEntry& e : ring_chart_table()) s += (s.empty() ? "" : std::string(separator)) + std::string(e.id);
  return s;
}

const RingChartEntry* find_ring_chart(std::string_view id) {
  for (const RingChartEntry& e : ring_chart_table())
    if (e.id == id) return &e;
  return nullptr;
}

ChartSpec build_ring_chart(const std::string& id, const sim::MeasuredRuns& runs, const RingChartOptions& opt) {
  const RingChartEntry* e = find_ring_chart(id);
  if (e == nullptr) throw std::invalid_argument("unknown chart '" + id + "' (expected " + ring_chart_id_list(" or ") + ")");
  ChartSpec c = e->build(runs, opt);
  if (c.empty()) throw std::invalid_argument(c.notes.empty() ? "nothing to draw" : c.notes.front());
  return c;
}

}  // namespace flashlab::analysis
