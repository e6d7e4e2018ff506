#include "loop_nest.hpp"

namespace flashlab::sim::detail {

namespace {
// The tile with elements of `element_bytes` each: its one size rule.
TileRef sized(TileRef r, i64 element_bytes) {
  r.bytes = r.rows * r.cols * element_bytes;
  return r;
}
}  // namespace

TileRef Emitter::tile(Tensor t, i64 ti, i64 tj, i64 rows, i64 cols) const {
  return sized(TileRef{t, ti, tj, rows, cols}, element_bytes(t, dt_));
}

TileRef Emitter::O_accumulator(i64 i) const { return sized(O(i), dtype_bytes(storage_.o_accumulator.value_or(dt_))); }

TileRef Emitter::whole_O_accumulator() const {
  return sized(whole(Tensor::O, g_.n_q, g_.d), dtype_bytes(storage_.o_accumulator.value_or(dt_)));
}

bool Emitter::dQ_accumulates_apart() const {
  return storage_.dq_accumulator.has_value() && *storage_.dq_accumulator != dt_;
}

TileRef Emitter::dQ_accumulator(i64 i) const {
  TileRef r = dQ(i);
  if (dQ_accumulates_apart()) r.tensor = Tensor::dQaccum;
  return sized(r, dtype_bytes(storage_.dq_accumulator.value_or(dt_)));
}

TileRef Emitter::whole_dQ_accumulator() const {
  return sized(whole(dQ_accumulates_apart() ? Tensor::dQaccum : Tensor::dQ, g_.n_q, g_.d),
               dtype_bytes(storage_.dq_accumulator.value_or(dt_)));
}

TileRef Emitter::dK_accumulator(i64 j) const {
  TileRef r = tile(Tensor::dKaccum, -1, j, g_.cols(j), g_.d);
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.dkv_accumulator.value_or(dt_));
  return r;
}

TileRef Emitter::dV_accumulator(i64 j) const {
  TileRef r = tile(Tensor::dVaccum, -1, j, g_.cols(j), g_.d);
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.dkv_accumulator.value_or(dt_));
  return r;
}

TileEvent Emitter::base(EventKind k, int line) const {
  TileEvent e;
  e.kind = k;
  e.line = line;
  e.i = i_;
  e.j = j_;
  e.masked = masked_;
  return e;
}

void Emitter::move(EventKind k, int line, const TileRef& t, Level from, Level to) {
  TileEvent e = base(k, line);
  e.from = from;
  e.to = to;
  e.target = t;
  sink_.on_event(e);
}

void Emitter::load(int line, const TileRef& t, Level from) { move(EventKind::load, line, t, from, Level::SRAM); }

void Emitter::store(int line, const TileRef& t, Level from) { move(EventKind::store, line, t, from, Level::HBM); }

void Emitter::compute(int line, const TileRef& result, std::initializer_list<TileRef> operands,
                      i64 matmul_flops, i64 softmax_flops, i64 exps, const TileRef* replaces) {
  TileEvent e = base(EventKind::compute, line);
  e.from = Level::SRAM;
  e.to = Level::SRAM;
  e.target = result;
  for (const TileRef& op : operands) e.operands[static_cast<size_t>(e.operand_count++)] = op;
  if (replaces != nullptr) {
    e.has_replaces = true;
    e.replaces = *replaces;
  }
  e.matmul_flops = matmul_flops;
  e.softmax_flops = softmax_flops;
  e.exps = exps;
  sink_.on_event(e);
}

void Emitter::free(int line, std::initializer_list<TileRef> tiles) {
  TileEvent e = base(EventKind::free, line);
  e.from = Level::SRAM;
  for (const TileRef& t : tiles) e.operands[static_cast<size_t>(e.operand_count++)] = t;
  sink_.on_event(e);
}

}  // namespace flashlab::sim::detail
