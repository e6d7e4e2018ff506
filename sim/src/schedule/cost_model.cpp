#include "cost_model.hpp"

#include <map>
#include <mutex>
#include <stdexcept>
#include <string>
#include <tuple>

namespace flashlab::sim::detail {

namespace {

// The counters of one piece emitted on a probe grid of a single r × c block.
template <class Emit>
Counters probe(const AttentionProblem& p, StorageTypes st, i64 r, i64 c, const Emit& emit) {
  AttentionProblem one;
  one.seq_q = r;
  one.seq_kv = c;
  one.head_dim = p.head_dim;
  one.dtype = p.dtype;
  const TileGrid g(one, TileShape{r, c});
  CounterSink sink;
  Emitter e(g, p.dtype, sink, st);
  emit(e);
  return sink.counters;
}

template <class Emit>
PieceCost derive(const AttentionProblem& p, StorageTypes st, const char* piece, const Emit& emit) {
  const Counters f11 = probe(p, st, 1, 1, emit), f21 = probe(p, st, 2, 1, emit);
  const Counters f12 = probe(p, st, 1, 2, emit), f22 = probe(p, st, 2, 2, emit);
  PieceCost k;
  k.k_rc = f22 - f21 - f12 + f11;
  k.k_r = f21 - f11 - k.k_rc;
  k.k_c = f12 - f11 - k.k_rc;
  k.k0 = f11 - k.k_r - k.k_c - k.k_rc;
  if (k.k_r.events != 0 || k.k_c.events != 0 || k.k_rc.events != 0)
    throw std::logic_error(std::string("the ") + piece + " of a loop nest emits a number of events that depends on "
                           "the block size; the cursor needs it constant");
  return k;
}

// An outer piece may depend on its own extent only (r for an outer loop over
// row blocks, c over column blocks).
void require_outer_only(const PieceCost& k, bool outer_over_rows, const char* piece) {
  const Counters zero;
  const bool ok = k.k_rc == zero && (outer_over_rows ? k.k_c == zero : k.k_r == zero);
  if (!ok)
    throw std::logic_error(std::string("the ") + piece + " of a loop nest depends on the inner block's size");
}

}  // namespace

Counters PieceCost::at(const BlockMoments& m) const {
  Counters out;
  out.add_scaled(k0, m.n).add_scaled(k_r, m.r).add_scaled(k_c, m.c).add_scaled(k_rc, m.rc);
  return out;
}

CostModel::CostModel(const LoopNest& nest, const AttentionProblem& p, StorageTypes st) {
  for (int ph = 0; ph < nest.phases(); ++ph) {
    PhaseCosts c;
    // The probe grid holds one block: row block 0 and column block 0 have the probe's extents.
    c.outer_begin = derive(p, st, "outer-loop begin", [&](Emitter& e) { nest.outer_begin(ph, 0, e); });
    c.outer_end = derive(p, st, "outer-loop end", [&](Emitter& e) { nest.outer_end(ph, 0, e); });
    if (nest.has_visits(ph)) {
      c.first_visit = derive(p, st, "visit", [&](Emitter& e) { nest.visit(ph, 0, 0, true, e); });
      c.visit = derive(p, st, "visit", [&](Emitter& e) { nest.visit(ph, 0, 0, false, e); });
    }
    require_outer_only(c.outer_begin, nest.outer_over_rows(ph), "outer-loop begin");
    require_outer_only(c.outer_end, nest.outer_over_rows(ph), "outer-loop end");
    phases_.push_back(c);
  }
}

std::shared_ptr<const CostModel> CostModel::shared(Algorithm a, const LoopNest& nest, const AttentionProblem& p,
                                                   StorageTypes st) {
  using Key = std::tuple<int, bool, i64, int, int, int, int>;
  static std::mutex mutex;
  static std::map<Key, std::shared_ptr<const CostModel>> cache;
  const Key key{static_cast<int>(a), p.causal, p.head_dim, static_cast<int>(p.dtype),
                st.o_accumulator ? static_cast<int>(*st.o_accumulator) : -1,
                st.dq_accumulator ? static_cast<int>(*st.dq_accumulator) : -1,
                // only grouped heads add dK, dV apart: another loop nest, other pieces
                st.dkv_accumulator && p.group_size() > 1 ? static_cast<int>(*st.dkv_accumulator) : -1};
  {
    const std::lock_guard<std::mutex> lock(mutex);
    if (auto it = cache.find(key); it != cache.end()) return it->second;
  }
  auto model = std::make_shared<const CostModel>(nest, p, st);
  const std::lock_guard<std::mutex> lock(mutex);
  if (cache.size() >= 512) cache.clear();  // a sweep over many head dims; derivation is cheap
  cache.emplace(key, model);
  return model;
}

}  // namespace flashlab::sim::detail
