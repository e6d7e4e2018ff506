#include "flashlab/sim/schedule/schedule.hpp"

#include <algorithm>

#include "cost_model.hpp"
#include "flashlab/sim/core/checked.hpp"

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

// An emitter at outer iteration idx's own block, before and after its visits:
// row block idx (outer loop over rows) or column block idx.
Emitter outer_emitter(const TileGrid& g, DType dt, EventSink& sink, const StorageTypes& st, bool rows, i64 idx) {
  Emitter e(g, dt, sink, st);
  if (rows) e.at(idx, -1, false);
  else e.at(-1, idx, false);
  return e;
}

}  // namespace

Schedule::Schedule(Algorithm a, const AttentionProblem& p, TileShape t, StorageTypes storage)
    : algorithm_(a),
      info_(&detail::entry(a).info),
      problem_(p),
      tiles_(t),
      grid_(p, t),
      storage_(storage),
      nest_(detail::entry(a).make(p, storage)) {
  costs_ = CostModel::shared(a, *nest_, p, storage);
  i64 begin = 0;
  for (int ph = 0; ph < nest_->phases(); ++ph) {
    PhaseLayout l;
    l.rows = nest_->outer_over_rows(ph);
    l.visits = nest_->has_visits(ph);
    l.kv_head = nest_->once_per_kv_head(ph);
    l.begin = begin;
    l.count = l.rows ? grid_.T_r : grid_.T_c;
    begin = checked_add(begin, l.count, "outer iterations");
    layout_.push_back(l);
  }
  prologue_ = emitted(grid_, p.dtype, storage, [&](Emitter& e) { nest_->prologue(e); });
  epilogue_ = emitted(grid_, p.dtype, storage, [&](Emitter& e) { nest_->epilogue(e); });
}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;


// ---- structure --------------------------------------------------------------

namespace {

// The extent of outer iterations [a, b) of a phase as block moments: one piece
// of r rows (outer loop over rows) or c columns each.
BlockMoments outer_extent(bool rows, const TileGrid& g, i64 a, i64 b) {
  BlockMoments m;
  if (a >= b) return m;
  m.n = b - a;
  if (rows) m.r = g.rows_sum(a, b);
  else m.c = g.cols_sum(a, b);
  return m;
}

// Visits [lo, hi) of outer iteration idx: one row block against a run of
// column blocks, or one column block against a run of row blocks.
BlockMoments visit_run(bool rows, const TileGrid& g, i64 idx, i64 lo, i64 hi) {
  BlockMoments m;
  if (lo >= hi) return m;
  const i64 n = hi - lo;
  const i64 outer = rows ? g.rows(idx) : g.cols(idx);
  const i64 inner = rows ? g.cols_sum(lo, hi) : g.rows_sum(lo, hi);
  m.n = n;
  m.rc = checked_mul(outer, inner, "block count");
  if (rows) {
    m.r = checked_mul(outer, n, "block count");
    m.c = inner;
  } else {
    m.r = inner;
    m.c = checked_mul(outer, n, "block count");
  }
  return m;
}

BlockMoments visits_of_outers(bool rows, bool skip, const TileGrid& g, i64 a, i64 b) {
  return rows ? g.row_block_visits(a, b, skip) : g.col_block_visits(a, b, skip);
}

}  // namespace

// The visiting rule: an outer iteration's inner blocks, all of them, or the
// ones the causal mask leaves when the algorithm skips masked blocks; none in
// a phase without visits.
Schedule::OuterRef Schedule::outer_ref(i64 o) const {
  int ph = 0;
  while (ph + 1 < static_cast<int>(layout_.size()) && o >= layout_[static_cast<size_t>(ph) + 1].begin) ++ph;
  const PhaseLayout& l = layout(ph);
  OuterRef r{ph, o - l.begin, 0, 0};
  if (!l.visits) return r;
  const bool skip = info().skips_masked_blocks && grid_.causal;
  if (l.rows) {
    r.hi = skip ? grid_.last_col(r.idx) + 1 : grid_.T_c;
  } else {
    r.lo = skip ? grid_.first_row(r.idx) : 0;
    r.hi = grid_.T_r;
  }
  return r;
}

int Schedule::phases() const { return nest_->phases(); }

std::string_view Schedule::phase_title(int phase) const { return nest_->phase_title(phase); }

bool Schedule::outer_over_rows(int phase) const { return layout(phase).rows; }
bool Schedule::has_visits(int phase) const { return layout(phase).visits; }
bool Schedule::once_per_kv_head(int phase) const { return layout(phase).kv_head; }
i64 Schedule::phase_begin(int phase) const { return layout(phase).begin; }
i64 Schedule::phase_outer_count(int phase) const { return layout(phase).count; }

i64 Schedule::outer_count() const { return layout_.empty() ? 0 : layout_.back().begin + layout_.back().count; }

i64 Schedule::visit_count(i64 o) const {
  const OuterRef r = outer_ref(o);
  return r.hi - r.lo;
}

std::pair<i64, i64> Schedule::visit_block(i64 o, i64 k) const {
  const OuterRef r = outer_ref(o);
  return layout(r.phase).rows ? std::pair<i64, i64>{r.idx, r.lo + k} : std::pair<i64, i64>{r.lo + k, r.idx};
}

int Schedule::phase_of(i64 o) const { return outer_ref(o).phase; }

i64 Schedule::outer_block(i64 o) const { return outer_ref(o).idx; }

std::pair<i64, i64> Schedule::locate_block(i64 i, i64 j, int phase) const {
  if (i < 0 || j < 0 || i >= grid_.T_r || j >= grid_.T_c || phase < 0 || phase >= phases()) return {-1, -1};
  const PhaseLayout& l = layout(phase);
  if (!l.visits) return {-1, -1};
  const i64 o = l.begin + (l.rows ? i : j);
  const i64 inner = l.rows ? j : i;
  const OuterRef r = outer_ref(o);
  if (inner < r.lo || inner >= r.hi) return {-1, -1};
  return {o, inner - r.lo};
}

std::pair<i64, i64> Schedule::locate_block(i64 i, i64 j) const {
  for (int ph = 0; ph < phases(); ++ph) {
    const auto at = locate_block(i, j, ph);
    if (at.first >= 0) return at;
  }
  return {-1, -1};
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
  const OuterRef r = outer_ref(o);
  Emitter e = outer_emitter(grid_, problem_.dtype, sink, storage_, layout(r.phase).rows, r.idx);
  nest_->outer_begin(r.phase, r.idx, e);
}

void Schedule::emit_visit(i64 o, i64 k, EventSink& sink) const {
  const OuterRef r = outer_ref(o);
  const auto [i, j] = visit_block(o, k);
  Emitter e(grid_, problem_.dtype, sink, storage_);
  e.at(i, j, grid_.has_masked(i, j));
  nest_->visit(r.phase, i, j, r.idx == 0, e);
}

void Schedule::emit_outer_end(i64 o, EventSink& sink) const {
  const OuterRef r = outer_ref(o);
  Emitter e = outer_emitter(grid_, problem_.dtype, sink, storage_, layout(r.phase).rows, r.idx);
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
  const bool skip = info().skips_masked_blocks;
  for (int ph = 0; ph < nest_->phases(); ++ph) {
    const PhaseLayout& l = layout(ph);
    // Complete outer iterations [a, b) of this phase (indices within the phase).
    const i64 a = std::max<i64>(o_begin, l.begin) - l.begin;
    const i64 b = std::min<i64>(o_end, l.begin + l.count) - l.begin;
    if (a >= b) continue;
    const PhaseCosts& c = costs_->phase(ph);
    const BlockMoments extent = outer_extent(l.rows, grid_, a, b);
    total += c.outer_begin.at(extent);
    total += c.outer_end.at(extent);
    if (!l.visits) continue;
    BlockMoments visits = visits_of_outers(l.rows, skip, grid_, a, b);
    if (a == 0) {  // the phase's first outer iteration has its own visit cost (first touch of K_j, V_j)
      const OuterRef first = outer_ref(l.begin);
      const BlockMoments f = visit_run(l.rows, grid_, 0, first.lo, first.hi);
      total += c.first_visit.at(f);
      visits -= f;
    }
    total += c.visit.at(visits);
  }
  return total;
}

Counters Schedule::cost_of_outer_begin(i64 o) const {
  const OuterRef r = outer_ref(o);
  return costs_->phase(r.phase).outer_begin.at(outer_extent(layout(r.phase).rows, grid_, r.idx, r.idx + 1));
}

Counters Schedule::cost_of_outer_end(i64 o) const {
  const OuterRef r = outer_ref(o);
  return costs_->phase(r.phase).outer_end.at(outer_extent(layout(r.phase).rows, grid_, r.idx, r.idx + 1));
}

Counters Schedule::cost_of_visits(i64 o, i64 k_begin, i64 k_end) const {
  const OuterRef r = outer_ref(o);
  const PhaseCosts& c = costs_->phase(r.phase);
  return (r.idx == 0 ? c.first_visit : c.visit)
      .at(visit_run(layout(r.phase).rows, grid_, r.idx, r.lo + k_begin, r.lo + k_end));
}

Counters Schedule::closed_form() const {
  return cost_of_prologue() + cost_of_outers(0, outer_count()) + cost_of_epilogue();
}

Counters Schedule::cost_of_kv_head_outers(i64 o_begin, i64 o_end) const {
  Counters total;
  for (int ph = 0; ph < phases(); ++ph) {
    const PhaseLayout& l = layout(ph);
    if (!l.kv_head) continue;
    const i64 a = std::max(o_begin, l.begin), b = std::min(o_end, l.begin + l.count);
    if (a < b) total += cost_of_outers(a, b);
  }
  return total;
}

Counters Schedule::over_heads(const Counters& one, const Counters& kv_head_part) const {
  Counters total = (one - kv_head_part).scaled(problem_.head_count());
  total += kv_head_part.scaled(problem_.kv_head_count());
  return total;
}

Counters Schedule::run_total() const { return over_heads(closed_form(), cost_of_kv_head_outers(0, outer_count())); }

i64 Schedule::events_prologue() const { return prologue_.events; }
i64 Schedule::events_epilogue() const { return epilogue_.events; }
i64 Schedule::events_outer_begin(i64 o) const { return costs_->phase(phase_of(o)).outer_begin.events(); }
i64 Schedule::events_outer_end(i64 o) const { return costs_->phase(phase_of(o)).outer_end.events(); }
i64 Schedule::events_per_visit(i64 o) const {
  const OuterRef r = outer_ref(o);
  const PhaseCosts& c = costs_->phase(r.phase);
  return (r.idx == 0 ? c.first_visit : c.visit).events();
}

}  // namespace flashlab::sim
