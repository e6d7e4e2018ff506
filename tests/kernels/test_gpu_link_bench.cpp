// The links' benchmark between GPU 0 and the machine's last GPU: a few sizes
// over NCCL and the copy engines, every received byte checked against the
// sent ones, every time positive and every bandwidth below a cap no link of
// today reaches. Part of the multi-GPU binary: SKIPPED with fewer than 2 GPUs.
#include <catch2/catch.hpp>

#include <cuda_runtime_api.h>

#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/kernels/links/link_bench.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

TEST_CASE("links: GPU 0 and the last GPU, NCCL and the copy engines, bytes checked", "[links]") {
  int n = 0;
  REQUIRE(cudaGetDeviceCount(&n) == cudaSuccess);
  REQUIRE(n >= 2);
  LinkBenchOptions o;
  o.devices = {0, n - 1};
  o.min_bytes = 8;
  o.max_bytes = i64{16} << 20;
  o.step = 64;  // 8 B, 512 B, 32 KiB, 2 MiB, 16 MiB
  o.warmup = 2;
  o.iterations = 5;
  const sim::LinkMeasurements m = run_link_bench(o);
  CHECK(m.devices == o.devices);
  CHECK(m.gpu_names.size() == 2);
  CHECK_FALSE(m.nccl_version.empty());
  REQUIRE(m.pairs.size() == 1);
  const sim::LinkPairMeasurement& p = m.pairs[0];
  CHECK(p.gpu_a == 0);
  CHECK(p.gpu_b == n - 1);
  REQUIRE(p.series.size() == 2);
  // NVLink 4 moves 450 GB/s each way; nothing measured here may beat 2 TB/s.
  constexpr double kCapGbs = 2000;
  for (const sim::LinkSeries& s : p.series) {
    INFO(sim::link_transport_name(s.transport) << " " << s.note);
    REQUIRE(s.samples.size() == link_bench_sizes(o).size());
    for (const sim::LinkSample& x : s.samples) {
      INFO(x.bytes << " bytes");
      CHECK(x.checked);
      for (const sim::LinkTiming* t : {&x.one_way, &x.both}) {
        CHECK(t->iterations == 5);
        CHECK(t->messages == link_bench_messages(x.bytes));
        CHECK(t->time_us_min > 0);
        CHECK(t->time_us_min <= t->time_us_median);
        CHECK(t->time_us_median <= t->time_us_max);
      }
      const analysis::LinkRate r = analysis::link_rate(x);
      CHECK(r.one_way_gbs > 0);
      CHECK(r.one_way_gbs < kCapGbs);
      CHECK(r.both_total_gbs < 2 * kCapGbs);
    }
    // Larger messages move more bytes a second than 8-byte ones.
    CHECK(analysis::link_rate(s.samples.back()).one_way_gbs > 10 * analysis::link_rate(s.samples.front()).one_way_gbs);
  }
  const sim::InterconnectModel l = analysis::measured_link(m);
  CHECK(l.kind == "measured");
  CHECK(l.bandwidth > 0);
  CHECK(l.curve.size() == link_bench_sizes(o).size());
}
