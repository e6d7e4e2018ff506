// The chart table: every chart's id, labels, what it needs and its builder.
#include "flashlab/analysis/charts/chart_table.hpp"

#include <algorithm>
#include <initializer_list>
#include <stdexcept>

#include "flashlab/analysis/charts/hierarchical_roofline.hpp"
#include "flashlab/analysis/charts/implementations.hpp"

namespace flashlab::analysis {

namespace {

ChartSpec roofline(const ChartContext& ctx, const BenchResults* results, const BenchChoice&) {
  return roofline_chart(ctx, results);
}

// The hierarchical roofline of ctx.hw (HBM, L2 when known, SMEM); measured runs
// placed on it at each level's AI when results are given.
ChartSpec roofline_hier(const ChartContext& ctx, const BenchResults* results, const BenchChoice&) {
  const HierarchicalCeilings ceilings = ceilings_of(ctx);
  const Placement placed = results ? place_runs(*results, ctx.hw, ceilings) : Placement{};
  return hierarchical_roofline_chart(ceilings, placed, ctx.problem.dtype);
}

template <SweepAxis axis>
ChartSpec io(const ChartContext& ctx, const BenchResults*, const BenchChoice&) {
  return io_chart(ctx, axis);
}

ChartSpec ai_vs_n(const ChartContext& ctx, const BenchResults*, const BenchChoice&) { return ai_vs_n_chart(ctx); }

template <BenchMetric metric>
ChartSpec bench_metric(const ChartContext&, const BenchResults* results, const BenchChoice& c) {
  return bench_metric_chart(*results, metric, c.filter);
}

template <BenchMetric metric>
ChartSpec bench_passes(const ChartContext&, const BenchResults* results, const BenchChoice& c) {
  return bench_passes_chart(*results, metric, c.filter);
}

ChartSpec bench_speedup(const ChartContext&, const BenchResults* results, const BenchChoice& c) {
  return bench_speedup_chart(*results, c.baseline, c.filter);
}

template <BenchMetric metric>
ChartSpec bench_heatmap(const ChartContext&, const BenchResults* results, const BenchChoice& c) {
  return bench_heatmap_chart(*results, c.kernel, c.filter, metric);
}

// A flag of ChartEntry ("this chart reads the baseline pick", ...).
using Trait = bool ChartEntry::*;

ChartEntry entry(std::string_view id, std::string_view tab, std::string_view title, std::string_view reading,
                 bool needs_results, ChartBuilder b, std::initializer_list<Trait> traits) {
  ChartEntry e;
  e.id = id;
  e.tab = tab;
  e.title = title;
  e.reading = reading;
  e.needs_results = needs_results;
  e.build = b;
  for (Trait t : traits) e.*t = true;
  return e;
}

ChartEntry model_chart(std::string_view id, std::string_view tab, std::string_view title, std::string_view reading,
                       ChartBuilder b, std::initializer_list<Trait> traits = {}) {
  return entry(id, tab, title, reading, false, b, traits);
}

ChartEntry bench_chart(std::string_view id, std::string_view tab, std::string_view title, std::string_view reading,
                       ChartBuilder b, std::initializer_list<Trait> traits = {}) {
  return entry(id, tab, title, reading, true, b, traits);
}

}  // namespace

const std::vector<ChartEntry>& chart_table() {
  static const std::vector<ChartEntry> table{
      model_chart("roofline", "Roofline", "Roofline",
                  "Each algorithm at its arithmetic intensity (FLOPs per DRAM byte) under the GPU's two roofs: left of "
                  "the ridge a point is memory-bound and only fewer bytes make it faster, right of it compute-bound; a "
                  "measured point's distance below the roof is what the kernel leaves unused.",
                  &roofline),
      model_chart("roofline-hier", "HBM/L2/SMEM roofline", "Hierarchical roofline",
                  "The same runs against three bandwidth roofs (HBM, L2, shared memory): the level whose roof a point "
                  "sits closest to is its bottleneck.",
                  &roofline_hier),
      model_chart("io-vs-n", "HBM vs N", "HBM accesses vs N",
                  "HBM accesses as the sequence grows: standard attention's grow as N² (it writes S and P), "
                  "FlashAttention's as N²d²/M, so the gap widens with N.",
                  &io<SweepAxis::seq>),
      model_chart("io-vs-m", "HBM vs M", "HBM accesses vs M",
                  "HBM accesses against the SRAM size M: FlashAttention's fall as 1/M (larger tiles, fewer passes over "
                  "K and V); standard attention's do not depend on M.",
                  &io<SweepAxis::sram>),
      model_chart("io-vs-d", "HBM vs d", "HBM accesses vs d",
                  "HBM accesses against the head dimension d: FlashAttention's grow as d² (fewer rows of a tile fit "
                  "in SRAM), standard attention's as d.",
                  &io<SweepAxis::head_dim>),
      model_chart("ai-vs-n", "AI vs N", "Arithmetic intensity vs N",
                  "Arithmetic intensity against N: where a line crosses the ridge the algorithm turns compute-bound.",
                  &ai_vs_n, {&ChartEntry::shows_ai_at_cursor}),
      bench_chart("bench-time", "Time", "Forward time",
                  "The median time of each implementation along the swept parameter; lower is better, ✕ is a run that "
                  "ran out of memory.",
                  &bench_metric<BenchMetric::time>),
      bench_chart("bench-tflops", "TFLOP/s", "Throughput",
                  "Throughput by the FlashAttention convention along the swept parameter; higher is better, and the gap "
                  "to the GPU's peak is what the kernel leaves on the table.",
                  &bench_metric<BenchMetric::tflops>),
      bench_chart("bench-memory", "Memory", "Peak device memory",
                  "Peak device memory of each run (solid) beside the simulator's prediction (dotted): standard "
                  "attention's grows as N² with S and P in memory, FlashAttention's linearly.",
                  &bench_metric<BenchMetric::memory>),
      bench_chart("bench-passes-time", "Fwd/bwd time", "Forward and backward time",
                  "Forward and backward time side by side per configuration: the backward does 2.5 × the forward's "
                  "FLOPs, so expect it 2–3 × slower.",
                  &bench_passes<BenchMetric::time>),
      bench_chart("bench-passes", "Fwd/bwd TFLOP/s", "Forward and backward throughput",
                  "Forward and backward throughput side by side: a backward below its forward's TFLOP/s loses time "
                  "beyond its extra FLOPs.",
                  &bench_passes<BenchMetric::tflops>),
      bench_chart("bench-speedup", "Speed-up", "Speed-up",
                  "The baseline's time divided by each implementation's: above 1 × it is faster; a cell whose baseline "
                  "ran out of memory has no bar.",
                  &bench_speedup, {&ChartEntry::picks_baseline}),
      bench_chart("bench-heatmap", "Batch×N", "Batch × N",
                  "The median forward time of one implementation over batch × N: it grows linearly in the batch and "
                  "quadratically in N.",
                  &bench_heatmap<BenchMetric::time>, {&ChartEntry::picks_kernel, &ChartEntry::batch_is_axis}),
      bench_chart("bench-heatmap-tflops", "TFLOP/s B×N", "Throughput, batch × N",
                  "The throughput of one implementation over batch × N: small batches or short sequences leave the "
                  "GPU's SMs idle (low TFLOP/s), large ones approach the kernel's plateau.",
                  &bench_heatmap<BenchMetric::tflops>, {&ChartEntry::picks_kernel, &ChartEntry::batch_is_axis}),
  };
  return table;
}

const ChartEntry* find_chart(std::string_view id) {
  for (const ChartEntry& e : chart_table())
    if (e.id == id) return &e;
  return nullptr;
}

std::string chart_id_list(std::string_view separator) {
  std::string s;
  for (const ChartEntry& e : chart_table()) s += (s.empty() ? "" : std::string(separator)) + std::string(e.id);
  return s;
}

const std::vector<std::string>& chart_ids() {
  static const std::vector<std::string> ids = [] {
    std::vector<std::string> v;
    for (const ChartEntry& e : chart_table()) v.emplace_back(e.id);
    return v;
  }();
  return ids;
}

bool is_bench_chart(const std::string& id) {
  const ChartEntry* e = find_chart(id);
  return e && e->needs_results;
}

ChartSpec build_chart(const std::string& id, const ChartContext& ctx, const BenchResults* results,
                      const std::string& kernel, const std::string& baseline, const BenchFilter* filter) {
  const ChartEntry* e = find_chart(id);
  if (!e) throw std::invalid_argument("unknown chart '" + id + "' (expected one of " + chart_id_list() + ")");
  if (e->needs_results && !results)
    throw std::invalid_argument("chart '" + id + "' draws measured results: give --results FILE (written by flashlab bench)");
  return build_chart(*e, ctx, results, BenchChoice{kernel, baseline, filter});
}

ChartSpec build_chart(const ChartEntry& e, const ChartContext& ctx, const BenchResults* results,
                      const BenchChoice& choice) {
  ChartSpec c = e.build(ctx, results, choice);
  // Each kernel file in a colour of its own, in the order they first appear (a
  // name's hash alone may give two of them one colour).
  std::vector<std::string> files;
  for (Series& s : c.series) {
    const auto at = s.name.find(" (your kernel)");
    if (at == std::string::npos) continue;
    const std::string who = s.name.substr(0, at);
    auto it = std::find(files.begin(), files.end(), who);
    if (it == files.end()) it = files.insert(files.end(), who);
    s.color = user_kernel_colour(static_cast<std::size_t>(it - files.begin()));
  }
  return c;
}

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.rfind(prefix, 0) == 0; }

// Series of standard attention (S and P in memory): eager PyTorch and the naive rungs.
bool shows_standard(const ChartSpec& c) {
  return std::any_of(c.series.begin(), c.series.end(), [](const Series& s) {
    for (const char* id : {"torch_eager", "naive", "naive_cublas", "naive_bwd"})
      if (starts_with(s.name, implementation_name(id))) return true;
    return false;
  });
}

bool shows_flash(const ChartSpec& c) {
  return std::any_of(c.series.begin(), c.series.end(),
                     [](const Series& s) { return s.name.find("FlashAttention") != std::string::npos; });
}

bool marks_oom(const ChartSpec& c) {
  return std::any_of(c.markers.begin(), c.markers.end(), [](const Marker& m) { return starts_with(m.label, "OOM"); });
}

bool predicted(const ChartSpec& c) {
  return std::any_of(c.series.begin(), c.series.end(), [](const Series& s) {
    return s.name.size() > 12 && s.name.compare(s.name.size() - 11, 11, "(predicted)") == 0 && !s.x.empty();
  });
}

bool some_without_value(const ChartSpec& c) {
  for (const Series& s : c.series)
    for (const std::string& n : s.point_notes)
      if (!n.empty()) return true;
  return false;
}

std::string drawn_on_text(const ChartSpec& c) {
  const std::vector<int> on = coinciding_series(c);
  if (std::none_of(on.begin(), on.end(), [](int k) { return k >= 0; })) return "";
  return " Series that lie on one another are drawn dashed with ringed markers over the first, and the legend names "
         "them under it ('=' the same numbers, '≈' closer than the eye can tell).";
}

// How a growth reads on the chart's axes: both log, a power of the swept
// value is a straight line whose slope is the power.
std::string axes_text(const ChartSpec& c) {
  if (c.kind != ChartKind::xy || c.x.scale == Scale::linear || c.y.scale == Scale::linear) return "";
  return " Both axes are logarithmic: what grows as a power of the swept value is a straight line, of slope 1 when it "
         "grows linearly and 2 when it grows as its square.";
}

}  // namespace

std::string chart_reading(const ChartEntry& e, const ChartSpec& c) {
  const std::string id(e.id);
  const std::string oom = marks_oom(c) ? ", ✕ on the bottom edge a run that ran out of memory" : "";
  const std::string along = c.kind == ChartKind::bars ? ", a bar per configuration" : " along the swept parameter";
  if (id == "bench-time")
    return "The median time of each implementation" + along + "; lower is better" + oom + "." + axes_text(c) +
           drawn_on_text(c);
  if (id == "bench-tflops")
    return "Throughput by the FlashAttention convention of each implementation" + along +
           "; higher is better, and the gap to the GPU's peak is what the kernel leaves on the table" + oom + "." +
           drawn_on_text(c);
  if (id == "bench-memory") {
    std::string s = "Peak device memory of each run";
    if (predicted(c)) s += " (solid) beside the simulator's count of the tensors the pass keeps in memory (dotted)";
    s += oom + ".";
    const std::string x = c.x.label;
    if (starts_with(x, "sequence length")) {
      if (shows_standard(c)) s += " Standard attention holds S and P, B·H·N² elements each, so its memory grows as N²";
      if (shows_flash(c))
        s += std::string(shows_standard(c) ? "; " : " ") + "FlashAttention holds Q, K, V and O alone, so its memory " +
             "grows linearly in N";
      if (shows_standard(c) || shows_flash(c)) s += ".";
    } else if (starts_with(x, "batch")) {
      s += " Every tensor of the pass grows linearly with the batch.";
    } else if (starts_with(x, "heads") && x.find("d = ") != std::string::npos) {
      s += " At a fixed embedding dim H·d, Q, K, V and O keep their size whatever the heads" +
           std::string(shows_standard(c) ? "; S and P, B·H·N² each, grow with H." : ".");
    } else if (starts_with(x, "head dimension")) {
      s += " Q, K, V and O grow linearly with d" +
           std::string(shows_standard(c) ? "; S and P, B·H·N² each, do not." : ".");
    }
    return s + axes_text(c) + drawn_on_text(c);
  }
  if (id == "bench-speedup")
    return "The baseline's time divided by each implementation's: above 1 × it is faster" +
           std::string(some_without_value(c) ? "; where the baseline or an implementation did not run, the reason "
                                               "stands in place of its bars"
                                             : "") +
           ".";
  if (id == "bench-heatmap")
    return "The median forward time of one implementation over batch × N; the FLOPs grow linearly in the batch and "
           "quadratically in N, and the time with them once the GPU is full.";
  return std::string(e.reading);
}

}  // namespace flashlab::analysis
