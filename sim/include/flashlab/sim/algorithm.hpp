// The algorithms the simulator knows, each described once as data: what every
// front end (GUI, CLI, charts, tests) reads instead of comparing ids.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace flashlab::sim {

enum class Algorithm : std::uint8_t { standard, pytorch, fa1, fa2 };

// How the loop nest runs on a GPU, for the L2 model: each outer iteration is
// one thread block (CTA) of a launch — FlashAttention-2, the passes of the
// materialising algorithms — or each outer iteration is a launch of its own
// whose CTAs are its visits — FlashAttention-1 as our fa1 rung runs it.
enum class GridShape : std::uint8_t { cta_per_outer_iteration, launch_per_outer_iteration };

// The block sizes an algorithm's loop order wants. FlashAttention's Algorithm 1,
// line 1, sets B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d): large K_j, V_j blocks for an
// outer loop over them, so that Q_i and O_i are re-read only T_c times. An
// outer loop over Q_i wants the transpose — large Q_i blocks, so that K and V
// are re-read only T_r times.
enum class TileRule : std::uint8_t { paper, paper_transposed };

// The marker an algorithm's points carry in every chart.
enum class Marker : std::uint8_t { circle, square, diamond, triangle };

struct AlgorithmInfo {
  Algorithm id = Algorithm::standard;
  std::string_view key;     // CLI name: "standard", "pytorch", "fa1", "fa2"
  std::string_view title;   // "FlashAttention-1 (Algorithm 1)"
  std::string_view source;  // where the loop nest comes from
  std::vector<std::string> pseudocode;  // line k of the paper is pseudocode[k-1]
  std::vector<std::string_view> aliases;  // other names the CLI accepts ("flash2", "naive")

  // The loop nest's shape. The schedule reads these; they are not restated.
  bool outer_over_rows = true;       // outer loop over Q_i (for 1 ≤ i ≤ T_r), else over K_j, V_j
  bool skips_masked_blocks = false;  // causal: blocks wholly above the diagonal are never visited
  bool materializes_scores = false;  // S and P are written to HBM (and read back)

  // Online softmax: the running m_i, ℓ_i carried from one K_j, V_j to the next.
  bool keeps_running_statistics = false;
  int statistics_update_line = 0;  // pseudocode line where m_i, ℓ_i take the new block in; 0 when none
  // One line for the tiling view: where S, P and O live.
  std::string_view strategy;

  // How it is drawn, the same in every chart and in the tiling view.
  int palette_index = 0;  // into analysis::palette
  Marker marker = Marker::circle;

  GridShape grid = GridShape::cta_per_outer_iteration;
  TileRule tile_rule = TileRule::paper;
};

const AlgorithmInfo& algorithm_info(Algorithm a);
const std::vector<Algorithm>& all_algorithms();
std::optional<Algorithm> parse_algorithm(std::string_view s);
std::string_view to_string(Algorithm a);

}  // namespace flashlab::sim
