#include "flashlab/sim/memory/footprint.hpp"

#include <algorithm>
#include <stdexcept>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/schedule/schedule.hpp"
#include "schedule/loop_nest.hpp"

namespace flashlab::sim {

TensorExtent tensor_extent(Tensor t, const AttentionProblem& p) {
  switch (t) {
    case Tensor::Q:
    case Tensor::O:
    case Tensor::dO:
    case Tensor::dQ:
    case Tensor::dQaccum: return {p.n_q(), p.head_dim};
    case Tensor::K:
    case Tensor::V:
    case Tensor::dK:
    case Tensor::dV:
    case Tensor::dKaccum:
    case Tensor::dVaccum: return {p.n_kv(), p.head_dim};
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

bool kv_tensor(Tensor t) {
  return t == Tensor::K || t == Tensor::V || t == Tensor::dK || t == Tensor::dV || t == Tensor::dKaccum ||
         t == Tensor::dVaccum;
}

// Grouped-query attention: H / H_kv query heads share one K/V head.
i64 tensor_heads(Tensor t, const AttentionProblem& p) {
  return kv_tensor(t) ? p.kv_head_count() : p.head_count();
}

i64 memory_head(Tensor t, const AttentionProblem& p, i64 flat_head) {
  // b·H + h over G is b·H_kv + h / G: H is a multiple of G.
  return kv_tensor(t) ? flat_head / p.group_size() : flat_head;
}

namespace {
// rows × cols × heads × the element size given.
i64 whole_tensor_bytes(Tensor t, const AttentionProblem& p, i64 element) {
  const TensorExtent e = tensor_extent(t, p);
  return checked_mul(checked_mul(checked_mul(tensor_heads(t, p), e.rows, "memory"), e.cols, "memory"), element,
                     "memory");
}
}  // namespace

i64 tensor_bytes(Tensor t, const AttentionProblem& p) { return whole_tensor_bytes(t, p, element_bytes(t, p.dtype)); }

const std::vector<Tensor>& pass_tensors(Pass pass) {
  static const std::vector<Tensor> forward{Tensor::Q, Tensor::K, Tensor::V, Tensor::O};
  static const std::vector<Tensor> backward{Tensor::Q,  Tensor::K,  Tensor::V,  Tensor::O,
                                            Tensor::dO, Tensor::dQ, Tensor::dK, Tensor::dV};
  return pass == Pass::fwd ? forward : backward;
}

i64 pass_tensor_bytes(const AttentionProblem& p, Pass pass) {
  i64 total = 0;
  for (Tensor t : pass_tensors(pass)) total = checked_add(total, tensor_bytes(t, p), "memory");
  return total;
}

namespace {

// One block covers the whole head: the set of tensors is the same at any tiles.
Counters one_block(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  return Schedule(a, p, TileShape{p.n_q(), p.n_kv()}, storage).closed_form();
}

// The whole tensor, all heads, each element the size the loop nest moves it in.
i64 whole_bytes(Tensor t, const AttentionProblem& p, const Traffic& moved) {
  const i64 element = moved.elements() > 0 ? moved.bytes() / moved.elements() : element_bytes(t, p.dtype);
  return whole_tensor_bytes(t, p, element);
}

}  // namespace

std::vector<Tensor> hbm_tensors(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  const Counters c = one_block(a, p, storage);
  std::vector<Tensor> out;
  for (int t = 0; t < kTensorCount; ++t)
    if (c.at(Level::HBM, static_cast<Tensor>(t)).elements() > 0) out.push_back(static_cast<Tensor>(t));
  return out;
}

std::vector<TensorMemory> hbm_buffers(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  const Schedule s(a, p, TileShape{p.n_q(), p.n_kv()}, storage);
  const Counters c = s.closed_form();
  std::vector<TensorMemory> out;
  for (int k = 0; k < kTensorCount; ++k) {
    const auto t = static_cast<Tensor>(k);
    const Traffic& moved = c.at(Level::HBM, t);
    if (moved.elements() == 0 || s.loop_nest().stored_over(t)) continue;
    if (t == Tensor::O && storage.o_accumulator && moved.read_elements > 0 && moved.write_elements > 0) {
      // O accumulated in HBM (read back and written by the same loop nest): O in the
      // problem's dtype (the last step writes it), and the accumulator the steps between add into.
      out.push_back({t, whole_tensor_bytes(t, p, dtype_bytes(p.dtype))});
      out.push_back({t, whole_tensor_bytes(t, p, dtype_bytes(*storage.o_accumulator)), true});
      continue;
    }
    out.push_back({t, whole_bytes(t, p, moved)});
  }
  // An accumulator the kernel names is a buffer of its own even in the problem's
  // type, where the loop nest adds into dQ itself (fp32 problems).
  const bool has_dq = c.at(Level::HBM, Tensor::dQ).elements() > 0;
  if (has_dq && storage.dq_accumulator && c.at(Level::HBM, Tensor::dQaccum).elements() == 0)
    out.push_back({Tensor::dQaccum, whole_tensor_bytes(Tensor::dQaccum, p, dtype_bytes(*storage.dq_accumulator))});
  return out;
}

namespace {
i64 sum(const std::vector<TensorMemory>& v) {
  i64 s = 0;
  for (const TensorMemory& t : v) s = checked_add(s, t.bytes, "memory");
  return s;
}
}  // namespace

i64 hbm_footprint_bytes(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  return sum(hbm_buffers(a, p, storage));
}

namespace {
// A run's buffers pass by pass: the forward's (a forward run: its only pass),
// then a backward's own that the forward's do not hold.
std::vector<std::vector<TensorMemory>> run_passes(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  if (algorithm_info(a).pass != Pass::bwd) return {hbm_buffers(a, p, storage)};
  std::vector<std::vector<TensorMemory>> out{hbm_buffers(forward_of(a), p, storage), {}};
  for (const TensorMemory& b : hbm_buffers(a, p, storage)) {
    const bool held = std::any_of(out[0].begin(), out[0].end(), [&](const TensorMemory& x) {
      return x.tensor == b.tensor && x.accumulator == b.accumulator;
    });
    if (!held) out[1].push_back(b);
  }
  return out;
}

// An argument or result of a pass, or the logsumexp: a buffer of its own.
bool own_allocation(const TensorMemory& t) {
  const std::vector<Tensor>& args = pass_tensors(Pass::bwd);
  return !t.accumulator &&
         (t.tensor == Tensor::LSE || std::find(args.begin(), args.end(), t.tensor) != args.end());
}
}  // namespace

std::vector<TensorMemory> run_buffers(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  std::vector<TensorMemory> out;
  for (const std::vector<TensorMemory>& pass : run_passes(a, p, storage)) out.insert(out.end(), pass.begin(), pass.end());
  return out;
}

i64 allocation_device_bytes(const std::vector<i64>& buffer_bytes) {
  i64 asked = 0, grown = 0;
  for (const i64 b : buffer_bytes) {
    asked = checked_add(asked, b, "memory");
    if (b < kAllocationGranuleBytes) continue;
    const i64 slack = (kAllocationGranuleBytes - b % kAllocationGranuleBytes) % kAllocationGranuleBytes;
    grown = checked_add(grown, checked_add(b, slack, "memory"), "memory");
  }
  return std::max(asked, grown);
}

std::vector<i64> run_allocations(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  std::vector<i64> out;
  for (const std::vector<TensorMemory>& pass : run_passes(a, p, storage)) {
    i64 workspace = 0;
    for (const TensorMemory& b : pass) {
      if (own_allocation(b))
        out.push_back(b.bytes);
      else
        workspace = checked_add(workspace, b.bytes, "memory");
    }
    if (workspace > 0) out.push_back(workspace);
  }
  return out;
}

i64 run_memory_bytes(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  return allocation_device_bytes(run_allocations(a, p, storage));
}

i64 TrainingStepMemory::saved_bytes() const { return sum(saved); }
i64 TrainingStepMemory::inputs_bytes() const { return sum(inputs); }
i64 TrainingStepMemory::own_bytes() const { return sum(own); }

TrainingStepMemory training_step_memory(Algorithm a, const AttentionProblem& p, StorageTypes storage) {
  TrainingStepMemory m;
  m.forward = forward_of(a);
  const std::optional<Algorithm> bwd = backward_of(m.forward);
  if (!bwd)
    throw std::invalid_argument("algorithm " + std::string(to_string(a)) + " has no backward pass in the table");
  m.backward = *bwd;

  const Counters fwd = one_block(m.forward, p, storage);
  const Schedule b(m.backward, p, TileShape{p.n_q(), p.n_kv()}, storage);
  // The backward's HBM traffic per phase; the prologue counts with the first, the epilogue with the last.
  const int phases = b.phases();
  std::vector<Counters> by_phase(static_cast<size_t>(phases));
  for (int ph = 0; ph < phases; ++ph)
    by_phase[static_cast<size_t>(ph)] = b.cost_of_outers(b.phase_begin(ph), b.phase_begin(ph) + b.phase_outer_count(ph));
  by_phase.front() += b.cost_of_prologue();
  by_phase.back() += b.cost_of_epilogue();
  Counters all;
  for (const Counters& c : by_phase) all += c;

  // Per tensor of the backward: its bytes and the phases it is live in.
  std::vector<i64> live(static_cast<size_t>(phases), 0);
  for (int k = 0; k < kGlobalTensorCount; ++k) {
    const auto t = static_cast<Tensor>(k);
    const Traffic& moved = all.at(Level::HBM, t);
    if (moved.elements() == 0) continue;
    if (t == Tensor::dKaccum || t == Tensor::dVaccum) {  // allocated with the workspace: live throughout
      m.kv_accumulator_bytes = checked_add(m.kv_accumulator_bytes, whole_bytes(t, p, moved), "memory");
      continue;
    }
    const bool written = moved.write_elements > 0;
    int first = phases, last = -1;
    for (int ph = 0; ph < phases; ++ph)
      if (by_phase[static_cast<size_t>(ph)].at(Level::HBM, t).elements() > 0) {
        first = std::min(first, ph);
        last = ph;
      }
    const bool result = t == Tensor::dQ || t == Tensor::dK || t == Tensor::dV;
    // dK, dV that a group adds apart are the kernel's result from the first add
    // into their accumulator (the main loop), not from the pass that converts it.
    if (t == Tensor::dK || t == Tensor::dV) {
      const Tensor acc = t == Tensor::dK ? Tensor::dKaccum : Tensor::dVaccum;
      for (int ph = 0; ph < first; ++ph)
        if (by_phase[static_cast<size_t>(ph)].at(Level::HBM, acc).read_elements > 0) {
          first = ph;
          break;
        }
    }
    int from = 0, to = phases - 1;
    if (written) {
      from = first;
      if (!result) to = last;
    }
    if (b.loop_nest().stored_over(t)) continue;  // in the memory of the tensor it is written over
    // The tensor written over this one lives in its memory: held until that one's last use too.
    for (int u = 0; u < kGlobalTensorCount; ++u)
      if (b.loop_nest().stored_over(static_cast<Tensor>(u)) == t)
        for (int ph = phases - 1; ph > to; --ph)
          if (by_phase[static_cast<size_t>(ph)].at(Level::HBM, static_cast<Tensor>(u)).elements() > 0) {
            to = ph;
            break;
          }
    TensorMemory x{t, 0};
    if (!written && fwd.at(Level::HBM, t).write_elements > 0) {
      x.bytes = whole_bytes(t, p, fwd.at(Level::HBM, t));  // as the forward keeps it
      m.saved.push_back(x);
    } else if (!written && !is_gradient(t)) {
      x.bytes = whole_bytes(t, p, moved);
      m.inputs.push_back(x);
    } else {
      x.bytes = whole_bytes(t, p, moved);
      m.own.push_back(x);
    }
    for (int ph = from; ph <= to; ++ph)
      live[static_cast<size_t>(ph)] = checked_add(live[static_cast<size_t>(ph)], x.bytes, "memory");
  }
  m.backward_peak_bytes =
      checked_add(*std::max_element(live.begin(), live.end()), m.kv_accumulator_bytes, "memory");
  return m;
}

}  // namespace flashlab::sim
