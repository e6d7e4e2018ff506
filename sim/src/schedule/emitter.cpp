#include "loop_nest.hpp"

namespace flashlab::sim::detail {

TileRef Emitter::tile(Tensor t, i64 ti, i64 tj, i64 rows, i64 cols) const {
  TileRef r;
  r.tensor = t;
  r.ti = ti;
  r.tj = tj;
  r.rows = rows;
  r.cols = cols;
  r.bytes = rows * cols * element_bytes(t, dt_);
  return r;
}

TileRef Emitter::O_accumulator(i64 i) const {
  TileRef r = O(i);
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.o_accumulator.value_or(dt_));
  return r;
}

TileRef Emitter::whole_O_accumulator() const {
  TileRef r = whole(Tensor::O, g_.n_q, g_.d);
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.o_accumulator.value_or(dt_));
  return r;
}

bool Emitter::dQ_accumulates_apart() const {
  return storage_.dq_accumulator.has_value() && *storage_.dq_accumulator != dt_;
}

TileRef Emitter::dQ_accumulator(i64 i) const {
  TileRef r = dQ(i);
  if (dQ_accumulates_apart()) r.tensor = Tensor::dQaccum;
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.dq_accumulator.value_or(dt_));
  return r;
}

TileRef Emitter::whole_dQ_accumulator() const {
  TileRef r = whole(dQ_accumulates_apart() ? Tensor::dQaccum : Tensor::dQ, g_.n_q, g_.d);
  r.bytes = r.rows * r.cols * dtype_bytes(storage_.dq_accumulator.value_or(dt_));
  return r;
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

void Emitter::load(int line, const TileRef& t, Level from) {
  TileEvent e = base(EventKind::load, line);
  e.from = from;
  e.to = Level::SRAM;
  e.target = t;
  sink_.on_event(e);
}

void Emitter::store(int line, const TileRef& t, Level from) {
  TileEvent e = base(EventKind::store, line);
  e.from = from;
  e.to = Level::HBM;
  e.target = t;
  sink_.on_event(e);
}

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
