// The steps FlashAttention's two backward loop nests (fa1_bwd.cpp,
// fa2_bwd.cpp) take alike: both run one thread block per K_j, V_j that keeps
// dK_j, dV_j on chip, and both convert an fp32 dQ accumulator in a pass of
// its own. The pseudocode lines are each paper's own, passed in.
#pragma once

#include "schedule/loop_nest.hpp"

namespace flashlab::sim::detail {

// The loop nest, told whether dQ accumulates in another type than the
// problem's: a post-pass then converts dQaccum to dQ.
template <class Nest>
std::unique_ptr<LoopNest> make_converting(const AttentionProblem& p, const StorageTypes& st) {
  return std::make_unique<Nest>(st.dq_accumulator.has_value() && *st.dq_accumulator != p.dtype);
}

inline constexpr std::string_view kConvertDqTitle = "post-pass: dQaccum_i (fp32) converted to dQ_i";

// A column block begins: K_j, V_j loaded (line `load`), dK_j = dV_j = 0 on chip (line `zero`).
inline void begin_kv_block(Emitter& e, i64 j, int load, int zero) {
  e.load(load, e.K(j));
  e.load(load, e.V(j));
  e.compute(zero, e.dK(j), {}, 0, 0, 0);
  e.compute(zero, e.dV(j), {}, 0, 0, 0);
}

// A column block ends: dK_j, dV_j written (line `write`), the block's tiles freed (line `done`).
inline void end_kv_block(Emitter& e, i64 j, int write, int done) {
  const TileRef dKj = e.dK(j), dVj = e.dV(j);
  e.store(write, dKj);
  e.store(write, dVj);
  e.free(done, {e.K(j), e.V(j), dKj, dVj});
}

// The post-pass over row block i: dQ_i = dQaccum_i in the problem's type.
inline void convert_dq(Emitter& e, i64 i, int line) {
  const TileRef acc = e.dQ_accumulator(i), dQi = e.dQ(i);
  e.load(line, acc);
  e.compute(line, dQi, {acc}, 0, 0, 0, &acc);
  e.store(line, dQi);
}

}  // namespace flashlab::sim::detail
