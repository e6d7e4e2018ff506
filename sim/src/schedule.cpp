#include "flashlab/sim/schedule.hpp"

#include "algorithm_model.hpp"

namespace flashlab::sim {

using detail::Emitter;
using detail::Sums;

namespace {

std::unique_ptr<detail::AlgorithmModel> make_model(Algorithm a, const AttentionProblem& p, TileShape t) {
  switch (a) {
    case Algorithm::standard: return detail::make_standard(p, t);
    case Algorithm::pytorch: return detail::make_pytorch(p, t);
    case Algorithm::fa1: return detail::make_fa1(p, t);
    case Algorithm::fa2: return detail::make_fa2(p, t);
  }
  return nullptr;
}

i64 cmul(i64 a, i64 b) { return checked_mul(a, b, "closed-form count"); }

}  // namespace

Schedule::Schedule(Algorithm a, const AttentionProblem& p, TileShape t)
    : algorithm_(a), problem_(p), tiles_(t), grid_(p, t), model_(make_model(a, p, t)) {}
Schedule::~Schedule() = default;
Schedule::Schedule(Schedule&&) noexcept = default;
Schedule& Schedule::operator=(Schedule&&) noexcept = default;

// ---- structure --------------------------------------------------------------

namespace {
struct OuterRef {
  int phase;
  i64 idx;    // row block i or column block j
  i64 lo, hi; // visited inner blocks [lo, hi)
};
}  // namespace

static i64 per_phase(const detail::AlgorithmModel& m) {
  return m.outer_over_rows() ? m.grid().T_r : m.grid().T_c;
}

static OuterRef outer_ref(const detail::AlgorithmModel& m, i64 o) {
  const TileGrid& g = m.grid();
  const i64 n = per_phase(m);
  OuterRef r{static_cast<int>(o / n), o % n, 0, 0};
  const bool skip = m.skips_masked_blocks() && g.causal;
  if (m.outer_over_rows()) {
    r.hi = skip ? g.last_col(r.idx) + 1 : g.T_c;
  } else {
    r.lo = skip ? g.first_row(r.idx) : 0;
    r.hi = g.T_r;
  }
  return r;
}

i64 Schedule::outer_count() const { return model_->phases() * per_phase(*model_); }

i64 Schedule::visit_count(i64 o) const {
  const OuterRef r = outer_ref(*model_, o);
  return r.hi - r.lo;
}

std::pair<i64, i64> Schedule::visit_block(i64 o, i64 k) const {
  const OuterRef r = outer_ref(*model_, o);
  return model_->outer_over_rows() ? std::pair<i64, i64>{r.idx, r.lo + k}
                                   : std::pair<i64, i64>{r.lo + k, r.idx};
}

int Schedule::phase_of(i64 o) const { return static_cast<int>(o / per_phase(*model_)); }

std::pair<i64, i64> Schedule::locate_block(i64 i, i64 j) const {
  if (i < 0 || j < 0 || i >= grid_.T_r || j >= grid_.T_c) return {-1, -1};
  const bool rows = model_->outer_over_rows();
  const i64 o = rows ? i : j;
  const i64 inner = rows ? j : i;
  const OuterRef r = outer_ref(*model_, o);
  if (inner < r.lo || inner >= r.hi) return {-1, -1};
  return {o, inner - r.lo};
}

// ---- events -----------------------------------------------------------------

void Schedule::emit_prologue(EventSink& sink) const {
  Emitter e(grid_, problem_.dtype, sink);
  model_->prologue(e);
}

void Schedule::emit_epilogue(EventSink& sink) const {
  Emitter e(grid_, problem_.dtype, sink);
  model_->epilogue(e);
}

void Schedule::emit_outer_begin(i64 o, EventSink& sink) const {
  const OuterRef r = outer_ref(*model_, o);
  Emitter e(grid_, problem_.dtype, sink);
  if (model_->outer_over_rows()) e.at(r.idx, -1, false);
  else e.at(-1, r.idx, false);
  model_->outer_begin(r.phase, r.idx, e);
}

void Schedule::emit_visit(i64 o, i64 k, EventSink& sink) const {
  const OuterRef r = outer_ref(*model_, o);
  const auto [i, j] = visit_block(o, k);
  Emitter e(grid_, problem_.dtype, sink);
  e.at(i, j, grid_.has_masked(i, j));
  model_->visit(r.phase, i, j, r.idx == 0, e);
}

void Schedule::emit_outer_end(i64 o, EventSink& sink) const {
  const OuterRef r = outer_ref(*model_, o);
  Emitter e(grid_, problem_.dtype, sink);
  if (model_->outer_over_rows()) e.at(r.idx, -1, false);
  else e.at(-1, r.idx, false);
  model_->outer_end(r.phase, r.idx, e);
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

// ---- closed forms -----------------------------------------------------------

namespace {

// Visits [lo, hi) of outer `idx`, as sums.
void add_visits(const detail::AlgorithmModel& m, i64 idx, i64 lo, i64 hi, Sums& s) {
  if (lo >= hi) return;
  const TileGrid& g = m.grid();
  const i64 n = hi - lo;
  i64 r = 0, c = 0, rc = 0;
  if (m.outer_over_rows()) {
    const i64 rows = g.rows(idx), cols = g.cols_sum(lo, hi);
    r = cmul(rows, n);
    c = cols;
    rc = cmul(rows, cols);
  } else {
    const i64 cols = g.cols(idx), rows = g.rows_sum(lo, hi);
    r = rows;
    c = cmul(cols, n);
    rc = cmul(cols, rows);
  }
  s.visits += n;
  s.v_r += r;
  s.v_c += c;
  s.v_rc = checked_add(s.v_rc, rc, "closed-form count");
  if (idx == 0) {
    s.fvisits += n;
    s.fv_r += r;
    s.fv_c += c;
    s.fv_rc += rc;
  }
}

i64 outer_size(const detail::AlgorithmModel& m, i64 idx) {
  return m.outer_over_rows() ? m.grid().rows(idx) : m.grid().cols(idx);
}

// Causal sums when the algorithm skips blocks above the diagonal, in O(log T)
// with the grid's floor sums (the tests hold them equal to the streams).
Sums causal_phase_sums(const detail::AlgorithmModel& m, i64 a, i64 b) {
  const TileGrid& g = m.grid();
  Sums s;
  s.begins = s.ends = b - a;
  if (m.outer_over_rows()) {
    // Row block i visits column blocks [0, last_col(i)]; v_i = last_col(i) + 1.
    // Full row blocks (i < T_r − 1) with v_i < T_c cover v_i·B_c keys; from
    // i* on they cover all N_kv keys; the last row block covers all of them.
    s.begin_size = s.end_size = g.rows_sum(a, b);
    const i64 full_end = std::min(b, g.T_r - 1);
    const i64 i_star = ceil_div((g.T_c - 1) * g.Bc + 1, g.Br) - 1;
    const i64 e1 = std::min(full_end, i_star);
    if (a < e1) {
      const i64 v = g.visited_cols_sum(a, e1);
      s.visits += v;
      s.v_r += cmul(g.Br, v);
      s.v_c += cmul(g.Bc, v);
      s.v_rc += cmul(cmul(g.Br, g.Bc), v);
    }
    const i64 b2 = std::max(a, i_star);
    if (b2 < full_end) {
      const i64 n = full_end - b2;
      s.visits += cmul(n, g.T_c);
      s.v_r += cmul(cmul(g.Br, n), g.T_c);
      s.v_c += cmul(n, g.n_kv);
      s.v_rc += cmul(cmul(g.Br, n), g.n_kv);
    }
    if (b == g.T_r) {
      const i64 r = g.rows(g.T_r - 1);
      s.visits += g.T_c;
      s.v_r += cmul(r, g.T_c);
      s.v_c += g.n_kv;
      s.v_rc += cmul(r, g.n_kv);
    }
  } else {
    // Column block j is visited by row blocks [first_row(j), T_r): T_r − f_j
    // visits covering N_q − f_j·B_r rows.
    s.begin_size = s.end_size = g.cols_sum(a, b);
    const i64 full_end = std::min(b, g.T_c - 1);
    if (a < full_end) {
      const i64 n = full_end - a;
      const i64 f = g.first_row_sum(a, full_end);
      const i64 visits = cmul(n, g.T_r) - f;
      const i64 rows = cmul(n, g.n_q) - cmul(g.Br, f);
      s.visits += visits;
      s.v_r += rows;
      s.v_c += cmul(g.Bc, visits);
      s.v_rc += cmul(g.Bc, rows);
    }
    if (b == g.T_c) {
      const i64 j = g.T_c - 1;
      const i64 f = g.first_row(j), c = g.cols(j);
      const i64 visits = g.T_r - f, rows = g.rows_sum(f, g.T_r);
      s.visits += visits;
      s.v_r += rows;
      s.v_c += cmul(c, visits);
      s.v_rc += cmul(c, rows);
    }
  }
  if (a == 0) {  // the phase's first outer iteration, kept apart for first-touch counts
    Sums first;
    const i64 lo = m.outer_over_rows() ? 0 : g.first_row(0);
    const i64 hi = m.outer_over_rows() ? g.last_col(0) + 1 : g.T_r;
    add_visits(m, 0, lo, hi, first);
    s.fvisits = first.fvisits;
    s.fv_r = first.fv_r;
    s.fv_c = first.fv_c;
    s.fv_rc = first.fv_rc;
  }
  return s;
}

// Complete outer iterations [a, b) of one phase (indices within the phase).
Sums phase_sums(const detail::AlgorithmModel& m, i64 a, i64 b) {
  Sums s;
  if (a >= b) return s;
  const TileGrid& g = m.grid();
  const bool rows = m.outer_over_rows();
  const bool skip = m.skips_masked_blocks() && g.causal;
  if (skip) return causal_phase_sums(m, a, b);
  // Every outer iteration visits every inner block: the sums factor.
  const i64 n = b - a;
  const i64 size = rows ? g.rows_sum(a, b) : g.cols_sum(a, b);
  const i64 inner_n = rows ? g.T_c : g.T_r;
  const i64 inner_total = rows ? g.n_kv : g.n_q;
  s.begins = s.ends = n;
  s.begin_size = s.end_size = size;
  s.visits = cmul(n, inner_n);
  if (rows) {
    s.v_r = cmul(size, inner_n);
    s.v_c = cmul(n, inner_total);
  } else {
    s.v_c = cmul(size, inner_n);
    s.v_r = cmul(n, inner_total);
  }
  s.v_rc = cmul(size, inner_total);
  if (a == 0) {
    Sums first;
    add_visits(m, 0, 0, inner_n, first);
    s.fvisits = first.fvisits;
    s.fv_r = first.fv_r;
    s.fv_c = first.fv_c;
    s.fv_rc = first.fv_rc;
  }
  return s;
}

Counters evaluate(const detail::AlgorithmModel& m, int phase, const Sums& s) {
  Counters c = m.cf_phase(phase, s);
  c.events = checked_add(checked_add(cmul(s.begins, m.ev_begin(phase)), cmul(s.visits, m.ev_visit(phase))),
                         cmul(s.ends, m.ev_end(phase)));
  return c;
}

}  // namespace

Counters Schedule::cf_prologue() const {
  Counters c = model_->cf_prologue();
  c.events = model_->ev_prologue();
  return c;
}

Counters Schedule::cf_epilogue() const {
  Counters c = model_->cf_epilogue();
  c.events = model_->ev_epilogue();
  return c;
}

Counters Schedule::cf_outers(i64 o_begin, i64 o_end) const {
  Counters total;
  const i64 n = per_phase(*model_);
  for (int ph = 0; ph < model_->phases(); ++ph) {
    const i64 a = std::max<i64>(o_begin, ph * n) - ph * n;
    const i64 b = std::min<i64>(o_end, (ph + 1) * n) - ph * n;
    if (a < b) total += evaluate(*model_, ph, phase_sums(*model_, a, b));
  }
  return total;
}

Counters Schedule::cf_outer_begin(i64 o) const {
  const OuterRef r = outer_ref(*model_, o);
  Sums s;
  s.begins = 1;
  s.begin_size = outer_size(*model_, r.idx);
  return evaluate(*model_, r.phase, s);
}

Counters Schedule::cf_outer_end(i64 o) const {
  const OuterRef r = outer_ref(*model_, o);
  Sums s;
  s.ends = 1;
  s.end_size = outer_size(*model_, r.idx);
  return evaluate(*model_, r.phase, s);
}

Counters Schedule::cf_visits(i64 o, i64 k_begin, i64 k_end) const {
  const OuterRef r = outer_ref(*model_, o);
  Sums s;
  add_visits(*model_, r.idx, r.lo + k_begin, r.lo + k_end, s);
  return evaluate(*model_, r.phase, s);
}

Counters Schedule::closed_form() const {
  return cf_prologue() + cf_outers(0, outer_count()) + cf_epilogue();
}

i64 Schedule::events_prologue() const { return model_->ev_prologue(); }
i64 Schedule::events_outer_begin(i64 o) const { return model_->ev_begin(phase_of(o)); }
i64 Schedule::events_per_visit(i64 o) const { return model_->ev_visit(phase_of(o)); }
i64 Schedule::events_outer_end(i64 o) const { return model_->ev_end(phase_of(o)); }
i64 Schedule::events_epilogue() const { return model_->ev_epilogue(); }

}  // namespace flashlab::sim
