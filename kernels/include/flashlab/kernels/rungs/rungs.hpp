// Entry points of the CUDA-core rungs of the ladder (kernels/*.cu). Each takes
// the same LaunchArgs, checks what it needs (dtype, head dim, shared memory,
// threads) and throws Unsupported naming the limit, or CudaError naming
// file:line and the call. Plain C++: the CUDA code stays in the .cu files.
#pragma once

#include "flashlab/kernels/launch/launch.hpp"

namespace flashlab::kernels {

// 1. S = τQKᵀ with our tiled shared-memory GEMM, P = softmax(S) (causal mask
//    fused), O = PV; S and P in HBM in the problem dtype (workspace).
void naive_forward(const LaunchArgs& a);

// 2. The same with cuBLAS GEMMs: what eager PyTorch launches.
void naive_cublas_forward(const LaunchArgs& a);
// Creates the current device's cuBLAS handle and its workspace (once per
// device), so that the first measured case does not pay (or count the memory
// of) their creation.
void naive_cublas_prepare();
// Destroys the current device's (the backend does, when it closes); a later
// call re-creates.
void naive_cublas_release() noexcept;

// 3. FlashAttention-1, Algorithm 1 as written: one launch per K_j, V_j; O_i,
//    ℓ_i, m_i through HBM at every step (workspace).
void fa1_forward(const LaunchArgs& a);

// 4. FlashAttention-2 on CUDA cores: one block per Q_i; O_i, ℓ_i, m_i on chip;
//    O and the logsumexp written once.
void fa2_forward(const LaunchArgs& a);

// The backward rungs (LaunchArgs::bwd): each reads what its forward rung wrote.
// 2. naive_bwd: cuBLAS GEMMs and one softmax-backward kernel, dP and dS in HBM
//    (workspace), P from the naive_cublas forward's workspace.
void naive_backward(const LaunchArgs& a);
// 4. fa2_bwd: FlashAttention-2's backward on CUDA cores: one block per K_j, V_j;
//    S_ij, P_ij recomputed from the forward's logsumexp; dQ added in fp32
//    (workspace: layout::fa_bwd_workspace_bytes).
void fa2_backward(const LaunchArgs& a);

}  // namespace flashlab::kernels
