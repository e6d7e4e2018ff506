// Sweeps of the model over one axis (N, d, M, B or H) for several algorithms,
// with the IO-complexity reference curves beside the exact counts.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "flashlab/analysis/model/roofline.hpp"

namespace flashlab::analysis {

enum class SweepAxis { seq, head_dim, sram, batch, heads };
std::string_view to_string(SweepAxis a);  // "seq", "head-dim", "sram", "batch", "heads"

// What a sweep, a model chart and the lecture comparison show unless told
// otherwise: the algorithms whose record says drawn_by_default (the paper's
// standard attention, FlashAttention-1 and -2), in the records' order.
const std::vector<sim::Algorithm>& default_algorithms();

struct SweepSpec {
  SweepAxis axis = SweepAxis::seq;
  std::vector<i64> values;
};

// "seq=512:65536:x2" (geometric), "head-dim=32:256:+32" (arithmetic),
// "sram=64KiB,128KiB,192KiB" (list). Throws std::invalid_argument with a
// one-line reason. At most 100,000 points.
SweepSpec parse_sweep(const std::string& text);

// Θ(Nd + N²) and Θ(N²d²/M) of the paper with constant 1, in bytes for all heads:
// (N_q·d + N_q·N_kv)·B·H·s and N_q·N_kv·d²/M·B·H·s, with M in elements and s
// the dtype size.
double theta_standard_bytes(const sim::AttentionProblem& p);
double theta_flash_bytes(const sim::AttentionProblem& p, i64 sram_bytes);
// The algorithm Θ(Nd + N²) is the paper's bound of: its standard attention,
// the first of sim::all_algorithms() that materialises S and P.
sim::Algorithm standard_attention();

struct SweepRow {
  i64 value = 0;
  sim::SimResult result;
  RooflineEstimate roof;
  double theta_standard = 0, theta_flash = 0;
};

// One row per (value, algorithm), values outer. Counts come from the closed
// forms (equal to the streams by test). The L2 model runs with the options'
// budget: `flashlab sim`'s by default, so that a sweep's point is the
// simulation of that problem; a chart lowers it (kChartL2AccessBudget). Rows
// whose tiles do not fit carry the error in result.findings. `progress`, when
// set, is called after each row with the rows done and the rows in all (from
// the sweep's threads, one call at a time).
std::vector<SweepRow> run_sweep(const sim::AttentionProblem& base, const sim::HardwareModel& hw,
                                const SweepSpec& spec, const std::vector<sim::Algorithm>& algorithms,
                                const sim::SimOptions& options,
                                const std::function<void(std::size_t done, std::size_t total)>& progress = {});

// The L2 model's cache accesses per point of a chart drawn over a sweep, and at
// most (beyond it a point counts requests only, and says so): fewer heads
// followed than `flashlab sim` follows, so that a chart of dozens of points
// redraws while a slider moves (docs/performance.md: within 1.5 % of following
// every head on the H200 preset).
inline constexpr i64 kChartL2AccessBudget = 50'000;
inline constexpr i64 kChartL2AccessLimit = 4'000'000;

// The problem with the swept parameter set to v, and the options with M = v
// for an SRAM sweep.
sim::AttentionProblem apply_axis(sim::AttentionProblem p, SweepAxis axis, i64 v);

// c such that c·theta matches exact at the largest point of a series (how the
// reference curves are drawn through the data); 0 when undefined.
double fitted_constant(const std::vector<double>& exact, const std::vector<double>& theta);

}  // namespace flashlab::analysis
