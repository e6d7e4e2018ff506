// The attention problem builder the tests share: B, H, N, d first, then what
// most tests leave at its default.
#pragma once

#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::test {

inline sim::AttentionProblem problem(sim::i64 B, sim::i64 H, sim::i64 N, sim::i64 d, bool causal = false,
                                     sim::DType t = sim::DType::fp16, sim::i64 n_kv = 0) {
  sim::AttentionProblem p;
  p.batch = B;
  p.heads = H;
  p.seq_q = N;
  p.seq_kv = n_kv == 0 ? N : n_kv;
  p.head_dim = d;
  p.causal = causal;
  p.dtype = t;
  return p;
}

}  // namespace flashlab::test
