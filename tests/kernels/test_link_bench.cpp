// The link benchmark's plain parts, on any machine: its options checked, the
// message sizes it walks, the messages per iteration, the pattern its send
// buffers hold and the check that finds a wrong byte; and on a machine that
// cannot measure, one sentence saying why.
#include <catch2/catch.hpp>

#include <cstring>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/kernels/links/link_bench.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

TEST_CASE("links: sizes from the smallest by the step, and the largest always", "[kernels][links]") {
  LinkBenchOptions o;
  const std::vector<i64> all = link_bench_sizes(o);
  REQUIRE(all.size() == 28);  // 8 B, 16 B, … 1 GiB
  CHECK(all.front() == 8);
  CHECK(all.back() == i64{1} << 30);
  o.step = 4;
  o.max_bytes = i64{1} << 30;
  const std::vector<i64> by4 = link_bench_sizes(o);
  CHECK(by4[1] == 32);
  CHECK(by4[by4.size() - 2] == i64{1} << 29);  // 8·4^13
  CHECK(by4.back() == i64{1} << 30);           // off the steps, measured all the same
  o.min_bytes = o.max_bytes = 1000;
  CHECK(link_bench_sizes(o) == std::vector<i64>{1000});
}

TEST_CASE("links: tiny messages are timed a hundred at a time, large ones one at a time", "[kernels][links]") {
  CHECK(link_bench_messages(8) == 100);
  CHECK(link_bench_messages(1 << 20) == 64);
  CHECK(link_bench_messages(i64{64} << 20) == 1);
  CHECK(link_bench_messages(i64{1} << 30) == 1);
}

TEST_CASE("links: malformed options are named, one sentence each", "[kernels][links]") {
  CHECK(validate(LinkBenchOptions{}).empty());
  struct Bad {
    LinkBenchOptions o;
    const char* message;
  };
  auto with = [](auto f) {
    LinkBenchOptions o;
    f(o);
    return o;
  };
  const Bad bad = GENERATE_COPY(values<Bad>({
      {with([](LinkBenchOptions& o) { o.min_bytes = 0; }), "the smallest message must be at least 1 byte"},
      {with([](LinkBenchOptions& o) { o.max_bytes = 4; }), "the largest message (4 bytes) is smaller than the smallest (8)"},
      {with([](LinkBenchOptions& o) { o.step = 1; }), "the size step must be at least 2"},
      {with([](LinkBenchOptions& o) { o.iterations = 0; }), "at least 1 timed iteration"},
      {with([](LinkBenchOptions& o) { o.warmup = -1; }), "warm-up iterations cannot be negative"},
      {with([](LinkBenchOptions& o) { o.devices = {3}; }), "a link needs 2 devices; 1 named"},
      {with([](LinkBenchOptions& o) { o.devices = {0, 1, 0}; }), "device 0 is named twice"},
      {with([](LinkBenchOptions& o) { o.max_bytes = i64{1} << 40; }), "messages above 16 GiB are not measured"},
  }));
  const std::vector<std::string> why = validate(bad.o);
  REQUIRE(why.size() == 1);
  CHECK_THAT(why.front(), Catch::Contains(bad.message));
  CHECK_THROWS_AS(run_link_bench(bad.o), Unsupported);
}

TEST_CASE("links: every byte of the pattern is odd, each GPU's differs, a wrong byte is found", "[kernels][links]") {
  std::vector<unsigned char> buf(4096 + 5);
  for (std::size_t w = 0; w * 8 < buf.size(); ++w) {
    const std::uint64_t word = link_pattern_word(1, w);
    std::memcpy(buf.data() + 8 * w, &word, std::min<std::size_t>(8, buf.size() - 8 * w));
  }
  for (unsigned char b : buf) REQUIRE((b & 1) == 1);
  const i64 n = static_cast<i64>(buf.size());
  CHECK(first_pattern_mismatch(buf.data(), n, 1) == -1);
  CHECK(first_pattern_mismatch(buf.data(), n, 0) == 0);  // another GPU's pattern
  CHECK(link_pattern_word(0, 7) != link_pattern_word(1, 7));
  CHECK(link_pattern_word(0, 7) != link_pattern_word(0, 8));
  // A piece from an unaligned offset, and a zero (an unwritten byte) near the end.
  CHECK(first_pattern_mismatch(buf.data() + 13, n - 13, 1, 13) == -1);
  buf[4099] = 0;
  CHECK(first_pattern_mismatch(buf.data(), n, 1) == 4099);
  CHECK(first_pattern_mismatch(buf.data() + 13, n - 13, 1, 13) == 4099 - 13);
}

TEST_CASE("links: a machine that cannot measure says why in one sentence", "[kernels][links]") {
  const std::string why = link_bench_unavailable_reason(LinkBenchOptions{});
  if (why.empty()) {
    SUCCEED("this machine can measure its links (the GPU tests do)");
    return;
  }
  CHECK(why.find('\n') == std::string::npos);
  CHECK_THROWS_WITH(run_link_bench(LinkBenchOptions{}), why);
}
