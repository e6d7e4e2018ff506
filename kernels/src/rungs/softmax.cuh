// The row softmax of the materialising rungs (naive, naive_cublas).
#pragma once

#include <cuda_runtime.h>

#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::kernels::detail {

// P = softmax(scale · S) row by row, in the problem dtype, with the causal mask
// (key c kept for query r iff c ≤ r, r being the row within its head) fused.
// S and P are [rows, n_kv] with rows = B·H·n_q; masked entries of P are 0.
void row_softmax(sim::DType dtype, const void* S, void* P, sim::i64 rows, sim::i64 n_q, sim::i64 n_kv, float scale,
                 bool causal, cudaStream_t stream);

}  // namespace flashlab::kernels::detail
