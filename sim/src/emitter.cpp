#include "algorithm_model.hpp"

namespace flashlab::sim::detail {

Sums& Sums::operator+=(const Sums& o) {
  begins += o.begins; begin_size += o.begin_size;
  ends += o.ends; end_size += o.end_size;
  visits += o.visits; v_r += o.v_r; v_c += o.v_c; v_rc += o.v_rc;
  fvisits += o.fvisits; fv_r += o.fv_r; fv_c += o.fv_c; fv_rc += o.fv_rc;
  return *this;
}

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

void Tally::read(Level l, Tensor t, i64 elements) {
  Traffic& tr = c_.at(l, t);
  tr.read_elements = checked_add(tr.read_elements, elements, "closed-form count");
  tr.read_bytes = checked_add(tr.read_bytes, mul(elements, element_bytes(t, dt_)), "closed-form count");
}

void Tally::write(Level l, Tensor t, i64 elements) {
  Traffic& tr = c_.at(l, t);
  tr.write_elements = checked_add(tr.write_elements, elements, "closed-form count");
  tr.write_bytes = checked_add(tr.write_bytes, mul(elements, element_bytes(t, dt_)), "closed-form count");
}

void Tally::matmul(i64 f) { c_.matmul_flops = checked_add(c_.matmul_flops, f, "closed-form count"); }
void Tally::softmax(i64 f) { c_.softmax_flops = checked_add(c_.softmax_flops, f, "closed-form count"); }
void Tally::exps(i64 n) { c_.exps = checked_add(c_.exps, n, "closed-form count"); }

}  // namespace flashlab::sim::detail
