#include "flashlab/sim/ring/ring_problem.hpp"

#include "core/enum_names.hpp"

namespace flashlab::sim {

AttentionProblem default_ring_problem() {
  AttentionProblem p;
  p.heads = 32;
  p.kv_heads = 32;
  p.seq_q = 8192;
  p.head_dim = 128;
  p.causal = true;
  p.dtype = DType::bf16;
  p.parallel = ParallelPart{};
  return p;
}

AttentionProblem on_one_gpu(AttentionProblem p) {
  p.parallel = ParallelPart{1, RingLayout::contiguous, p.passes()};
  return p;
}

AttentionProblem block_problem(const AttentionProblem& p, i64 n_q, i64 n_kv, bool causal) {
  AttentionProblem ap;
  ap.batch = p.batch;
  ap.heads = p.heads;
  ap.seq_q = n_q;
  ap.seq_kv = n_kv;
  ap.head_dim = p.head_dim;
  ap.causal = causal;
  ap.dtype = p.dtype;
  return ap;
}

// seq_kv 0: N_kv = N_q, the square problem's own form.
AttentionProblem whole_problem(const AttentionProblem& p) { return block_problem(p, p.seq_q, 0, p.causal); }


namespace {
constexpr detail::EnumName<RingSteps> kStepsNames[] = {{RingSteps::fused, "fused"}, {RingSteps::pairwise, "pairwise"}};
static_assert(detail::lists_through(kStepsNames, RingSteps::pairwise));
}  // namespace

std::string_view ring_steps_name(RingSteps s) { return detail::name_of(kStepsNames, s, "fused"); }

std::optional<RingSteps> parse_ring_steps(std::string_view s) { return detail::value_named(kStepsNames, s); }

}  // namespace flashlab::sim
