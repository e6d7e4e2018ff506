// The chart table: every chart's id, labels, what it needs and its builder.
#include "flashlab/analysis/chart_table.hpp"

#include <initializer_list>
#include <stdexcept>

#include "flashlab/analysis/hierarchical_roofline.hpp"

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

ChartSpec bench_heatmap(const ChartContext&, const BenchResults* results, const BenchChoice& c) {
  return bench_heatmap_chart(*results, c.kernel, c.filter);
}

// A flag of ChartEntry ("this chart reads the baseline pick", ...).
using Trait = bool ChartEntry::*;

ChartEntry entry(std::string_view id, std::string_view tab, std::string_view title, bool needs_results, ChartBuilder b,
                 std::initializer_list<Trait> traits) {
  ChartEntry e;
  e.id = id;
  e.tab = tab;
  e.title = title;
  e.needs_results = needs_results;
  e.build = b;
  for (Trait t : traits) e.*t = true;
  return e;
}

ChartEntry model_chart(std::string_view id, std::string_view tab, std::string_view title, ChartBuilder b,
                       std::initializer_list<Trait> traits = {}) {
  return entry(id, tab, title, false, b, traits);
}

ChartEntry bench_chart(std::string_view id, std::string_view tab, std::string_view title, ChartBuilder b,
                       std::initializer_list<Trait> traits = {}) {
  return entry(id, tab, title, true, b, traits);
}

}  // namespace

const std::vector<ChartEntry>& chart_table() {
  static const std::vector<ChartEntry> table{
      model_chart("roofline", "Roofline", "Roofline", &roofline),
      model_chart("roofline-hier", "HBM/L2/SMEM roofline", "Hierarchical roofline", &roofline_hier),
      model_chart("io-vs-n", "HBM vs N", "HBM accesses vs N", &io<SweepAxis::seq>),
      model_chart("io-vs-m", "HBM vs M", "HBM accesses vs M", &io<SweepAxis::sram>),
      model_chart("io-vs-d", "HBM vs d", "HBM accesses vs d", &io<SweepAxis::head_dim>),
      model_chart("ai-vs-n", "AI vs N", "Arithmetic intensity vs N", &ai_vs_n, {&ChartEntry::shows_ai_at_cursor}),
      bench_chart("bench-time", "Time", "Forward time", &bench_metric<BenchMetric::time>),
      bench_chart("bench-tflops", "TFLOP/s", "Throughput", &bench_metric<BenchMetric::tflops>),
      bench_chart("bench-memory", "Memory", "Peak device memory", &bench_metric<BenchMetric::memory>),
      bench_chart("bench-passes-time", "Fwd/bwd time", "Forward and backward time",
                  &bench_passes<BenchMetric::time>),
      bench_chart("bench-passes", "Fwd/bwd TFLOP/s", "Forward and backward throughput",
                  &bench_passes<BenchMetric::tflops>),
      bench_chart("bench-speedup", "Speed-up", "Speed-up", &bench_speedup, {&ChartEntry::picks_baseline}),
      bench_chart("bench-heatmap", "Batch×N", "Batch × N", &bench_heatmap,
                  {&ChartEntry::picks_kernel, &ChartEntry::batch_is_axis}),
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
  return e->build(ctx, results, BenchChoice{kernel, baseline, filter});
}

}  // namespace flashlab::analysis
