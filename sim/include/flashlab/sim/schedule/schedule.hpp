// A schedule: one algorithm's loop nest over one head, as a stream of tile
// events, cut into pieces that can be emitted or counted on their own.
//
//   prologue
//   for each outer iteration o:        (fa1: K_j, V_j; fa2: Q_i; standard and
//     outer_begin(o)                    pytorch: one pass over row block i;
//     for each visit k of o: visit(o, k)   the backward passes: K_j, V_j or Q_i)
//     outer_end(o)                      (one (i, j) block per visit)
//   epilogue
//
// The outer iterations are numbered through the phases: phase p holds
// outer iterations [phase_begin(p), phase_begin(p) + phase_outer_count(p)),
// one per row block when outer_over_rows(p), else one per column block, and
// a phase without visits (has_visits(p) false: FlashAttention-2's backward
// pre-pass D_i = rowsum(dO_i ∘ O_i)) runs outer_begin and outer_end only.
//
// The loop nest is written once (sim/src/<algorithm>.cpp). The cost of any
// range of pieces — exact per-head Counters, events included — is derived
// from that emission (cost_model.hpp) and evaluated in O(log T), which lets a
// cursor jump anywhere without replaying the stream. The paper's closed forms
// are tests of these totals (tests/sim/test_closed_forms.cpp).
#pragma once

#include <memory>
#include <string_view>
#include <utility>
#include <vector>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/schedule/counters.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

namespace detail {
class LoopNest;
class CostModel;
}

class Schedule {
 public:
  // Inputs must be valid (validate(p) empty, tiles ≥ 1, causal ⇒ N_q = N_kv).
  // `storage`: element types a kernel keeps in global memory where they differ
  // from the paper's (types.hpp); the default is the paper's algorithm.
  Schedule(Algorithm a, const AttentionProblem& p, TileShape t, StorageTypes storage = {});
  ~Schedule();
  Schedule(Schedule&&) noexcept;
  Schedule& operator=(Schedule&&) noexcept;

  Algorithm algorithm() const { return algorithm_; }
  const AlgorithmInfo& info() const { return *info_; }
  const AttentionProblem& problem() const { return problem_; }
  TileShape tiles() const { return tiles_; }
  const TileGrid& grid() const { return grid_; }
  const StorageTypes& storage() const { return storage_; }

  // Structure.
  i64 outer_count() const;
  i64 visit_count(i64 o) const;
  std::pair<i64, i64> visit_block(i64 o, i64 k) const;  // (i, j) of visit k of outer o
  int phase_of(i64 o) const;
  int phases() const;
  // What a phase does, for the step-through ("pass 1/3: S = QKᵀ, written to HBM").
  std::string_view phase_title(int phase) const;
  // A phase's outer loop: over row blocks i (Q_i; T_r outer iterations) or
  // over column blocks j (K_j, V_j; T_c of them). The record's
  // AlgorithmInfo::outer_over_rows is the main loop's; a phase may differ.
  bool outer_over_rows(int phase) const;
  // False for a pass with no inner loop (a backward pre- or post-pass over row blocks).
  bool has_visits(int phase) const;
  // True for a pass that runs once per K/V head rather than once per query
  // head (zeroing and converting the dK, dV accumulators a group adds into).
  bool once_per_kv_head(int phase) const;
  i64 phase_begin(int phase) const;        // its first outer iteration
  i64 phase_outer_count(int phase) const;  // T_r or T_c
  // The row block i (outer loop over rows) or column block j that outer iteration o runs over.
  i64 outer_block(i64 o) const;
  // Where block (i, j) is first visited: (o, k), or (-1, -1) if no phase visits it.
  std::pair<i64, i64> locate_block(i64 i, i64 j) const;
  // Where phase `phase` visits block (i, j): (o, k), o counted from the first
  // phase as everywhere, or (-1, -1) if that phase skips it or has no visits.
  std::pair<i64, i64> locate_block(i64 i, i64 j, int phase) const;

  // Events.
  void emit(EventSink& sink) const;
  void emit_prologue(EventSink& sink) const;
  void emit_outer(i64 o, EventSink& sink) const;
  void emit_outer_begin(i64 o, EventSink& sink) const;
  void emit_visit(i64 o, i64 k, EventSink& sink) const;
  void emit_outer_end(i64 o, EventSink& sink) const;
  void emit_epilogue(EventSink& sink) const;

  // Costs, per head, derived from the emission: the whole schedule and any
  // range of its pieces. Counters::events holds the event count.
  Counters closed_form() const;
  Counters cost_of_prologue() const;
  Counters cost_of_outers(i64 o_begin, i64 o_end) const;
  Counters cost_of_outer_begin(i64 o) const;
  Counters cost_of_visits(i64 o, i64 k_begin, i64 k_end) const;
  Counters cost_of_outer_end(i64 o) const;
  Counters cost_of_epilogue() const;
  // The part of cost_of_outers(o_begin, o_end) in phases run once per K/V head.
  Counters cost_of_kv_head_outers(i64 o_begin, i64 o_end) const;

  // Counters of one head's emission over the whole run: `one`, of which
  // `kv_head_part` lies in phases run once per K/V head, counted B·H_kv
  // times and the rest B·H times. Without such phases: one × B·H.
  Counters over_heads(const Counters& one, const Counters& kv_head_part) const;
  // The closed form over the whole run (all B·H query heads, B·H_kv K/V heads).
  Counters run_total() const;

  // Event counts of the pieces (constant per phase).
  i64 events_prologue() const;
  i64 events_outer_begin(i64 o) const;
  i64 events_per_visit(i64 o) const;
  i64 events_outer_end(i64 o) const;
  i64 events_epilogue() const;

  // The loop nest itself, for models that re-run it (the L2 model).
  const detail::LoopNest& loop_nest() const { return *nest_; }

 private:
  struct PhaseLayout {
    bool rows = true, visits = true, kv_head = false;
    i64 begin = 0, count = 0;
  };
  struct OuterRef {
    int phase;
    i64 idx;     // row block i or column block j
    i64 lo, hi;  // visited inner blocks [lo, hi)
  };
  OuterRef outer_ref(i64 o) const;
  const PhaseLayout& layout(int phase) const { return layout_[static_cast<size_t>(phase)]; }

  Algorithm algorithm_;
  const AlgorithmInfo* info_;
  AttentionProblem problem_;
  TileShape tiles_;
  TileGrid grid_;
  StorageTypes storage_;
  std::unique_ptr<detail::LoopNest> nest_;
  std::shared_ptr<const detail::CostModel> costs_;
  std::vector<PhaseLayout> layout_;
  Counters prologue_, epilogue_;  // emitted once: they hold whole tensors
};

}  // namespace flashlab::sim
