// The attention problem being modelled: O = softmax(Q Kᵀ / √d) V per head.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/types.hpp"

namespace flashlab::sim {

struct AttentionProblem {
  i64 batch = 1;       // B
  i64 heads = 1;       // H
  i64 seq_q = 1024;    // N (rows of Q, O)
  i64 seq_kv = 0;      // rows of K, V; 0 means "same as seq_q"
  i64 head_dim = 64;   // d
  bool causal = false;
  DType dtype = DType::fp16;

  i64 n_q() const { return seq_q; }
  i64 n_kv() const { return seq_kv > 0 ? seq_kv : seq_q; }
  i64 d() const { return head_dim; }
  // B·H: every head runs the same schedule; the model follows one and scales.
  i64 head_count() const;  // throws OverflowError
};
// The same problem: B, H, N_q, N_kv, d, causal and dtype all equal (seq_kv 0 and
// seq_kv = seq_q are one problem).
bool operator==(const AttentionProblem& a, const AttentionProblem& b);
inline bool operator!=(const AttentionProblem& a, const AttentionProblem& b) { return !(a == b); }

// Reasons the problem cannot be modelled at all (empty when it can). Each is
// one sentence naming the offending value.
std::vector<std::string> validate(const AttentionProblem& p);

std::string describe(const AttentionProblem& p);  // "B=64 H=16 N=1024 d=64 fp16"

}  // namespace flashlab::sim
