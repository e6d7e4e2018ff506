#include "l2_accesses.hpp"

#include <algorithm>
#include <stdexcept>

namespace flashlab::sim::l2_detail {

namespace {

Extent extent_of(i64 v) {
  switch (v) {
    case 2: return Extent::r;
    case 3: return Extent::c;
    case 5: return Extent::d;
    case 1: return Extent::one;
    case 6: return Extent::n_q;
    case 9: return Extent::n_kv;
    default: throw std::logic_error("a global-memory tile whose extent the L2 model cannot place: " + std::to_string(v));
  }
}

struct Recorder : EventSink {
  std::vector<Access> out;
  void on_event(const TileEvent& e) override {
    const bool read = e.kind == EventKind::load && (e.from == Level::HBM || e.from == Level::L2);
    const bool write = e.kind == EventKind::store && e.to == Level::HBM;
    if (!read && !write) return;
    Access a;
    a.tensor = e.target.tensor;
    a.write = write;
    a.rows = extent_of(e.target.rows);
    a.cols = extent_of(e.target.cols);
    a.uses_i = e.target.ti >= 0;
    a.uses_j = e.target.tj >= 0;
    a.element_bytes = e.target.bytes / std::max<i64>(1, e.target.rows * e.target.cols);
    out.push_back(a);
  }
};

}  // namespace

std::vector<Access> record(const AttentionProblem& p, StorageTypes st,
                           const std::function<void(detail::Emitter&)>& emit) {
  AttentionProblem probe;
  probe.seq_q = 6;
  probe.seq_kv = 9;
  probe.head_dim = 5;
  probe.dtype = p.dtype;
  const TileGrid g(probe, TileShape{2, 3});
  Recorder rec;
  detail::Emitter e(g, p.dtype, rec, st);
  emit(e);
  return rec.out;
}

namespace {
template <class Tile>
void mark_read_and_written(std::vector<Access>& piece, const Tile& tile) {
  for (Access& a : piece) {
    if (!tile(a)) continue;
    for (const Access& b : piece)
      if (tile(b) && b.tensor == a.tensor && b.write != a.write) a.atomic_add = true;
  }
}
}  // namespace

void mark_atomic_adds(PhaseAccesses& phase) {
  mark_read_and_written(phase.visit, [](const Access& a) { return a.uses_i && !a.uses_j; });
  mark_read_and_written(phase.end, [](const Access& a) { return a.uses_j && !a.uses_i; });
}

}  // namespace flashlab::sim::l2_detail
