#include "flashlab/sim/schedule.hpp"

#include "cost_model.hpp"
#include "flashlab/sim/checked.hpp"

namespace flashlab::sim {

using detail::CostModel;
using detail::Emitter;
using detail::PhaseCosts;

namespace {

// The events of one piece, counted as they are emitted.
template <class Emit>
Counters emitted(const TileGrid& g, DType dt, StorageTypes st, const Emit& emit) {
  CounterSink sink;
  Emitter e(g, dt, sink, st);
  emit(e);
  return sink.counters;
}

}  // namespace

Schedule::Schedule(Algorithm a, const AttentionProblem& p, TileShape t, StorageTypes storage)
    : algorithm_(a),
      info_(&detail::entry(a).info),
      problem_(p),
      tiles_(t),
      grid_(p, t),
      storage_(storage),
      nest_(detail::entry(a).make(p)) {
  costs_ = CostModel::shared(a, *nest_, p, storage);
  prologue_ = emitted(grid_, p.dtype, storage, [&](Emitter& e) { nest_->prologue(e); });
  epilogue_ = emitted(grid_, p.dtype, storage, [&](Emitter& e) { nest_->epilogue(e); });
}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;


// ---- structure --------------------------------------------------------------

namespace {
struct OuterRef {
  int phase;
  i64 idx;     // row block i or column block j
  i64 lo, hi;  // visited inner blocks [lo, hi)
};

i64 per_phase(const AlgorithmInfo& info, const TileGrid& g) { return info.outer_over_rows ? g.T_r : g.T_c; }

// The visiting rule: an outer iteration's inner blocks, all of them, or the
// ones the causal mask leaves when the algorithm skips masked blocks.
OuterRef outer_ref(const AlgorithmInfo& info, const TileGrid& g, i64 o) {
  const i64 n = per_phase(info, g);
  OuterRef r{static_cast<int>(o / n), o % n, 0, 0};
  const bool skip = info.skips_masked_blocks && g.causal;
  if (info.outer_over_rows) {
    r.hi = skip ? g.last_col(r.idx) + 1 : g.T_c;
  } else {
    r.lo = skip ? g.first_row(r.idx) : 0;
    r.hi = g.T_r;
  }
  return r;
}

// The extent of outer iteration idx as block moments: one piece of r rows (or c columns).
BlockMoments outer_extent(const AlgorithmInfo& info, const TileGrid& g, i64 a, i64 b) {
  BlockMoments m;
  if (a >= b) return m;
  m.n = b - a;
  if (info.outer_over_rows) m.r = g.rows_sum(a, b);
  else m.c = g.cols_sum(a, b);
  return m;
}

// Visits [lo, hi) of outer iteration idx: one row block against a run of
// column blocks, or one column block against a run of row blocks.
BlockMoments visit_run(const AlgorithmInfo& info, const TileGrid& g, i64 idx, i64 lo, i64 hi) {
  BlockMoments m;
  if (lo >= hi) return m;
  const i64 n = hi - lo;
  const i64 outer = info.outer_over_rows ? g.rows(idx) : g.cols(idx);
  const i64 inner = info.outer_over_rows ? g.cols_sum(lo, hi) : g.rows_sum(lo, hi);
  m.n = n;
  m.rc = checked_mul(outer, inner, "block count");
  if (info.outer_over_rows) {
    m.r = checked_mul(outer, n, "block count");
    m.c = inner;
  } else {
    m.r = inner;
    m.c = checked_mul(outer, n, "block count");
  }
  return m;
}

BlockMoments visits_of_outers(const AlgorithmInfo& info, const TileGrid& g, i64 a, i64 b) {
  return info.outer_over_rows ? g.row_block_visits(a, b, info.skips_masked_blocks)
                              : g.col_block_visits(a, b, info.skips_masked_blocks);
}

}  // namespace

int Schedule::phases() const { return nest_->phases(); }

std::string_view Schedule::phase_title(int phase) const { return nest_->phase_title(phase); }

i64 Schedule::outer_count() const { return nest_->phases() * per_phase(info(), grid_); }

i64 Schedule::visit_count(i64 o) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  return r.hi - r.lo;
}

std::pair<i64, i64> Schedule::visit_block(i64 o, i64 k) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  return info().outer_over_rows ? std::pair<i64, i64>{r.idx, r.lo + k} : std::pair<i64, i64>{r.lo + k, r.idx};
}

int Schedule::phase_of(i64 o) const { return static_cast<int>(o / per_phase(info(), grid_)); }

std::pair<i64, i64> Schedule::locate_block(i64 i, i64 j) const {
  if (i < 0 || j < 0 || i >= grid_.T_r || j >= grid_.T_c) return {-1, -1};
  const bool rows = info().outer_over_rows;
  const i64 o = rows ? i : j;
  const i64 inner = rows ? j : i;
  const OuterRef r = outer_ref(info(), grid_, o);
  if (inner < r.lo || inner >= r.hi) return {-1, -1};
  return {o, inner - r.lo};
}

// ---- events -----------------------------------------------------------------

void Schedule::emit_prologue(EventSink& sink) const {
  Emitter e(grid_, problem_.dtype, sink, storage_);
  nest_->prologue(e);
}

void Schedule::emit_epilogue(EventSink& sink) const {
  Emitter e(grid_, problem_.dtype, sink, storage_);
  nest_->epilogue(e);
}

void Schedule::emit_outer_begin(i64 o, EventSink& sink) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  Emitter e(grid_, problem_.dtype, sink, storage_);
  if (info().outer_over_rows) e.at(r.idx, -1, false);
  else e.at(-1, r.idx, false);
  nest_->outer_begin(r.phase, r.idx, e);
}

void Schedule::emit_visit(i64 o, i64 k, EventSink& sink) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  const auto [i, j] = visit_block(o, k);
  Emitter e(grid_, problem_.dtype, sink, storage_);
  e.at(i, j, grid_.has_masked(i, j));
  nest_->visit(r.phase, i, j, r.idx == 0, e);
}

void Schedule::emit_outer_end(i64 o, EventSink& sink) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  Emitter e(grid_, problem_.dtype, sink, storage_);
  if (info().outer_over_rows) e.at(r.idx, -1, false);
  else e.at(-1, r.idx, false);
  nest_->outer_end(r.phase, r.idx, e);
}

void Schedule::emit_outer(i64 o, EventSink& sink) const {
  emit_outer_begin(o, sink);
  const i64 n = visit_count(o);
  for (i64 k = 0; k < n; ++k) emit_visit(o, k, sink);
  emit_outer_end(o, sink);
}

void Schedule::emit(EventSink& sink) const {
  emit_prologue(sink);
  const i64 n = outer_count();
  for (i64 o = 0; o < n; ++o) emit_outer(o, sink);
  emit_epilogue(sink);
}

// ---- costs ------------------------------------------------------------------

Counters Schedule::cost_of_prologue() const { return prologue_; }
Counters Schedule::cost_of_epilogue() const { return epilogue_; }

Counters Schedule::cost_of_outers(i64 o_begin, i64 o_end) const {
  Counters total;
  const AlgorithmInfo& in = info();
  const i64 n = per_phase(in, grid_);
  for (int ph = 0; ph < nest_->phases(); ++ph) {
    // Complete outer iterations [a, b) of this phase (indices within the phase).
    const i64 a = std::max<i64>(o_begin, ph * n) - ph * n;
    const i64 b = std::min<i64>(o_end, (ph + 1) * n) - ph * n;
    if (a >= b) continue;
    const PhaseCosts& c = costs_->phase(ph);
    const BlockMoments extent = outer_extent(in, grid_, a, b);
    BlockMoments visits = visits_of_outers(in, grid_, a, b);
    if (a == 0) {  // the phase's first outer iteration has its own visit cost (first touch of K_j, V_j)
      const OuterRef first = outer_ref(in, grid_, ph * n);
      const BlockMoments f = visit_run(in, grid_, 0, first.lo, first.hi);
      total += c.first_visit.at(f);
      visits -= f;
    }
    total += c.outer_begin.at(extent);
    total += c.visit.at(visits);
    total += c.outer_end.at(extent);
  }
  return total;
}

Counters Schedule::cost_of_outer_begin(i64 o) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  return costs_->phase(r.phase).outer_begin.at(outer_extent(info(), grid_, r.idx, r.idx + 1));
}

Counters Schedule::cost_of_outer_end(i64 o) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  return costs_->phase(r.phase).outer_end.at(outer_extent(info(), grid_, r.idx, r.idx + 1));
}

Counters Schedule::cost_of_visits(i64 o, i64 k_begin, i64 k_end) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  const PhaseCosts& c = costs_->phase(r.phase);
  return (r.idx == 0 ? c.first_visit : c.visit).at(visit_run(info(), grid_, r.idx, r.lo + k_begin, r.lo + k_end));
}

Counters Schedule::closed_form() const {
  return cost_of_prologue() + cost_of_outers(0, outer_count()) + cost_of_epilogue();
}

i64 Schedule::events_prologue() const { return prologue_.events; }
i64 Schedule::events_epilogue() const { return epilogue_.events; }
i64 Schedule::events_outer_begin(i64 o) const { return costs_->phase(phase_of(o)).outer_begin.events(); }
i64 Schedule::events_outer_end(i64 o) const { return costs_->phase(phase_of(o)).outer_end.events(); }
i64 Schedule::events_per_visit(i64 o) const {
  const OuterRef r = outer_ref(info(), grid_, o);
  const PhaseCosts& c = costs_->phase(r.phase);
  return (r.idx == 0 ? c.first_visit : c.visit).events();
}

}  // namespace flashlab::sim
