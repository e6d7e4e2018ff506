// What an algorithm keeps in device memory for one pass: every tensor its
// loop nest reads or writes in HBM, at full size, for all B·H heads. The set
// of tensors comes from the emission itself (S and P for the materialising
// algorithms, ℓ and m for FlashAttention-1, the logsumexp for -2), never from
// a list kept beside it.
#pragma once

#include <vector>

#include "flashlab/sim/algorithm.hpp"
#include "flashlab/sim/problem.hpp"

namespace flashlab::sim {

// Rows × columns of a whole tensor of one head: Q, O (N_q × d), K, V (N_kv × d),
// S, P (N_q × N_kv), ℓ, m, LSE (N_q × 1); 0 × 0 for the on-chip statistics.
struct TensorExtent {
  i64 rows = 0, cols = 0;
};
TensorExtent tensor_extent(Tensor t, const AttentionProblem& p);

// The tensors the algorithm reads or writes in HBM, in Tensor order.
std::vector<Tensor> hbm_tensors(Algorithm a, const AttentionProblem& p);

// Σ over hbm_tensors of rows × cols × element size × B·H. Throws OverflowError.
i64 hbm_footprint_bytes(Algorithm a, const AttentionProblem& p);

}  // namespace flashlab::sim
