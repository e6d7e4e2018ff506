// The ring's layout: chunks as equal as integers allow, every token held by
// exactly one GPU, the zig-zag balancing the causal work, the K/V rotation.
#include <catch2/catch.hpp>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "flashlab/sim/problem/ring_partition.hpp"

using namespace flashlab::sim;

namespace {
// Visible (query, key) pairs GPU r computes over the whole ring.
i64 work_of(const RingPartition& p, int r, bool causal) {
  i64 w = 0;
  for (int s = 0; s < p.gpus; ++s) {
    const int src = ring_kv_source(r, s, p.gpus);
    for (int qc : p.held[static_cast<std::size_t>(r)])
      for (int kc : p.held[static_cast<std::size_t>(src)])
        w += visible_pairs(p.chunks[static_cast<std::size_t>(qc)], p.chunks[static_cast<std::size_t>(kc)], causal);
  }
  return w;
}
}  // namespace

TEST_CASE("ring partition: every token on exactly one GPU, chunk sizes differ by at most one") {
  std::mt19937_64 rng(20261125);
  for (int trial = 0; trial < 200; ++trial) {
    const int P = 1 + static_cast<int>(rng() % 9);
    const RingLayoutInfo& info = ring_layouts()[rng() % ring_layouts().size()];
    const RingLayout layout = info.layout;
    const int C = info.chunks_per_gpu * P;
    const i64 N = C + static_cast<i64>(rng() % 5000);
    const RingPartition p = ring_partition(N, P, layout);
    REQUIRE(p.chunks.size() == static_cast<std::size_t>(C));
    i64 lo = N, hi = 0, next = 0;
    for (const auto& c : p.chunks) {
      CHECK(c.begin == next);
      next = c.end;
      lo = std::min(lo, c.size());
      hi = std::max(hi, c.size());
    }
    CHECK(next == N);
    CHECK(hi - lo <= 1);
    CHECK(lo >= 1);
    std::vector<int> owner(static_cast<std::size_t>(C), -1);
    i64 total = 0;
    for (int r = 0; r < P; ++r) {
      total += p.tokens_of(r);
      for (int c : p.held[static_cast<std::size_t>(r)]) {
        CHECK(owner[static_cast<std::size_t>(c)] == -1);
        owner[static_cast<std::size_t>(c)] = r;
      }
    }
    CHECK(total == N);
    // Over the P steps every GPU meets every K/V chunk once: the visible pairs
    // sum to the whole problem's, N² or N(N+1)/2.
    for (bool causal : {false, true}) {
      i64 all = 0;
      for (int r = 0; r < P; ++r) all += work_of(p, r, causal);
      CHECK(all == (causal ? N * (N + 1) / 2 : N * N));
    }
  }
}

TEST_CASE("ring partition: the zig-zag layout balances the causal work, the contiguous one does not") {
  const i64 N = 8 * 1024;
  for (int P : {2, 4, 8}) {
    const auto zz = ring_partition(N, P, RingLayout::zigzag);
    const auto ct = ring_partition(N, P, RingLayout::contiguous);
    // Contiguous: GPU r sees r full chunks and one diagonal: (r + ½) c² + c/2 pairs, c = N/P.
    const i64 c = N / P;
    for (int r = 0; r < P; ++r) CHECK(work_of(ct, r, true) == r * c * c + c * (c + 1) / 2);
    // Zig-zag: chunk size h = N/2P; GPU r holds chunks r and 2P−1−r: (2P − 1) full
    // h × h blocks... every GPU the same: 2P·h² − h² + h(h+1) = (2P − 1)h² + h² + h.
    const i64 h = N / (2 * P);
    for (int r = 0; r < P; ++r) CHECK(work_of(zz, r, true) == 2 * P * h * h + h);
  }
}

TEST_CASE("ring partition: K/V rotation and refusals") {
  CHECK(ring_kv_source(0, 0, 4) == 0);
  CHECK(ring_kv_source(0, 1, 4) == 3);
  CHECK(ring_kv_source(3, 3, 4) == 0);
  CHECK(ring_kv_source(2, 5, 4) == 1);
  CHECK_THROWS_WITH(ring_partition(3, 2, RingLayout::zigzag), Catch::Contains("cannot fill the 4 chunks"));
  CHECK_THROWS_WITH(ring_partition(100, 0, RingLayout::contiguous), Catch::Contains("1 to 4096 GPUs"));
  RingLayout l{};
  CHECK(parse_ring_layout("balanced", l));
  CHECK(l == RingLayout::zigzag);
  CHECK_FALSE(parse_ring_layout("diagonal", l));
}

TEST_CASE("ring layouts: one table, each name parsed back, the balance it claims measured") {
  std::vector<std::string_view> names;
  for (const RingLayoutInfo& l : ring_layouts()) {
    INFO(l.name);
    RingLayout back{};
    REQUIRE(parse_ring_layout(l.name, back));
    CHECK(back == l.layout);
    for (std::string_view a : l.aliases) {
      REQUIRE(parse_ring_layout(a, back));
      CHECK(back == l.layout);
    }
    CHECK(ring_layout_name(l.layout) == l.name);
    CHECK(&ring_layout_info(l.layout) == &l);
    CHECK(l.chunks_per_gpu >= 1);
    CHECK(!l.words.empty());
    CHECK(!l.holds.empty());
    CHECK(std::find(names.begin(), names.end(), l.name) == names.end());
    names.push_back(l.name);
    // What the table says of the causal balance is what the work per GPU shows:
    // balanced, every GPU within one chunk's diagonal of the mean.
    const int P = 8;
    const RingPartition p = ring_partition(64 * 1024, P, l.layout);
    i64 lo = -1, hi = 0;
    for (int r = 0; r < P; ++r) {
      const i64 w = work_of(p, r, true);
      lo = lo < 0 ? w : std::min(lo, w);
      hi = std::max(hi, w);
    }
    CHECK((static_cast<double>(hi - lo) / static_cast<double>(hi) < 0.01) == l.balances_causal);
  }
  CHECK(ring_layouts().front().layout == RingLayout::zigzag);  // the default
  std::string listed;
  for (std::string_view n : names) listed += (listed.empty() ? "" : ", ") + std::string(n);
  CHECK(ring_layout_names() == listed);
  // next_ring_layout walks the table once round.
  RingLayout l = ring_layouts().front().layout;
  for (std::size_t k = 1; k <= ring_layouts().size(); ++k) {
    l = next_ring_layout(l);
    CHECK(l == ring_layouts()[k % ring_layouts().size()].layout);
  }
}
