// Test helpers for the simulator: random problems, stream replays, brute force.
#pragma once

#include <random>
#include <vector>

#include <catch2/catch.hpp>

#include "flashlab/sim.hpp"

namespace flashlab::test {

using namespace flashlab::sim;

struct Case {
  AttentionProblem problem;
  TileShape tiles;
};

// A random shape: N from 1 to max_n (often not a multiple of the tiles, sometimes
// smaller than them), d from 1 to 160, tiles from 1 to 130, causal half the time.
inline Case random_case(std::mt19937_64& rng, i64 max_n = 300) {
  auto pick = [&](i64 lo, i64 hi) { return std::uniform_int_distribution<i64>(lo, hi)(rng); };
  Case c;
  AttentionProblem& p = c.problem;
  p.batch = pick(1, 4);
  p.heads = pick(1, 4);
  p.seq_q = pick(1, max_n);
  p.causal = pick(0, 1) == 1;
  p.seq_kv = p.causal || pick(0, 2) > 0 ? p.seq_q : pick(1, max_n);
  p.head_dim = pick(0, 3) == 0 ? pick(1, 160) : (i64{16} << pick(0, 3));
  p.dtype = static_cast<DType>(pick(0, 2));
  c.tiles = {pick(1, 130), pick(1, 130)};
  if (pick(0, 4) == 0) c.tiles = {pick(1, 8), pick(1, 8)};
  return c;
}

inline std::mt19937_64 test_rng() { return std::mt19937_64(0x5eedULL ^ Catch::rngSeed()); }

// Counters and SRAM after the first `limit` events of the whole stream.
struct Replay : EventSink {
  Replay(i64 limit, i64 capacity) : limit_(limit), sram(capacity) {}
  void on_event(const TileEvent& e) override {
    if (seen_++ >= limit_) return;
    counters.add(e);
    sram.on_event(e);
    last = e;
  }
  i64 limit_, seen_ = 0;
  Counters counters;
  SramTracker sram;
  std::optional<TileEvent> last;
};

inline Counters stream_counters(const Schedule& s) {
  CounterSink c;
  s.emit(c);
  return c.counters;
}

// Element-level brute force of causal visiting.
inline bool brute_visited(const TileGrid& g, i64 i, i64 j) {
  if (!g.causal) return true;
  for (i64 r = i * g.Br; r < std::min((i + 1) * g.Br, g.n_q); ++r)
    for (i64 c = j * g.Bc; c < std::min((j + 1) * g.Bc, g.n_kv); ++c)
      if (c <= r) return true;
  return false;
}

inline bool brute_has_masked(const TileGrid& g, i64 i, i64 j) {
  if (!g.causal) return false;
  for (i64 r = i * g.Br; r < std::min((i + 1) * g.Br, g.n_q); ++r)
    for (i64 c = j * g.Bc; c < std::min((j + 1) * g.Bc, g.n_kv); ++c)
      if (c > r) return true;
  return false;
}

inline std::string describe_case(const Case& c) {
  return describe(c.problem) + " B_r=" + std::to_string(c.tiles.Br) + " B_c=" + std::to_string(c.tiles.Bc);
}

// `count` random cases (random_case(rng, max_n)), each under every algorithm:
// `check(case, schedule)`, the case and the algorithm named in its messages.
template <class Check>
void for_random_schedules(std::mt19937_64& rng, int count, i64 max_n, Check check) {
  for (int n = 0; n < count; ++n) {
    const Case c = random_case(rng, max_n);
    for (Algorithm a : all_algorithms()) {
      INFO(describe_case(c) << " " << to_string(a));
      check(c, Schedule(a, c.problem, c.tiles));
    }
  }
}

}  // namespace flashlab::test
