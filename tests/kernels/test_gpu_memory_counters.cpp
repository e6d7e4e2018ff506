// CUPTI's counters on the device: a copy of N bytes reads and writes N bytes
// of DRAM; one session measures kernel after kernel; a launch that throws
// leaves the session usable; one session per device.
#include <cuda_runtime_api.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <string>

#include "dram_probe_kernels.hpp"
#include "flashlab/kernels/device/memory_counters.hpp"

using namespace flashlab::kernels;

namespace {

// Device buffers for one test, freed at its end.
struct Buffers {
  std::size_t bytes = 0, flush_bytes = 0;
  void *src = nullptr, *dst = nullptr, *scratch = nullptr, *sink = nullptr;
  Buffers() {
    int l2 = 0;
    REQUIRE(cudaDeviceGetAttribute(&l2, cudaDevAttrL2CacheSize, 0) == cudaSuccess);
    // 64× the L2: dirty lines the copy leaves in L2 at its end (at most one L2)
    // are under 2% of what it writes.
    bytes = std::max<std::size_t>(64 * static_cast<std::size_t>(l2), std::size_t{1} << 30);
    flush_bytes = std::max<std::size_t>(2 * static_cast<std::size_t>(l2), 8 << 20);
    REQUIRE(cudaMalloc(&src, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&dst, bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&scratch, flush_bytes) == cudaSuccess);
    REQUIRE(cudaMalloc(&sink, 16) == cudaSuccess);
    probe::fill(src, bytes, 1);
    probe::fill(dst, bytes, 2);
    probe::fill(scratch, flush_bytes, 3);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  }
  ~Buffers() {
    for (void* p : {src, dst, scratch, sink}) (void)cudaFree(p);
  }
  Buffers(const Buffers&) = delete;
  Buffers& operator=(const Buffers&) = delete;
  void flush() const { probe::flush_l2(scratch, flush_bytes, sink); }
};

std::unique_ptr<CounterSession> open_session() {
  std::string why;
  auto s = CounterSession::open(0, &why);
  INFO("CounterSession::open(0): " << why);
  REQUIRE(s);
  return s;
}

}  // namespace

TEST_CASE("CUPTI counts the DRAM bytes of a copy of N bytes within 2%", "[gpu][cupti]") {
  const Buffers b;
  const auto session = open_session();
  const double n = static_cast<double>(b.bytes);
  const MemoryCounters m = session->measure([&] { b.flush(); }, [&] { probe::copy(b.src, b.dst, b.bytes); });
  INFO(session->description() << "; N = " << b.bytes << " B, DRAM read " << m.dram_read_bytes << " B, write "
                              << m.dram_write_bytes << " B, L2 read " << m.l2_read_bytes << " B, write "
                              << m.l2_write_bytes << " B, " << m.passes << " pass(es)");
  CHECK(m.passes >= 1);
  CHECK(m.dram_read_bytes == Approx(n).epsilon(0.02));
  CHECK(m.dram_write_bytes == Approx(n).epsilon(0.02));
  CHECK(m.l2_read_bytes == Approx(n).epsilon(0.02));
  CHECK(m.l2_write_bytes == Approx(n).epsilon(0.02));
  CHECK(m.l2_hit_rate >= 0);
  CHECK(m.l2_hit_rate <= 1);
}

TEST_CASE("one CUPTI session measures kernels one after another, and survives a launch that throws", "[gpu][cupti]") {
  const Buffers b;
  const auto session = open_session();
  const double n = static_cast<double>(b.bytes);
  const auto flush = [&] { b.flush(); };

  const MemoryCounters read = session->measure(flush, [&] { probe::read_once(b.src, b.bytes, b.sink); });
  CHECK(read.dram_read_bytes == Approx(n).epsilon(0.02));
  CHECK(read.dram_write_bytes < 0.02 * n);

  CHECK_THROWS_WITH(session->measure(flush, [] { throw std::runtime_error("launch refused"); }), "launch refused");

  const MemoryCounters write = session->measure(flush, [&] { probe::write_only(b.dst, b.bytes, 7); });
  CHECK(write.dram_read_bytes < 0.02 * n);
  CHECK(write.dram_write_bytes == Approx(n).epsilon(0.02));
}

TEST_CASE("a second counter session on a device that has one is refused with a reason, the first unharmed",
          "[gpu][cupti]") {
  const Buffers b;
  const auto first = open_session();
  std::string why;
  std::unique_ptr<CounterSession> second;
  REQUIRE_NOTHROW(second = CounterSession::open(0, &why));
  INFO(why);
  CHECK_FALSE(second);
  CHECK_THAT(why, Catch::Contains("already open on device 0"));
  const MemoryCounters m = first->measure([&] { b.flush(); }, [&] { probe::read_once(b.src, b.bytes, b.sink); });
  CHECK(m.dram_read_bytes == Approx(static_cast<double>(b.bytes)).epsilon(0.02));
}
