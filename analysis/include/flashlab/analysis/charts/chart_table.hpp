// The one list of charts FlashLab draws. The GUI's plot tabs and its "every
// chart" export, the scenarios' tab and export names, `flashlab export --chart`
// and the tests all iterate this table; none restates it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/charts/chart_builders.hpp"

namespace flashlab::analysis {

// The bench charts' choices; empty or null: the builder's default.
struct BenchChoice {
  std::string kernel;    // the heatmap's kernel
  std::string baseline;  // the speed-up's baseline kernel
  const BenchFilter* filter = nullptr;
};

// Builds one chart. `results` is null when none are loaded; a chart that
// needs them is never called without.
using ChartBuilder = ChartSpec (*)(const ChartContext& ctx, const BenchResults* results, const BenchChoice& choice);

struct ChartEntry {
  std::string_view id;     // "io-vs-n": --chart, scenario tabs, exported file names, ChartSpec::id
  std::string_view tab;    // the GUI tab's short label: "HBM vs N"
  std::string_view title;  // what a chart that cannot be drawn is called: "HBM accesses vs N"
  std::string_view reading;  // its caption's first sentences: what it shows and what to read from it
  bool needs_results = false;  // draws measured results (the bench charts)
  // Which bench choices the chart reads (the GUI shows a picker for each).
  bool picks_kernel = false, picks_baseline = false;
  bool batch_is_axis = false;  // the filter's batch is ignored: batch is one of its axes
  // Its x axis is N and its y the arithmetic intensity: the step-through's
  // "AI so far" point belongs on it.
  bool shows_ai_at_cursor = false;
  ChartBuilder build = nullptr;
};

// The reading of a chart as built: the entry's reading, and for the bench
// charts what this chart holds — ✕ only where a run ran out of memory, the
// dotted prediction only where it is drawn, N² only beside standard attention
// along N, series drawn on one another where there are such. Every sentence
// holds for the chart it sits under.
std::string chart_reading(const ChartEntry& e, const ChartSpec& c);

// In menu order: model charts first, then the bench charts.
const std::vector<ChartEntry>& chart_table();
// nullptr for an unknown id.
const ChartEntry* find_chart(std::string_view id);
// "roofline, roofline-hier, ..., bench-heatmap" with the given separator.
std::string chart_id_list(std::string_view separator = ", ");

// The ids of chart_table(), in its order.
const std::vector<std::string>& chart_ids();
bool is_bench_chart(const std::string& id);  // needs measured results
// One chart by id. A chart that needs results and has none, or an unknown id,
// throws std::invalid_argument with a one-line reason.
ChartSpec build_chart(const std::string& id, const ChartContext& ctx, const BenchResults* results,
                      const std::string& kernel = "", const std::string& baseline = "",
                      const BenchFilter* filter = nullptr);

}  // namespace flashlab::analysis
