// A schedule: one algorithm's loop nest over one head, as a stream of tile
// events, cut into pieces that can be emitted or counted on their own.
//
//   prologue
//   for each outer iteration o:        (fa1: K_j, V_j; fa2: Q_i; standard and
//     outer_begin(o)                    pytorch: one pass over row block i)
//     for each visit k of o: visit(o, k)   (one (i, j) block)
//     outer_end(o)
//   epilogue
//
// Every piece has a closed form (exact per-head Counters) beside its events;
// the tests hold the two equal. The closed forms make totals O(T) and let a
// cursor jump anywhere without replaying the stream.
#pragma once

#include <memory>
#include <utility>

#include "flashlab/sim/algorithm.hpp"
#include "flashlab/sim/counters.hpp"
#include "flashlab/sim/tiles.hpp"

namespace flashlab::sim {

namespace detail {
class AlgorithmModel;
}

class Schedule {
 public:
  // Inputs must be valid (validate(p) empty, tiles ≥ 1, causal ⇒ N_q = N_kv).
  Schedule(Algorithm a, const AttentionProblem& p, TileShape t);
  ~Schedule();
  Schedule(Schedule&&) noexcept;
  Schedule& operator=(Schedule&&) noexcept;

  Algorithm algorithm() const { return algorithm_; }
  const AlgorithmInfo& info() const { return algorithm_info(algorithm_); }
  const AttentionProblem& problem() const { return problem_; }
  TileShape tiles() const { return tiles_; }
  const TileGrid& grid() const { return grid_; }

  // Structure.
  i64 outer_count() const;
  i64 visit_count(i64 o) const;
  std::pair<i64, i64> visit_block(i64 o, i64 k) const;  // (i, j) of visit k of outer o
  int phase_of(i64 o) const;
  // Where block (i, j) is first visited: (o, k), or (-1, -1) if it is skipped.
  std::pair<i64, i64> locate_block(i64 i, i64 j) const;

  // Events.
  void emit(EventSink& sink) const;
  void emit_prologue(EventSink& sink) const;
  void emit_outer(i64 o, EventSink& sink) const;
  void emit_outer_begin(i64 o, EventSink& sink) const;
  void emit_visit(i64 o, i64 k, EventSink& sink) const;
  void emit_outer_end(i64 o, EventSink& sink) const;
  void emit_epilogue(EventSink& sink) const;

  // Closed forms, per head. Counters::events holds the event count.
  Counters closed_form() const;
  Counters cf_prologue() const;
  Counters cf_outers(i64 o_begin, i64 o_end) const;
  Counters cf_outer_begin(i64 o) const;
  Counters cf_visits(i64 o, i64 k_begin, i64 k_end) const;
  Counters cf_outer_end(i64 o) const;
  Counters cf_epilogue() const;

  // Event counts of the pieces (constant per phase).
  i64 events_prologue() const;
  i64 events_outer_begin(i64 o) const;
  i64 events_per_visit(i64 o) const;
  i64 events_outer_end(i64 o) const;
  i64 events_epilogue() const;

 private:
  Algorithm algorithm_;
  AttentionProblem problem_;
  TileShape tiles_;
  TileGrid grid_;
  std::unique_ptr<detail::AlgorithmModel> model_;
};

}  // namespace flashlab::sim
