// Bench charts, as the lab reports draw them: time, TFLOP/s and peak memory
// against the swept parameter, speed-up bars, a batch × seq heatmap. OOM cells
// are marked, never dropped.
#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/problem/algorithm.hpp"
#include "text/missing.hpp"

namespace flashlab::analysis {

namespace {
// One marker per configuration beside the x axis, when the mask does not vary.
constexpr MarkerShape kConfigMarkers[] = {MarkerShape::circle, MarkerShape::square, MarkerShape::diamond,
                                          MarkerShape::triangle, MarkerShape::cross};

double axis_value(const BenchRow& r, BenchAxis a) {
  switch (a) {
    case BenchAxis::seq: return static_cast<double>(r.problem.seq_q);
    case BenchAxis::batch: return static_cast<double>(r.problem.batch);
    case BenchAxis::heads: return static_cast<double>(r.problem.heads);
    case BenchAxis::head_dim: return static_cast<double>(r.problem.head_dim);
    case BenchAxis::causal: return r.problem.causal ? 1 : 0;
    case BenchAxis::none: return 0;
  }
  return 0;
}

struct Varying {
  bool seq = false, batch = false, heads = false, head_dim = false, causal = false, dtype = false, direction = false;
};

Varying varying(const BenchResults& r) {
  std::set<sim::i64> seq, batch, heads, hd;
  std::set<int> causal, dtype;
  std::set<std::string> dir;
  for (const BenchRow& row : r.rows) {
    seq.insert(row.problem.seq_q);
    batch.insert(row.problem.batch);
    heads.insert(row.problem.heads);
    hd.insert(row.problem.head_dim);
    causal.insert(row.problem.causal ? 1 : 0);
    dtype.insert(static_cast<int>(row.problem.dtype));
    dir.insert(row.direction);
  }
  return {seq.size() > 1, batch.size() > 1, heads.size() > 1, hd.size() > 1, causal.size() > 1, dtype.size() > 1,
          dir.size() > 1};
}

std::string n_label(sim::i64 n) { return format_tick(static_cast<double>(n), TickFormat::binary); }

// The parameters that vary, except the x axis, as a short label: "b=16 causal".
std::string config_label(const BenchRow& r, const Varying& v, BenchAxis x) {
  std::string s;
  auto add = [&](const std::string& part) { s += (s.empty() ? "" : " ") + part; };
  if (v.batch && x != BenchAxis::batch) add("b=" + std::to_string(r.problem.batch));
  if (v.seq && x != BenchAxis::seq) add("N=" + n_label(r.problem.seq_q));
  if (v.heads && x != BenchAxis::heads) add("h=" + std::to_string(r.problem.heads));
  if (v.head_dim && x != BenchAxis::head_dim) add("d=" + std::to_string(r.problem.head_dim));
  if (v.causal && x != BenchAxis::causal) add(r.problem.causal ? "causal" : "non-causal");
  if (v.dtype) add(std::string(sim::to_string(r.problem.dtype)));
  return s;
}

std::string series_key(const BenchRow& r, const Varying& v, BenchAxis x) {
  std::string s = run_name(r.kernel, r.direction);
  const std::string cfg = config_label(r, v, x);
  return cfg.empty() ? s : s + " " + cfg;
}

// `emb`: heads and head dim swept together at this embedding dim (shared_emb_dim);
// `tokens`: batch and N swept together at this token count (shared_tokens).
// Batch, heads and head dim are linear axes: time and memory grow in
// proportion to them (or stay put), and a straight line on linear axes is what
// proportional looks like; a log x under a linear y would bend it into a curve
// that reads as exponential. N spans orders of magnitude: a log axis, with the
// metrics that grow as a power of it on a log y too (bench_metric_chart).
Axis bench_axis(BenchAxis a, std::optional<sim::i64> emb = std::nullopt, std::optional<sim::i64> tokens = std::nullopt) {
  const std::string e = emb ? std::to_string(*emb) : "";
  switch (a) {
    case BenchAxis::seq:
      return {tokens ? "sequence length N (batch B = " + n_label(*tokens) + " / N)" : "sequence length N", Scale::log2,
              TickFormat::binary, {}, {}, false, ""};
    case BenchAxis::batch: return {"batch size B", Scale::linear, TickFormat::plain, {}, {}, true, ""};
    case BenchAxis::heads:
      return {emb ? "heads H (d = " + e + " / H)" : "heads H", Scale::linear, TickFormat::plain, {}, {}, true, ""};
    case BenchAxis::head_dim:
      return {emb ? "head dimension d (H = " + e + " / d)" : "head dimension d", Scale::linear, TickFormat::plain, {}, {}, true, ""};
    default: return {"configuration", Scale::linear, TickFormat::plain, {}, {}, false, ""};
  }
}

// The swept axis of the rows shown: without a filter the results' own (the
// default filter fixes the rest); with one, the first parameter that varies
// among the rows it selects.
BenchAxis shown_x_axis(const BenchResults& all, const BenchResults& shown, const BenchFilter* filter) {
  return filter ? bench_x_axis(shown) : bench_x_axis(all);
}

// What varies among the rows shown, less the partner of the x axis when heads
// and head dim are swept together at one embedding dim: it is the x axis too.
Varying varying_beside(const BenchResults& shown, BenchAxis xa) {
  Varying v = varying(shown);
  if (shared_emb_dim(shown)) {
    if (xa == BenchAxis::heads) v.head_dim = false;
    if (xa == BenchAxis::head_dim) v.heads = false;
  }
  if (xa == BenchAxis::seq && shared_tokens(shown)) v.batch = false;  // the batch follows N
  return v;
}

// The batch of each N of a constant-token grid, as a note: "the batch follows
// N: every run holds B·N = 16K tokens (B 16 at N 1K, 4 at 4K, 1 at 16K)".
std::string tokens_note(const BenchResults& shown, sim::i64 tokens) {
  std::map<sim::i64, sim::i64> batch_at;
  for (const BenchRow& row : shown.rows) batch_at[row.problem.seq_q] = row.problem.batch;
  std::string each;
  for (const auto& [n, b] : batch_at)
    each += each.empty() ? "B " + std::to_string(b) + " at N " + n_label(n) : ", " + std::to_string(b) + " at " + n_label(n);
  return "the batch follows N: every run holds B·N = " + n_label(tokens) + " tokens (" + each + ")";
}

// A category of bars along the swept value: "N=1K", with the batch that
// follows it on a constant-token grid ("N=1K b=16").
std::string category_of(BenchAxis xa, double x, std::optional<sim::i64> tokens) {
  switch (xa) {
    case BenchAxis::seq: {
      const auto n = static_cast<sim::i64>(x);
      return "N=" + n_label(n) + (tokens && n > 0 ? " b=" + std::to_string(*tokens / n) : "");
    }
    case BenchAxis::batch: return "b=" + format_tick(x, TickFormat::plain);
    case BenchAxis::heads: return "h=" + format_tick(x, TickFormat::plain);
    case BenchAxis::head_dim: return "d=" + format_tick(x, TickFormat::plain);
    default: return "";
  }
}

// A result set that is not a measurement says so in the title too: the
// subtitle is left out of a small plot.
void mark_synthetic(const BenchResults& r, ChartSpec& c) {
  if (r.meta.gpu.rfind("SYNTHETIC", 0) == 0 && c.title.rfind("SYNTHETIC", 0) != 0) c.title = "SYNTHETIC — " + c.title;
}

// A smaller GPU emulated (an allocation limit per case) is in the title: the
// OOM cells it causes would not happen on the GPU of the subtitle.
void title_memory_cap(const BenchResults& shown, ChartSpec& c) {
  std::set<sim::i64> caps;
  bool uncapped = false;
  for (const BenchRow& row : shown.rows) {
    if (row.mem_limit_bytes > 0) caps.insert(row.mem_limit_bytes);
    else uncapped = true;
  }
  if (caps.empty()) return;
  std::string limits;
  for (sim::i64 b : caps) limits += (limits.empty() ? "" : ", ") + sim::bytes_iec(static_cast<double>(b));
  c.title += uncapped || caps.size() > 1 ? " (some runs with allocations capped at " + limits + ")"
                                         : " (allocations capped at " + limits + " per case)";
}

ChartSpec marked(const BenchResults& r, ChartSpec c) {
  mark_synthetic(r, c);
  return c;
}

std::string subtitle_of(const BenchResults& r) {
  std::string s = r.meta.gpu.empty() ? "unknown GPU" : r.meta.gpu;
  if (!r.meta.date.empty()) s += " · " + r.meta.date;
  if (!r.meta.commit.empty()) s += " · commit " + r.meta.commit.substr(0, 10);
  // How repeats were timed is a claim about measurements: only where there are
  // some, from results that record how they were made.
  const bool recorded = !r.meta.gpu.empty() || !r.meta.date.empty() || !r.meta.commit.empty();
  const bool measured = std::any_of(r.rows.begin(), r.rows.end(),
                                    [](const BenchRow& row) { return row.status == RunStatus::ok && row.time_ms_median > 0; });
  if (recorded && measured) s += r.meta.l2_flush ? " · L2 flushed between repeats" : " · no L2 flush";
  return s;
}

double metric_of(const BenchRow& r, BenchMetric m) {
  switch (m) {
    case BenchMetric::time: return r.time_ms_median;
    case BenchMetric::tflops: return r.tflops;
    case BenchMetric::memory: return static_cast<double>(r.peak_memory_bytes);
  }
  return kNaN;
}

// Kernels in first-appearance order.
std::vector<std::string> kernels_of(const BenchResults& r) {
  std::vector<std::string> out;
  for (const BenchRow& row : r.rows)
    if (std::find(out.begin(), out.end(), row.kernel) == out.end()) out.push_back(row.kernel);
  return out;
}

void note_status(const BenchResults& r, std::vector<std::string>& notes) {
  int oom = 0, skipped = 0, failed = 0;
  std::string first_oom, first_skip, first_fail;
  for (const BenchRow& row : r.rows) {
    // A long reason (PyTorch's OOM message runs on for lines) up to the end of
    // a sentence; one without a sentence's end whole (the notes wrap).
    std::string reason = row.reason;
    if (reason.size() > 90)
      if (const std::size_t end = reason.rfind(". ", 90); end != std::string::npos && end >= 20)
        reason = reason.substr(0, end + 1);
    const std::string where = implementation_name(row.kernel) + " " + sim::describe(row.problem) +
                              (reason.empty() ? "" : ": " + reason);
    if (row.status == RunStatus::oom && oom++ == 0) first_oom = where;
    if (row.status == RunStatus::skipped && skipped++ == 0) first_skip = where;
    if (row.status == RunStatus::failed && failed++ == 0) first_fail = where;
  }
  if (oom) notes.push_back(std::to_string(oom) + " OOM cell(s) marked ✕, e.g. " + first_oom);
  if (skipped) notes.push_back(std::to_string(skipped) + " skipped, e.g. " + first_skip);
  if (failed) notes.push_back(std::to_string(failed) + " failed, e.g. " + first_fail);
}

// One point of a chart: the implementation, pass, problem and tiles. The same
// run under another allocation limit (a sweep emulating a smaller GPU) is the
// same point: a chart draws it once.
bool same_point(const BenchRow& a, const BenchRow& b) {
  return a.kernel == b.kernel && a.direction == b.direction && a.problem == b.problem && a.tiles == b.tiles;
}

// The rows `f` selects, each point once: the first of its repeats in the file.
BenchResults filtered(const BenchResults& all, const BenchFilter& f) {
  BenchResults out;
  out.meta = all.meta;
  for (const BenchRow& row : all.rows)
    if (f.matches(row) && std::none_of(out.rows.begin(), out.rows.end(), [&](const BenchRow& o) { return same_point(o, row); }))
      out.rows.push_back(row);
  return out;
}

// The note under a chart whose rows a filter narrowed: the parameters the
// filter fixed for which the results hold other values ("showing N 1K (the
// results hold 3 sequence lengths: pick others …)"). The plotted axis is never
// among them, and a filter that left nothing else to pick says nothing.
void note_filter(const BenchResults& all, const BenchFilter& f, BenchAxis plotted, ChartSpec& c) {
  std::size_t matching = 0;
  for (const BenchRow& row : all.rows) matching += f.matches(row) ? 1 : 0;
  if (const std::size_t repeats = matching - filtered(all, f).rows.size(); repeats > 0)
    c.notes.push_back(std::to_string(repeats) + " run(s) measured again (the same kernel, pass, problem and tiles in "
                      "several sweeps): each drawn once, from the first in the file");
  const std::string d = describe(f);
  if (d.empty()) return;
  c.subtitle = "showing " + d + " · " + c.subtitle;
  // One line per parameter of the filter: fixed by it, its distinct values in the results, the word for them.
  std::set<sim::i64> batch, seq, heads, head_dim, emb, kv;
  std::set<int> causal, dtype;
  for (const BenchRow& row : all.rows) {
    batch.insert(row.problem.batch);
    seq.insert(row.problem.seq_q);
    heads.insert(row.problem.heads);
    head_dim.insert(row.problem.head_dim);
    emb.insert(row.problem.heads * row.problem.head_dim);
    kv.insert(row.problem.h_kv());
    causal.insert(row.problem.causal ? 1 : 0);
    dtype.insert(static_cast<int>(row.problem.dtype));
  }
  const struct {
    bool fixed;
    BenchAxis axis;
    std::size_t values;
    const char* what;
  } dims[] = {{f.batch.has_value(), BenchAxis::batch, batch.size(), "batch sizes"},
              {f.seq.has_value(), BenchAxis::seq, seq.size(), "sequence lengths"},
              {f.heads.has_value(), BenchAxis::heads, heads.size(), "head counts"},
              {f.head_dim.has_value(), BenchAxis::head_dim, head_dim.size(), "head dims"},
              {f.emb_dim.has_value(), BenchAxis::none, emb.size(), "embedding dims"},
              {f.kv_heads.has_value(), BenchAxis::none, kv.size(), "K/V head counts"},
              {f.causal.has_value(), BenchAxis::causal, causal.size(), "causal settings"},
              {f.dtype.has_value(), BenchAxis::none, dtype.size(), "dtypes"}};
  std::string others;
  for (const auto& dim : dims)
    if (dim.fixed && dim.values > 1 && (dim.axis == BenchAxis::none || dim.axis != plotted))
      others += (others.empty() ? "" : ", ") + std::to_string(dim.values) + " " + dim.what;
  if (others.empty()) return;
  c.notes.push_back("showing " + d + " (the results hold " + others + ": pick others with --filter or the GUI's pickers)");
}

}  // namespace

ChartSpec bench_metric_chart(const BenchResults& all, BenchMetric metric, const BenchFilter* filter) {
  const BenchFilter f = filter ? *filter : default_bench_filter(all);
  const BenchResults shown = filtered(all, f);
  const BenchResults& r = shown;
  ChartSpec c;
  c.id = metric == BenchMetric::time ? "bench-time" : metric == BenchMetric::tflops ? "bench-tflops" : "bench-memory";
  const BenchAxis xa = shown_x_axis(all, shown, filter);
  const Varying v = varying_beside(r, xa);
  const bool any_bwd = std::any_of(r.rows.begin(), r.rows.end(), [](const BenchRow& x) { return x.direction != "fwd"; });
  const std::string what = any_bwd ? "Forward and backward" : "Forward";
  c.title = metric == BenchMetric::time     ? what + " time"
            : metric == BenchMetric::tflops ? what + " throughput"
                                            : "Peak device memory";
  c.subtitle = subtitle_of(r);
  note_filter(all, f, xa, c);
  const bool categorical = xa == BenchAxis::causal || xa == BenchAxis::none;
  const std::optional<sim::i64> tokens = xa == BenchAxis::seq ? shared_tokens(r) : std::nullopt;
  c.x = bench_axis(xa, shared_emb_dim(r), tokens);
  if (tokens) c.notes.push_back(tokens_note(r, *tokens));
  // A head-dim sweep at fixed heads is the labs' embedding-dim sweep: the axis says so.
  if (xa == BenchAxis::head_dim && !shared_emb_dim(r) && !r.rows.empty() && !v.heads)
    c.x.label += " (embedding dim " + std::to_string(r.rows.front().problem.heads) + "·d)";
  c.title += categorical ? "" : " vs " + c.x.label;
  switch (metric) {
    case BenchMetric::time: c.y = {"time (ms, median)", Scale::linear, TickFormat::plain, {}, {}, true, "ms"}; break;
    case BenchMetric::tflops:
      c.y = {any_bwd ? "TFLOP/s (fwd 4·B·H·N²·d, bwd 2.5×; causal /2)"
                     : "TFLOP/s (4·B·H·N²·d, halved when causal)",
             Scale::linear, TickFormat::plain, {}, {}, true, "TFLOP/s"};
      break;
    case BenchMetric::memory: c.y = {"peak device memory", Scale::linear, TickFormat::bytes_iec, {}, {}, true, ""}; break;
  }
  if (r.rows.empty()) {
    c.notes.insert(c.notes.begin(), all.rows.empty() ? "the results hold no rows" : "no rows match " + describe(f));
    return marked(all, c);
  }
  std::vector<std::string> cats;  // categorical x: one per configuration
  std::map<std::string, Series> by;
  std::vector<std::string> order;
  std::map<std::string, std::vector<std::pair<double, const BenchRow*>>> pts;
  std::vector<std::string> configs;  // the other parameters' values, in first-appearance order
  for (const BenchRow& row : r.rows) {
    const std::string key = series_key(row, v, categorical ? BenchAxis::none : xa);
    double x = axis_value(row, xa);
    if (categorical) {
      // One configuration only: the bar is named after the problem itself.
      std::string cat = config_label(row, v, BenchAxis::none);
      if (cat.empty()) cat = sim::describe(row.problem);
      auto it = std::find(cats.begin(), cats.end(), cat);
      x = static_cast<double>(it - cats.begin());
      if (it == cats.end()) cats.push_back(cat);
    }
    if (!by.count(key)) {
      order.push_back(key);
      Series& s = by[key];
      s.name = key;
      // Colour: the implementation; line: the pass; marker: the mask, or, when
      // the mask is fixed, the other parameter that varies (b=16, b=32, ...).
      s.color = implementation_colour(row.kernel);
      if (v.causal || categorical) {
        s.marker = row.problem.causal ? MarkerShape::triangle : MarkerShape::circle;
      } else {
        const std::string cfg = config_label(row, v, xa);
        auto it = std::find(configs.begin(), configs.end(), cfg);
        if (it == configs.end()) it = configs.insert(configs.end(), cfg);
        s.marker = kConfigMarkers[static_cast<size_t>(it - configs.begin()) % std::size(kConfigMarkers)];
      }
      s.dash = row.direction == "fwd" ? Dash::solid : Dash::dashed;
      if (categorical) s.style = SeriesStyle::bars;
    }
    pts[key].push_back({x, &row});
  }
  double lo = INFINITY, hi = 0;
  for (const std::string& key : order) {
    Series& s = by[key];
    auto& p = pts[key];
    std::stable_sort(p.begin(), p.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [x, row] : p) {
      const bool ok = row->status == RunStatus::ok;
      const double y = ok ? metric_of(*row, metric) : kNaN;
      s.x.push_back(x);
      s.y.push_back(y);
      s.point_notes.push_back(ok ? "" : std::string(to_string(row->status)));
      if (ok && y > 0) {
        lo = std::min(lo, y);
        hi = std::max(hi, y);
      }
      if (row->status == RunStatus::oom && !categorical) {
        // One ✕ per cell and colour: the configurations that ran out of memory there named beside it.
        const std::string cfg = config_label(*row, v, xa);
        const auto same = std::find_if(c.markers.begin(), c.markers.end(), [&](const Marker& o) {
          return o.x == x && !o.y && o.color == s.color;
        });
        if (same != c.markers.end()) {
          if (!cfg.empty()) same->label += (same->label == "OOM" ? " " : ", ") + cfg;
        } else {
          Marker m;
          m.x = x;
          m.label = cfg.empty() ? "OOM" : "OOM " + cfg;
          m.color = s.color;
          c.markers.push_back(m);
        }
      }
      if (categorical) s.point_labels.push_back(ok ? "" : std::string(to_string(row->status)));
    }
    c.series.push_back(std::move(s));
  }
  if (metric == BenchMetric::memory && !categorical) {
    // The model's prediction beside the measurement, where the runner gave one;
    // the note names the predictions drawn, and S and P only where one is standard attention's.
    std::vector<std::string> drawn;
    bool standard = false;
    for (const std::string& key : order) {
      Series m;
      bool any = false;
      for (const auto& [x, row] : pts[key]) {
        m.x.push_back(x);
        m.y.push_back(row->predicted_memory_bytes > 0 ? static_cast<double>(row->predicted_memory_bytes) : kNaN);
        any = any || row->predicted_memory_bytes > 0;
      }
      if (!any) continue;
      const Series& base = c.series[static_cast<size_t>(std::find(order.begin(), order.end(), key) - order.begin())];
      m.name = key + " (predicted)";
      m.color = base.color;
      m.dash = Dash::dotted;
      m.style = SeriesStyle::line;
      m.marker = MarkerShape::none;
      m.width = 1.5;
      m.in_legend = false;
      c.series.push_back(std::move(m));
      const BenchRow& first = *pts[key].front().second;
      const std::string name = implementation_name(first.kernel);
      if (std::find(drawn.begin(), drawn.end(), name) == drawn.end()) drawn.push_back(name);
      if (const auto algo = sim::model_algorithm(first)) standard = standard || sim::algorithm_info(*algo).materializes_scores;
    }
    std::string names;
    for (const std::string& n : drawn) names += (names.empty() ? "" : ", ") + n;
    if (!drawn.empty())
      c.notes.push_back("dotted: the simulator's predicted memory of " + names +
                        (standard ? ": inputs, outputs and, for standard attention, the materialised S and P"
                                  : ": inputs, outputs and what the pass keeps in HBM"));
  }
  if (categorical) {
    c.kind = ChartKind::bars;
    c.categories = cats;
  } else if (c.x.scale != Scale::linear && hi > 0 && lo > 0 && (metric != BenchMetric::tflops || hi / lo > 30)) {
    // Along a log N, time and memory grow as powers of N: on a log y too, N
    // (FlashAttention's memory) and N² (standard attention's S and P, the
    // FLOPs) are straight lines of slope 1 and 2, not curves that look
    // exponential. A rate (TFLOP/s) stays linear unless it spans orders of
    // magnitude (standard attention against FlashAttention at long N). Along
    // a linear x (batch, heads, d) y stays linear: proportional is straight.
    c.y.scale = Scale::log10;
    c.y.include_zero = false;
  }
  if (v.causal && !categorical)
    c.notes.push_back("colour: the implementation; line: solid forward, dashed backward; marker: ● non-causal, ▲ causal");
  else if (configs.size() > 1)
    c.notes.push_back("colour: the implementation; line: solid forward, dashed backward; marker: the configuration "
                      "(the legend's ●, ■, ◆, ▲)");
  note_status(r, c.notes);
  title_memory_cap(r, c);
  return marked(all, c);
}

ChartSpec bench_speedup_chart(const BenchResults& all, const std::string& baseline_in, const BenchFilter* filter) {
  const BenchFilter f = filter ? *filter : default_bench_filter(all);
  const BenchResults shown = filtered(all, f);
  const BenchResults& r = shown;
  ChartSpec c;
  c.id = "bench-speedup";
  c.kind = ChartKind::bars;
  c.subtitle = subtitle_of(r);
  const BenchAxis xa = shown_x_axis(all, shown, filter);
  note_filter(all, f, xa, c);
  const std::vector<std::string> kernels = kernels_of(all);
  std::string base = baseline_in;
  if (base.empty())
    for (const char* k : {"torch_eager", "naive_cublas", "naive"})
      if (std::find(kernels.begin(), kernels.end(), k) != kernels.end()) {
        base = k;
        break;
      }
  if (base.empty() && !kernels.empty()) base = kernels.front();
  c.title = "Speed-up over " + (base.empty() ? std::string("the baseline") : implementation_name(base));
  c.y = {"speed-up (baseline time / kernel time, ×)", Scale::linear, TickFormat::plain, {}, {}, true, "×"};
  c.x = {"configuration", Scale::linear, TickFormat::plain, {}, {}, false, ""};
  if (r.rows.empty()) {
    c.notes.insert(c.notes.begin(), all.rows.empty() ? "the results hold no rows" : "no rows match " + describe(f));
    return marked(all, c);
  }
  if (std::find(kernels.begin(), kernels.end(), base) == kernels.end()) {
    c.notes.push_back("baseline kernel '" + base + "' is not in the results");
    return marked(all, c);
  }
  const Varying v = varying_beside(r, xa);
  // Configurations in order of the swept value, then of the rest.
  using Key = std::tuple<double, std::string, std::string>;  // x value, config label, direction
  std::map<Key, std::map<std::string, const BenchRow*>> cells;
  for (const BenchRow& row : r.rows) {
    const std::string cfg = config_label(row, v, xa);
    cells[{axis_value(row, xa), cfg, row.direction}][row.kernel] = &row;
  }
  // A configuration the baseline did not run (e.g. backward of a forward-only
  // baseline) has nothing to compare against: left out, with a note.
  size_t dropped = 0;
  for (auto it = cells.begin(); it != cells.end();)
    if (!it->second.count(base)) {
      it = cells.erase(it);
      ++dropped;
    } else {
      ++it;
    }
  if (dropped > 0)
    c.notes.push_back(std::to_string(dropped) + " configuration(s) without a " + base + " run left out");
  bool several_directions = false;
  for (const auto& [key, ks] : cells) several_directions = several_directions || std::get<2>(key) != std::get<2>(cells.begin()->first);
  const std::optional<sim::i64> tokens = xa == BenchAxis::seq ? shared_tokens(r) : std::nullopt;
  if (tokens) c.notes.push_back(tokens_note(r, *tokens));
  for (const auto& [key, ks] : cells) {
    std::string label = category_of(xa, std::get<0>(key), tokens);
    if (!std::get<1>(key).empty()) label += (label.empty() ? "" : " ") + std::get<1>(key);
    if (several_directions) label += " " + std::get<2>(key);
    if (label.empty()) label = "all";
    c.categories.push_back(label);
  }
  for (const std::string& k : kernels) {
    if (k == base) continue;
    Series s;
    s.name = implementation_name(k);
    s.style = SeriesStyle::bars;
    s.color = implementation_colour(k);
    size_t cat = 0;
    for (const auto& [key, ks] : cells) {
      const auto kb = ks.find(base), kk = ks.find(k);
      double y = kNaN;
      std::string label, note;
      if (kb != ks.end() && kb->second->status != RunStatus::ok) {
        // No bar of the group can be drawn: the renderer says why once over it.
        label = implementation_name(base) + " " + std::string(to_string(kb->second->status));
        note = (kk != ks.end() && kk->second->status != RunStatus::ok ? std::string(to_string(kk->second->status)) + ", " : "") +
               "baseline " + std::string(to_string(kb->second->status));
      } else if (kk == ks.end()) {
        note = "not run";
      } else if (kk->second->status != RunStatus::ok) {
        label = std::string(to_string(kk->second->status));
      } else if (kb == ks.end()) {
        label = "no baseline";
      } else if (kk->second->time_ms_median > 0) {
        y = kb->second->time_ms_median / kk->second->time_ms_median;
        label = format_tick(y, TickFormat::plain) + "×";
      }
      s.x.push_back(static_cast<double>(cat++));
      s.y.push_back(y);
      s.point_labels.push_back(label);
      s.point_notes.push_back(note);
    }
    c.series.push_back(std::move(s));
  }
  c.ref_lines.push_back({false, 1.0, "1× = " + implementation_name(base), {150, 150, 150, 255}, Dash::dashed, 1.5, std::nullopt});
  if (c.series.empty()) c.notes.push_back("only the baseline kernel is in the results: nothing to compare");
  note_status(r, c.notes);
  title_memory_cap(r, c);
  return marked(all, c);
}

ChartSpec bench_passes_chart(const BenchResults& all, BenchMetric metric, const BenchFilter* filter) {
  const BenchFilter f = filter ? *filter : default_bench_filter(all);
  const BenchResults shown = filtered(all, f);
  const BenchResults& r = shown;
  ChartSpec c;
  c.id = metric == BenchMetric::time ? "bench-passes-time" : "bench-passes";
  c.kind = ChartKind::bars;
  c.subtitle = subtitle_of(r);
  const BenchAxis xa = shown_x_axis(all, shown, filter);
  note_filter(all, f, xa, c);
  c.title = metric == BenchMetric::time ? "Forward and backward time" : "Forward and backward throughput";
  c.x = {"configuration", Scale::linear, TickFormat::plain, {}, {}, false, ""};
  c.y = metric == BenchMetric::time
            ? Axis{"time (ms, median)", Scale::linear, TickFormat::plain, {}, {}, true, "ms"}
            : Axis{"TFLOP/s (fwd 4·B·H·N²·d, bwd 2.5×; causal /2)", Scale::linear,
                   TickFormat::plain, {}, {}, true, "TFLOP/s"};
  if (r.rows.empty()) {
    c.notes.insert(c.notes.begin(), all.rows.empty() ? "the results hold no rows" : "no rows match " + describe(f));
    return marked(all, c);
  }
  const Varying v = varying_beside(r, xa);
  // One group of bars per configuration (the swept value, then the rest); one
  // bar per kernel and pass, forward before backward.
  using Cfg = std::pair<double, std::string>;
  std::map<Cfg, std::map<std::string, const BenchRow*>> cells;
  std::vector<std::string> keys;  // "kernel fwd", in first-appearance order, forward first
  for (const std::string& dir : {std::string("fwd"), std::string("bwd")})
    for (const BenchRow& row : r.rows)
      if (row.direction == dir) {
        const std::string key = row.kernel + " " + row.direction;
        if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
      }
  for (const BenchRow& row : r.rows) cells[{axis_value(row, xa), config_label(row, v, xa)}][row.kernel + " " + row.direction] = &row;
  const std::optional<sim::i64> tokens = xa == BenchAxis::seq ? shared_tokens(r) : std::nullopt;
  if (tokens) c.notes.push_back(tokens_note(r, *tokens));
  for (const auto& [cfg, ks] : cells) {
    std::string label = category_of(xa, cfg.first, tokens);
    if (!cfg.second.empty()) label += (label.empty() ? "" : " ") + cfg.second;
    // One configuration only: name the problem itself.
    c.categories.push_back(label.empty() ? sim::describe(r.rows.front().problem) : label);
  }
  for (const std::string& key : keys) {
    const std::string kernel = key.substr(0, key.rfind(' '));
    const bool bwd = key.substr(key.rfind(' ') + 1) == "bwd";
    Series s;
    s.name = bwd ? run_name(kernel, "bwd") : implementation_name(kernel) + " forward";
    s.style = SeriesStyle::bars;
    s.color = implementation_colour(kernel);
    if (bwd) s.color.a = 150;  // a rung's backward: its forward's colour, lighter
    size_t cat = 0;
    for (const auto& [cfg, ks] : cells) {
      const auto it = ks.find(key);
      double y = kNaN;
      std::string label;
      if (it != ks.end()) {
        if (it->second->status == RunStatus::ok) {
          y = metric_of(*it->second, metric);
          label = format_tick(y, TickFormat::plain);
        } else {
          label = std::string(to_string(it->second->status));
        }
      }
      s.x.push_back(static_cast<double>(cat++));
      s.y.push_back(y);
      s.point_labels.push_back(label);
    }
    c.series.push_back(std::move(s));
  }
  if (std::none_of(r.rows.begin(), r.rows.end(), [](const BenchRow& x) { return x.direction == "bwd"; }))
    c.notes.push_back("the results hold no backward runs (flashlab bench --pass fwd+bwd)");
  note_status(r, c.notes);
  title_memory_cap(r, c);
  return marked(all, c);
}

ChartSpec bench_heatmap_chart(const BenchResults& all, const std::string& kernel_in, const BenchFilter* filter,
                              BenchMetric metric) {
  BenchFilter f = filter ? *filter : default_bench_filter(all, BenchAxis::batch);
  f.batch.reset();  // batch is the heatmap's own axis
  const BenchResults shown = filtered(all, f);
  const BenchResults& r = shown;
  ChartSpec c;
  const bool tflops = metric == BenchMetric::tflops;
  c.id = tflops ? "bench-heatmap-tflops" : "bench-heatmap";
  c.kind = ChartKind::heatmap;
  c.subtitle = subtitle_of(r);
  note_filter(all, f, BenchAxis::seq, c);  // batch, the other axis, is never fixed
  c.x = {"sequence length N", Scale::linear, TickFormat::binary, {}, {}, false, ""};
  c.y = {"batch B", Scale::linear, TickFormat::plain, {}, {}, false, ""};
  std::string kernel = kernel_in;
  // Default: the first kernel whose forward rows vary in both batch and seq.
  std::map<std::string, std::pair<std::set<sim::i64>, std::set<sim::i64>>> grid;
  for (const BenchRow& row : r.rows)
    if (row.direction == "fwd") {
      grid[row.kernel].first.insert(row.problem.batch);
      grid[row.kernel].second.insert(row.problem.seq_q);
    }
  if (kernel.empty())
    for (const std::string& k : kernels_of(r))
      if (grid[k].first.size() > 1 && grid[k].second.size() > 1) {
        kernel = k;
        break;
      }
  c.title = std::string(tflops ? "Forward throughput" : "Forward time") + ", batch × N" +
            (kernel.empty() ? "" : " — " + implementation_name(kernel));
  if (kernel.empty() || grid[kernel].first.empty()) {
    c.notes.insert(c.notes.begin(), kernel.empty() ? "needs forward rows of one kernel varying in both batch and sequence length"
                                                   : "kernel '" + kernel + "' has no forward rows in the results");
    return marked(all, c);
  }
  // A constant-token grid (B·N the same in every run) is a diagonal of the
  // batch × N table, not a grid: said so, and where its runs are drawn.
  {
    BenchResults fwd;
    for (const BenchRow& row : r.rows)
      if (row.kernel == kernel && row.direction == "fwd") fwd.rows.push_back(row);
    if (const std::optional<sim::i64> tokens = shared_tokens(fwd)) {
      // First: an empty chart's first note is why (drawn in its plot, the report's reason).
      c.notes.insert(c.notes.begin(), "not a batch × N grid: " + tokens_note(fwd, *tokens) +
                                          "; bench-time and bench-tflops draw these runs along N");
      return marked(all, c);
    }
  }
  const std::vector<sim::i64> batches(grid[kernel].first.begin(), grid[kernel].first.end());
  const std::vector<sim::i64> seqs(grid[kernel].second.begin(), grid[kernel].second.end());
  Heatmap& h = c.heatmap;
  for (sim::i64 b : batches) h.row_labels.push_back(std::to_string(b));
  for (sim::i64 n : seqs) {
    h.col_labels.push_back(n_label(n));
    h.col_values.push_back(static_cast<double>(n));
  }
  h.values.assign(batches.size() * seqs.size(), kNaN);
  h.cell_text.assign(batches.size() * seqs.size(), "");
  h.value_label = tflops ? "TFLOP/s" : "time (ms)";
  h.value_unit = tflops ? "TFLOP/s" : "ms";
  h.value_format = TickFormat::plain;
  bool duplicates = false;
  std::vector<bool> filled(h.values.size(), false);
  // Non-causal first: when both are present the cell shows the non-causal run.
  std::vector<const BenchRow*> rows;
  for (const BenchRow& row : r.rows)
    if (row.kernel == kernel && row.direction == "fwd") rows.push_back(&row);
  std::stable_sort(rows.begin(), rows.end(), [](const BenchRow* a, const BenchRow* b) {
    return static_cast<int>(a->problem.causal) < static_cast<int>(b->problem.causal);
  });
  for (const BenchRow* row : rows) {
    const size_t bi = static_cast<size_t>(std::lower_bound(batches.begin(), batches.end(), row->problem.batch) - batches.begin());
    const size_t ni = static_cast<size_t>(std::lower_bound(seqs.begin(), seqs.end(), row->problem.seq_q) - seqs.begin());
    const size_t idx = bi * seqs.size() + ni;
    if (filled[idx]) {
      duplicates = true;
      continue;
    }
    filled[idx] = true;
    if (row->status == RunStatus::ok) h.values[idx] = tflops ? row->tflops : row->time_ms_median;
    else h.cell_text[idx] = std::string(to_string(row->status));
  }
  // A grid half empty or worse (two runs on a 2 × 2 grid) is not a heatmap: left empty, saying why.
  const auto measured = static_cast<size_t>(std::count(filled.begin(), filled.end(), true));
  if (2 * measured <= filled.size()) {
    c.heatmap = Heatmap{};
    c.notes.insert(c.notes.begin(), "only " + std::to_string(measured) + " of the " + std::to_string(filled.size()) +
                                        " batch × N cells were run: too few for a heatmap");
    return marked(all, c);
  }
  if (duplicates) c.notes.push_back("several runs per cell (causal, heads or d vary): each cell shows the first non-causal one");
  note_status(r, c.notes);
  title_memory_cap(r, c);
  return marked(all, c);
}

}  // namespace flashlab::analysis
