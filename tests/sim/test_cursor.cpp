// The cursor's state at any step equals a replay of the stream from the start.
#include <algorithm>

#include "sim/support.hpp"
#include "support/problems.hpp"

using namespace flashlab::sim;

namespace {

void require_same_sram(const std::vector<TileRef>& a, const std::vector<TileRef>& b) {
  REQUIRE(a.size() == b.size());
  for (const TileRef& x : a) {
    bool found = false;
    for (const TileRef& y : b) found = found || (x.same_tile(y) && x.bytes == y.bytes);
    REQUIRE(found);
  }
}

}  // namespace

TEST_CASE("cursor state at random steps equals a replay from the start", "[sim][cursor]") {
  auto rng = flashlab::test::test_rng();
  flashlab::test::for_random_schedules(rng, 120, 160, [&rng](const flashlab::test::Case&, const Schedule& s) {
    Cursor cur(s, 1 << 30);
    REQUIRE(cur.size() == s.closed_form().events);
    std::vector<i64> steps{0, 1, cur.size(), cur.size() - 1};
    for (int k = 0; k < 12; ++k) steps.push_back(std::uniform_int_distribution<i64>(0, cur.size())(rng));
    for (i64 p : steps) {
      INFO("step " << p << " of " << cur.size());
      cur.seek(p);
      flashlab::test::Replay replay(p, 1 << 30);
      s.emit(replay);
      REQUIRE(cur.position() == p);
      REQUIRE(cur.counters() == replay.counters);
      require_same_sram(cur.sram(), replay.sram.resident());
      REQUIRE(cur.last_event().has_value() == replay.last.has_value());
      if (replay.last) {
        REQUIRE(cur.last_event()->kind == replay.last->kind);
        REQUIRE(cur.last_event()->line == replay.last->line);
        REQUIRE(cur.last_event()->i == replay.last->i);
        REQUIRE(cur.last_event()->j == replay.last->j);
        REQUIRE(cur.last_event()->target.same_tile(replay.last->target));
        REQUIRE(cur.where().line == replay.last->line);
      }
    }
  });
}

TEST_CASE("cursor steps forward and back consistently", "[sim][cursor]") {
  const AttentionProblem p = flashlab::test::problem(1, 1, 70, 16, true);
  const Schedule s(Algorithm::fa2, p, {16, 32});
  Cursor cur(s, 1 << 20);
  Counters prev;
  for (i64 k = 0; k < cur.size(); ++k) {
    cur.step();
    REQUIRE(cur.position() == k + 1);
    REQUIRE(cur.counters().events == k + 1);
    REQUIRE(cur.counters().level(Level::HBM).bytes() >= prev.level(Level::HBM).bytes());
    prev = cur.counters();
  }
  cur.step();  // clamped at the end
  CHECK(cur.position() == cur.size());
  CHECK(cur.counters() == s.closed_form());
  CHECK(cur.sram().empty());
  cur.back();
  CHECK(cur.position() == cur.size() - 1);
  cur.to_start();
  CHECK(cur.position() == 0);
  CHECK(cur.counters() == Counters{});
  cur.back();
  CHECK(cur.position() == 0);
}

TEST_CASE("cursor jumps to a block (i, j) and refuses skipped blocks", "[sim][cursor]") {
  const AttentionProblem p = flashlab::test::problem(1, 1, 300, 32, true);
  for (Algorithm a : all_algorithms()) {
    const Schedule s(a, p, {64, 32});
    Cursor cur(s, 1 << 20);
    INFO(to_string(a));
    REQUIRE(cur.seek_block(4, 3));
    CHECK(cur.last_event()->i == 4);
    CHECK(cur.last_event()->j == 3);
    CHECK(cur.where().part == Cursor::Part::visit);
    const i64 before = cur.position();
    const bool skips = algorithm_info(a).skips_masked_blocks;
    CHECK(cur.seek_block(0, 9) == !skips);  // wholly above the diagonal
    if (skips) CHECK(cur.position() == before);
    CHECK_FALSE(cur.seek_block(99, 0));
  }
}

TEST_CASE("a cursor jump replays at most one outer begin and one piece, at any N", "[sim][cursor]") {
  // The time of a jump is the benchmark's business (tests/benchmarks, CursorJump);
  // here the work it does is bounded, which is what keeps it cheap at N = 65,536.
  const AttentionProblem p = flashlab::test::problem(1, 1, 65536, 64, true);
  for (Algorithm a : all_algorithms()) {
    const Schedule s(a, p, {64, 64});
    Cursor cur(s, 1 << 20);
    INFO(to_string(a));
    i64 worst_piece = std::max(s.events_prologue(), s.events_epilogue());
    for (i64 o : {i64{0}, s.outer_count() - 1})
      worst_piece = std::max({worst_piece, s.events_per_visit(o), s.events_outer_end(o)});
    const i64 bound = s.events_outer_begin(0) + worst_piece;
    for (int k = 0; k <= 100; ++k) {
      const i64 target = cur.size() * k / 100;
      cur.seek(target);
      REQUIRE(cur.position() == target);
      REQUIRE(cur.last_seek_replayed() <= bound);
    }
    cur.seek(cur.size() / 2 + 1);
    CHECK(cur.last_seek_replayed() > 0);  // the piece is replayed, not skipped
  }
}

TEST_CASE("the cursor's counters over the run weigh a pass once per K/V head B·H_kv times, at every step",
          "[sim][cursor][gqa]") {
  // fa2_bwd with grouped heads added apart: the memset and the convert pass of
  // dKaccum, dVaccum run once per K/V head. At each step the run's counters are
  // a replay of the stream, its events in those passes counted B·H_kv times.
  AttentionProblem p;
  p.batch = 2;
  p.heads = 6;
  p.kv_heads = 2;
  p.seq_q = p.seq_kv = 70;
  p.head_dim = 16;
  StorageTypes st;
  st.dq_accumulator = DType::fp32;
  st.dkv_accumulator = DType::fp32;
  const Schedule s(Algorithm::fa2_bwd, p, TileShape{32, 32}, st);
  REQUIRE(s.once_per_kv_head(0));
  REQUIRE(s.once_per_kv_head(s.phases() - 1));
  // The stream with the pass of each event: a replay to every position.
  struct Tagged : EventSink {
    const Schedule* s;
    bool kv = false;
    std::vector<std::pair<TileEvent, bool>> events;
    void on_event(const TileEvent& e) override { events.push_back({e, kv}); }
  } all;
  all.s = &s;
  s.emit_prologue(all);
  for (i64 o = 0; o < s.outer_count(); ++o) {
    all.kv = s.once_per_kv_head(s.phase_of(o));
    s.emit_outer(o, all);
  }
  all.kv = false;
  s.emit_epilogue(all);
  Cursor c(s, i64{1} << 30);
  REQUIRE(c.size() == static_cast<i64>(all.events.size()));
  Counters one, kv;
  for (i64 q = 0; q <= c.size(); ++q) {
    if (q > 0) {
      one.add(all.events[static_cast<size_t>(q - 1)].first);
      if (all.events[static_cast<size_t>(q - 1)].second) kv.add(all.events[static_cast<size_t>(q - 1)].first);
    }
    c.seek(q);
    INFO("position " << q);
    REQUIRE(c.counters() == one);
    REQUIRE(c.over_heads() == (one - kv).scaled(p.head_count()) + kv.scaled(p.kv_head_count()));
  }
  CHECK(c.over_heads() == s.run_total());
}
