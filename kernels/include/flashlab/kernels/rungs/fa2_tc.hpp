// Entry points of the tensor-core rung (kernels/src/rungs/fa2_tc.cu). Its tile shape is
// fixed at compile time per head dim; it reports that shape so the simulator
// can model exactly what runs.
#pragma once

#include <cstddef>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/problem/tensor_core_configs.hpp"

namespace flashlab::kernels {

// What is compiled, from sim::kFa2TcConfigs (every build: a build without CUDA
// lists the rung with the same head dims and tiles).
std::vector<int> fa2_tc_head_dims();               // compiled head dims: 64, 96, 128, 256
sim::Fa2TcConfig fa2_tc_config(int head_dim);      // the row for d; throws Unsupported naming the compiled ones
sim::TileShape fa2_tc_tiles(int head_dim);         // (B_r, B_c) compiled for d; throws Unsupported
std::size_t fa2_tc_smem_bytes(int head_dim);       // dynamic shared memory per block
// Forward pass; fp16 and bf16 only. Writes O and, when a.lse is set, the
// logsumexp. Throws Unsupported (naming the limit) or CudaError.
void fa2_tc_forward(const LaunchArgs& a);

}  // namespace flashlab::kernels
