#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/schedule/counters.hpp"

namespace flashlab::sim {

namespace {

// The one list of the counts: f(a's count, b's same count) for each, so that
// +, −, scaling and scaled sums cannot miss a field.
template <class F>
void each_count(Traffic& a, const Traffic& b, F f) {
  f(a.read_elements, b.read_elements);
  f(a.write_elements, b.write_elements);
  f(a.read_bytes, b.read_bytes);
  f(a.write_bytes, b.write_bytes);
}

template <class F>
void each_count(Counters& a, const Counters& b, F f) {
  for (int l = 0; l < kLevelCount; ++l)
    for (int t = 0; t < kTensorCount; ++t) each_count(a.traffic[l][t], b.traffic[l][t], f);
  f(a.matmul_flops, b.matmul_flops);
  f(a.softmax_flops, b.softmax_flops);
  f(a.exps, b.exps);
  f(a.events, b.events);
}

constexpr auto plus = [](i64& a, i64 b) { a += b; };
constexpr auto minus = [](i64& a, i64 b) { a -= b; };

}  // namespace

Traffic& Traffic::operator+=(const Traffic& o) {
  each_count(*this, o, plus);
  return *this;
}

Traffic& Traffic::operator-=(const Traffic& o) {
  each_count(*this, o, minus);
  return *this;
}

bool Traffic::operator==(const Traffic& o) const {
  return read_elements == o.read_elements && write_elements == o.write_elements &&
         read_bytes == o.read_bytes && write_bytes == o.write_bytes;
}

Traffic Counters::level(Level l) const {
  Traffic t;
  for (const Traffic& x : traffic[static_cast<int>(l)]) t += x;
  return t;
}

void Counters::add(const TileEvent& e) {
  auto read = [this](Level l, const TileRef& t) {
    if (l == Level::none) return;
    Traffic& x = at(l, t.tensor);
    x.read_elements += t.elements();
    x.read_bytes += t.bytes;
  };
  auto write = [this](Level l, const TileRef& t) {
    if (l == Level::none) return;
    Traffic& x = at(l, t.tensor);
    x.write_elements += t.elements();
    x.write_bytes += t.bytes;
  };
  ++events;
  switch (e.kind) {
    case EventKind::load:  // from HBM (or L2) into SRAM
      read(e.from, e.target);
      write(Level::SRAM, e.target);
      break;
    case EventKind::store:  // from SRAM (or nothing, for an initialisation) to HBM
      read(e.from, e.target);
      write(e.to, e.target);
      break;
    case EventKind::compute:  // operands read from SRAM, result written to SRAM
      for (int k = 0; k < e.operand_count; ++k) read(Level::SRAM, e.operands[static_cast<size_t>(k)]);
      write(Level::SRAM, e.target);
      break;
    case EventKind::free:
      break;
  }
  matmul_flops += e.matmul_flops;
  softmax_flops += e.softmax_flops;
  exps += e.exps;
}

Counters& Counters::operator+=(const Counters& o) {
  each_count(*this, o, plus);
  return *this;
}

Counters& Counters::operator-=(const Counters& o) {
  each_count(*this, o, minus);
  return *this;
}

Counters Counters::scaled(i64 k) const {
  Counters r;
  each_count(r, *this, [k](i64& out, i64 v) { out = checked_mul(v, k, "count × B·H"); });
  return r;
}

Counters& Counters::add_scaled(const Counters& o, i64 k) {
  if (k == 0) return *this;
  each_count(*this, o, [k](i64& acc, i64 v) {
    if (v != 0) acc = checked_add(acc, checked_mul(v, k, "count"), "count");
  });
  return *this;
}

bool Counters::operator==(const Counters& o) const {
  return traffic == o.traffic && matmul_flops == o.matmul_flops && softmax_flops == o.softmax_flops &&
         exps == o.exps && events == o.events;
}

Counters operator+(Counters a, const Counters& b) { return a += b; }
Counters operator-(Counters a, const Counters& b) { return a -= b; }

}  // namespace flashlab::sim
