// A measured link in the presets' format: its curve read, written and read
// back; bad curves named by their field; transfer_s equal to latency +
// bytes / bandwidth without a curve and through the measured points with one;
// measured presets found by id in interconnects/measured/; and the ring
// simulated over a measured link file.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "../support/problems.hpp"

using namespace flashlab::sim;
using nlohmann::json;

namespace {

// 8 B in 10 µs, 1 MiB in 13 µs, 1 GiB in 2.9 ms: a curve shaped like NCCL's.
json measured_json() {
  json curve = json::array();
  for (const auto& [bytes, us] : std::vector<std::pair<double, double>>{{8, 10}, {1 << 20, 13}, {1 << 30, 2900}})
    curve.push_back({{"bytes", bytes}, {"time_us", us}, {"gbs", bytes / (us * 1e-6) / 1e9}, {"bidir_gbs", 0.9 * bytes / (us * 1e-6) / 1e9}});
  return json{{"format", "flashlab-interconnect/1"},
              {"id", "measured-test-2gpu"},
              {"label", "NCCL send/recv measured on 2 test GPUs"},
              {"kind", "measured"},
              {"bandwidth_gbs", (1 << 30) / 2900e-6 / 1e9},
              {"latency_us", 10},
              {"source", "measured on 2× Test GPU by flashlab links, 2026-11-26, NCCL 2.28.9"},
              {"notes", {"the slowest pair"}},
              {"curve", curve},
              {"copy_engine_curve", curve},
              {"pairs", {{{"gpus", {0, 1}}, {"link", "NV18"}, {"bytes", 1 << 30}, {"gbs", 370.2}, {"bidir_gbs", 360.1}, {"copy_engine_gbs", 390.5}}}},
              {"gpus", {"Test GPU", "Test GPU"}},
              {"nccl_version", "2.28.9"},
              {"topology_text", "\tGPU0\tGPU1\nGPU0\t X \tNV18\nGPU1\tNV18\t X \n"}};
}

InterconnectModel parse(const json& j) { return parse_interconnect_json(j.dump(), "link.json"); }

// The measured preset with one field replaced.
std::string with(const char* pointer, const json& value) {
  json j = measured_json();
  j[json::json_pointer(pointer)] = value;
  return j.dump();
}

class TempAssets {
 public:
  TempAssets() : root_(std::filesystem::temp_directory_path() / ("flashlab-links-" + std::to_string(::getpid()))) {
    std::filesystem::create_directories(root_ / "interconnects" / "measured");
  }
  ~TempAssets() {
    std::error_code ec;
    std::filesystem::remove_all(root_, ec);
  }
  void write(const std::string& relative, const std::string& text) const { std::ofstream(root_ / relative) << text; }
  std::string path() const { return root_.string(); }

 private:
  std::filesystem::path root_;
};

}  // namespace

TEST_CASE("measured link: the curve and the record read, written and read back", "[interconnect]") {
  const InterconnectModel m = parse(measured_json());
  CHECK(m.kind == "measured");
  REQUIRE(m.curve.size() == 3);
  CHECK(m.curve[1].bytes == 1 << 20);
  CHECK(m.curve[1].time_s == Approx(13e-6));
  CHECK(m.curve[1].bandwidth == Approx((1 << 20) / 13e-6));
  CHECK(m.curve[1].bidir_bandwidth == Approx(0.9 * (1 << 20) / 13e-6));
  CHECK(m.copy_engine_curve.size() == 3);
  REQUIRE(m.pairs.size() == 1);
  CHECK(m.pairs[0].gpu_b == 1);
  CHECK(m.pairs[0].code == "NV18");
  CHECK(m.pairs[0].copy_engine_bandwidth == Approx(390.5e9));
  CHECK(m.gpus == std::vector<std::string>{"Test GPU", "Test GPU"});
  CHECK(m.nccl_version == "2.28.9");
  CHECK(m.topology.gpu_count == 2);
  CHECK(m.topology.summary == "NVLink, 18 links between every pair");

  const std::string text = to_interconnect_json(m);
  const json written = json::parse(text);
  CHECK(written["curve"][2]["bytes"] == 1 << 30);  // a whole number, not 1073741824.0
  CHECK(written["topology"]["links"][0][1] == "NV18");
  const InterconnectModel back = parse_interconnect_json(text, "back.json");
  REQUIRE(back.curve.size() == m.curve.size());
  for (std::size_t k = 0; k < m.curve.size(); ++k) {
    CHECK(back.curve[k].bytes == m.curve[k].bytes);
    CHECK(back.curve[k].time_s == Approx(m.curve[k].time_s).epsilon(1e-12));
    CHECK(back.curve[k].bidir_bandwidth == Approx(m.curve[k].bidir_bandwidth).epsilon(1e-12));
  }
  CHECK(back.pairs[0].bandwidth == Approx(m.pairs[0].bandwidth));
  CHECK(back.topology_text == m.topology_text);
  CHECK(back.topology.links == m.topology.links);
  CHECK(to_interconnect_json(back) == text);
  CHECK_FALSE(back.host.measured());  // no host's issuing in this record
  CHECK(written.find("host") == written.end());

  // The host's issuing, when measured, travels with the link.
  InterconnectModel hosted = m;
  hosted.host.call_s = 0.25e-6;
  hosted.host.launch_s = 4.4e-6;
  hosted.host.exchange_s = 20.8e-6;
  hosted.host.gpus = 2;
  hosted.host.source = "measured on 2× Test GPU";
  const InterconnectModel hosted_back = parse_interconnect_json(to_interconnect_json(hosted), "hosted.json");
  CHECK(hosted_back.host.call_s == Approx(0.25e-6));
  CHECK(hosted_back.host.launch_s == Approx(4.4e-6));
  CHECK(hosted_back.host.exchange_s == Approx(20.8e-6));
  CHECK(hosted_back.host.gpus == 2);
  CHECK(hosted_back.host.source == "measured on 2× Test GPU");
  CHECK(hosted_back.host.exchange_over(4) == Approx(41.6e-6));
  json bad = json::parse(to_interconnect_json(hosted));
  bad["host"].erase("exchange_us");
  CHECK_THROWS_WITH(parse_interconnect_json(bad.dump(), "bad.json"), Catch::Contains("exchange_us"));

  // A datasheet preset writes none of a measured link's fields.
  const json nv = json::parse(to_interconnect_json(load_interconnect("nvlink4")));
  for (const char* key : {"curve", "copy_engine_curve", "pairs", "gpus", "nccl_version", "topology", "topology_text"})
    CHECK_FALSE(nv.contains(key));
}

TEST_CASE("measured link: a bad curve is refused, naming the field", "[interconnect]") {
  struct Bad {
    const char* pointer;
    json value;
    const char* message;
  };
  const Bad bad = GENERATE(values<Bad>({
      {"/curve", json::array(), "field 'curve' must be a non-empty list"},
      {"/curve", "fast", "field 'curve' must be a non-empty list"},
      {"/curve/1", 3, "field 'curve[1]' must be an object"},
      {"/curve/1/bytes", -4, "field 'curve[1].bytes' must be positive"},
      {"/curve/2/bytes", 1 << 20, "field 'curve[2].bytes' must exceed the point before it (1048576 bytes)"},
      {"/curve/0/time_us", 0, "field 'curve[0].time_us' must be positive"},
      {"/curve/0/gbs", "fast", "field 'curve[0].gbs' must be a number"},
      {"/curve/2/gbs", 100, "field 'curve[2].gbs' (100.000) is not bytes / time_us (370.256 GB/s)"},
      {"/curve/1/bidir_gbs", -1, "field 'curve[1].bidir_gbs' must be non-negative"},
      {"/copy_engine_curve/0/bytes", nullptr, "missing field 'copy_engine_curve[0].bytes'"},
      {"/pairs/0/gpus", json::array({1, 1}), "field 'pairs[0].gpus' must be two different GPU ordinals"},
      {"/pairs/0/gbs", 0, "field 'pairs[0].gbs' must be positive"},
      {"/gpus", 3, "field 'gpus' must be an array of strings"},
      {"/topology_text", 7, "field 'topology_text' must be a string"},
  }));
  CHECK_THROWS_WITH(parse_interconnect_json(with(bad.pointer, bad.value), "link.json"),
                    Catch::StartsWith("link.json: ") && Catch::Contains(bad.message));
}

TEST_CASE("measured link: transfer_s is the old formula without a curve, the measured times with one",
          "[interconnect]") {
  InterconnectModel plain;
  plain.bandwidth = 450e9;
  plain.latency_s = 3e-6;
  for (double bytes : {0.0, 1.0, 4096.0, 67108864.0, 3e9}) {
    CHECK(plain.transfer_s(bytes) == plain.latency_s + bytes / plain.bandwidth);
    CHECK(plain.arrival_s(0.25, bytes) == 0.25 + plain.latency_s + bytes / plain.bandwidth);
  }

  const InterconnectModel m = parse(measured_json());
  for (const LinkCurvePoint& p : m.curve) CHECK(m.transfer_s(p.bytes) == Approx(p.time_s).epsilon(1e-12));
  // Below the smallest point: its time.
  CHECK(m.transfer_s(1) == Approx(10e-6));
  // Between two points: a straight line in log-log, so the geometric middle of
  // the sizes takes the geometric middle of the times.
  const double mid = std::sqrt(8.0 * (1 << 20));
  CHECK(m.transfer_s(mid) == Approx(std::sqrt(10e-6 * 13e-6)));
  CHECK(m.transfer_s(4096) > m.transfer_s(2048));
  // Beyond the largest: that point's bandwidth.
  CHECK(m.transfer_s(4.0 * (1 << 30)) == Approx(4 * 2900e-6));
  CHECK(m.arrival_s(1.0, 1 << 20) == Approx(1.0 + 13e-6));
}

TEST_CASE("measured link: presets in interconnects/measured/ are found by id, a datasheet there is refused",
          "[interconnect]") {
  TempAssets assets;
  assets.write("interconnects/nvlink4.json", to_interconnect_json(load_interconnect("nvlink4")));
  assets.write("interconnects/measured/h200.json", measured_json().dump(2));
  const std::vector<InterconnectModel> presets = read_interconnect_presets(assets.path());
  REQUIRE(presets.size() == 2);
  CHECK(presets[0].id == "measured-test-2gpu");
  CHECK(presets[0].curve.size() == 3);
  CHECK(presets[1].id == "nvlink4");

  assets.write("interconnects/measured/copy.json", with("/id", "NVLink4"));
  CHECK_THROWS_WITH(read_interconnect_presets(assets.path()), Catch::Contains("id 'NVLink4' is already the id of"));
  assets.write("interconnects/measured/copy.json", with("/kind", "datasheet"));
  CHECK_THROWS_WITH(read_interconnect_presets(assets.path()),
                    Catch::Contains("copy.json: a link in interconnects/measured/ must have \"kind\": \"measured\""));
}

TEST_CASE("measured link: the ring simulated over a measured link file takes its curve", "[interconnect][ring]") {
  TempAssets assets;
  const std::string file = assets.path() + "/interconnects/measured/h200.json";
  assets.write("interconnects/measured/h200.json", measured_json().dump(2));
  RingTopology topo;
  topo.gpus_per_node = 8;
  topo.intra = load_interconnect(file);
  topo.inter = load_interconnect("ib-ndr");
  const AttentionProblem p =
      flashlab::test::ring_problem(4, RingLayout::contiguous, 1, 8, 8, 8192, 128, false, DType::bf16, PassSelection::fwd);
  RingComputeModel cm;
  cm.hw = load_hardware("H200-SXM-141GB");
  const RingSimulation s = simulate_ring(p, topo, cm);
  int transfers = 0;
  for (const RingEvent& e : s.events)
    if (e.kind == RingEventKind::transfer) {
      // 2·B·H_kv·(N/P)·d·2 bytes = 8 MiB, between the curve's points.
      CHECK(e.bytes == 2LL * 8 * 2048 * 128 * 2);
      // Every GPU sends and receives at once: the curve's both-directions
      // time, here its one-way time over 0.9 at every point.
      CHECK(e.duration_s() == Approx(topo.intra.transfer_s(static_cast<double>(e.bytes)) / 0.9));
      CHECK(e.duration_s() != Approx(topo.intra.latency_s + e.bytes / topo.intra.bandwidth));
      ++transfers;
    }
  CHECK(transfers == 4 * 3);
}

TEST_CASE("measured link: the ring's own exchange curve over a pair's, and messages one after another",
          "[interconnect][ring]") {
  InterconnectModel l = parse(measured_json());
  const double b = 8.0 * (1 << 20);
  // A pair's curve: both directions at once.
  CHECK(l.exchange_arrival_s(1.0, b) == Approx(1.0 + l.transfer_s(b) / 0.9));
  // Four messages of a quarter each, one after another.
  CHECK(l.exchange_arrival_s(0, b, 4) == Approx(4 * l.transfer_s(b / 4) / 0.9));
  // The ring's exchange where measured: 2 MiB in 20 µs, 32 MiB in 250 µs.
  l.ring_curve = {{2.0 * (1 << 20), 20e-6, 0, 0}, {32.0 * (1 << 20), 250e-6, 0, 0}};
  for (LinkCurvePoint& x : l.ring_curve) x.bandwidth = x.bidir_bandwidth = x.bytes / x.time_s;
  // Halfway in log(bytes) from 2 to 32 MiB: the geometric mean of the times.
  CHECK(l.exchange_arrival_s(0, b) == Approx(std::sqrt(20e-6 * 250e-6)));
  CHECK(l.exchange_arrival_s(0, 2 * b, 2) == Approx(2 * std::sqrt(20e-6 * 250e-6)));
  // Beyond the ring's largest message: the pair's both-ways shape from there.
  const double big = 256.0 * (1 << 20), last = 32.0 * (1 << 20);
  CHECK(l.exchange_arrival_s(0, big) ==
        Approx(250e-6 * (l.transfer_s(big) / 0.9) / (l.transfer_s(last) / 0.9)));
  // The one-way pair curve is what transfer_s still reads.
  CHECK(l.transfer_s(b) == Approx(parse(measured_json()).transfer_s(b)));
  // Written and read again, the ring's curve stays.
  const InterconnectModel back = parse_interconnect_json(to_interconnect_json(l), "again.json");
  REQUIRE(back.ring_curve.size() == 2);
  CHECK(back.ring_curve[1].time_s == Approx(250e-6));
  CHECK(back.exchange_arrival_s(0, b) == Approx(l.exchange_arrival_s(0, b)));
}
