// The memory layouts of the CUDA-core rungs, as plain arithmetic: how many
// threads a block has, how much shared memory and workspace a case needs. The
// .cu files launch with these numbers and the host (registry, runner, GUI)
// checks them against the device before launching, so both read one source.
// Plain C++: no CUDA headers.
#pragma once

#include <algorithm>
#include <iterator>
#include <vector>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::kernels::layout {

using sim::i64;

// Workspace buffers start on 256-byte boundaries (what cudaMalloc gives), so
// vector loads stay aligned whatever the size of the buffer before.
constexpr i64 align256(i64 bytes) { return (bytes + 255) / 256 * 256; }

// ---- naive and naive_cublas: S and P materialised in HBM ---------------------

// One of S or P: [B, H, N_q, N_kv] in the problem dtype.
inline i64 score_matrix_bytes(const sim::AttentionProblem& p) {
  using sim::checked_mul;
  const i64 elements = checked_mul(p.head_count(), checked_mul(p.n_q(), p.n_kv(), "N_q·N_kv"), "B·H·N_q·N_kv");
  return checked_mul(elements, sim::dtype_bytes(p.dtype), "bytes of S");
}
// S at offset 0, P at offset align256(bytes of S).
inline i64 materialized_workspace_bytes(const sim::AttentionProblem& p) {
  return sim::checked_mul(align256(score_matrix_bytes(p)), 2, "bytes of S and P");
}

// ---- fa1 and fa2 on CUDA cores -----------------------------------------------

// The head dims the CUDA-core FlashAttention rungs are compiled for: the list
// dispatch_head_dim instantiates and the registry reports (16: the labs' smallest).
inline constexpr int kFaHeadDims[] = {16, 32, 64, 96, 128, 256};
inline std::vector<int> fa_head_dims() { return {std::begin(kFaHeadDims), std::end(kFaHeadDims)}; }

// Each query row of a block is owned by a few adjacent lanes of one warp; each
// lane keeps d / lanes elements of q_i and o_i in registers (at most 48), so
// the row never leaves the register file. Powers of two so that a row's lanes
// can reduce a dot product with xor shuffles.
constexpr int fa_lanes_per_row(i64 d) { return d >= 256 ? 8 : d >= 128 ? 4 : d >= 64 ? 2 : 1; }

constexpr int fa_dims_per_lane(i64 d) { return static_cast<int>(d / fa_lanes_per_row(d)); }

// B_r rows of fa_lanes_per_row lanes, rounded up to whole warps (the padding
// lanes compute along and write nothing, so every shuffle has a full warp).
inline i64 fa_threads_per_block(i64 d, sim::TileShape t) {
  return (sim::checked_mul(t.Br, fa_lanes_per_row(d), "threads") + 31) / 32 * 32;
}
// What the compiled kernels allow (their __launch_bounds__): 48 floats of q_i
// and o_i per lane (d = 96) need more registers than 512 threads can have.
constexpr int fa_max_threads_per_block(i64 d) { return fa_dims_per_lane(d) > 32 ? 256 : 512; }

// Dynamic shared memory of one block, fp32 whatever the problem dtype (the
// arithmetic is fp32 on CUDA cores): K_j and V_j (B_c × d each) and S_ij
// (B_r × B_c, rows padded by one float so that lanes of different rows reading
// the same column hit different banks). Q_i, O_i, ℓ_i, m_i live in registers.
inline i64 fa_smem_bytes(i64 d, sim::TileShape t) {
  using sim::checked_add;
  using sim::checked_mul;
  const i64 kv = checked_mul(checked_mul(2, t.Bc, "smem"), d, "smem");
  const i64 s = checked_mul(t.Br, checked_add(t.Bc, 1, "smem"), "smem");
  return checked_mul(checked_add(kv, s, "smem"), 4, "smem bytes");
}

// fa1 keeps O, ℓ, m in HBM between its launches (Algorithm 1 as written). O is
// kept in fp32 there: rounding O_i to fp16 at each of T_c steps would add
// error growing with √T_c (docs/kernels.md). Layout: O_acc [B,H,N_q,d] fp32,
// then ℓ [B,H,N_q] fp32, then m [B,H,N_q] fp32.
inline i64 fa1_rows(const sim::AttentionProblem& p) { return sim::checked_mul(p.head_count(), p.n_q(), "B·H·N_q"); }
inline i64 fa1_o_acc_bytes(const sim::AttentionProblem& p) {
  return align256(sim::checked_mul(sim::checked_mul(fa1_rows(p), p.head_dim, "B·H·N_q·d"), 4, "bytes of O"));
}
inline i64 fa1_stat_bytes(const sim::AttentionProblem& p) { return align256(sim::checked_mul(fa1_rows(p), 4, "bytes of ℓ")); }
inline i64 fa1_workspace_bytes(const sim::AttentionProblem& p) {
  return sim::checked_add(fa1_o_acc_bytes(p), sim::checked_mul(fa1_stat_bytes(p), 2, "bytes of ℓ, m"), "workspace");
}

// Default tiles: a block of 128-256 threads whose K_j, V_j, S_ij leave room
// for two or more blocks per SM on an H100 (see docs/kernels.md).
inline sim::TileShape fa_default_tiles(i64 d) {
  if (d <= 64) return {128, 64};
  if (d <= 128) return {64, 64};
  return {32, 32};
}

// ---- the backward rungs ----------------------------------------------------------

// naive_bwd: dP, then dS written over it, [B, H, N_q, N_kv] in the problem
// dtype. P is the forward's (naive_cublas's workspace), read, never written.
inline i64 naive_bwd_workspace_bytes(const sim::AttentionProblem& p) { return align256(score_matrix_bytes(p)); }

// fa2_bwd and fa2_tc_bwd: dQaccum [B, H, N_q, d] in fp32 (every K_j block adds
// its dS_ij K_j there; a last kernel converts), then L_i·log2(e) and
// D_i = rowsum(dO_i ∘ O_i) [B, H, stat_rows] in fp32, the rows of a head padded
// (L = +inf, D = 0 past N_q) to a multiple of 128 and of every B_r the Hopper
// backward compiles (sim::kHopperBwdConfigs: 80 beside 64 and 128), so that
// every row block of a tile of up to 128 rows loads them whole.
inline i64 fa_bwd_stat_rows(const sim::AttentionProblem& p) {
  i64 rows = (p.n_q() + 127) / 128 * 128;
  for (const sim::HopperBwdConfig& c : sim::kHopperBwdConfigs) rows = std::max(rows, (p.n_q() + c.Br - 1) / c.Br * c.Br);
  return rows;
}
inline i64 fa_bwd_dq_accum_bytes(const sim::AttentionProblem& p) {
  using sim::checked_mul;
  return align256(checked_mul(checked_mul(checked_mul(p.head_count(), p.n_q(), "B·H·N_q"), p.head_dim, "B·H·N_q·d"),
                              4, "bytes of dQaccum"));
}
inline i64 fa_bwd_stat_bytes(const sim::AttentionProblem& p) {
  return align256(sim::checked_mul(sim::checked_mul(p.head_count(), fa_bwd_stat_rows(p), "B·H·rows"), 4, "bytes of D"));
}
// Then one 32-bit counter per head, zeroed by the pre-pass: the blocks of a head
// that are done, so that dQ's convert takes each head as soon as it is complete
// (fa3_hopper_bwd).
inline i64 fa_bwd_counter_bytes(const sim::AttentionProblem& p) {
  return align256(sim::checked_mul(p.head_count(), 4, "bytes of the heads' counters"));
}
inline i64 fa_bwd_workspace_bytes(const sim::AttentionProblem& p) {
  return sim::checked_add(
      sim::checked_add(fa_bwd_dq_accum_bytes(p), sim::checked_mul(fa_bwd_stat_bytes(p), 2, "bytes of L, D"),
                       "workspace"),
      fa_bwd_counter_bytes(p), "workspace");
}
// The tensor-core backward rungs (fa2_tc_bwd, fa3_hopper_bwd) with grouped-query
// heads (H_kv < H) and no accumulators of the caller's: the query heads of a
// group add into one dK, dV head, so the rung
// adds into fp32 dKaccum, dVaccum [B, H_kv, N_kv, d] after the workspace above
// and converts them at the end. 0 without grouped heads.
inline i64 fa_bwd_kv_accum_bytes(const sim::AttentionProblem& p) {
  using sim::checked_mul;
  if (p.h_kv() == p.heads) return 0;
  const i64 one = align256(checked_mul(
      checked_mul(checked_mul(checked_mul(p.batch, p.h_kv(), "B·H_kv"), p.n_kv(), "B·H_kv·N_kv"), p.head_dim,
                  "B·H_kv·N_kv·d"),
      4, "bytes of dKaccum"));
  return checked_mul(one, 2, "bytes of dKaccum, dVaccum");
}
inline i64 fa2_tc_bwd_workspace_bytes(const sim::AttentionProblem& p) {
  return sim::checked_add(fa_bwd_workspace_bytes(p), fa_bwd_kv_accum_bytes(p), "workspace");
}

// fa2_bwd on CUDA cores: a block owns K_j, V_j (B_c keys) and their dK_j, dV_j;
// each key row belongs to fa_bwd_lanes_per_row adjacent lanes, each keeping
// d / lanes elements of k_j, v_j, dk_j, dv_j in registers (at most 16 of each:
// four rows of state, where the forward keeps two).
constexpr int fa_bwd_lanes_per_row(i64 d) { return d >= 256 ? 16 : d >= 96 ? 8 : d >= 64 ? 4 : 2; }
inline i64 fa_bwd_threads_per_block(i64 d, sim::TileShape t) {
  return (sim::checked_mul(t.Bc, fa_bwd_lanes_per_row(d), "threads") + 31) / 32 * 32;
}
// Its __launch_bounds__: 64 floats of row state per lane need up to 128 registers.
constexpr int fa_bwd_max_threads_per_block() { return 512; }
// Dynamic shared memory, fp32: Q_i and dO_i (B_r × d each), K_j (B_c × d, for
// dQ_i = dS_ij K_j), dS_ij (B_r × (B_c + 1), padded as the forward's S_ij), and
// L_i, D_i (B_r each).
inline i64 fa_bwd_smem_bytes(i64 d, sim::TileShape t) {
  using sim::checked_add;
  using sim::checked_mul;
  const i64 q_do = checked_mul(checked_mul(2, t.Br, "smem"), d, "smem");
  const i64 k = checked_mul(t.Bc, d, "smem");
  const i64 ds = checked_mul(t.Br, checked_add(t.Bc, 1, "smem"), "smem");
  const i64 stats = checked_mul(2, t.Br, "smem");
  return checked_mul(checked_add(checked_add(q_do, k, "smem"), checked_add(ds, stats, "smem"), "smem"), 4,
                     "smem bytes");
}
// Default tiles: B_c keys of fa_bwd_lanes_per_row lanes each, 512 threads
// (registers allow one such block per SM), and B_r rows of Q_i, dO_i that fit
// the rest of shared memory. One block per SM: two blocks of B_c = 64 sharing
// an SM do not walk their row blocks together, and once a head's Q, dO and
// dQaccum exceed the L2 each reads them for itself (d 64, N 128K: 9.7 GB of
// DRAM against 5.6 GB at B_c = 128; docs/model.md).
inline sim::TileShape fa_bwd_default_tiles(i64 d) {
  const i64 Bc = fa_bwd_max_threads_per_block() / fa_bwd_lanes_per_row(d);
  return {d <= 64 ? 64 : d <= 128 ? 32 : 16, Bc};
}

}  // namespace flashlab::kernels::layout
