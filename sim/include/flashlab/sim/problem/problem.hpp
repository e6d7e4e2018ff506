// The attention problem being modelled: O = softmax(Q Kᵀ / √d) V per head —
// on one GPU, or with its sequence cut over several GPUs in a ring (the
// parallel part). One type for both: the single-GPU rungs, the simulator, the
// ring's schedule and runner, the results files and both front ends read it.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/problem/pass.hpp"
#include "flashlab/sim/problem/ring_partition.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// How the sequence is spread over GPUs: sequence-parallel ring attention
// (ring_schedule.hpp). GPUs per node are the machine's (RingTopology), not
// the problem's.
struct ParallelPart {
  int gpus = 2;                            // P
  RingLayout layout = RingLayout::zigzag;  // which chunks each GPU holds (ring_partition.hpp)
  // The passes: the forward, or a training step's forward then backward (the
  // ring's backward needs the forward's O and logsumexp: bwd alone is refused).
  PassSelection passes = PassSelection::fwd;
};
bool operator==(const ParallelPart& a, const ParallelPart& b);
inline bool operator!=(const ParallelPart& a, const ParallelPart& b) { return !(a == b); }

struct AttentionProblem {
  i64 batch = 1;       // B
  i64 heads = 1;       // H
  i64 seq_q = 1024;    // N (rows of Q, O)
  i64 seq_kv = 0;      // rows of K, V; 0 means "same as seq_q"
  i64 head_dim = 64;   // d
  bool causal = false;
  DType dtype = DType::fp16;
  // Last but one, so that the brace form {B, H, N_q, N_kv, d, causal, dtype}
  // keeps its meaning.
  i64 kv_heads = 0;    // H_kv: heads of K, V (grouped-query attention); 0 means "as many as H"
  std::optional<ParallelPart> parallel{};  // unset: one GPU

  i64 n_q() const { return seq_q; }
  i64 n_kv() const { return seq_kv > 0 ? seq_kv : seq_q; }
  i64 d() const { return head_dim; }
  i64 h_kv() const { return kv_heads > 0 ? kv_heads : heads; }
  // G = H / H_kv: the query heads that share one K/V head (1 without grouping).
  i64 group_size() const { return h_kv() > 0 && heads >= h_kv() ? heads / h_kv() : 1; }
  // B·H: every head runs the same schedule; the model follows one and scales.
  i64 head_count() const;  // throws OverflowError
  // B·H_kv: the heads K, V (and dK, dV) hold; query head h of batch b reads
  // K/V head b·H_kv + h / (H / H_kv). Throws OverflowError.
  i64 kv_head_count() const;
  // The parallel part's, or one GPU's: 1, contiguous, the forward.
  int gpus() const { return parallel ? parallel->gpus : 1; }
  RingLayout layout() const { return parallel ? parallel->layout : RingLayout::contiguous; }
  PassSelection passes() const { return parallel ? parallel->passes : PassSelection::fwd; }
  bool backward() const { return includes(passes(), Pass::bwd); }
  // The parallel part to set, made (2 GPUs, zig-zag, the forward) when absent.
  ParallelPart& parallel_part() {
    if (!parallel) parallel.emplace();
    return *parallel;
  }
};
// The same problem: B, H, H_kv, N_q, N_kv, d, causal, dtype and the parallel
// part all equal (seq_kv 0 and seq_kv = seq_q are one problem, so are
// kv_heads 0 and kv_heads = heads).
bool operator==(const AttentionProblem& a, const AttentionProblem& b);
inline bool operator!=(const AttentionProblem& a, const AttentionProblem& b) { return !(a == b); }
// The same attention (B, H, H_kv, N_q, N_kv, d, mask, dtype), however it is spread.
bool same_attention(const AttentionProblem& a, const AttentionProblem& b);

// The fields of a problem as a person types them: what a message is about.
enum class ProblemField { batch, heads, kv_heads, seq, seq_kv, head_dim, dtype, gpus };
// "batch", "heads", "kv_heads", "seq", "seq_kv", "head_dim", "dtype", "gpus":
// the keys the window's fields and the scenario files use.
std::string_view problem_field_key(ProblemField f);

// One reason a problem cannot be modelled: one sentence naming the offending
// value, and the fields it is about (two for a relation: H and H_kv; N and P).
struct ProblemError {
  std::vector<ProblemField> fields;
  std::string message;
  bool about(ProblemField f) const;
};

// Every reason the problem cannot be modelled (empty when it can): the sizes,
// grouped heads, the mask against N_kv, the 64-bit counters (blaming each size
// whose reduction to 1 alone would make the problem fit) and, with a parallel
// part, the GPUs, the passes and the layout's chunks.
std::vector<ProblemError> validate(const AttentionProblem& p);
// The messages alone, in order.
std::vector<std::string> messages(const std::vector<ProblemError>& errors);

// One GPU: "B=64 H=16 N=1024 d=64 fp16" (N_kv and H_kv when they differ).
// A ring: "B=1 H=32 H_kv=8 N=32768 d=128 bf16 causal, 8 GPUs zigzag, fwd+bwd".
std::string describe(const AttentionProblem& p);

}  // namespace flashlab::sim
