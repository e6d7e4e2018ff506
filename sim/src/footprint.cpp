#include "flashlab/sim/footprint.hpp"

#include "flashlab/sim/checked.hpp"
#include "flashlab/sim/schedule.hpp"

namespace flashlab::sim {

TensorExtent tensor_extent(Tensor t, const AttentionProblem& p) {
  switch (t) {
    case Tensor::Q:
    case Tensor::O:
    case Tensor::dO:
    case Tensor::dQ: return {p.n_q(), p.head_dim};
    case Tensor::K:
    case Tensor::V:
    case Tensor::dK:
    case Tensor::dV: return {p.n_kv(), p.head_dim};
    case Tensor::S:
    case Tensor::P:
    case Tensor::dS:
    case Tensor::dP: return {p.n_q(), p.n_kv()};
    case Tensor::l:
    case Tensor::m:
    case Tensor::LSE:
    case Tensor::D: return {p.n_q(), 1};
    default: return {0, 0};  // on-chip statistics: never in HBM
  }
}

std::vector<Tensor> hbm_tensors(Algorithm a, const AttentionProblem& p) {
  // One block covers the whole head: the cost is the same set of tensors at any tiles.
  const Counters c = Schedule(a, p, TileShape{p.n_q(), p.n_kv()}).closed_form();
  std::vector<Tensor> out;
  for (int t = 0; t < kTensorCount; ++t)
    if (c.at(Level::HBM, static_cast<Tensor>(t)).elements() > 0) out.push_back(static_cast<Tensor>(t));
  return out;
}

i64 hbm_footprint_bytes(Algorithm a, const AttentionProblem& p) {
  const i64 heads = p.head_count();
  i64 total = 0;
  for (Tensor t : hbm_tensors(a, p)) {
    const TensorExtent e = tensor_extent(t, p);
    const i64 bytes = checked_mul(checked_mul(checked_mul(heads, e.rows, "memory"), e.cols, "memory"),
                                  element_bytes(t, p.dtype), "memory");
    total = checked_add(total, bytes, "memory");
  }
  return total;
}

}  // namespace flashlab::sim
