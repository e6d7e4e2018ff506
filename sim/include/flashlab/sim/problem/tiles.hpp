// Tile shapes and the (i, j) block grid they cut S = Q Kᵀ into.
#pragma once

#include <algorithm>
#include <string>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::sim {

// Sums over a set of (i, j) blocks: how many, Σ r_i, Σ c_j and Σ r_i·c_j, with
// r_i and c_j the blocks' true extents. Every per-block cost of a schedule is
// bilinear in (r, c), so these four numbers give the exact cost of any set.
struct BlockMoments {
  i64 n = 0, r = 0, c = 0, rc = 0;
  BlockMoments& operator+=(const BlockMoments& o);
  BlockMoments& operator-=(const BlockMoments& o);
  bool operator==(const BlockMoments& o) const { return n == o.n && r == o.r && c == o.c && rc == o.rc; }
};

struct TileShape {
  i64 Br = 0;  // rows of a Q_i / O_i block
  i64 Bc = 0;  // rows of a K_j / V_j block
  bool operator==(const TileShape& o) const { return Br == o.Br && Bc == o.Bc; }
};

// M in elements of the problem dtype: SRAM bytes / dtype bytes.
i64 sram_elements(i64 sram_bytes, DType t);

// FlashAttention Algorithm 1, line 1: B_c = ⌈M/4d⌉, B_r = min(⌈M/4d⌉, d).
TileShape paper_tile_rule(i64 sram_bytes, const AttentionProblem& p);
// The shape a rule gives (paper_transposed swaps B_r and B_c; paper_backward
// is the paper's rule for M/2: B_c = ⌈M/8d⌉, B_r = min(⌈M/8d⌉, d)).
TileShape tile_rule_shape(TileRule r, i64 sram_bytes, const AttentionProblem& p);
std::string_view describe(TileRule r);  // "paper", "paper, transposed", "paper, backward"

// The block grid of one head. Row block i covers rows [i·B_r, min((i+1)·B_r, N_q));
// column block j covers [j·B_c, min((j+1)·B_c, N_kv)). The last block of each may
// be partial. Causal masking keeps key c for query r iff c ≤ r.
struct TileGrid {
  i64 n_q = 0, n_kv = 0, d = 0, Br = 0, Bc = 0;
  i64 T_r = 0, T_c = 0;
  bool causal = false;

  TileGrid() = default;
  TileGrid(const AttentionProblem& p, TileShape t);

  i64 rows(i64 i) const { return std::min(Br, n_q - i * Br); }
  i64 cols(i64 j) const { return std::min(Bc, n_kv - j * Bc); }
  // Σ rows(i) for i in [a, b).
  i64 rows_sum(i64 a, i64 b) const;
  i64 cols_sum(i64 a, i64 b) const;

  // A block wholly above the diagonal has no unmasked entry and is skipped.
  bool visited(i64 i, i64 j) const;
  // Visited but with some entries masked (diagonal blocks).
  bool partially_masked(i64 i, i64 j) const;
  // Any masked entry (partially or wholly masked).
  bool has_masked(i64 i, i64 j) const;

  // Visited column blocks of row block i are [0, last_col(i)] (all when not causal).
  i64 last_col(i64 i) const;
  // Visited row blocks of column block j are [first_row(j), T_r).
  i64 first_row(i64 j) const;
  // Column blocks of row block i with a masked entry are [first_masked_col(i), T_c).
  i64 first_masked_col(i64 i) const;

  // Σ (last_col(i) + 1) over row blocks i in [a, b): visited blocks of those rows.
  i64 visited_cols_sum(i64 a, i64 b) const;
  // Σ first_row(j) over column blocks j in [a, b).
  i64 first_row_sum(i64 a, i64 b) const;

  // The blocks an outer loop over row blocks i in [a, b) visits (each row
  // block's column blocks [0, last_col(i)] when `skip_masked`, else all), and
  // the same for an outer loop over column blocks j in [a, b) (row blocks
  // [first_row(j), T_r)). O(log T) with the floor sums; tests hold them equal
  // to brute force.
  BlockMoments row_block_visits(i64 a, i64 b, bool skip_masked) const;
  BlockMoments col_block_visits(i64 a, i64 b, bool skip_masked) const;

  i64 visited_blocks() const;
  i64 partially_masked_blocks() const;
  i64 blocks_with_mask() const;
};

}  // namespace flashlab::sim
