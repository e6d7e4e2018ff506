// Entry points of the Hopper backward rung (kernels/src/rungs/fa3_hopper_bwd.cu):
// FlashAttention backward with TMA, mbarriers, wgmma and warp specialisation,
// built for sm_90a only. Its tiles are fixed at compile time per head dim, from
// the table every build (CUDA or not) shares with the simulator
// (sim::kHopperBwdConfigs).
#pragma once

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"

namespace flashlab::kernels {

// What is compiled (head dims, tiles, shared memory) is sim::kHopperBwdConfigs,
// which the registry reads in every build.

// Backward pass; fp16 and bf16, compute capability 9.0 only. Reads Q, K, V, O,
// the logsumexp and dO; writes dQ, dK, dV (or adds into the caller's fp32
// accumulators); the workspace holds dQaccum (fp32), L_i and D_i, and with
// grouped K/V heads dKaccum and dVaccum (layout::fa2_tc_bwd_workspace_bytes).
// Throws Unsupported (naming the limit) or CudaError.
void fa3_hopper_backward(const LaunchArgs& a);

}  // namespace flashlab::kernels
