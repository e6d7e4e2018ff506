// Entry points of the Hopper rung (kernels/fa3_hopper.cu): FlashAttention forward
// with TMA, mbarriers, wgmma and warp specialisation, built for sm_90a only.
// Its tiles are fixed at compile time per head dim; they are listed here so
// that every build (CUDA or not) reports the same shape to the simulator.
#pragma once

#include <cstddef>
#include <vector>

#include "flashlab/kernels/launch.hpp"

namespace flashlab::kernels {

// One compiled configuration: B_r = 64 × the consumer warpgroups, B_c, the
// depth of the K_j/V_j ring in shared memory, and whether each warpgroup
// overlaps its softmax with its own P_ij V_j (kernels/README.md has the timings
// that chose these).
struct Fa3HopperConfig {
  int head_dim;
  int Br;
  int Bc;
  int stages;
  bool overlap;
};
inline constexpr Fa3HopperConfig kFa3HopperConfigs[] = {
    //  d   B_r  B_c  stages  overlap
    {64, 192, 128, 3, true},
    {128, 128, 128, 2, false},
};

// Dynamic shared memory of a configuration: 1 KiB of slack to align the tiles
// to the 1024-byte swizzle atom, Q_i, kStages × (K_j, V_j) in 16-bit elements,
// 1 KiB of mbarriers. The kernel's Config::kSmemBytes is checked against it.
constexpr std::size_t fa3_hopper_smem_bytes(const Fa3HopperConfig& c) {
  return 1024 + static_cast<std::size_t>(c.Br) * c.head_dim * 2 +
         2ull * c.stages * static_cast<std::size_t>(c.Bc) * c.head_dim * 2 + 1024;
}

std::vector<int> fa3_hopper_head_dims();          // {64, 128}
sim::TileShape fa3_hopper_tiles(int head_dim);    // (B_r, B_c) compiled for d; throws Unsupported
std::size_t fa3_hopper_smem_bytes(int head_dim);  // dynamic shared memory per block
// Whether this build holds the sm_90a code (false when nvcc could not target it).
bool fa3_hopper_compiled();
// Forward pass; fp16 and bf16, compute capability 9.0 only. Writes O and, when
// a.lse is set, the logsumexp. Throws Unsupported (naming the limit) or CudaError.
void fa3_hopper_forward(const LaunchArgs& a);

}  // namespace flashlab::kernels
