// Measured ring runs (ring_results.hpp) as charts: the scaling efficiency
// against the tokens each GPU holds, and where a pass's time goes. Every
// number is a RingRow's (ring_rows); the builders choose the runs and arrange
// them. `flashlab ring --results FILE --chart ID --out FILE` exports them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/sim/measurement/measurement.hpp"

namespace flashlab::analysis {

// Which runs a ring chart draws. A run is its problem and its steps.
struct RingChartOptions {
  // ring-scaling: one pass, or both when unset; ring-time: the pass drawn (unset: the forward).
  std::optional<sim::Pass> pass;
  sim::RingLayout layout = sim::RingLayout::zigzag;  // runs of this layout only
  // "fused" or "pairwise": runs with those steps only. Empty: ring-scaling
  // draws every step mode of the file (pairwise fainter, dotted), ring-time
  // the fused runs when the file has them, else the pairwise ones.
  std::string steps;
};

// Scaling efficiency t(P = 1) / (P · t) (the rows' scaling_efficiency)
// against the tokens per GPU N / P (log2): one series per model and pass (and
// step mode, and P where those vary), the forward solid and the backward
// dashed, pairwise fainter and dotted beside fused, a reference line at 1.
// A multi-GPU run without a P = 1 run of the same attention is left out with
// a note. The subtitle names the layout, the GPUs and the links from the
// file's meta; a note names the steps of the P = 1 runs measured against.
ChartSpec ring_scaling_chart(const sim::MeasuredRuns& runs, const RingChartOptions& opt = {});

// Where one pass's time goes, a stacked bar per multi-GPU run (file order),
// as shares of its time (%), its time in ms above it: the rung's launches,
// the step's other compute (compute − rung), the exposed communication (at
// most what the busiest GPU's compute leaves of the time: the longest wait is
// another GPU's when it exceeds it, noted), and the rest of the time.
// Segments are labelled in ms where they fit.
ChartSpec ring_time_chart(const sim::MeasuredRuns& runs, const RingChartOptions& opt = {});

struct RingChartEntry {
  std::string_view id;   // "ring-scaling": --chart, ChartSpec::id
  std::string_view what; // one line for --help
  ChartSpec (*build)(const sim::MeasuredRuns&, const RingChartOptions&) = nullptr;
};
// The one list of ring charts: the CLI's --chart and the tests iterate it.
const std::vector<RingChartEntry>& ring_chart_table();
std::string ring_chart_id_list(std::string_view separator = ", ");
const RingChartEntry* find_ring_chart(std::string_view id);  // nullptr when unknown

// One chart by id. Throws std::invalid_argument, one line, for an unknown id
// or a chart with nothing to draw (no multi-GPU runs of the layout and steps,
// no P = 1 runs for the scaling): the chart's own reason.
ChartSpec build_ring_chart(const std::string& id, const sim::MeasuredRuns& runs, const RingChartOptions& opt = {});

}  // namespace flashlab::analysis
