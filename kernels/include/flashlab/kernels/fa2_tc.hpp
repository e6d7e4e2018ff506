// Entry points of the tensor-core rung (kernels/fa2_tc.cu). Its tile shape is
// fixed at compile time per head dim; it reports that shape so the simulator
// can model exactly what runs.
#pragma once

#include <cstddef>
#include <vector>

#include "flashlab/kernels/launch.hpp"

namespace flashlab::kernels {

std::vector<int> fa2_tc_head_dims();           // compiled head dims, e.g. {64, 128}
sim::TileShape fa2_tc_tiles(int head_dim);     // (B_r, B_c) compiled for d; throws Unsupported
std::size_t fa2_tc_smem_bytes(int head_dim);   // dynamic shared memory per block
// Forward pass; fp16 and bf16 only. Writes O and, when a.lse is set, the
// logsumexp. Throws Unsupported (naming the limit) or CudaError.
void fa2_tc_forward(const LaunchArgs& a);

}  // namespace flashlab::kernels
