#include "model.hpp"

#include "chart_cache.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <stdexcept>

namespace flashlab::gui {

bool Inputs::same_one_gpu(const Inputs& o) const {
  return algo_a == o.algo_a && algo_b == o.algo_b && compare == o.compare && seq == o.seq && batch == o.batch &&
         heads == o.heads && kv_heads == o.kv_heads && head_dim == o.head_dim && causal == o.causal && dtype == o.dtype &&
         sram_override == o.sram_override && sram == o.sram && manual_tiles == o.manual_tiles && br == o.br &&
         bc == o.bc && hopper == o.hopper && hw_preset == o.hw_preset && use_hw_file == o.use_hw_file && hw_file == o.hw_file &&
         lockstep == o.lockstep;
}

bool needs_recompute(const AppState& s) { return s.dirty || !s.inputs.same_one_gpu(s.applied); }

Charts::Charts() {
  for (const analysis::ChartEntry& e : analysis::chart_table()) {
    analysis::ChartSpec& c = specs.emplace_back();
    c.id = e.id;
    c.title = e.title;
  }
}

analysis::ChartSpec& Charts::of(const analysis::ChartEntry& e) {
  return specs.at(static_cast<size_t>(&e - analysis::chart_table().data()));
}

const analysis::ChartSpec& Charts::of(const analysis::ChartEntry& e) const {
  return specs.at(static_cast<size_t>(&e - analysis::chart_table().data()));
}

const analysis::ChartSpec& Charts::operator[](std::string_view id) const {
  const analysis::ChartEntry* e = analysis::find_chart(id);
  if (!e) throw std::invalid_argument("no chart '" + std::string(id) + "' in the chart table");
  return of(*e);
}

bool shows_online_softmax(sim::Algorithm a) { return sim::algorithm_info(a).keeps_running_statistics; }

namespace {

// Cache accesses the L2 model may spend per simulated algorithm in the GUI.
constexpr sim::i64 kGuiL2AccessBudget = 150'000;
// ... and at most, however large the problem (beyond it the two-level count, said so).
constexpr sim::i64 kGuiL2AccessLimit = 2'000'000;

using Clock = std::chrono::steady_clock;

// Beyond this many row blocks the done-prefix is kept for every k-th row only
// (the view aggregates rows anyway), so a step stays cheap at any N.
constexpr i64 kMaxPrefixRows = 4096;

// What the window's fields are called in messages.
const sim::ProblemFieldNames& field_names() {
  static const sim::ProblemFieldNames names{"batch B", "heads H",     "sequence length N", "key/value length", "head dim d",
                                            "dtype",   "SRAM size M", "B_r",               "B_c"};
  return names;
}

sim::ProblemText problem_text(const Inputs& in) {
  sim::ProblemText t;
  t.batch = in.batch;
  t.heads = in.heads;
  if (!in.kv_heads.empty()) t.kv_heads = in.kv_heads;
  t.seq = in.seq;
  t.head_dim = in.head_dim;
  t.dtype = std::string(sim::to_string(in.dtype));
  t.causal = in.causal;
  if (in.sram_override) t.sram = in.sram;
  if (in.manual_tiles && !in.hopper) {
    t.br = in.br;
    t.bc = in.bc;
  }
  return t;
}


analysis::ChartSpec failed_chart(const analysis::ChartEntry& e, const std::string& why) {
  analysis::ChartSpec c;
  c.id = e.id;
  c.title = e.title;
  c.notes.push_back(why);
  return c;
}

analysis::ChartSpec guarded(const analysis::ChartEntry& e, const analysis::ChartContext& ctx,
                            const analysis::BenchResults* results, const analysis::BenchChoice& choice) {
  try {
    return analysis::build_chart(e, ctx, results, choice);
  } catch (const std::exception& ex) {
    return failed_chart(e, std::string("cannot draw: ") + ex.what());
  }
}

analysis::ChartContext chart_context(const AppState& s, const Model& m) {
  analysis::ChartContext ctx;
  ctx.problem = m.problem;
  ctx.hw = m.hw;
  ctx.options = m.options;
  ctx.algorithms = chart_algorithms(s.inputs);
  ctx.profile = m.profile;
  return ctx;
}

// The model charts of a valid model are built when a view shows them: until
// then each is its entry's placeholder, and the key says what it will be built from.
void defer_model_charts(AppState& s, Model& m, const Inputs& in) {
  m.chart_context = chart_context(s, m);
  m.chart_key = chart_key(in, s.bench);
  m.charts.built.assign(analysis::chart_table().size(), 0);
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (!e.needs_results) m.charts.of(e) = failed_chart(e, "the chart is built when it is shown");
}

ChartCache::Job chart_job(AppState& s, const analysis::ChartEntry& e) {
  ChartCache::Job job;
  job.key = std::string(e.id) + "|" + s.model.chart_key;
  job.entry = &e;
  job.context = s.model.chart_context;
  if (s.bench.have_results) {
    // The worker reads a copy of its own, made once per results taken.
    if (!s.bench.shared) s.bench.shared = std::make_shared<const analysis::BenchResults>(s.bench.results);
    job.results = s.bench.shared;
  }
  return job;
}

void invalid_charts(Model& m) {
  const std::string why = "no chart: " + (m.errors.empty() ? std::string("the inputs are invalid") : m.errors.front());
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (!e.needs_results) m.charts.of(e) = failed_chart(e, why);
}

// Blocks whose visit is finished before the cursor: (o, k) below `upto` in the
// schedule's order, for the current pass of a multi-pass algorithm.
struct DoneOrder {
  const sim::Schedule* s = nullptr;
  int phase = 0;  // the pass the cursor is in: done means done in it
  i64 upto_o = -1, upto_k = 0;
  bool all = false, none = true;

  // For a fixed row i the done blocks are a prefix in j, whichever loop is outside.
  bool done(i64 i, i64 j) const {
    const auto [o, k] = s->locate_block(i, j, phase);
    if (o < 0) return false;
    return o < upto_o || (o == upto_o && k < upto_k);
  }
  // Visited column blocks of row i finished before the cursor: a prefix in j.
  i64 prefix(i64 i, const sim::TileGrid& g) const {
    if (none) return 0;
    const i64 visitable = s->problem().causal && !skips_nothing() ? g.last_col(i) + 1 : g.T_c;
    if (all) return visitable;
    i64 lo = 0, hi = visitable;  // done(i, j) for j < answer
    while (lo < hi) {
      const i64 mid = lo + (hi - lo) / 2;
      if (done(i, mid)) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }
  bool skips_nothing() const { return !s->info().skips_masked_blocks; }
};

DoneOrder done_order(const sim::Schedule& s, const sim::Cursor::Where& w) {
  DoneOrder d;
  d.s = &s;
  using P = sim::Cursor::Part;
  switch (w.part) {
    case P::start:
    case P::prologue: return d;
    case P::epilogue:
      d.none = false;
      d.all = true;
      return d;
    case P::outer_begin: d.upto_o = w.outer, d.upto_k = 0; break;
    case P::visit: d.upto_o = w.outer, d.upto_k = w.visit; break;
    case P::outer_end: d.upto_o = w.outer, d.upto_k = std::numeric_limits<i64>::max(); break;
  }
  d.none = false;
  if (w.outer >= 0) d.phase = s.phase_of(w.outer);
  return d;
}

// Tensors whose tiles are indexed by the column block j (K_j, V_j and their gradients).
bool indexed_by_column(sim::Tensor t) {
  using T = sim::Tensor;
  return t == T::K || t == T::V || t == T::dK || t == T::dV || t == T::dKaccum || t == T::dVaccum;
}

// A tile of tensor t as the paper names it: Q_i, K_j, S_ij, ℓ_i, dK_j.
std::string tile_name(sim::Tensor t) {
  using T = sim::Tensor;
  const char* sub = indexed_by_column(t) ? "_j" : (t == T::S || t == T::P || t == T::dS || t == T::dP) ? "_ij" : "_i";
  return std::string(sim::display_name(t)) + sub;
}

// Tensors read (HBM or L2 loads) by a range of pieces, in the tensors' order;
// when `shared_only`, those the CTAs of a wave share: indexed by j when the
// CTAs are row blocks, by i when they are column blocks (`columns`).
std::string read_names(const sim::Counters& c, bool shared_only, bool columns = false) {
  std::string out;
  for (int k = 0; k < sim::kTensorCount; ++k) {
    const auto t = static_cast<sim::Tensor>(k);
    if (shared_only && (columns ? indexed_by_column(t) || t == sim::Tensor::S || t == sim::Tensor::P : !indexed_by_column(t)))
      continue;
    if (c.at(sim::Level::HBM, t).read_bytes + c.at(sim::Level::L2, t).read_bytes <= 0) continue;
    out += (out.empty() ? "" : ", ") + tile_name(t);
  }
  return out;
}

// Row blocks [first, last] of a sorted list, as runs.
std::vector<std::pair<i64, i64>> runs_of(std::vector<i64> rows) {
  std::sort(rows.begin(), rows.end());
  std::vector<std::pair<i64, i64>> out;
  for (i64 r : rows) {
    if (!out.empty() && r <= out.back().second + 1) out.back().second = std::max(out.back().second, r);
    else out.push_back({r, r});
  }
  return out;
}

std::string runs_text(const std::vector<std::pair<i64, i64>>& runs, bool columns) {
  const std::string name = columns ? "K_" : "Q_";
  std::string out;
  for (size_t k = 0; k < runs.size() && k < 3; ++k) {
    const auto [a, b] = runs[k];
    out += (k ? ", " : "") + (name + std::to_string(a)) + (b > a ? "…" + name + std::to_string(b) : "");
  }
  if (runs.size() > 3) out += ", …";
  return out;
}

std::string percent(double f) {
  const double p = 100.0 * std::clamp(f, 0.0, 1.0);
  char buf[32];
  std::snprintf(buf, sizeof buf, p > 0 && p < 1 ? "%.1f%%" : "%.0f%%", p);
  return buf;
}

// The L2 trace at the cursor: reads so far, the current visit's source and wave.
void l2_at_cursor(const AppState& s, const AlgoView& v, TilingSnapshot& snap) {
  L2AtCursor& out = snap.l2;
  out = {};
  const sim::Schedule& sch = *v.schedule;
  const sim::L2Result& l2 = v.result.l2;
  const sim::Cursor::Where& w = snap.where;
  using P = sim::Cursor::Part;
  if (v.traced.available()) {
    i64 o = 0, k = 0;  // visits done: the first k of outer o and every one before it
    switch (w.part) {
      case P::start:
      case P::prologue: break;
      case P::outer_begin: o = w.outer; break;
      case P::visit: o = w.outer, k = w.visit + 1; break;
      case P::outer_end: o = w.outer, k = sch.visit_count(w.outer); break;
      case P::epilogue: o = sch.outer_count(); break;
    }
    const sim::ReadSplit r = v.traced.before(o, k);
    const double heads = static_cast<double>(s.model.problem.head_count());
    out.has_reads = true;
    out.request_read_bytes = r.request_bytes * heads;
    out.dram_read_bytes = r.dram_bytes * heads;
  } else {
    out.reads_why_not = v.traced.why_not();
  }
  if (w.part != P::visit || w.outer < 0) return;
  const sim::VisitL2* at = l2.visit(w.outer, w.visit);
  if (!at) return;
  out.has_visit = true;
  out.dram_fraction = at->dram_fraction;
  sim::Counters reads = sch.cost_of_visits(w.outer, w.visit, w.visit + 1);
  if (w.visit == 0) reads += sch.cost_of_outer_begin(w.outer);  // the trace counts the outer iteration's loads here
  out.reads = read_names(reads, false);
  if (out.reads.empty()) out.reads = "reads";
  const double f = static_cast<double>(at->dram_fraction);
  out.visit_caption = out.reads + ": " +
                      (f <= 0 ? "100% from the L2" : f >= 1 ? "100% from DRAM" : percent(f) + " from DRAM, " + percent(1 - f) + " from the L2");
  if (at->wave < 0 || static_cast<size_t>(at->wave) >= l2.waves.size()) return;
  const sim::WaveGroup& wave = l2.waves[static_cast<size_t>(at->wave)];
  // A miss of a tile the wave shares is one DRAM read for all of its CTAs.
  if (f > 0 && wave.ctas.size() > 1 && at->dram_share < 0.999f * at->dram_fraction)
    out.visit_caption += ", read once for the wave's " + std::to_string(wave.ctas.size()) + " CTAs";
  std::vector<i64> rows;
  const bool per_outer = sch.info().grid == sim::GridShape::cta_per_outer_iteration;
  // A CTA per outer iteration runs that iteration's block: a row block, or a column block (outer loop over K_j).
  out.wave_columns = per_outer && !sch.outer_over_rows(sch.phase_of(w.outer));
  for (i64 cta : wave.ctas) {
    if (per_outer) {
      if (cta >= 0 && cta < sch.outer_count()) rows.push_back(sch.outer_block(cta));
    } else if (wave.launch >= 0 && wave.launch < sch.outer_count() && cta >= 0 && cta < sch.visit_count(wave.launch)) {
      rows.push_back(sch.visit_block(wave.launch, cta).first);
    }
  }
  out.wave_rows = runs_of(rows);
  sim::Counters outer_reads = sch.cost_of_outer_begin(w.outer);
  outer_reads += sch.cost_of_visits(w.outer, 0, std::max<i64>(1, sch.visit_count(w.outer)));
  const std::string shared = read_names(outer_reads, true, out.wave_columns);
  const std::string ctas = std::to_string(wave.ctas.size()) + (wave.ctas.size() == 1 ? " CTA (" : " CTAs (") +
                           runs_text(out.wave_rows, out.wave_columns) + ")";
  out.wave_caption = "wave " + std::to_string(at->wave + 1) + " of " + std::to_string(l2.waves.size()) + ": " + ctas +
                     (shared.empty() ? " run together" : wave.ctas.size() > 1 ? " walk " + shared + " together"
                                                                              : " walks " + shared + " alone");
}

// New online-softmax work per algorithm per frame (multiply-adds): a jump at a
// large N is finished over a few frames instead of stalling one.
constexpr i64 kSoftmaxBudget = 2'000'000;

// The Hopper schedule of the block the cursor is in (`held`), simulated again
// only when the cursor entered another block (`stale`); false, with why in
// `pa`, when the schedule cannot be simulated.
template <class Pipeline, class Simulate>
bool block_schedule(std::shared_ptr<const Pipeline>& held, bool stale, Simulate simulate, const char* what,
                    PipelineAtCursor& pa) {
  try {
    if (stale) held = std::make_shared<const Pipeline>(simulate());
    return true;
  } catch (const std::exception& e) {
    held.reset();
    pa.why_not = std::string(what) + " cannot be drawn: " + e.what();
    return false;
  }
}

// The Hopper backward's schedule of the column block the cursor is in (its
// main loop; the pre-pass and the conversion of dQaccum are launches of their
// own: the first column block's CTA is shown before it starts or after it
// ended), and the moment of the cursor's event in it (rebuilt when j changes).
void bwd_pipeline_at_cursor(const AppState& s, AlgoView& v, TilingSnapshot& snap) {
  PipelineAtCursor& pa = snap.pipeline;
  pa.backward = true;
  using P = sim::Cursor::Part;
  const sim::Schedule& sch = *v.schedule;
  const sim::Cursor::Where& w = snap.where;
  int main_phase = 0;
  while (main_phase + 1 < sch.phases() && !sch.has_visits(main_phase)) ++main_phase;
  const int phase = w.outer >= 0 ? sch.phase_of(w.outer) : -1;
  const bool in_main = phase == main_phase;
  const bool after = !in_main && (w.part == P::epilogue || phase > main_phase);
  const i64 j = in_main ? sch.outer_block(w.outer) : 0;
  if (!block_schedule(v.bwd_pipeline, !v.bwd_pipeline || v.bwd_pipeline->j != j,
                      [&] { return sim::simulate_hopper_bwd_pipeline(s.model.problem, j, *v.hopper_bwd, s.model.hw); },
                      "the Hopper backward's schedule", pa))
    return;
  const sim::HopperBwdPipeline& h = *v.bwd_pipeline;
  double t = 0;
  std::string where;
  if (!in_main) {
    t = after || snap.position >= v.cursor->size() ? h.end_ns : 0;
    where = after ? " · the main loop is done (this pass is a launch of its own)"
                  : " · the pre-pass D_i = rowsum(dO_i ∘ O_i) runs first, a launch of its own";
  } else {
    for (auto it = snap.recent.rbegin(); it != snap.recent.rend(); ++it) {
      const double at = h.time_of(it->event);
      if (at >= 0) {
        t = at;
        break;
      }
    }
  }
  pa.has = true;
  pa.t_ns = t;
  pa.bwd_state = h.state_at(t);
  const auto pct = [](double f) { return std::to_string(static_cast<int>(std::lround(100 * f))) + "%"; };
  pa.caption = "column block j = " + std::to_string(j) + " · " + std::to_string(h.visits) + " Q_i · t = " +
               sim::fixed(t * 1e-3, 2) + " µs of " + sim::fixed(h.end_ns * 1e-3, 2) + " µs · tensor cores busy " +
               pct(h.tensor_utilisation()) + ", waiting " + pct(h.end_ns > 0 ? h.tensor_wait_in_softmax_ns / h.end_ns : 0) +
               " in the lockstep (model)" + where;
}

// The Hopper schedule of the row block the cursor is in, and the moment of
// the cursor's event in it (the schedule is rebuilt only when i changes).
void pipeline_at_cursor(const AppState& s, AlgoView& v, TilingSnapshot& snap) {
  PipelineAtCursor& pa = snap.pipeline;
  pa = PipelineAtCursor{};
  if (v.hopper_bwd) {
    bwd_pipeline_at_cursor(s, v, snap);
    return;
  }
  if (!v.hopper) return;
  using P = sim::Cursor::Part;
  const sim::Schedule& sch = *v.schedule;
  const sim::Cursor::Where& w = snap.where;
  const i64 i = w.outer >= 0 ? sch.outer_block(w.outer) : (w.part == P::epilogue ? sch.grid().T_r - 1 : 0);
  if (!block_schedule(v.pipeline, !v.pipeline || v.pipeline->i != i,
                      [&] { return sim::simulate_hopper_pipeline(s.model.problem, i, *v.hopper, s.model.hw); },
                      "the Hopper schedule", pa))
    return;
  const sim::HopperPipeline& h = *v.pipeline;
  double t = 0;
  if (w.part == P::epilogue || snap.position >= v.cursor->size()) t = h.end_ns;
  else if (!snap.recent.empty() && snap.recent.back().event.i == i) t = std::max(0.0, h.time_of(snap.recent.back().event));
  pa.has = true;
  pa.t_ns = t;
  pa.state = h.state_at(t);
  pa.caption = "row block i = " + std::to_string(i) + " · " + std::to_string(h.visits) + " K_j, V_j · t = " +
               sim::fixed(t * 1e-3, 2) + " µs of " + sim::fixed(h.end_ns * 1e-3, 2) + " µs · tensor cores busy " +
               std::to_string(static_cast<int>(std::lround(100 * h.tensor_utilisation()))) + "% of the CTA's time (model)";
}

}  // namespace

void refresh_snapshot(AppState& s, AlgoView& v) {
  if (!v.cursor) return;
  const sim::Cursor& c = *v.cursor;
  const sim::Schedule& sch = *v.schedule;
  const sim::TileGrid& g = sch.grid();
  TilingSnapshot& snap = v.snap;
  snap.position = c.position();
  snap.where = c.where();
  using P = sim::Cursor::Part;
  snap.phase = snap.where.outer >= 0 ? sch.phase_of(snap.where.outer) : (snap.where.part == P::epilogue ? 99 : 0);
  snap.cur_i = snap.where.part == P::visit ? snap.where.i : -1;
  snap.cur_j = snap.where.part == P::visit ? snap.where.j : -1;

  const DoneOrder order = done_order(sch, snap.where);
  const i64 stride = std::max<i64>(1, (g.T_r + kMaxPrefixRows - 1) / kMaxPrefixRows);
  snap.done_cols.resize(static_cast<size_t>((g.T_r + stride - 1) / stride));
  for (size_t k = 0; k < snap.done_cols.size(); ++k) snap.done_cols[k] = order.prefix(static_cast<i64>(k) * stride, g);

  // The last few events up to the cursor, for the transfer log.
  snap.recent.clear();
  if (v.scratch) {
    for (i64 p = std::max<i64>(1, snap.position - 7); p <= snap.position; ++p) {
      v.scratch->seek(p);
      if (v.scratch->last_event()) snap.recent.push_back({p, *v.scratch->last_event()});
    }
  }

  snap.cumulative_overflow = false;
  try {
    snap.cumulative = c.over_heads();
  } catch (const sim::OverflowError&) {
    snap.cumulative = c.counters();
    snap.cumulative_overflow = true;
  }
  {
    const double flops = static_cast<double>(snap.cumulative.flops());
    const double bytes = static_cast<double>(snap.cumulative.level(sim::Level::HBM).bytes());
    snap.ai_now = analysis::arithmetic_intensity(flops, bytes);
    snap.time_bound_now_s = analysis::time_lower_bound_s(flops, bytes, v.roof.peak_flops, v.roof.bandwidth);
    analysis::Series& mk = snap.ai_marker;
    mk.name = std::string(sim::to_string(v.algo)) + " so far";
    mk.style = analysis::SeriesStyle::points;
    mk.marker = analysis::MarkerShape::cross;
    mk.color = {240, 240, 240, 255};
    mk.in_legend = false;
    mk.x.assign(1, static_cast<double>(s.model.problem.seq_q));
    mk.y.assign(1, snap.ai_now > 0 ? snap.ai_now : std::numeric_limits<double>::quiet_NaN());
    mk.point_labels.assign(1, mk.name);
  }

  l2_at_cursor(s, v, snap);

  pipeline_at_cursor(s, v, snap);

  snap.has_softmax = false;
  if (v.softmax && snap.where.i >= 0 && snap.where.i < g.T_r) {
    const i64 i = snap.where.i;
    i64 visits = order.prefix(i, g);
    // Once the visit has passed the line where m_i and ℓ_i take the new block in.
    if (snap.where.part == P::visit && snap.where.line >= sch.info().statistics_update_line) visits += 1;
    snap.softmax = v.softmax->state(i, visits, kSoftmaxBudget);
    snap.softmax_visits_total = v.softmax->visits_total(i);
    snap.has_softmax = true;
  }
}

void continue_softmax(AppState& s) {
  for (AlgoView& v : s.model.algos) {
    TilingSnapshot& sn = v.snap;
    if (!v.softmax || !sn.has_softmax || sn.softmax.complete()) continue;
    sn.softmax = v.softmax->state(sn.softmax.i, sn.softmax.target, kSoftmaxBudget);
  }
}

void seek_primary(AppState& s, i64 position) {
  auto& algos = s.model.algos;
  if (!s.model.valid || algos.empty() || !algos[0].cursor) return;
  sim::Cursor& a = *algos[0].cursor;
  a.seek(position);
  if (algos.size() > 1 && algos[1].cursor) {
    sim::Cursor& b = *algos[1].cursor;
    bool placed = false;
    if (s.inputs.lockstep == Lockstep::block && a.where().part == sim::Cursor::Part::visit)
      placed = b.seek_block(a.where().i, a.where().j);
    if (!placed) {
      // Same fraction of each schedule: both finish together.
      const double f = a.size() > 0 ? static_cast<double>(a.position()) / static_cast<double>(a.size()) : 0.0;
      b.seek(static_cast<i64>(std::llround(f * static_cast<double>(b.size()))));
    }
  }
  for (AlgoView& v : algos) refresh_snapshot(s, v);
}

void step_primary(AppState& s, i64 delta) {
  if (!s.model.valid || s.model.algos.empty() || !s.model.algos[0].cursor) return;
  const i64 pos = s.model.algos[0].cursor->position();
  // Saturating: a huge delta must not wrap.
  const i64 target = delta > 0 ? (pos > std::numeric_limits<i64>::max() - delta ? std::numeric_limits<i64>::max() : pos + delta)
                               : pos + delta;
  seek_primary(s, target);
}

void advance_playback(AppState& s, double dt_s) {
  Playback& pb = s.playback;
  if (!pb.playing || !s.model.valid || s.model.algos.empty()) return;
  const sim::Cursor& c = *s.model.algos[0].cursor;
  if (c.position() >= c.size()) {
    pb.playing = false;
    return;
  }
  pb.carry += std::clamp(dt_s, 0.0, 0.25) * pb.events_per_s;
  const double whole = std::floor(pb.carry);
  if (whole < 1) return;
  pb.carry -= whole;
  step_primary(s, static_cast<i64>(std::min(whole, 1e15)));
  if (s.model.algos[0].cursor->position() >= s.model.algos[0].cursor->size()) pb.playing = false;
}

void rebuild_bench_charts(AppState& s) {
  Charts& c = s.model.charts;
  if (!s.bench.have_results) {
    const std::string why = "no results loaded: open a file written by 'flashlab bench --json FILE' in the Benchmarks tab";
    for (const analysis::ChartEntry& e : analysis::chart_table())
      if (e.needs_results) c.of(e) = failed_chart(e, why);
  } else {
    const analysis::BenchResults& r = s.bench.results;
    s.bench.kernel_ids.clear();
    for (const analysis::BenchRow& row : r.rows)
      if (std::find(s.bench.kernel_ids.begin(), s.bench.kernel_ids.end(), row.kernel) == s.bench.kernel_ids.end())
        s.bench.kernel_ids.push_back(row.kernel);
    const auto pick = [&](int k) {
      return k >= 0 && static_cast<size_t>(k) < s.bench.kernel_ids.size() ? s.bench.kernel_ids[static_cast<size_t>(k)]
                                                                           : std::string();
    };
    const analysis::BenchChoice choice{pick(s.bench.heatmap_kernel), pick(s.bench.baseline_kernel), &s.bench.filter};
    const analysis::ChartContext ctx = chart_context(s, s.model);
    for (const analysis::ChartEntry& e : analysis::chart_table())
      if (e.needs_results) c.of(e) = guarded(e, ctx, &r, choice);
  }
  if (s.model.valid) defer_model_charts(s, s.model, s.applied);  // the roofline shows measured points
}

std::string chart_key(const Inputs& in, const BenchState& b) {
  std::string k;
  for (const std::string* t : {&in.seq, &in.batch, &in.heads, &in.kv_heads, &in.head_dim, &in.sram, &in.br, &in.bc,
                               &in.hw_preset, &in.hw_file})
    k += *t + ",";
  for (int v : {static_cast<int>(in.algo_a), static_cast<int>(in.algo_b), int(in.compare), int(in.causal),
                static_cast<int>(in.dtype), int(in.sram_override), int(in.manual_tiles), int(in.hopper),
                int(in.use_hw_file), static_cast<int>(in.lockstep)})
    k += std::to_string(v) + ",";
  // A file is itself wherever it is opened (a lecture's scratch states open
  // their own copies); a run's results are this state's alone.
  std::error_code ec;
  if (!b.have_results) k += "|no results";
  else if (std::filesystem::is_regular_file(b.source, ec)) k += "|file " + b.source;
  else k += "|run " + b.source + " #" + std::to_string(b.generation);
  return k;
}

bool need_chart(AppState& s, const analysis::ChartEntry& e) {
  const size_t k = static_cast<size_t>(&e - analysis::chart_table().data());
  if (e.needs_results || !s.model.valid || k >= s.model.charts.built.size() || s.model.charts.built[k]) return false;
  s.model.charts.of(e) = chart_cache(s).get(chart_job(s, e));
  s.model.charts.built[k] = 1;
  return true;
}

void chart_ahead(AppState& s, const analysis::ChartEntry& e) {
  const size_t k = static_cast<size_t>(&e - analysis::chart_table().data());
  if (e.needs_results || !s.model.valid || k >= s.model.charts.built.size() || s.model.charts.built[k]) return;
  chart_cache(s).ahead(chart_job(s, e));
}

void build_all_charts(AppState& s) {
  for (const analysis::ChartEntry& e : analysis::chart_table()) need_chart(s, e);
}

std::vector<sim::Algorithm> chart_algorithms(const Inputs& in) {
  const std::vector<sim::Algorithm>& defaults = analysis::default_algorithms();
  std::vector<sim::Algorithm> out;
  for (sim::Algorithm a : sim::all_algorithms()) {
    const bool chosen = a == in.algo_a || (in.compare && a == in.algo_b);
    if (chosen || std::find(defaults.begin(), defaults.end(), a) != defaults.end()) out.push_back(a);
  }
  return out;
}

namespace {

// The window's keys of the fields the errors are about.
std::vector<std::string> blamed_fields(const std::vector<sim::ProblemError>& errors) {
  std::vector<std::string> out;
  for (const sim::ProblemError& e : errors)
    for (sim::ProblemField f : e.fields) out.emplace_back(sim::problem_field_key(f));
  return out;
}

}  // namespace

std::vector<std::string> problem_errors(const Inputs& in) {
  return sim::parse_problem(problem_text(in), field_names()).messages();
}

void recompute(AppState& s) {
  const auto t0 = Clock::now();
  // Where the primary cursor was, as a fraction: a new N keeps the place.
  double fraction = 0;
  bool had_cursor = false;
  if (s.model.valid && !s.model.algos.empty() && s.model.algos[0].cursor && s.model.algos[0].cursor->size() > 0) {
    fraction = static_cast<double>(s.model.algos[0].cursor->position()) / static_cast<double>(s.model.algos[0].cursor->size());
    had_cursor = true;
  }
  const Inputs& in = s.inputs;
  Model m;
  m.generation = s.model.generation + 1;
  std::vector<std::string>& errors = m.errors;

  sim::ParsedProblem parsed = sim::parse_problem(problem_text(in), field_names());
  errors = parsed.messages();
  m.bad_fields = blamed_fields(parsed.errors);
  const sim::AttentionProblem& p = parsed.problem;
  m.options = parsed.options;
  const std::string hw_name = in.use_hw_file ? in.hw_file : in.hw_preset;
  if (hw_name.empty()) {
    errors.push_back(in.use_hw_file ? "hardware profile: type the path of a JSON profile" : "choose a hardware preset");
  } else if (s.model.hw.name == hw_name || (!s.model.hw.provenance.empty() && s.model.hw.provenance == "file:" + hw_name)) {
    m.hw = s.model.hw;  // unchanged: no disk read on every keystroke
    m.profile = s.model.profile;
  } else {
    try {
      m.hw = sim::load_hardware(hw_name);
      if (in.use_hw_file && m.hw.provenance.empty()) m.hw.provenance = "file:" + hw_name;
      if (in.use_hw_file) m.profile = analysis::measured_profile_of(m.hw, hw_name);
    } catch (const std::exception& e) {
      errors.push_back(std::string("hardware: ") + e.what());
    }
  }
  std::optional<sim::HopperConfig> hopper;
  std::optional<sim::HopperBwdConfig> hopper_bwd;
  if (errors.empty() && in.hopper) {
    hopper = sim::hopper_config(p);
    hopper_bwd = sim::hopper_bwd_config(p.head_dim, p.causal);
    const bool backward = sim::algorithm_info(in.algo_a).pass == sim::Pass::bwd &&
                          (!in.compare || sim::algorithm_info(in.algo_b).pass == sim::Pass::bwd);
    if (backward ? !hopper_bwd : !hopper) {
      errors.push_back(std::string(backward ? "the Hopper backward rung" : "the Hopper rung") +
                       " is compiled for head dim d = " +
                       (backward ? sim::hopper_bwd_head_dims_text() : sim::hopper_head_dims_text()) + ", not d = " +
                       std::to_string(p.head_dim) + ": choose one of those, or the paper's rule for the tiles");
      m.bad_fields.emplace_back("head_dim");
    } else if (p.dtype == sim::DType::fp32) {
      errors.push_back("the Hopper rung runs fp16 and bf16 (wgmma with fp32 accumulation), not fp32");
    } else {
      // The charts' tiles: the backward rung's when only backward algorithms are shown.
      m.options.tiles = backward || !hopper ? sim::tiles_of(*hopper_bwd) : sim::tiles_of(*hopper);
      m.options.kernel_tiles = true;  // the rung's: what it keeps in registers is on chip too
    }
  }
  if (errors.empty()) {
    m.problem = p;
    m.sram_bytes = m.options.sram_bytes > 0 ? m.options.sram_bytes : m.hw.sram_bytes_per_sm;
    m.theta_standard_bytes = analysis::theta_standard_bytes(p);
    m.theta_flash_bytes = analysis::theta_flash_bytes(p, m.sram_bytes);
    m.kv_head_bytes = 2 * p.n_kv() * p.d() * sim::dtype_bytes(p.dtype);
    m.options.stream_event_limit = 0;  // closed forms: equal to the streams by test, and instant
    // The L2 model follows fewer heads than `flashlab sim` would, so that a
    // slider stays interactive (docs/performance.md); the first head is traced
    // for the tiling view.
    m.options.l2_options.access_budget = kGuiL2AccessBudget;
    m.options.l2_options.access_limit = kGuiL2AccessLimit;
    m.options.l2_options.trace_first_head = true;
    std::vector<sim::Algorithm> algos{in.algo_a};
    if (in.compare && in.algo_b != in.algo_a) algos.push_back(in.algo_b);
    try {
      for (sim::Algorithm a : algos) {
        AlgoView v;
        v.algo = a;
        // The Hopper rungs' tiles are each pass's own (kHopperConfigs, kHopperBwdConfigs).
        const bool backward = sim::algorithm_info(a).pass == sim::Pass::bwd;
        sim::SimOptions options = m.options;
        if (hopper_bwd && backward) options.tiles = sim::tiles_of(*hopper_bwd);
        v.result = sim::simulate(a, p, m.hw, options);
        if (!v.result.ok()) {
          for (const std::string& e : v.result.errors()) errors.push_back(std::string(sim::to_string(a)) + ": " + e);
          // Tiles that cannot fit: the tiles typed, else the head dim that sizes them (and M when typed).
          // (d sizes every tile's bytes: it is blamed too.)
          if (in.manual_tiles) m.bad_fields.insert(m.bad_fields.end(), {"br", "bc"});
          m.bad_fields.emplace_back("head_dim");
          if (in.sram_override) m.bad_fields.emplace_back("sram");
          break;
        }
        for (const std::string& n : v.result.messages())
          if (std::find(m.notes.begin(), m.notes.end(), n) == m.notes.end() &&
              std::find(errors.begin(), errors.end(), n) == errors.end())
            m.notes.push_back(n);
        v.roof = analysis::roofline(v.result, m.hw);
        v.schedule = std::make_unique<sim::Schedule>(a, p, v.result.tiles);
        v.cursor = std::make_unique<sim::Cursor>(*v.schedule, v.result.sram_capacity_bytes);
        v.scratch = std::make_unique<sim::Cursor>(*v.schedule, v.result.sram_capacity_bytes);
        v.traced = sim::TracedReads(*v.schedule, v.result.l2);
        if (shows_online_softmax(a)) v.softmax = std::make_unique<sim::OnlineSoftmax>(p, v.result.tiles, 1, 4);
        if (sim::algorithm_info(a).hopper_rung_runs_it) {
          if (backward) v.hopper_bwd = hopper_bwd;
          else v.hopper = hopper;
        }
        m.algos.push_back(std::move(v));
      }
      if (hopper) {
        const bool drawn = std::any_of(m.algos.begin(), m.algos.end(), [](const AlgoView& v) { return v.shows_pipeline(); });
        if (!drawn)
          m.notes.push_back("the Hopper rungs follow FlashAttention-2's loop nests: choose FlashAttention-2 (or its "
                            "backward) to see their schedule (TMA ring, warpgroups)");
        else if (m.hw.l2_bandwidth <= 0)
          m.notes.push_back(m.hw.name + " has no L2 bandwidth: the Hopper schedule gives its copies HBM's share of an SM, "
                            "slower than the L2 that serves most of K_j, V_j; a measured profile (flashlab ceilings) has it");
      }
    } catch (const std::exception& e) {
      errors.push_back(std::string("cannot model this problem: ") + e.what());
    }
  }
  // Keep the notes that are errors out of the notes list.
  m.valid = errors.empty() && !m.algos.empty();
  if (!m.valid) {
    m.algos.clear();
    if (errors.empty()) errors.push_back("nothing to show: choose an algorithm");
  }
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (e.needs_results) m.charts.of(e) = s.model.charts.of(e);  // kept: they do not depend on the inputs
  if (m.valid) defer_model_charts(s, m, s.inputs);
  else invalid_charts(m);

  s.model = std::move(m);
  s.applied = s.inputs;
  s.dirty = false;
  if (s.model.valid) {
    const i64 size = s.model.algos[0].cursor->size();
    seek_primary(s, had_cursor ? static_cast<i64>(std::llround(fraction * static_cast<double>(size))) : 0);
  } else {
    s.playback.playing = false;
  }
  s.model.recompute_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
}

}  // namespace flashlab::gui
