// What a piece of the loop nest asks of global memory, read off its own
// emission (a probe emission, as the cost model does): loads from HBM or L2
// are read requests, stores to HBM write requests, each a tile of a tensor
// indexed by the visit's row block i, column block j, both, or neither (a
// whole tensor). The L2 model's input (l2_model.cpp).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "flashlab/sim/problem/problem.hpp"
#include "schedule/loop_nest.hpp"

namespace flashlab::sim::l2_detail {

enum class Extent : std::uint8_t { r, c, d, one, n_q, n_kv };

struct Access {
  Tensor tensor = Tensor::Q;
  bool write = false;
  Extent rows = Extent::r, cols = Extent::d;
  bool uses_i = false, uses_j = false;  // indexed by the row block, the column block
  i64 element_bytes = 2;                // as emitted (a kernel may keep O in fp32)
  // Read and written by every CTA at the same row block in a step (dQ_i in a
  // CTA per K_j, V_j): only an atomic add does that, and it is done at the
  // line's home partition (mark_atomic_adds).
  bool atomic_add = false;
};

struct PhaseAccesses {
  std::vector<Access> begin, visit, end;
};

// A schedule the model cannot walk: simulate_l2 returns its sentence as why_not.
struct NotModelled {
  std::string why;
};

// The global-memory accesses of what `emit` emits for problem p, in order:
// emitted on a probe grid whose extents cannot be confused (B_r = 2, B_c = 3,
// d = 5, N_q = 6, N_kv = 9), so each tile's rows and columns say what they are.
std::vector<Access> record(const AttentionProblem& p, StorageTypes st,
                           const std::function<void(detail::Emitter&)>& emit);

// In a phase with a CTA per column block, the CTAs of a cohort
// visit the same row block in the same step; a tile of the row block alone
// that a visit both reads and writes is updated by all of them at once, which
// only atomic adds do (the backward's dQ_i += dS_ij K_j). Likewise a tile of
// the column block alone that the outer iteration's end both reads and
// writes: the blocks of a group's query heads add into it (dKaccum_j).
void mark_atomic_adds(PhaseAccesses& phase);

}  // namespace flashlab::sim::l2_detail
