// The charts FlashLab draws, as ChartSpec values built from the simulator
// (model charts) and from measured results (bench charts). Every number comes
// from sim/ and analysis/; the builders only arrange it.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_filter.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/model/roofline_ceilings.hpp"
#include "flashlab/analysis/model/sweep.hpp"

namespace flashlab::analysis {

// Everything a model chart needs: the problem, the machine, tile options and
// which algorithms to draw.
struct ChartContext {
  sim::AttentionProblem problem;
  sim::HardwareModel hw;
  sim::SimOptions options;  // explicit tiles / SRAM override, as `flashlab sim` takes them
  std::vector<sim::Algorithm> algorithms = default_algorithms();
  // When the hardware is a measured profile's file (measured_profile_of): its
  // figures name each tensor roof's source and add the Ampere path (mma.sync).
  std::shared_ptr<const sim::MeasuredProfile> profile;
};
// The ceilings of ctx: from its profile when it has one, else from ctx.hw.
HierarchicalCeilings ceilings_of(const ChartContext& ctx);

// Roofline of ctx.hw: the HBM slope, a compute ceiling per dtype and unit (the
// problem's dtype and unit drawn solid), the ridge point labelled, each
// algorithm's predicted point (exact FLOPs over the DRAM bytes the L2 model
// predicts) and, when `measured` is given, each successful run placed as the
// hierarchical roofline places it (placement.hpp), at its DRAM AI (the
// counters' bytes where the run has them) and measured FLOP/s (a point above
// its roof gets a note; rows that name no model are left out, with a note).
ChartSpec roofline_chart(const ChartContext& ctx, const BenchResults* measured = nullptr);

// Requests to global memory (the paper's HBM accesses) against N (axis seq),
// M (axis sram) or d (axis head_dim) for every algorithm; against N also what
// reaches DRAM after the L2 model (dashed, the algorithm's colour; points
// whose L2 is not modelled left out, with a note) and a vertical line where
// K and V of one head fill the L2 (sim::seq_where_kv_fill_l2), when it falls
// inside the swept N; with Θ(Nd + N²) and Θ(N²d²/M) fitted at the largest point: the
// first through the paper's standard attention (the first algorithm of
// sim::all_algorithms() that materialises S and P) when it is drawn, else the
// first drawn algorithm; the second through a drawn algorithm that keeps
// running statistics, preferring the loop order of the bound's proof (outer
// loop over K_j, V_j: FlashAttention-1). `values` replaces the default sweep when given. The
// current value of the axis is marked.
ChartSpec io_chart(const ChartContext& ctx, SweepAxis axis, const std::vector<sim::i64>* values = nullptr);
std::vector<sim::i64> default_sweep_values(SweepAxis axis);

// Arithmetic intensity against N: exact FLOPs over DRAM bytes after the L2
// (solid, what the roofline uses) and over the requests (dashed, the paper's),
// with the ridge and the N where K and V of one head fill the L2.
ChartSpec ai_vs_n_chart(const ChartContext& ctx, const std::vector<sim::i64>* values = nullptr);

// ---- measured results -----------------------------------------------------------

// The note of a roofline given results it cannot place a run of.
inline constexpr const char* kNoRunPlaced = "no measured run placed on the roofline";

enum class BenchMetric { time, tflops, memory };
// Time, TFLOP/s or peak memory against the swept parameter, one series per
// kernel (backward rows dashed; one per value of any parameter the filter
// leaves free); OOM cells marked on the bottom edge. `filter` null: the default.
ChartSpec bench_metric_chart(const BenchResults& r, BenchMetric metric, const BenchFilter* filter = nullptr);
// Speed-up of every kernel over `baseline` (default: torch_eager, else
// naive_cublas, else naive, else the first kernel) per configuration, as bars.
ChartSpec bench_speedup_chart(const BenchResults& r, const std::string& baseline = "", const BenchFilter* filter = nullptr);
// Forward and backward side by side as bars: one group per configuration,
// one bar per kernel and pass (backward lighter): TFLOP/s by each pass's
// convention (the lab reports' efficiency summary) or time (forward against
// backward). `metric` is tflops or time.
ChartSpec bench_passes_chart(const BenchResults& r, BenchMetric metric, const BenchFilter* filter = nullptr);
// Batch × seq grid of one kernel's forward time (default: the first kernel with
// rows varying in both), OOM cells marked. The filter's batch is ignored.
ChartSpec bench_heatmap_chart(const BenchResults& r, const std::string& kernel = "", const BenchFilter* filter = nullptr,
                              BenchMetric metric = BenchMetric::time);

}  // namespace flashlab::analysis
