// Entry points of the Hopper rung (kernels/src/rungs/fa3_hopper.cu): FlashAttention forward
// with TMA, mbarriers, wgmma and warp specialisation, built for sm_90a only.
// Its tiles are fixed at compile time per head dim, from the table every build
// (CUDA or not) shares with the simulator.
#pragma once

#include <cstddef>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"

namespace flashlab::kernels {

// The compiled configurations are the simulator's (sim/hopper/hopper_pipeline.hpp),
// defined once: the kernel instantiates them, the step-through draws their ring.
using Fa3HopperConfig = sim::HopperConfig;
inline constexpr const auto& kFa3HopperConfigs = sim::kHopperConfigs;
constexpr std::size_t fa3_hopper_smem_bytes(const Fa3HopperConfig& c) { return sim::hopper_smem_bytes(c); }

// Whether this build holds the sm_90a code (false when nvcc could not target it).
bool fa3_hopper_compiled();
// Forward pass; fp16 and bf16, compute capability 9.0 only. Writes O and, when
// a.lse is set, the logsumexp. Throws Unsupported (naming the limit) or CudaError.
void fa3_hopper_forward(const LaunchArgs& a);

}  // namespace flashlab::kernels
