// Online softmax with real numbers: the running m_i (row max), ℓ_i (row sum of
// exponentials) and the rescale factor e^{m_i^old − m_i^new} of one row block
// after it has been combined with its first `visits` visited column blocks —
// what a student watches change while stepping through FlashAttention.
//
// Q and K are drawn from N(0, 1) by a counter-based generator keyed by a seed,
// so any row of any N is available without storing the matrices. Only the
// first few rows of a block are followed (the display shows a handful), which
// keeps a jump anywhere at O(rows · N_kv · d) and a step forward at one block.
// The masking follows TileGrid: with causal attention key c is kept for query
// r iff c ≤ r, and blocks wholly above the diagonal are never visited.
#pragma once

#include <cstdint>
#include <limits>
#include <unordered_map>
#include <vector>

#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

struct OnlineSoftmaxRow {
  i64 row = 0;  // query row (global index)
  double m = -std::numeric_limits<double>::infinity();       // m_i: running max of S = τ·Q Kᵀ
  double l = 0;                                               // ℓ_i: Σ exp(S − m_i) so far
  double m_prev = -std::numeric_limits<double>::infinity();  // m_i before the last visit
  // e^{m_prev − m}: how much ℓ_i and O_i were scaled down at the last visit
  // (1 when the max did not move; 0 at the first visit, where ℓ_i and O_i were 0).
  double rescale = 1;
  i64 keys = 0;  // unmasked keys folded in so far
};

struct OnlineSoftmaxState {
  i64 i = -1;       // row block
  i64 visits = 0;   // visited column blocks folded in (in j order)
  i64 target = 0;   // the visits asked for; below it when the work budget ran out
  i64 last_j = -1;  // the last column block folded in, -1 when none
  std::vector<OnlineSoftmaxRow> rows;
  bool complete() const { return visits == target; }
};

class OnlineSoftmax {
 public:
  // Problem and tiles must be valid (validate(p) empty, tiles ≥ 1).
  OnlineSoftmax(const AttentionProblem& p, TileShape t, std::uint64_t seed = 1, i64 rows_shown = 4);

  const TileGrid& grid() const { return grid_; }
  std::uint64_t seed() const { return seed_; }
  // Visited column blocks of row block i: 0..last_col(i).
  i64 visits_total(i64 i) const;

  // The state of row block i after its first `visits` visited column blocks
  // (clamped to [0, visits_total(i)]). Block summaries are cached, so moving
  // forward costs one block and revisiting costs O(visits · rows). At most
  // `budget` multiply-adds of new work are done per call (a frame's worth):
  // when they run out the state is incomplete (complete() false) and the next
  // call with the same (i, visits) carries on where this one stopped.
  const OnlineSoftmaxState& state(i64 i, i64 visits, i64 budget = std::numeric_limits<i64>::max());

  // The two-pass reference for one row: m = max over its unmasked keys,
  // ℓ = Σ exp(S − m). Equal to state(i, visits_total(i)) up to rounding.
  OnlineSoftmaxRow exact(i64 row) const;

  // Element (r, c) of Q or K: N(0, 1), a pure function of (seed, tensor, r, c).
  double q(i64 r, i64 c) const;
  double k(i64 r, i64 c) const;

 private:
  struct BlockSummary {  // one row's contribution of one column block
    double max = -std::numeric_limits<double>::infinity();
    double sum = 0;  // Σ exp(S − max) over the block's unmasked keys
    i64 keys = 0;
  };
  const std::vector<BlockSummary>* cached(i64 i, i64 j) const;
  const std::vector<BlockSummary>& summary(i64 i, i64 j);
  void fill_summary(i64 i, i64 j, std::vector<BlockSummary>& out);
  i64 summary_cost(i64 i, i64 j) const;  // multiply-adds (a K element drawn counts as 8)
  void ensure_k_block(i64 j);
  double score(const std::vector<double>& q_row, i64 key) const;

  TileGrid grid_;
  std::uint64_t seed_;
  i64 rows_shown_;
  double tau_;
  // K as float, filled one column block at a time on first use, when all of K
  // is small enough to keep (N_kv·d ≤ 2^24); otherwise drawn on every use.
  bool cache_k_ = false;
  std::vector<float> k_cache_;
  std::vector<bool> k_filled_;
  std::unordered_map<i64, std::vector<BlockSummary>> summaries_;  // key i·T_c + j
  OnlineSoftmaxState state_;
};

}  // namespace flashlab::sim
