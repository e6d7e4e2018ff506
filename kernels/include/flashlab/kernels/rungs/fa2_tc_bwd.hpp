// Entry points of the tensor-core backward rung (kernels/src/rungs/fa2_tc_bwd.cu). Like
// fa2_tc, its tile shape is fixed at compile time per head dim and reported so
// that the simulator models exactly what runs: B_r rows of Q_i per inner step,
// B_c rows of K_j, V_j per thread block (the simulator's TileShape).
#pragma once

#include <cstddef>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/problem/tensor_core_configs.hpp"

namespace flashlab::kernels {

// What is compiled, from sim::kFa2TcBwdConfigs (every build).
std::vector<int> fa2_tc_bwd_head_dims();               // compiled head dims: 64, 128
sim::Fa2TcBwdConfig fa2_tc_bwd_config(int head_dim);   // the row for d; throws Unsupported naming the compiled ones
sim::TileShape fa2_tc_bwd_tiles(int head_dim);         // (B_r, B_c) compiled for d; throws Unsupported
std::size_t fa2_tc_bwd_smem_bytes(int head_dim);       // dynamic shared memory per block of the main kernel
// Backward pass; fp16 and bf16 only. Reads Q, K, V, O, the logsumexp and dO;
// writes dQ, dK, dV; the workspace holds dQaccum (fp32), L_i and D_i
// (layout::fa_bwd_workspace_bytes). Throws Unsupported (naming the limit) or CudaError.
void fa2_tc_backward(const LaunchArgs& a);

}  // namespace flashlab::kernels
