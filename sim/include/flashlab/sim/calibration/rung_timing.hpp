// A rung's launch time from its thread blocks (CTAs), for launches of any
// size — the ring's chunk pairs are short, and a short launch runs far below
// the efficiency of a long one: a few waves over the SMs, each CTA's fixed
// prologue and epilogue, the launch itself.
//
//   CTA c's time  t_c = cta_s + tile_s · v_c (+ extra_cta_s)
//   launch time   launch_s + the makespan of the CTAs handed, heaviest first,
//                 to the slot (SMs × CTAs per SM) that frees first
//
// v_c is the number of B_r × B_c tiles CTA c visits: the forward rungs run
// one CTA per row block Q_i over the column blocks it sees (all of them, or
// up to the diagonal under the causal mask), the backward one CTA per column
// block K_j, V_j over the row blocks that see it. The geometry (tiles, CTAs
// per SM, which way the CTAs go) is the compiled configuration's
// (hopper_pipeline.hpp, tensor_core_configs.hpp), with the tiles of the runs a
// fit was made from when they differ (a file records them); the three constants are
// fitted to one-GPU runs of the rung on that GPU (analysis/fits/rung_timing_fit.hpp,
// `flashlab ceilings rungs`), never to the runs the model is scored on.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/tiles.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// Where the CTAs of a launch go.
enum class CtaAxis { row_blocks, column_blocks };

struct RungGeometry {
  std::string rung;         // "fa3_hopper", "fa2_tc", "fa3_hopper_bwd", "fa2_tc_bwd"
  Pass pass = Pass::fwd;
  i64 head_dim = 0;
  TileShape tiles;          // B_r × B_c
  int ctas_per_sm = 1;
  CtaAxis axis = CtaAxis::row_blocks;
  // The mask the geometry (and a fit of it) is for, where a rung's tiles
  // differ by mask (fa3_hopper_bwd at d = 128: 80 × 128 unmasked, 64 × 128
  // causal); unset: both masks.
  std::optional<bool> causal;
};
// The compiled configuration of `rung` (a forward or backward tensor-core
// rung) at head dim d, for the mask `causal` (unset: the one geometry that
// stands for both, the causal row's where they differ); nullopt when the
// rung has none there.
std::optional<RungGeometry> rung_geometry(const std::string& rung, i64 head_dim,
                                          std::optional<bool> causal = std::nullopt);
// "128", or "128 causal" / "128 full" for a geometry of one mask: how tables name it.
std::string head_dim_and_mask(const RungGeometry& g);

struct RungTiming {
  RungGeometry geometry;
  double launch_s = 0;  // per launch
  double cta_s = 0;     // per CTA: prologue, epilogue
  double tile_s = 0;    // per B_r × B_c tile a CTA visits (with its slot's share of the SM)
  double host_launch_s = 0;  // the host's time in one launch call (the median of the runs'; 0: not measured)
  std::string source;   // "fitted to 6 runs of ... (NVIDIA H200, ...)"
  // Under the GPU's power limit (power_cap.hpp): the rate its CTAs and tiles
  // hold once the limit bites, a fraction of the constants' (1: it never
  // does), and the rung time back to back the GPU runs at boost before that.
  double capped_rate = 1;
  double boost_s = 0;
  std::string power_source;  // "fitted to ... one-GPU runs of ..."; empty: not measured
  bool power_capped() const { return capped_rate < 1; }
  // The same rung with its CTAs and tiles `factor` times as long (a clock held down).
  RungTiming slowed(double factor) const;
};

// One launch: `heads` (B·H) × an n_q × n_kv problem, causal when `causal`
// (then n_q = n_kv: a chunk against itself, the mask on its diagonal).
struct RungLaunch {
  i64 ctas = 0;
  i64 slots = 0;
  double waves = 0;
  double tiles = 0;    // Σ v_c
  double time_s = 0;
};
RungLaunch rung_launch(const RungTiming& t, i64 heads, i64 n_q, i64 n_kv, bool causal, i64 sm_count,
                       double extra_cta_s = 0);

// A results file of calibrated rungs ("flashlab-rung-timing/1"): the GPU they
// were fitted on and one entry per (rung, head dim), or per (rung, head dim,
// mask) where the rung's tiles differ by mask (its "mask" field).
struct RungTimingSet {
  std::string gpu;
  int sm_count = 0;
  std::vector<RungTiming> rungs;
  // The entry for a launch under `causal`: the one fitted to that mask, else
  // the one for both masks; asked without a mask, the one for both, else the
  // unmasked one. nullptr when none is there.
  const RungTiming* find(const std::string& rung, i64 head_dim, std::optional<bool> causal = std::nullopt) const;
};
std::string to_rung_timing_json(const RungTimingSet& s);
// Throws std::invalid_argument naming the origin and the field.
RungTimingSet parse_rung_timing_json(const std::string& text, const std::string& origin);
// A set by name (a file of assets_dir()/rungs, letter case aside) or by path
// (flashlab ceilings rungs --out). Throws std::invalid_argument: a file that
// cannot be read, a name not there (the known ones listed), a bad file.
RungTimingSet load_rung_timing(const std::string& name_or_path);
// The set of assets_dir()/rungs fitted on the GPU named `gpu` (letter case
// aside); nullopt when none is.
std::optional<RungTimingSet> rung_timing_for_gpu(const std::string& gpu);

}  // namespace flashlab::sim
