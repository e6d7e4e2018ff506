// The charts FlashLab draws, as ChartSpec values built from the simulator
// (model charts) and from measured results (bench charts). Every number comes
// from sim/ and analysis/; the builders only arrange it.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/bench_results.hpp"
#include "flashlab/analysis/chart.hpp"
#include "flashlab/analysis/sweep.hpp"

namespace flashlab::analysis {

// Everything a model chart needs: the problem, the machine, tile options and
// which algorithms to draw.
struct ChartContext {
  sim::AttentionProblem problem;
  sim::HardwareModel hw;
  sim::SimOptions options;  // explicit tiles / SRAM override, as `flashlab sim` takes them
  std::vector<sim::Algorithm> algorithms{sim::Algorithm::standard, sim::Algorithm::fa1, sim::Algorithm::fa2};
};

// Roofline of ctx.hw: the HBM slope, a compute ceiling per dtype and unit (the
// problem's dtype and unit drawn solid), the ridge point labelled, each
// algorithm's predicted point (exact FLOPs over simulated HBM bytes) and, when
// `measured` is given, each successful run placed as the hierarchical roofline
// places it (placement.hpp), at its HBM AI and measured FLOP/s (a point above
// its roof gets a note; rows that name no model are left out, with a note).
ChartSpec roofline_chart(const ChartContext& ctx, const BenchResults* measured = nullptr);

// HBM bytes against N (axis seq), M (axis sram) or d (axis head_dim) for every
// algorithm, with Θ(Nd + N²) and Θ(N²d²/M) fitted through standard and FA1 at
// the largest point. `values` replaces the default sweep when given. The
// current value of the axis is marked.
ChartSpec io_chart(const ChartContext& ctx, SweepAxis axis, const std::vector<sim::i64>* values = nullptr);
std::vector<sim::i64> default_sweep_values(SweepAxis axis);

// Arithmetic intensity (exact FLOPs / HBM bytes) against N, with the ridge.
ChartSpec ai_vs_n_chart(const ChartContext& ctx, const std::vector<sim::i64>* values = nullptr);

// ---- measured results -----------------------------------------------------------

enum class BenchMetric { time, tflops, memory };
// What varies across the rows of a result set.
enum class BenchAxis { seq, batch, heads, head_dim, causal, none };
std::string_view to_string(BenchAxis a);
BenchAxis bench_x_axis(const BenchResults& r);  // seq first, then batch, heads, head_dim, causal

// Which rows a bench chart shows: a value per parameter, or any (unset). A
// chart of every configuration at once (kernels × batch × causal × ...) is
// unreadable; the lab reports fix all but one parameter.
struct BenchFilter {
  std::optional<sim::i64> batch, heads, head_dim;
  std::optional<bool> causal;
  std::optional<sim::DType> dtype;
  bool matches(const BenchRow& r) const;
  bool any() const { return batch || heads || head_dim || causal || dtype; }
};
// Every parameter that varies, except the x axis (and `keep`), fixed to its
// first value in the results.
BenchFilter default_bench_filter(const BenchResults& r, BenchAxis keep = BenchAxis::none);
// "batch=32,causal=yes,heads=16,head-dim=64,dtype=bf16"; "" is no filter.
// Throws std::invalid_argument with a one-line reason.
BenchFilter parse_bench_filter(const std::string& text);
std::string describe(const BenchFilter& f);  // "batch 32, causal"; "" when none
// The distinct values of each parameter in the results, for pickers.
struct BenchValues {
  std::vector<sim::i64> batch, heads, head_dim, seq;
  std::vector<bool> causal;
  std::vector<sim::DType> dtype;
};
BenchValues bench_values(const BenchResults& r);

// Time, TFLOP/s or peak memory against the swept parameter, one series per
// kernel (backward rows dashed; one per value of any parameter the filter
// leaves free); OOM cells marked on the bottom edge. `filter` null: the default.
ChartSpec bench_metric_chart(const BenchResults& r, BenchMetric metric, const BenchFilter* filter = nullptr);
// Speed-up of every kernel over `baseline` (default: torch_eager, else
// naive_cublas, else naive, else the first kernel) per configuration, as bars.
ChartSpec bench_speedup_chart(const BenchResults& r, const std::string& baseline = "", const BenchFilter* filter = nullptr);
// Batch × seq grid of one kernel's forward time (default: the first kernel with
// rows varying in both), OOM cells marked. The filter's batch is ignored.
ChartSpec bench_heatmap_chart(const BenchResults& r, const std::string& kernel = "", const BenchFilter* filter = nullptr);

// The CLI's --chart names, in menu order, and one dispatcher over them. Bench
// charts need `results`; a chart that cannot be built throws
// std::invalid_argument with a one-line reason.
const std::vector<std::string>& chart_ids();
bool is_bench_chart(const std::string& id);
ChartSpec build_chart(const std::string& id, const ChartContext& ctx, const BenchResults* results,
                      const std::string& kernel = "", const std::string& baseline = "",
                      const BenchFilter* filter = nullptr);

}  // namespace flashlab::analysis
