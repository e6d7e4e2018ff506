// The algorithms the simulator knows, each described once as data: what every
// front end (GUI, CLI, charts, tests) reads instead of comparing ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/problem/pass.hpp"

namespace flashlab::sim {

// The forward algorithms, then the backward pass of each: standard_bwd is
// Algorithm 3 of FlashAttention (S, P, dP, dS through HBM), pytorch_bwd what
// eager PyTorch's autograd launches, fa1_bwd Algorithm 4 of FlashAttention,
// fa2_bwd Algorithm 2 of FlashAttention-2.
enum class Algorithm : std::uint8_t { standard, pytorch, fa1, fa2, standard_bwd, pytorch_bwd, fa1_bwd, fa2_bwd };

// How the loop nest runs on a GPU, for the L2 model: each outer iteration is
// one thread block (CTA) of a launch — FlashAttention-2, the passes of the
// materialising algorithms — or each outer iteration is a launch of its own
// whose CTAs are its visits — FlashAttention-1 as our fa1 rung runs it.
enum class GridShape : std::uint8_t { cta_per_outer_iteration, launch_per_outer_iteration };

// The block sizes an algorithm's loop order wants. FlashAttention's Algorithm 1,
// line 1, sets B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d): large K_j, V_j blocks for an
// outer loop over them, so that Q_i and O_i are re-read only T_c times. An
// outer loop over Q_i wants the transpose — large Q_i blocks, so that K and V
// are re-read only T_r times. The backward passes of FlashAttention (outer loop
// over K_j, V_j) hold four B_c × d tiles on chip — K_j, V_j and the dK_j, dV_j
// they accumulate — where the forward held two: paper_backward gives them the
// share the forward's two had, B_c = ⌈M/8d⌉, B_r = min(⌈M/8d⌉, d).
enum class TileRule : std::uint8_t { paper, paper_transposed, paper_backward };

// The marker an algorithm's points carry in every chart.
enum class Marker : std::uint8_t { circle, square, diamond, triangle };

struct AlgorithmInfo {
  Algorithm id = Algorithm::standard;
  std::string_view key;     // CLI name: "standard", "pytorch", "fa1", "fa2", "standard_bwd", ... "fa2_bwd"
  std::string_view title;   // "FlashAttention-1 (Dao et al. 2022, Algorithm 1)": the paper named
  std::string_view source;  // where the loop nest comes from
  std::vector<std::string> pseudocode;  // line k of the paper is pseudocode[k-1]
  std::vector<std::string_view> aliases;  // other names the CLI accepts ("flash2", "naive")

  // The loop nest's shape. The schedule reads these; they are not restated.
  // The main loop's outer loop: over Q_i (for 1 ≤ i ≤ T_r), else over K_j, V_j.
  // A phase may run over the other (Schedule::outer_over_rows(phase)): the
  // dV = PᵀdO pass of standard_bwd, the row-block pre-pass of fa2_bwd.
  bool outer_over_rows = true;
  bool skips_masked_blocks = false;  // causal: blocks wholly above the diagonal are never visited
  bool materializes_scores = false;  // S and P are written to HBM (and read back)

  // Online softmax: the running m_i, ℓ_i carried from one K_j, V_j to the next.
  bool keeps_running_statistics = false;
  int statistics_update_line = 0;  // pseudocode line where m_i, ℓ_i take the new block in; 0 when none
  // One line for the tiling view: where S, P and O live.
  std::string_view strategy;

  // Its marker in every chart. Its colour is analysis's (analysis::algorithm_colour:
  // the colour of the rung that implements it, one table for models and measurements).
  Marker marker = Marker::circle;

  GridShape grid = GridShape::cta_per_outer_iteration;
  TileRule tile_rule = TileRule::paper;

  // The pass it computes, and the forward algorithm it belongs to (itself for
  // a forward one): fa2_bwd differentiates fa2, using the L_i fa2 wrote.
  Pass pass = Pass::fwd;
  Algorithm forward = Algorithm::standard;

  // A Hopper rung runs this loop nest — fa3_hopper the forward's, fa3_hopper_bwd
  // the backward's: its schedule inside a CTA (hopper_pipeline.hpp,
  // hopper_bwd_pipeline.hpp) is drawn with this algorithm's.
  bool hopper_rung_runs_it = false;

  // Drawn when nobody chose: the default set of the charts, sweeps and
  // exports (the lecture's three: standard, FlashAttention-1 and -2).
  bool drawn_by_default = false;
};

const AlgorithmInfo& algorithm_info(Algorithm a);
// Every algorithm with a loop nest, forward ones first.
const std::vector<Algorithm>& all_algorithms();
// Those of one pass, in the table's order.
const std::vector<Algorithm>& algorithms_of(Pass p);
// The forward algorithm `a` belongs to (a itself when it is one).
Algorithm forward_of(Algorithm a);
// The backward algorithm of forward algorithm `a`, when the table has one.
std::optional<Algorithm> backward_of(Algorithm a);
// The algorithm of `a`'s family that computes pass `p` (a itself when it does).
std::optional<Algorithm> with_pass(Algorithm a, Pass p);
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::string_view to_string(Algorithm a);

}  // namespace flashlab::sim
