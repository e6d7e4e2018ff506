#include "flashlab/sim/checked.hpp"
#include "flashlab/sim/tiles.hpp"

namespace flashlab::sim {

i64 sram_elements(i64 sram_bytes, DType t) { return sram_bytes / dtype_bytes(t); }

TileShape paper_tile_rule(i64 sram_bytes, const AttentionProblem& p) {
  const i64 M = std::max<i64>(1, sram_elements(sram_bytes, p.dtype));
  const i64 Bc = ceil_div(M, 4 * p.head_dim);
  return {std::min(Bc, p.head_dim), Bc};
}

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

i64 TileGrid::visited_blocks() const {
  if (!causal) return T_r * T_c;
  i64 n = 0;
  for (i64 i = 0; i < T_r; ++i) n += last_col(i) + 1;
  return n;
}

i64 TileGrid::first_masked_col(i64 i) const {
  if (!causal || i * Br >= n_kv - 1) return T_c;
  // Smallest j with (j+1)·B_c − 1 > i·B_r.
  return std::min(T_c, ceil_div(i * Br + 2, Bc) - 1);
}

i64 TileGrid::partially_masked_blocks() const {
  if (!causal) return 0;
  i64 n = 0;
  for (i64 i = 0; i < T_r; ++i) n += std::max<i64>(0, last_col(i) - first_masked_col(i) + 1);
  return n;
}

i64 TileGrid::blocks_with_mask() const {
  if (!causal) return 0;
  i64 n = 0;
  for (i64 i = 0; i < T_r; ++i) n += T_c - first_masked_col(i);
  return n;
}

}  // namespace flashlab::sim
