#include "core/enum_names.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

namespace {

// Σ_{k=0}^{n-1} ⌊(a·k + b) / m⌋ for a, b ≥ 0, m ≥ 1, in O(log) steps (the
// Euclid-like reduction). The causal sums over row or column blocks are of
// this form, so they cost O(log T) instead of O(T).
i64 floor_sum(i64 n, i64 m, i64 a, i64 b) {
  i64 sum = 0;
  while (n > 0) {
    if (a >= m) {
      sum += (n - 1) * n / 2 * (a / m);
      a %= m;
    }
    if (b >= m) {
      sum += n * (b / m);
      b %= m;
    }
    const i64 y_max = a * n + b;
    if (y_max < m) break;
    n = y_max / m;
    b = y_max % m;
    std::swap(m, a);
  }
  return sum;
}

}  // namespace

i64 sram_elements(i64 sram_bytes, DType t) { return sram_bytes / dtype_bytes(t); }

TileShape paper_tile_rule(i64 sram_bytes, const AttentionProblem& p) {
  const i64 M = std::max<i64>(1, sram_elements(sram_bytes, p.dtype));
  const i64 Bc = ceil_div(M, 4 * p.head_dim);
  return {std::min(Bc, p.head_dim), Bc};
}

TileShape tile_rule_shape(TileRule r, i64 sram_bytes, const AttentionProblem& p) {
  if (r == TileRule::paper_backward) {
    const i64 M = std::max<i64>(1, sram_elements(sram_bytes, p.dtype));
    const i64 Bc = ceil_div(M, 8 * p.head_dim);
    return {std::min(Bc, p.head_dim), Bc};
  }
  const TileShape t = paper_tile_rule(sram_bytes, p);
  return r == TileRule::paper_transposed ? TileShape{t.Bc, t.Br} : t;
}

namespace {
constexpr detail::EnumName<TileRule> kRuleNames[] = {{TileRule::paper, "paper"},
                                                     {TileRule::paper_transposed, "paper, transposed"},
                                                     {TileRule::paper_backward, "paper, backward"}};
static_assert(detail::lists_through(kRuleNames, TileRule::paper_backward));
}  // namespace

std::string_view describe(TileRule r) { return detail::name_of(kRuleNames, r); }

TileGrid::TileGrid(const AttentionProblem& p, TileShape t)
    : n_q(p.n_q()), n_kv(p.n_kv()), d(p.head_dim), Br(t.Br), Bc(t.Bc),
      T_r(ceil_div(p.n_q(), t.Br)), T_c(ceil_div(p.n_kv(), t.Bc)), causal(p.causal) {}

i64 TileGrid::rows_sum(i64 a, i64 b) const {
  if (a >= b) return 0;
  return std::min(b * Br, n_q) - a * Br;
}

i64 TileGrid::cols_sum(i64 a, i64 b) const {
  if (a >= b) return 0;
  return std::min(b * Bc, n_kv) - a * Bc;
}

bool TileGrid::visited(i64 i, i64 j) const {
  if (!causal) return true;
  const i64 last_row = std::min((i + 1) * Br, n_q) - 1;
  return j * Bc <= last_row;
}

bool TileGrid::has_masked(i64 i, i64 j) const {
  if (!causal) return false;
  const i64 last_col_index = std::min((j + 1) * Bc, n_kv) - 1;
  return last_col_index > i * Br;
}

bool TileGrid::partially_masked(i64 i, i64 j) const { return visited(i, j) && has_masked(i, j); }

i64 TileGrid::last_col(i64 i) const {
  if (!causal) return T_c - 1;
  const i64 last_row = std::min((i + 1) * Br, n_q) - 1;
  return std::min(T_c - 1, last_row / Bc);
}

i64 TileGrid::first_row(i64 j) const {
  if (!causal) return 0;
  return std::min(T_r - 1, (j * Bc) / Br);
}

i64 TileGrid::visited_cols_sum(i64 a, i64 b) const {
  if (a >= b) return 0;
  if (!causal) return (b - a) * T_c;
  // Full row blocks i < T_r − 1 end at row (i+1)·B_r − 1 < N − 1, so
  // last_col(i) + 1 = ⌊((i+1)·B_r − 1) / B_c⌋ + 1; the last row block sees every column.
  const i64 full_end = std::min(b, T_r - 1);
  i64 n = 0;
  if (a < full_end) n += floor_sum(full_end - a, Bc, Br, Br * a + Br - 1) + (full_end - a);
  if (b == T_r) n += last_col(T_r - 1) + 1;
  return n;
}

i64 TileGrid::first_row_sum(i64 a, i64 b) const {
  if (a >= b || !causal) return 0;
  // first_row(j) = ⌊j·B_c / B_r⌋: j·B_c ≤ N − 1 keeps it below T_r.
  return floor_sum(b - a, Br, Bc, Bc * a);
}

i64 TileGrid::visited_blocks() const { return visited_cols_sum(0, T_r); }

BlockMoments& BlockMoments::operator+=(const BlockMoments& o) {
  n = checked_add(n, o.n, "block count");
  r = checked_add(r, o.r, "block count");
  c = checked_add(c, o.c, "block count");
  rc = checked_add(rc, o.rc, "block count");
  return *this;
}

BlockMoments& BlockMoments::operator-=(const BlockMoments& o) {
  n -= o.n;
  r -= o.r;
  c -= o.c;
  rc -= o.rc;
  return *this;
}

namespace {
i64 mul(i64 a, i64 b) { return checked_mul(a, b, "block count"); }
i64 mul(i64 a, i64 b, i64 c) { return mul(mul(a, b), c); }
}  // namespace

BlockMoments TileGrid::row_block_visits(i64 a, i64 b, bool skip_masked) const {
  BlockMoments m;
  if (a >= b) return m;
  if (!(skip_masked && causal)) {  // every row block visits every column block: the sums factor
    const i64 rows = rows_sum(a, b);
    m.n = mul(b - a, T_c);
    m.r = mul(rows, T_c);
    m.c = mul(b - a, n_kv);
    m.rc = mul(rows, n_kv);
    return m;
  }
  // Row block i visits column blocks [0, last_col(i)]: v_i = last_col(i) + 1.
  // Full row blocks (i < T_r − 1) with v_i < T_c cover v_i·B_c keys; from i*
  // on they cover all N_kv keys; the last row block covers all of them.
  const i64 full_end = std::min(b, T_r - 1);
  const i64 i_star = ceil_div((T_c - 1) * Bc + 1, Br) - 1;
  const i64 e1 = std::min(full_end, i_star);
  if (a < e1) {
    const i64 v = visited_cols_sum(a, e1);
    m.n += v;
    m.r += mul(Br, v);
    m.c += mul(Bc, v);
    m.rc += mul(Br, Bc, v);
  }
  const i64 b2 = std::max(a, i_star);
  if (b2 < full_end) {
    const i64 k = full_end - b2;
    m += BlockMoments{mul(k, T_c), mul(Br, k, T_c), mul(k, n_kv), mul(Br, k, n_kv)};
  }
  if (b == T_r) {
    const i64 r = rows(T_r - 1);
    m += BlockMoments{T_c, mul(r, T_c), n_kv, mul(r, n_kv)};
  }
  return m;
}

BlockMoments TileGrid::col_block_visits(i64 a, i64 b, bool skip_masked) const {
  BlockMoments m;
  if (a >= b) return m;
  if (!(skip_masked && causal)) {
    const i64 cols = cols_sum(a, b);
    m.n = mul(b - a, T_r);
    m.r = mul(b - a, n_q);
    m.c = mul(cols, T_r);
    m.rc = mul(cols, n_q);
    return m;
  }
  // Column block j is visited by row blocks [first_row(j), T_r): T_r − f_j
  // visits covering N_q − f_j·B_r rows.
  const i64 full_end = std::min(b, T_c - 1);
  if (a < full_end) {
    const i64 k = full_end - a;
    const i64 f = first_row_sum(a, full_end);
    const i64 visits = mul(k, T_r) - f;
    const i64 rows = mul(k, n_q) - mul(Br, f);
    m += BlockMoments{visits, rows, mul(Bc, visits), mul(Bc, rows)};
  }
  if (b == T_c) {
    const i64 j = T_c - 1;
    const i64 f = first_row(j), c = cols(j);
    const i64 visits = T_r - f, rows = rows_sum(f, T_r);
    m += BlockMoments{visits, rows, mul(c, visits), mul(c, rows)};
  }
  return m;
}

i64 TileGrid::first_masked_col(i64 i) const {
  if (!causal || i * Br >= n_kv - 1) return T_c;
  // Smallest j with (j+1)·B_c − 1 > i·B_r.
  return std::min(T_c, ceil_div(i * Br + 2, Bc) - 1);
}

namespace {
// Σ first_masked_col(i) over all row blocks: ⌈(i·B_r + 2)/B_c⌉ − 1 for rows
// starting before N − 1; T_c for a last row block that is the single row N − 1.
i64 first_masked_col_sum(const TileGrid& g) {
  const bool single_last = (g.T_r - 1) * g.Br >= g.n_kv - 1;
  const i64 n = single_last ? g.T_r - 1 : g.T_r;
  return floor_sum(n, g.Bc, g.Br, g.Bc + 1) - n + (single_last ? g.T_c : 0);
}
}  // namespace

// A row block's masked blocks are [first_masked_col(i), T_c) and its visited
// ones [0, last_col(i)]: they overlap in last_col(i) + 1 − first_masked_col(i) ≥ 0.
i64 TileGrid::partially_masked_blocks() const {
  if (!causal) return 0;
  return visited_blocks() - first_masked_col_sum(*this);
}

i64 TileGrid::blocks_with_mask() const {
  if (!causal) return 0;
  return T_r * T_c - first_masked_col_sum(*this);
}

}  // namespace flashlab::sim
