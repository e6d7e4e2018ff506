// Ring runs as data: the file round trip and its errors, the CSV and the
// table (the convention's TFLOP/s per GPU, the scaling efficiency paired with
// the P = 1 run), and a run placed beside the simulation.
#include <catch2/catch.hpp>

#include <cmath>
#include <filesystem>
#include <map>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/ring/ring_extrapolation.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/analysis/model/roofline.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/memory/simulate.hpp"
#include "../support/problems.hpp"
#include "../support/text_checks.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using sim::Pass;

namespace fs = std::filesystem;

namespace {

sim::AttentionProblem ring_problem(int P, bool backward = false) {
  return flashlab::test::ring_problem(P, sim::RingLayout::zigzag, 1, 24, 8, 16384, 128, true, sim::DType::bf16,
                                      backward ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd);
}

sim::PassTimes times(double ms) {
  sim::PassTimes t;
  t.time_ms_median = ms;
  t.time_ms_min = 0.9 * ms;
  t.time_ms_max = 1.1 * ms;
  t.repeats = 10;
  return t;
}

sim::PassTimeline timeline(double ms) {
  sim::PassTimeline m;
  m.compute_ms = 0.8 * ms;
  m.comm_ms = 0.25 * ms;
  m.exposed_comm_ms = 0.05 * ms;
  return m;
}

void timed(sim::MeasuredRun& run, Pass pass, double ms) { sim::set_pass(run, pass, times(ms), timeline(ms)); }

sim::MeasuredRuns example_runs() {
  sim::MeasuredRuns r;
  r.meta.gpu = "NVIDIA H100 80GB HBM3";
  r.meta.driver = "580.1";
  r.meta.commit = "abc123";
  r.meta.sm_count = 132;
  r.meta.sm_clock_mhz = 1980;
  r.meta.parallel_part().gpu_count = 2;
  r.meta.parallel_part().gpu_names = {"NVIDIA H100 80GB HBM3", "NVIDIA H100 80GB HBM3"};
  r.meta.parallel_part().nccl_version = "2.28.9";
  r.meta.parallel_part().topology = "GPU0 NV18";
  r.meta.parallel_part().environment = {"NCCL_P2P_LEVEL=NVL"};

  sim::MeasuredRun one;
  one.problem = ring_problem(1, true);
  one.kernel = "fa3_hopper";
  one.parallel_part().backward_kernel = "fa2_tc_bwd";
  one.parallel_part().transport = "nccl";
  timed(one, Pass::fwd, 10.0);
  timed(one, Pass::bwd, 40.0);
  one.parallel_part().peak_allocated_bytes = {1000};
  one.parallel_part().peak_device_used_bytes = {2000};
  one.rel_error = 1.5e-3;
  one.parallel_part().rel_error_grads = 4e-3;
  one.parallel_part().check_note = "heads 0 and 23, 64 rows";
  r.runs.push_back(one);

  sim::MeasuredRun two = one;
  two.problem = ring_problem(2, true);
  timed(two, Pass::fwd, 6.25);
  timed(two, Pass::bwd, 25.0);
  two.parallel_part().peak_allocated_bytes = {600, 640};
  two.parallel_part().peak_device_used_bytes = {900, 950};
  two.rel_error = std::nan("");
  sim::MeasuredStep st;
  st.gpu = 1;
  st.step = 0;
  st.pass = Pass::fwd;
  st.kv_owner = 1;
  st.compute_start_ms = 0.01;
  st.compute_end_ms = 2.5;
  st.wait_ms = 0;
  st.transfer_start_ms = 0.01;
  st.transfer_end_ms = 0.4;
  st.bytes_received = 33554432;
  two.parallel_part().forward.steps.push_back(st);
  st.pass = Pass::bwd;
  st.step = 2;  // the homecoming
  st.compute_start_ms = st.compute_end_ms = 9.0;
  two.parallel_part().backward->timeline.steps.push_back(st);
  r.runs.push_back(two);

  sim::MeasuredRun skipped;
  skipped.problem = ring_problem(4);
  skipped.kernel = "fa3_hopper";
  skipped.status = sim::RunStatus::skipped;
  skipped.reason = "4 GPUs asked, 2 present";
  r.runs.push_back(skipped);
  return r;
}

// The text of a CSV column in a row.
std::map<std::string, std::string> csv_record(const std::vector<std::string>& header,
                                              const std::vector<std::string>& row) {
  std::map<std::string, std::string> m;
  for (std::size_t k = 0; k < header.size() && k < row.size(); ++k) m[header[k]] = row[k];
  return m;
}

std::vector<std::vector<std::string>> csv_body(const std::string& text) {
  std::string body;
  std::size_t pos = 0;
  while (pos < text.size() && text[pos] == '#') pos = text.find('\n', pos) + 1;
  return csv_parse(text.substr(pos));
}

sim::RingComputeModel h200_ring(double efficiency = 1.0) {
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H200-SXM-141GB");
  cm.efficiency = efficiency;
  return cm;
}

// A measured run that did exactly what the simulation says (every step).
sim::MeasuredRun measured_as_simulated(const sim::RingSimulation& s) {
  sim::MeasuredRun run;
  run.problem = s.problem;
  run.kernel = "fa3_hopper";
  run.parallel_part().transport = "nccl";
  const int P = s.problem.gpus();
  for (Pass pass : {Pass::fwd, Pass::bwd}) {
    if (pass == Pass::bwd && !s.backward) continue;
    const sim::RingPassResult& r = s.pass(pass);
    sim::PassTimeline m = timeline(r.time_s * 1e3);
    m.compute_ms = r.compute_s * 1e3;
    m.comm_ms = r.comm_s * 1e3;
    m.exposed_comm_ms = r.exposed_comm_s * 1e3;
    const int steps = pass == Pass::bwd && P > 1 ? P + 1 : P;
    std::map<std::pair<int, int>, sim::MeasuredStep> grid;
    for (int g = 0; g < P; ++g)
      for (int k = 0; k < steps; ++k) {
        sim::MeasuredStep& x = grid[{g, k}];
        x.gpu = g;
        x.step = k;
        x.pass = pass;
        x.kv_owner = k < P ? sim::ring_kv_source(g, k, P) : g;
        x.transfer_start_ms = 1e30;
        x.transfer_end_ms = -1;
      }
    for (const sim::RingEvent& e : s.events) {
      if (e.pass != pass) continue;
      if (e.kind == sim::RingEventKind::compute) {
        grid[{e.gpu, e.step}].compute_start_ms = (e.start_s - r.start_s) * 1e3;
        grid[{e.gpu, e.step}].compute_end_ms = (e.end_s - r.start_s) * 1e3;
      } else if (e.kind == sim::RingEventKind::transfer) {
        for (int g : {e.gpu, e.peer}) {
          sim::MeasuredStep& x = grid[{g, e.step}];
          x.transfer_start_ms = std::min(x.transfer_start_ms, (e.start_s - r.start_s) * 1e3);
          x.transfer_end_ms = std::max(x.transfer_end_ms, (e.end_s - r.start_s) * 1e3);
        }
      }
    }
    for (auto& [key, x] : grid) {
      if (x.transfer_end_ms < 0) x.transfer_start_ms = -1;
      m.steps.push_back(x);
    }
    sim::set_pass(run, pass, times(r.time_s * 1e3), m);
  }
  return run;
}

}  // namespace

TEST_CASE("ring results: JSON round trip keeps every field", "[ring][results]") {
  sim::MeasuredRuns r = example_runs();
  r.meta.parallel_part().host.call_s = 0.37e-6;
  r.meta.parallel_part().host.launch_s = 6.42e-6;
  r.meta.parallel_part().host.exchange_s = 30.7e-6;
  r.meta.parallel_part().host.gpus = 2;
  r.meta.parallel_part().host.source = "measured on 2× NVIDIA H200, 2026-11-27, one host thread, medians of 15 rounds";
  r.meta.parallel_part().host.exchange_sms = 16;
  r.meta.parallel_part().ring_exchange = {{65536, 23.6e-6, 65536 / 23.6e-6, 65536 / 23.6e-6},
                          {67108864, 437e-6, 67108864 / 437e-6, 67108864 / 437e-6}};
  r.runs[1].parallel_part().forward.warmup = 2;
  r.runs[1].parallel_part().forward.steps[0].host_start_ms = 0.034;
  r.runs[1].parallel_part().forward.steps[0].host_end_ms = 0.058;
  const sim::MeasuredRuns back = ring_results_from_json(ring_results_to_json(r), "runs.json");
  CHECK(back.runs[1].parallel_part().forward.warmup == 2);
  CHECK(back.runs[1].parallel_part().forward.steps[0].host_start_ms == Approx(0.034));
  CHECK(back.runs[1].parallel_part().forward.steps[0].host_end_ms == Approx(0.058));
  CHECK(back.runs[1].parallel_part().backward->timeline.warmup == -1);               // not recorded
  CHECK(back.runs[1].parallel_part().backward->timeline.steps[0].host_start_ms == -1);
  // A negative count of warm-ups is refused, naming the field.
  nlohmann::json bad = nlohmann::json::parse(ring_results_to_json(r));
  bad["runs"][1]["forward"]["warmup"] = -3;
  CHECK_THROWS_WITH(ring_results_from_json(bad.dump(), "bad.json"), Catch::Contains("warmup") && Catch::Contains("-3"));
  CHECK(back.meta.parallel_part().host.exchange_sms == 16);
  REQUIRE(back.meta.parallel_part().ring_exchange.size() == 2);
  CHECK(back.meta.parallel_part().ring_exchange[1].bytes == 67108864);
  CHECK(back.meta.parallel_part().ring_exchange[1].time_s == Approx(437e-6));
  CHECK(back.meta.parallel_part().host.call_s == Approx(0.37e-6));
  CHECK(back.meta.parallel_part().host.launch_s == Approx(6.42e-6));
  CHECK(back.meta.parallel_part().host.exchange_s == Approx(30.7e-6));
  CHECK(back.meta.parallel_part().host.gpus == 2);
  CHECK(back.meta.parallel_part().host.source == r.meta.parallel_part().host.source);
  // A file without it (every file before the sweep measured its host) has none.
  CHECK_FALSE(ring_results_from_json(ring_results_to_json(example_runs()), "old.json").meta.parallel_part().host.measured());
  CHECK(ring_results_from_json(ring_results_to_json(example_runs()), "old.json").meta.parallel_part().ring_exchange.empty());
  CHECK(back.meta.gpu == r.meta.gpu);
  CHECK(back.meta.commit == "abc123");
  CHECK(back.meta.sm_count == 132);
  CHECK(back.meta.sm_clock_mhz == 1980);
  CHECK(back.meta.parallel_part().gpu_count == 2);
  CHECK(back.meta.parallel_part().gpu_names == r.meta.parallel_part().gpu_names);
  CHECK(back.meta.parallel_part().nccl_version == "2.28.9");
  CHECK(back.meta.parallel_part().topology == r.meta.parallel_part().topology);
  CHECK(back.meta.parallel_part().environment == r.meta.parallel_part().environment);
  REQUIRE(back.runs.size() == 3);
  const sim::MeasuredRun& a = r.runs[1];
  const sim::MeasuredRun& b = back.runs[1];
  CHECK(b.problem.gpus() == 2);
  CHECK(b.problem.heads == 24);
  CHECK(b.problem.h_kv() == 8);
  CHECK(b.problem.seq_q == 16384);
  CHECK(b.problem.layout() == sim::RingLayout::zigzag);
  CHECK(b.problem.causal);
  CHECK(b.problem.backward());
  CHECK(b.problem.dtype == sim::DType::bf16);
  CHECK(b.kernel == "fa3_hopper");
  CHECK(b.parallel_part().backward_kernel == "fa2_tc_bwd");
  CHECK(b.parallel_part().transport == "nccl");
  CHECK(b.parallel_part().comm_stream == "priority");
  CHECK(b.time_ms_median == a.time_ms_median);
  CHECK(b.time_ms_min == a.time_ms_min);
  CHECK(b.parallel_part().forward.exposed_comm_ms == a.parallel_part().forward.exposed_comm_ms);
  REQUIRE(b.parallel_part().backward);
  CHECK(b.parallel_part().backward->time_ms_median == 25.0);
  REQUIRE(b.parallel_part().forward.steps.size() == 1);
  CHECK(b.parallel_part().forward.steps[0].gpu == 1);
  CHECK(b.parallel_part().forward.steps[0].pass == Pass::fwd);
  CHECK(b.parallel_part().forward.steps[0].compute_end_ms == 2.5);
  CHECK(b.parallel_part().forward.steps[0].transfer_end_ms == 0.4);
  CHECK(b.parallel_part().forward.steps[0].bytes_received == 33554432);
  REQUIRE(b.parallel_part().backward->timeline.steps.size() == 1);
  CHECK(b.parallel_part().backward->timeline.steps[0].step == 2);
  CHECK(b.parallel_part().backward->timeline.steps[0].pass == Pass::bwd);
  CHECK(b.parallel_part().peak_allocated_bytes == a.parallel_part().peak_allocated_bytes);
  CHECK(b.parallel_part().peak_device_used_bytes == a.parallel_part().peak_device_used_bytes);
  CHECK(std::isnan(b.rel_error));
  CHECK(b.parallel_part().rel_error_grads == a.parallel_part().rel_error_grads);
  CHECK(back.runs[0].parallel_part().check_note == "heads 0 and 23, 64 rows");
  CHECK(back.runs[2].status == sim::RunStatus::skipped);
  CHECK(back.runs[2].reason == "4 GPUs asked, 2 present");
  CHECK_FALSE(back.runs[2].parallel_part().backward);
  // Written again, the same text.
  CHECK(ring_results_to_json(back) == ring_results_to_json(r));
  // A file from before the runner chose its exchange's stream: the default one.
  nlohmann::json old = nlohmann::json::parse(ring_results_to_json(r));
  old["runs"][1].erase("comm_stream");
  CHECK(ring_results_from_json(old.dump(), "old.json").runs[1].parallel_part().comm_stream == "default");
}

TEST_CASE("ring results: the topology's fields derive from its text, in new files and older ones alike",
          "[ring][results]") {
  sim::MeasuredRuns r = example_runs();
  r.meta.parallel_part().topology = "\tGPU0\tGPU1\tCPU Affinity\nGPU0\t X \tNV18\t0-47\nGPU1\tNV18\t X \t48-95\n";
  const std::string text = ring_results_to_json(r);
  const nlohmann::json j = nlohmann::json::parse(text);
  CHECK(j["meta"]["gpu_topology"]["summary"] == "NVLink, 18 links between every pair");
  CHECK(j["meta"]["gpu_topology"]["links"][1][0] == "NV18");
  const sim::MeasuredRuns back = ring_results_from_json(text, "runs.json");
  CHECK(back.meta.parallel_part().gpu_topology.gpu_count == 2);
  CHECK(back.meta.parallel_part().gpu_topology.gpus_per_node == 2);
  CHECK(back.meta.parallel_part().gpu_topology.link(0, 1) == "NV18");

  // A file written before the field existed gains it from its text; a stale
  // field is not trusted over the text.
  nlohmann::json older = j;
  older["meta"].erase("gpu_topology");
  CHECK(ring_results_from_json(older.dump(), "old.json").meta.parallel_part().gpu_topology.summary ==
        "NVLink, 18 links between every pair");
  nlohmann::json stale = j;
  stale["meta"]["gpu_topology"]["summary"] = "PCIe";
  CHECK(ring_results_from_json(stale.dump(), "stale.json").meta.parallel_part().gpu_topology.summary ==
        "NVLink, 18 links between every pair");
  // A text that is no matrix: no fields, and the reason.
  CHECK_FALSE(ring_results_from_json(ring_results_to_json(example_runs()), "x.json").meta.parallel_part().gpu_topology.problem.empty());
}

TEST_CASE("ring results: a malformed file names the file and the field", "[ring][results]") {
  const std::string good = ring_results_to_json(example_runs());
  auto edit = [&](const std::function<void(nlohmann::json&)>& f) {
    nlohmann::json j = nlohmann::json::parse(good);
    f(j);
    return j.dump();
  };
  auto error_of = [](const std::string& text) -> std::string {
    try {
      ring_results_from_json(text, "runs.json");
    } catch (const std::runtime_error& e) {
      return e.what();
    }
    return "no error";
  };
  CHECK_THAT(error_of("{not json"), Catch::StartsWith("runs.json: not valid JSON"));
  CHECK(error_of("[1, 2]") == "runs.json: top level: expected an object");
  CHECK(error_of(edit([](auto& j) { j["format"] = "flashlab-bench/1"; })) ==
        "runs.json: format: expected \"flashlab-ring-results/1\" (got \"flashlab-bench/1\")");
  CHECK(error_of(edit([](auto& j) { j.erase("runs"); })) == "runs.json: runs: missing");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["problem"].erase("seq"); })) == "runs.json: runs[1].problem.seq: missing");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["problem"]["seq"] = "16K"; })) ==
        "runs.json: runs[1].problem.seq: expected a whole number (got \"16K\")");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["problem"]["kv_heads"] = 7; })) ==
        "runs.json: runs[1].problem: H = 24 is not a multiple of H_kv = 7 (each key/value head serves H / H_kv query "
        "heads)");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["problem"]["layout"] = "spiral"; })) ==
        "runs.json: runs[1].problem.layout: unknown layout 'spiral' (expected " + sim::ring_layout_names() + ")");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["forward"]["steps"][0]["gpu"] = 2; })) ==
        "runs.json: runs[1].forward.steps[0].gpu: 2 is outside 0..1");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["forward"]["time_ms_median"] = "fast"; })) ==
        "runs.json: runs[1].forward.time_ms_median: expected a number (got \"fast\")");
  CHECK(error_of(edit([](auto& j) { j["runs"][0]["status"] = "great"; })) ==
        "runs.json: runs[0].status: unknown status 'great' (expected ok, OOM, skipped, failed)");
  CHECK(error_of(edit([](auto& j) { j["runs"][1].erase("backward"); })) ==
        "runs.json: runs[1].backward: missing (the problem has a backward pass and the run is ok)");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["peak_allocated_bytes"] = {1, 2, 3}; })) ==
        "runs.json: runs[1].peak_allocated_bytes: has 3 entries for 2 GPUs");
  CHECK_THAT(error_of(edit([](auto& j) { j["meta"]["ring_exchange"] = "fast"; })),
             Catch::StartsWith("runs.json: meta: field 'ring_exchange' must be a non-empty list"));
  CHECK_THAT(error_of(edit([](auto& j) {
               j["meta"]["ring_exchange"] = {{{"bytes", 1024}, {"time_us", 0}, {"gbs", 1}, {"bidir_gbs", 1}}};
             })),
             Catch::StartsWith("runs.json: meta: field 'ring_exchange[0].time_us' must be positive"));
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["comm_stream"] = "urgent"; })) ==
        "runs.json: runs[1].comm_stream: expected \"priority\" or \"default\" (got \"urgent\")");
  CHECK(error_of(edit([](auto& j) { j["runs"][1]["kernel"] = 3; })) ==
        "runs.json: runs[1].kernel: expected a string (got 3)");
  // A skipped run needs no times.
  CHECK(error_of(edit([](auto& j) { j["runs"][2].erase("forward"); })) == "no error");
  CHECK_THROWS_WITH(ring_results_from_file("/no/such/ring.json"), "/no/such/ring.json: cannot open for reading");
}

TEST_CASE("ring results: CSV columns, the convention's TFLOP/s per GPU, scaling against the P = 1 run",
          "[ring][results]") {
  const sim::MeasuredRuns r = example_runs();
  const auto body = csv_body(ring_results_csv(r));
  REQUIRE(!body.empty());
  const std::vector<std::string> header = body.front();
  CHECK(header == ring_csv_header());
  const std::vector<std::string> first{"model", "batch", "heads", "kv_heads", "seq", "head_dim", "gpus", "layout",
                                       "causal", "dtype", "pass", "time_ms", "comm_ms", "exposed_comm_ms", "overlap",
                                       "tflops_per_gpu", "peak_allocated_bytes_per_gpu", "scaling_efficiency",
                                       "status", "reason"};
  CHECK(std::vector<std::string>(header.begin(), header.begin() + static_cast<long>(first.size())) == first);
  // Two passes of two runs and the skipped run's forward.
  REQUIRE(body.size() == 1 + 5);
  const auto fwd2 = csv_record(header, body[3]);
  const auto bwd2 = csv_record(header, body[4]);
  CHECK(fwd2.at("model") == "llama3.2-3b");
  CHECK(fwd2.at("gpus") == "2");
  CHECK(fwd2.at("pass") == "fwd");
  CHECK(bwd2.at("pass") == "bwd");
  const double N = 16384, pairs = N * (N + 1) / 2;
  const double fwd_tflops = 4 * 1 * 24 * pairs * 128 / 6.25e-3 / 2 * 1e-12;
  CHECK(std::stod(fwd2.at("tflops_per_gpu")) == Approx(fwd_tflops).epsilon(1e-12));
  CHECK(std::stod(bwd2.at("tflops_per_gpu")) == Approx(2.5 * 4 * 24 * pairs * 128 / 25e-3 / 2 * 1e-12).epsilon(1e-12));
  CHECK(std::stod(fwd2.at("scaling_efficiency")) == Approx(10.0 / (2 * 6.25)));
  CHECK(std::stod(bwd2.at("scaling_efficiency")) == Approx(40.0 / (2 * 25.0)));
  CHECK(std::stod(fwd2.at("overlap")) == Approx(1 - 0.05 / 0.25));
  CHECK(fwd2.at("peak_allocated_bytes_per_gpu") == "640");
  const auto fwd1 = csv_record(header, body[1]);
  CHECK(std::stod(fwd1.at("scaling_efficiency")) == Approx(1.0));
  const auto skipped = csv_record(header, body[5]);
  CHECK(skipped.at("status") == "skipped");
  CHECK(skipped.at("reason") == "4 GPUs asked, 2 present");
  CHECK(skipped.at("time_ms").empty());
  CHECK(skipped.at("scaling_efficiency").empty());

  // Without the P = 1 run of the same attention, no scaling efficiency.
  sim::MeasuredRuns other = r;
  other.runs[0].problem.seq_q = 8192;
  const auto rows = ring_rows(other);
  CHECK_FALSE(rows[2].scaling_efficiency);
  CHECK_FALSE(rows[3].scaling_efficiency);
  // ... nor from a P = 1 run that failed.
  other = r;
  other.runs[0].status = sim::RunStatus::failed;
  CHECK_FALSE(ring_rows(other)[2].scaling_efficiency);

  // Two one-GPU runs of the attention: the fused one is the baseline (the
  // rung at its best), wherever it stands in the file.
  other = r;
  other.runs[0].parallel_part().steps = "pairwise";
  sim::MeasuredRun fused_one = r.runs[0];
  fused_one.parallel_part().steps = "fused";
  fused_one.time_ms_median = 8.0;
  other.runs.push_back(fused_one);
  const auto with_fused = ring_rows(other);
  REQUIRE(with_fused[2].scaling_efficiency);
  CHECK(*with_fused[2].scaling_efficiency == Approx(8.0 / (2 * 6.25)));
  CHECK(ring_single_gpu_run(other, other.runs[1].problem, sim::Pass::fwd) == &other.runs.back());
}

TEST_CASE("ring results: the table names the model, marks what has no P = 1 run", "[ring][results]") {
  sim::MeasuredRuns r = example_runs();
  const std::string t = ring_table(r);
  flashlab::test::check_contains_each(t, {
      "llama3.2-3b",
      "TFLOP/s/GPU",
      "80%",  // 10 / (2 × 6.25)
      "skipped: 4 GPUs asked, 2 present",
  });
  CHECK(ring_model_id(r.runs[0].problem) == "llama3.2-3b");
  sim::AttentionProblem p = r.runs[0].problem;
  p.heads = p.kv_heads = 32;
  CHECK(ring_model_id(p) == "llama2-7b");
  p.head_dim = 64;
  CHECK(ring_model_id(p).empty());
  p.kv_heads = 8;
  CHECK(ring_model_id(p) == "llama3.2-1b");
}

TEST_CASE("ring block bound: the roofline bound of the single-GPU simulator's counts", "[ring][results]") {
  const sim::RingComputeModel cm = h200_ring();
  const sim::AttentionProblem p = ring_problem(4, true);
  for (const auto& [n_q, n_kv, vis] : {std::tuple{2048L, 2048L, sim::ChunkVisibility::full},
                                       std::tuple{2048L, 2047L, sim::ChunkVisibility::full},
                                       std::tuple{2047L, 2047L, sim::ChunkVisibility::diagonal}})
    for (Pass pass : {Pass::fwd, Pass::bwd}) {
      sim::AttentionProblem ap;
      ap.batch = p.batch;
      ap.heads = p.heads;
      ap.seq_q = n_q;
      ap.seq_kv = n_kv;
      ap.head_dim = p.head_dim;
      ap.causal = vis == sim::ChunkVisibility::diagonal;
      ap.dtype = p.dtype;
      sim::SimOptions opt;
      opt.l2 = false;
      const sim::SimResult r =
          sim::simulate(pass == Pass::fwd ? sim::Algorithm::fa2 : sim::Algorithm::fa2_bwd, ap, cm.hw, opt);
      const RooflineEstimate roof = roofline(r, cm.hw);
      const sim::RingBlockCost c = sim::ring_block_cost(p, n_q, n_kv, vis, pass, cm);
      CHECK(c.bound_s == Approx(roof.time_s).epsilon(1e-12));
      CHECK(c.bound_s == Approx(time_lower_bound_s(c.flops, c.hbm_bytes, roof.peak_flops, roof.bandwidth)));
    }
}

TEST_CASE("ring placement: a run that did what the model says places with no error", "[ring][placement]") {
  const sim::RingTopology topo = sim::default_ring_topology();
  const sim::RingComputeModel cm = h200_ring();
  const sim::AttentionProblem p = ring_problem(4, true);
  const sim::RingSimulation s = sim::simulate_ring(p, topo, cm);
  sim::MeasuredRun run = measured_as_simulated(s);
  const RingPlacement pl = place_ring_run(run, topo, cm);
  REQUIRE(pl.passes.size() == 2);
  for (const RingPassPlacement& pp : pl.passes) {
    CHECK(pp.time_error == Approx(0).margin(1e-9));
    CHECK(pp.comm_error == Approx(0).margin(1e-9));
    CHECK(pp.steps.size() == (pp.pass == Pass::fwd ? 16u : 20u));
    for (const RingStepPlacement& x : pp.steps) {
      CAPTURE(x.gpu, x.step);
      if (x.step < 4) CHECK(x.predicted_compute_ms == Approx(x.measured_compute_ms).margin(1e-9));
      if (std::isfinite(x.measured_transfer_ms)) CHECK(x.transfer_error == Approx(0).margin(1e-9));
      else CHECK(std::isnan(x.predicted_transfer_ms));
    }
  }
  // The homecoming is placed as a step of its own, transfer only.
  const RingStepPlacement& home = pl.passes[1].steps[4];
  CHECK(home.step == 4);
  CHECK(std::isfinite(home.predicted_transfer_ms));
  CHECK(std::isnan(home.predicted_compute_ms));

  // One step measured 25% slower: its error, and only its.
  run.parallel_part().forward.steps[5].compute_end_ms =
      run.parallel_part().forward.steps[5].compute_start_ms + 1.25 * (run.parallel_part().forward.steps[5].compute_end_ms - run.parallel_part().forward.steps[5].compute_start_ms);
  const RingPlacement slow = place_ring_run(run, topo, cm);
  const RingStepPlacement& x = slow.passes[0].steps[5];
  CHECK(x.compute_error == Approx(1 / 1.25 - 1));
  CHECK(slow.passes[0].steps[4].compute_error == Approx(0).margin(1e-9));
  CHECK_THAT(ring_placement_text(slow), Catch::Contains("-20.0%"));

  sim::MeasuredRun failed = run;
  failed.status = sim::RunStatus::oom;
  failed.reason = "out of memory";
  CHECK_THROWS_WITH(place_ring_run(failed, topo, cm), Catch::Contains("the run is OOM: out of memory"));
}

TEST_CASE("ring placement: the efficiency calibrated from the P = 1 run of the same attention", "[ring][placement]") {
  const sim::RingTopology topo = sim::default_ring_topology();
  const sim::RingComputeModel cm = h200_ring();
  sim::AttentionProblem one = ring_problem(1, true);
  const sim::RingSimulation bound = sim::simulate_ring(one, topo, cm);
  sim::MeasuredRuns runs;
  sim::MeasuredRun r1 = measured_as_simulated(bound);
  r1.time_ms_median = 2 * bound.forward.time_s * 1e3;     // half the bound's rate
  r1.parallel_part().backward->time_ms_median = 4 * bound.backward->time_s * 1e3;  // a quarter
  runs.runs.push_back(r1);
  runs.runs.push_back(measured_as_simulated(sim::simulate_ring(ring_problem(4, true), topo, cm)));
  const RingCalibration c = calibrate_ring_efficiency(runs, runs.runs[1].problem, topo, cm);
  CHECK(c.from_single_gpu_run);
  CHECK(c.forward == Approx(0.5));
  REQUIRE(c.backward);
  CHECK(*c.backward == Approx(0.25));
  CHECK_THAT(c.note, Catch::Contains("calibrated from the P = 1 run"));
  const RingPlacement pl = place_ring_run(runs, 1, topo, cm);
  CHECK(pl.simulation.forward.compute_s == Approx(2 * sim::simulate_ring(ring_problem(4, true), topo, cm).forward.compute_s));
  CHECK_THAT(ring_placement_text(pl), Catch::Contains("calibrated from the P = 1 run"));

  // Faster than the bound: capped at 1, and said.
  runs.runs[0].time_ms_median = 0.5 * bound.forward.time_s * 1e3;
  const RingCalibration fast = calibrate_ring_efficiency(runs, runs.runs[1].problem, topo, cm);
  CHECK(fast.forward == 1.0);
  CHECK_THAT(fast.note, Catch::Contains("capped at 1"));

  // No P = 1 run: the efficiency as given, and said.
  runs.runs.erase(runs.runs.begin());
  const RingCalibration given = calibrate_ring_efficiency(runs, runs.runs[0].problem, topo, h200_ring(0.7));
  CHECK_FALSE(given.from_single_gpu_run);
  CHECK(given.forward == 0.7);
  CHECK_THAT(given.note, Catch::Contains("as given: no P = 1 run"));
}

TEST_CASE("ring extrapolation: rows per shape and N, the first P whose communication is exposed", "[ring]") {
  const sim::RingTopology topo = sim::default_ring_topology();
  const sim::RingComputeModel cm = h200_ring();
  sim::AttentionProblem p = ring_problem(1, true);
  const RingExtrapolation x = extrapolate_ring({{"llama3.2-3b", p}}, default_extrapolation_seqs(),
                                               default_extrapolation_gpus(), topo, cm);
  REQUIRE(x.rows.size() == 5);
  for (const RingScaleRow& r : x.rows) {
    REQUIRE(r.points.size() == 6);
    CHECK(r.points.front().scaling_efficiency == Approx(1.0).epsilon(0.05));  // zig-zag on one GPU: three blocks
    CHECK(r.points.back().gpus == 32);
    CHECK(r.points.back().nodes == 4);
    // The first exposed point is the first not hidden, and every earlier one is.
    if (r.first_exposed_gpus) {
      for (const RingScalePoint& pt : r.points) {
        if (pt.gpus == *r.first_exposed_gpus) {
          CHECK_FALSE(pt.hidden());
          break;
        }
        CHECK(pt.hidden());
      }
    }
  }
  // Short sequences over InfiniBand cannot hide their transfers.
  CHECK(x.rows.front().first_exposed_gpus.value_or(64) <= 16);
  const std::string table = ring_extrapolation_table(x);
  CHECK_THAT(table, Catch::Contains("P=32 (4 nodes)"));
  CHECK_THAT(table, Catch::Contains("128K"));
  const auto body = csv_parse(ring_extrapolation_csv(x));
  CHECK(body.front() == ring_extrapolation_csv_header());
  CHECK(body.size() == 1 + 5 * 6);
}

TEST_CASE("ring placement: the prediction takes the run's steps (pairwise: the homecoming in fp32)", "[ring][placement]") {
  const sim::RingTopology topo = sim::default_ring_topology();
  sim::RingComputeModel cm = h200_ring();
  cm.steps = sim::RingSteps::fused;  // what the caller gives; the run's own steps win
  const sim::AttentionProblem p = ring_problem(2, true);
  sim::MeasuredRun run = measured_as_simulated(sim::simulate_ring(p, topo, cm));
  run.parallel_part().steps = "pairwise";
  sim::RingComputeModel pairwise = cm;
  pairwise.steps = sim::RingSteps::pairwise;
  const sim::RingSimulation expected = sim::simulate_ring(p, topo, pairwise);
  const RingPlacement pl = place_ring_run(run, topo, cm);
  CHECK(pl.simulation.peak_bytes_per_gpu == expected.peak_bytes_per_gpu);
  CHECK(pl.simulation.time_s == expected.time_s);
  REQUIRE(pl.passes.size() == 2);
  const RingStepPlacement& home = pl.passes[1].steps[2];  // GPU 0's homecoming (steps 0, 1, home)
  REQUIRE(home.step == 2);
  run.parallel_part().steps = "fused";
  const RingStepPlacement& fused_home = place_ring_run(run, topo, cm).passes[1].steps[2];
  CHECK(home.predicted_transfer_ms > fused_home.predicted_transfer_ms);  // dK, dV home in fp32, not bf16
}

TEST_CASE("ring placement: transfers and stalls as the runner's events see them, the peer's matching call included",
          "[ring][placement]") {
  // 2 H200s, LLaMA-2-7B at 128K tokens laid out contiguously under the causal
  // mask: GPU 0's last backward step is short, and its own dK, dV come home
  // only when GPU 1 has done its long one. Its comm stream posted the
  // homecoming long before: that span, and the compute stream's stall on it,
  // are what the events measure (about 635 and 641 ms).
  const fs::path file = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "ring" /
                        "h200x2-ring-models-again.json";
  const sim::MeasuredRuns runs = ring_results_from_file(file.string());
  const RingFileModel m = ring_file_model(runs);
  const RingScore score = score_ring_file(runs, m);
  // Every transfer span and stall of the file, scored like with like.
  CHECK(score.comm.count == 60);
  CHECK(score.comm.mean_abs < 0.3);
  CHECK(std::abs(score.exposed_ms.worst) < 25.0);
  // The run itself: the contiguous 128K problem on two GPUs.
  std::size_t index = runs.runs.size();
  for (std::size_t i = 0; i < runs.runs.size(); ++i) {
    const sim::MeasuredRun& r = runs.runs[i];
    if (r.problem.gpus() == 2 && r.problem.seq_q == 131072 && r.problem.head_dim == 128 && r.problem.h_kv() == 32 && r.parallel_part().backward &&
        r.problem.layout() == sim::RingLayout::contiguous)
      index = i;
  }
  REQUIRE(index < runs.runs.size());
  const RingPlacement pl = place_ring_run(runs, index, m.topology, m.compute, m.rungs ? &*m.rungs : nullptr);
  const RingPassPlacement* bwd = nullptr;
  for (const RingPassPlacement& pp : pl.passes)
    if (pp.pass == sim::Pass::bwd) bwd = &pp;
  REQUIRE(bwd != nullptr);
  CHECK(bwd->measured_exposed_ms > 600);
  CHECK(bwd->predicted_exposed_ms == Approx(bwd->measured_exposed_ms).epsilon(0.05));
  CHECK(bwd->predicted_comm_ms == Approx(bwd->measured_comm_ms).epsilon(0.05));
  for (const RingStepPlacement& x : bwd->steps)
    if (x.gpu == 0 && x.step == 2) {
      CHECK(x.measured_transfer_ms > 600);
      CHECK(x.predicted_transfer_ms == Approx(x.measured_transfer_ms).epsilon(0.05));
    }
}

TEST_CASE("ring placement: a file's own host, measured in its call, over a preset's of another machine",
          "[ring][placement]") {
  const fs::path file = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "ring" /
                        "h200x2-ring-models-again.json";
  sim::MeasuredRuns runs = ring_results_from_file(file.string());
  REQUIRE_FALSE(runs.meta.parallel_part().host.measured());
  // Without its own: the latest measured link's host of 2 H200s (23.7 µs an exchange).
  const double latest = sim::load_interconnect("measured-nvidia-h200-2gpu-2026-11-27-2").host.exchange_s;
  CHECK(latest == Approx(23.7e-6).epsilon(0.01));
  const RingFileModel preset = ring_file_model(runs);
  REQUIRE(preset.topology.intra.host.measured());
  CHECK(preset.topology.intra.host.exchange_s == Approx(latest));
  // With its own, that one; unless asked not to.
  runs.meta.parallel_part().host.call_s = 0.37e-6;
  runs.meta.parallel_part().host.launch_s = 6.42e-6;
  runs.meta.parallel_part().host.exchange_s = 30.7e-6;
  runs.meta.parallel_part().host.gpus = 2;
  runs.meta.parallel_part().host.source = "measured in the same call";
  runs.meta.parallel_part().ring_exchange = {{65536, 20e-6, 65536 / 20e-6, 65536 / 20e-6}};
  const RingFileModel own = ring_file_model(runs);
  CHECK(own.topology.intra.host.exchange_s == Approx(30.7e-6));
  // Its ring's exchange too, over the preset's.
  REQUIRE(own.topology.intra.ring_curve.size() == 1);
  CHECK(own.topology.intra.ring_curve[0].time_s == 20e-6);
  CHECK(preset.topology.intra.ring_curve.size() > 1);
  // And the placement says whose exchange it used.
  std::size_t ring_run = 0;
  while (ring_run < runs.runs.size() && runs.runs[ring_run].problem.gpus() < 2) ++ring_run;
  REQUIRE(ring_run < runs.runs.size());
  const RingPlacement placed = place_ring_run(runs, ring_run, own.topology, own.compute, own.rungs ? &*own.rungs : nullptr);
  CHECK_THAT(placed.calibration.note, Catch::Contains("the ring's exchange: the file's own"));
  const RingPlacement by_preset =
      place_ring_run(runs, ring_run, preset.topology, preset.compute, preset.rungs ? &*preset.rungs : nullptr);
  CHECK_THAT(by_preset.calibration.note, Catch::Contains("the ring's exchange: measured with measured-nvidia-h200-2gpu"));
  CHECK_THAT(own.topology.intra.host.source, Catch::StartsWith("measured in the same call") &&
                                                 Catch::Contains("the file's own"));
  RingFileModel base;
  base.topology = sim::default_ring_topology();
  base.compute.hw = preset.compute.hw;
  RingFileTakes no_host;
  no_host.host = false;
  CHECK(ring_file_model(runs, base, no_host).topology.intra.host.exchange_s == Approx(latest));
  // Placed with it, every run of the file still places.
  const RingScore a = score_ring_file(runs, preset), b = score_ring_file(runs, own);
  CHECK(b.time.count == a.time.count);
}
