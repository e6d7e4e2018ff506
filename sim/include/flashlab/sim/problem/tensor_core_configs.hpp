// The compiled configurations of the mma.sync tensor-core rungs, fa2_tc (the
// forward, kernels/src/rungs/fa2_tc.cu) and fa2_tc_bwd (the backward, kernels/src/rungs/fa2_tc_bwd.cu):
// one row per head dim they are compiled for, written once. The kernels take
// their template arguments from these rows (and check their shared memory
// against the formulas here at compile time); the simulator takes the tiles;
// both builds of the registry take the head dims, tiles and shared memory.
// kernels/README.md has the timings that chose them.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flashlab/sim/problem/tiles.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// The forward: Q_i of B_r rows against K_j, V_j of B_c, split over the warps by rows.
struct Fa2TcConfig {
  int head_dim;
  int Br;
  int Bc;
  int warps;
  bool q_in_registers;  // Q_i's fragments held for the whole K loop (else reloaded from shared memory)
  int min_blocks;       // resident blocks per SM asked of the register allocator
};

inline constexpr Fa2TcConfig kFa2TcConfigs[] = {
    //  d  B_r  B_c  warps  Q_i in registers  blocks/SM
    {64, 128, 64, 4, true, 2},    // 32 rows a warp
    {96, 128, 64, 8, true, 1},    // 16 rows a warp
    {128, 128, 32, 4, false, 2},  // 32 rows a warp, Q_i in shared memory
    {256, 128, 64, 8, false, 1},  // 16 rows a warp, Q_i reloaded
};

// Rows padded by 8 elements (16 bytes, ldmatrix free of bank conflicts); Q_i,
// then 2 stages of K_j and of V_j, 2-byte elements.
constexpr std::size_t fa2_tc_smem_bytes(const Fa2TcConfig& c) {
  return static_cast<std::size_t>(c.Br + 2 * 2 * c.Bc) * (c.head_dim + 8) * 2;
}

// The backward: K_j, V_j of B_c rows (split over the warps) against Q_i, dO_i of B_r.
struct Fa2TcBwdConfig {
  int head_dim;
  int Bc;
  int Br;
  int warps;
  bool kv_in_registers;  // K_j, V_j's fragments held for the whole Q loop
  int min_blocks;
  bool defer_dq;  // dQ_i of step i computed at the top of step i + 1, from a second dS buffer
};

inline constexpr Fa2TcBwdConfig kFa2TcBwdConfigs[] = {
    //  d  B_c  B_r  warps  K/V in registers  blocks/SM  deferred dQ
    {64, 128, 32, 4, false, 2, true},   // 32 keys a warp: B fragments feed two mma rows
    {128, 128, 64, 8, false, 1, true},  // 16 keys a warp (32 would need 256 accumulators)
};

// K_j, V_j; Q_i, dO_i double-buffered; dS (two buffers when dQ is deferred),
// rows padded by 8 elements; L_i and D_i double-buffered in fp32.
constexpr std::size_t fa2_tc_bwd_smem_bytes(const Fa2TcBwdConfig& c) {
  const std::size_t stride = static_cast<std::size_t>(c.head_dim + 8);
  const std::size_t kv = static_cast<std::size_t>(2 * c.Bc) * stride * 2;
  const std::size_t q_do = static_cast<std::size_t>(2 * 2 * c.Br) * stride * 2;
  const std::size_t ds = static_cast<std::size_t>((c.defer_dq ? 2 : 1) * c.Bc) * (c.Br + 8) * 2;
  const std::size_t stats = static_cast<std::size_t>(2 * 2 * c.Br) * 4;
  return kv + q_do + ds + stats;
}

// The row compiled for head dim d, if any.
std::optional<Fa2TcConfig> fa2_tc_config(i64 head_dim);
std::optional<Fa2TcBwdConfig> fa2_tc_bwd_config(i64 head_dim);
inline TileShape tiles_of(const Fa2TcConfig& c) { return {c.Br, c.Bc}; }
inline TileShape tiles_of(const Fa2TcBwdConfig& c) { return {c.Br, c.Bc}; }
std::string fa2_tc_head_dims_text();      // "64, 96, 128, 256"
std::string fa2_tc_bwd_head_dims_text();  // "64, 128"

}  // namespace flashlab::sim
