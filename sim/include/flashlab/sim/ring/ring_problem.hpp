// The ring's vocabulary, apart from its simulation (ring_schedule.hpp): the
// problem it runs, the passes, how a step launches its work. What the kernels'
// runner, the results files and the benchmark grid need, without the model.
#pragma once

#include <optional>
#include <string_view>

#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// The ring's problems are attention problems with a parallel part
// (problem.hpp): P = p.gpus(), the layout, the passes. Its whole sequence is
// seq_q (seq_kv 0 or equal); K, V travel as H_kv heads.
//
// The ring's usual problem: 32 heads of d 128, 8K tokens, bf16, causal, on
// 2 GPUs zig-zag, the forward.
AttentionProblem default_ring_problem();
// The same attention on one GPU, contiguous: the rung alone on the whole sequence
// (the ring's baseline). The passes stay.
AttentionProblem on_one_gpu(AttentionProblem p);
// The single-GPU problem of a chunk pair: n_q query rows against n_kv keys, with
// the ring problem's batch, H heads (grouped K/V heads are not carried), d, dtype.
AttentionProblem block_problem(const AttentionProblem& p, i64 n_q, i64 n_kv, bool causal);
// ... of the whole sequence: what one GPU computes alone.
AttentionProblem whole_problem(const AttentionProblem& p);
// How a GPU's step launches its work (kernels/ring/ring.hpp runs both). `fused`:
// the rungs read K, V with their H_kv heads, fold each partial output into
// the running one in their epilogue and add dQ, dK, dV into the fp32
// accumulators themselves. `pairwise`: the ring as first written — K_j, V_j
// expanded to H heads by a copy, each chunk pair's O, dQ, dK, dV written by
// the rung and merged or added by separate kernels. The memory differs by the
// scratch buffers of the second (ring_memory).
enum class RingSteps { fused, pairwise };
std::string_view ring_steps_name(RingSteps s);  // "fused", "pairwise"
std::optional<RingSteps> parse_ring_steps(std::string_view s);

}  // namespace flashlab::sim
