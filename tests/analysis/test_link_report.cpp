// The links measured, made into rates, a table, CSV and a measured link: the
// rates are bytes over the median times, the measured link takes the slowest
// pair's NCCL curve and says so, quotes the datasheet as a ratio, and reads
// back as a preset the ring's simulator takes.
#include <catch2/catch.hpp>

#include <tuple>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/sim/core/format.hpp"
#include "support/text_checks.hpp"

using namespace flashlab;
using namespace flashlab::analysis;

namespace {

// A message of `bytes` at `gbs` one way after `latency_us`; both ways 10% slower.
sim::LinkSample sample(sim::i64 bytes, double gbs, double latency_us = 5) {
  sim::LinkSample s;
  s.bytes = bytes;
  const double us = latency_us + static_cast<double>(bytes) / (gbs * 1e3);
  s.one_way = {100, 20, us, 0.95 * us, 1.1 * us};
  s.both = {100, 20, 1.1 * us, us, 1.3 * us};
  s.checked = true;
  return s;
}

sim::LinkSeries series(sim::LinkTransport t, double gbs) {
  sim::LinkSeries s;
  s.transport = t;
  s.peer_access = true;
  for (sim::i64 b = 8; b <= (sim::i64{1} << 30); b *= 32) s.samples.push_back(sample(b, gbs));
  s.samples.push_back(sample(sim::i64{1} << 30, gbs));
  return s;
}

// Three GPUs over NV18: pair (0, 2) the slowest.
sim::LinkMeasurements three_gpus() {
  sim::LinkMeasurements m;
  m.devices = {0, 1, 2};
  m.gpu_names = {"NVIDIA H200", "NVIDIA H200", "NVIDIA H200"};
  m.nccl_version = "2.28.9";
  m.topology = "\tGPU0\tGPU1\tGPU2\nGPU0\t X \tNV18\tNV18\nGPU1\tNV18\t X \tNV18\nGPU2\tNV18\tNV18\t X \n";
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  m.date = "2026-11-26T10:00:00Z";
  m.host = "node7";
  m.commit = "abc123";
  m.warmup = 5;
  for (const auto& [a, b, gbs] : std::vector<std::tuple<int, int, double>>{{0, 1, 380}, {0, 2, 360}, {1, 2, 390}}) {
    sim::LinkPairMeasurement p;
    p.gpu_a = a;
    p.gpu_b = b;
    p.series = {series(sim::LinkTransport::nccl, gbs), series(sim::LinkTransport::copy_engine, gbs + 20)};
    m.pairs.push_back(p);
  }
  return m;
}

}  // namespace

TEST_CASE("links: rates are a message's bytes over its median time", "[links]") {
  const sim::LinkSample s = sample(1 << 20, 400, 5);
  const LinkRate r = link_rate(s);
  CHECK(r.one_way_us == s.one_way.time_us_median);
  CHECK(r.one_way_gbs == Approx((1 << 20) / (s.one_way.time_us_median * 1e-6) / 1e9));
  CHECK(r.both_per_direction_gbs == Approx(r.one_way_gbs / 1.1));
  CHECK(r.both_total_gbs == Approx(2 * r.both_per_direction_gbs));
}

TEST_CASE("links: the measured link is the slowest pair's NCCL curve, the rule and the datasheet in its notes",
          "[links]") {
  const sim::LinkMeasurements m = three_gpus();
  CHECK(slowest_link_pair(m).gpu_b == 2);
  CHECK(matching_datasheet_link(m) == "nvlink4");
  const sim::InterconnectModel nvlink4 = sim::load_interconnect("nvlink4");
  const sim::InterconnectModel l = measured_link(m, {}, &nvlink4);
  CHECK(l.kind == "measured");
  CHECK(l.id == "measured-nvidia-h200-3gpu-2026-11-26");
  CHECK(l.label == "NCCL send/recv measured on 3× NVIDIA H200 (NVLink, 18 links between every pair)");
  const sim::LinkSeries& slow = m.pairs[1].series[0];
  REQUIRE(l.curve.size() == slow.samples.size());
  CHECK(l.bandwidth == Approx(link_rate(slow.samples.back()).one_way_gbs * 1e9));
  CHECK(l.latency_s == Approx(slow.samples.front().one_way.time_us_median * 1e-6));
  CHECK(l.curve.back().bidir_bandwidth == Approx(link_rate(slow.samples.back()).both_per_direction_gbs * 1e9));
  CHECK(l.copy_engine_curve.size() == l.curve.size());
  CHECK(l.copy_engine_curve.back().bandwidth > l.curve.back().bandwidth);
  REQUIRE(l.pairs.size() == 3);
  CHECK(l.pairs[2].code == "NV18");
  CHECK(l.pairs[2].bandwidth > l.pairs[1].bandwidth);
  CHECK(l.gpus.size() == 3);
  CHECK(l.nccl_version == "2.28.9");
  CHECK_THAT(l.source, Catch::StartsWith("measured on 3× NVIDIA H200") && Catch::Contains("2026-11-26T10:00:00Z") &&
                           Catch::EndsWith("NCCL 2.28.9"));
  REQUIRE(l.notes.size() >= 3);
  CHECK_THAT(l.notes[0], Catch::Contains("slowest pair, GPU 0 <-> GPU 2") && Catch::Contains("1 GiB"));
  const double pct = 100 * l.bandwidth / 450e9;
  CHECK_THAT(l.notes[1], Catch::Contains("Datasheet (nvlink4): 450.0 GB/s one direction") &&
                             Catch::Contains(sim::fixed(pct, 0) + "% of it"));

  // The preset reads back, and the simulator's transfer time goes through its points.
  const sim::InterconnectModel back = sim::parse_interconnect_json(sim::to_interconnect_json(l), "preset.json");
  CHECK(back.bandwidth == Approx(l.bandwidth));
  for (const sim::LinkCurvePoint& p : l.curve) CHECK(back.transfer_s(p.bytes) == Approx(p.time_s));
  CHECK(back.topology.summary == "NVLink, 18 links between every pair");
}

TEST_CASE("links: without a topology no datasheet is matched, and no pair is named by a guess", "[links]") {
  sim::LinkMeasurements m = three_gpus();
  m.topology.clear();
  m.gpu_topology = {};
  CHECK(matching_datasheet_link(m).empty());
  const sim::InterconnectModel l = measured_link(m, {"my-link", "my label"});
  CHECK(l.id == "my-link");
  CHECK(l.label == "my label");
  for (const sim::LinkPairFigure& p : l.pairs) CHECK(p.code.empty());
  for (const std::string& n : l.notes) CHECK_THAT(n, !Catch::Contains("Datasheet"));
  CHECK_THROWS_AS(measured_link(sim::LinkMeasurements{}), std::invalid_argument);
}

TEST_CASE("links: the table and the CSV list every pair, transport and size", "[links]") {
  const sim::LinkMeasurements m = three_gpus();
  const std::string table = link_table(m);
  flashlab::test::check_contains_each(table, {
      "Links between 3 GPUs (NVIDIA H200), NCCL 2.28.9",
      "GPU 0 <-> GPU 2 (NV18: 18 bonded NVLinks)",
      "1 GiB",
      "copy both GB/s",
  });
  const auto rows = csv_parse(links_csv(m));
  const std::size_t sizes = m.pairs[0].series[0].samples.size();
  REQUIRE(rows.size() == 1 + 3 * 2 * sizes);
  CHECK(rows[0][0] == "gpu_a");
  CHECK(rows[1][2] == "NV18");
  CHECK(rows[1][3] == "nccl");
  CHECK(rows[1 + sizes][3] == "copy-engine");
  CHECK(rows[1][4] == "8");
  CHECK(rows[1].back() == "yes");
}
