#include "flashlab/sim/schedule/cursor.hpp"

#include <algorithm>

namespace flashlab::sim {

namespace {

// Applies the first `limit` events it sees to counters and SRAM, remembers the
// last of them, ignores the rest.
class PrefixSink : public EventSink {
 public:
  PrefixSink(Counters& c, SramTracker& t, i64 limit) : c_(c), t_(t), limit_(limit) {}
  void on_event(const TileEvent& e) override {
    ++emitted;
    if (seen_++ >= limit_) return;
    c_.add(e);
    t_.on_event(e);
    last = e;
  }
  std::optional<TileEvent> last;
  i64 emitted = 0;

 private:
  Counters& c_;
  SramTracker& t_;
  i64 limit_, seen_ = 0;
};

class SramOnly : public EventSink {
 public:
  explicit SramOnly(SramTracker& t) : t_(t) {}
  void on_event(const TileEvent& e) override {
    ++emitted;
    t_.on_event(e);
  }
  i64 emitted = 0;

 private:
  SramTracker& t_;
};

}  // namespace

Cursor::Cursor(const Schedule& s, i64 sram_capacity_bytes) : s_(s), capacity_(sram_capacity_bytes) {
  const i64 n = s.outer_count();
  starts_.resize(static_cast<size_t>(n) + 1);
  i64 at = s.events_prologue();
  for (i64 o = 0; o < n; ++o) {
    starts_[static_cast<size_t>(o)] = at;
    at += s.events_outer_begin(o) + s.visit_count(o) * s.events_per_visit(o) + s.events_outer_end(o);
  }
  starts_[static_cast<size_t>(n)] = at;
  size_ = at + s.events_epilogue();
  SramTracker t(capacity_);
  SramOnly only(t);
  s.emit_prologue(only);
  after_prologue_ = t.resident();
}

i64 Cursor::sram_bytes() const {
  i64 b = 0;
  for (const TileRef& t : sram_) b += t.bytes;
  return b;
}

void Cursor::seek(i64 p) {
  p = std::clamp<i64>(p, 0, size_);
  position_ = p;
  replayed_ = 0;
  counters_ = Counters{};
  kv_head_part_ = Counters{};
  last_.reset();
  where_ = Where{};
  if (p == 0) {
    sram_.clear();
    return;
  }
  const i64 q = p - 1;  // index of the last applied event
  const i64 n = s_.outer_count();
  SramTracker t(capacity_);
  Counters base, outer_base;
  bool in_kv_head_pass = false;
  i64 piece_start = 0;
  auto replay = [&](auto&& emit_piece) {
    PrefixSink sink(base, t, q - piece_start + 1);
    emit_piece(sink);
    last_ = sink.last;
    replayed_ += sink.emitted;
  };

  if (q < s_.events_prologue()) {
    where_.part = Part::prologue;
    replay([&](EventSink& k) { s_.emit_prologue(k); });
  } else if (q >= starts_[static_cast<size_t>(n)]) {
    where_.part = Part::epilogue;
    base = s_.cost_of_prologue() + s_.cost_of_outers(0, n);
    kv_head_part_ = s_.cost_of_kv_head_outers(0, n);
    t.reset(after_prologue_, 0);
    piece_start = starts_[static_cast<size_t>(n)];
    replay([&](EventSink& k) { s_.emit_epilogue(k); });
  } else {
    const i64 o = (std::upper_bound(starts_.begin(), starts_.end(), q) - starts_.begin()) - 1;
    const i64 off = q - starts_[static_cast<size_t>(o)];
    const i64 nb = s_.events_outer_begin(o), nv = s_.events_per_visit(o), visits = s_.visit_count(o);
    where_.outer = o;
    base = s_.cost_of_prologue() + s_.cost_of_outers(0, o);
    kv_head_part_ = s_.cost_of_kv_head_outers(0, o);
    outer_base = base;
    in_kv_head_pass = s_.once_per_kv_head(s_.phase_of(o));
    t.reset(after_prologue_, 0);
    if (off < nb) {
      where_.part = Part::outer_begin;
      piece_start = starts_[static_cast<size_t>(o)];
      replay([&](EventSink& k) { s_.emit_outer_begin(o, k); });
    } else {
      base += s_.cost_of_outer_begin(o);
      SramOnly only(t);
      s_.emit_outer_begin(o, only);
      replayed_ += only.emitted;
      if (off < nb + visits * nv) {
        const i64 k = (off - nb) / nv;
        where_.part = Part::visit;
        where_.visit = k;
        base += s_.cost_of_visits(o, 0, k);
        piece_start = starts_[static_cast<size_t>(o)] + nb + k * nv;
        replay([&](EventSink& sink) { s_.emit_visit(o, k, sink); });
      } else {
        where_.part = Part::outer_end;
        base += s_.cost_of_visits(o, 0, visits);
        piece_start = starts_[static_cast<size_t>(o)] + nb + visits * nv;
        replay([&](EventSink& k) { s_.emit_outer_end(o, k); });
      }
    }
  }
  counters_ = base;
  if (in_kv_head_pass) kv_head_part_ += counters_ - outer_base;  // the part of outer iteration o applied
  sram_ = t.resident();
  if (last_) {
    where_.i = last_->i;
    where_.j = last_->j;
    where_.line = last_->line;
  }
}

bool Cursor::seek_block(i64 i, i64 j) {
  const auto [o, k] = s_.locate_block(i, j);
  if (o < 0) return false;
  seek(starts_[static_cast<size_t>(o)] + s_.events_outer_begin(o) + k * s_.events_per_visit(o) + 1);
  return true;
}

}  // namespace flashlab::sim
