// The attention problem builders the tests share: B, H, N, d first (for the
// ring: P and the layout before them), then what most tests leave at its
// default.
#pragma once

#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"

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

// The ring's problem over `gpus` GPUs holding their chunks in `layout`: B·H
// query heads over H_kv K/V heads, N tokens, head dim d; causal bf16 and a
// training step (forward then backward) unless told.
inline sim::AttentionProblem ring_problem(int gpus, sim::RingLayout layout, sim::i64 B, sim::i64 H, sim::i64 H_kv,
                                          sim::i64 N, sim::i64 d, bool causal = true, sim::DType t = sim::DType::bf16,
                                          sim::PassSelection passes = sim::PassSelection::fwd_bwd) {
  sim::AttentionProblem p = sim::default_ring_problem();
  p.batch = B;
  p.heads = H;
  p.kv_heads = H_kv;
  p.seq_q = N;
  p.head_dim = d;
  p.causal = causal;
  p.dtype = t;
  p.parallel = sim::ParallelPart{gpus, layout, passes};
  return p;
}

}  // namespace flashlab::test
