// Benchmark results as files: what `flashlab bench` writes, the GUI reads
// back. Both encodings round-trip every field exactly.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <limits>
#include <random>
#include <unistd.h>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "support/problems.hpp"
#include "support/text_checks.hpp"

using namespace flashlab;
using namespace flashlab::analysis;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}

double any_double() {
  std::uniform_real_distribution<double> mant(0.0, 1.0);
  std::uniform_int_distribution<int> ex(-12, 12);
  return std::ldexp(mant(rng()), ex(rng()) * 3);  // full 53-bit mantissas, many magnitudes
}

BenchResults random_results() {
  BenchResults r;
  r.meta.gpu = "NVIDIA H100 80GB HBM3, \"SXM\"";
  r.meta.driver = "580.65";
  r.meta.cuda_runtime = "13.0";
  r.meta.commit = "abc123def456-dirty";
  r.meta.flop_convention = "4·B·H·N_q·N_kv·d, halved when causal; commas, \"quotes\"";
  r.meta.date = "2025-11-22T03:00:00Z";
  r.meta.host = "gpu-7";
  r.meta.sm_count = 132;
  r.meta.sm_clock_mhz = any_double();
  r.meta.mem_clock_mhz = 2619;
  r.meta.l2_flush = false;
  const char* kernels[] = {"naive", "naive_cublas", "fa1", "fa2", "fa2_tc", "torch_eager", "sdpa_flash"};
  const char* models[] = {"standard", "standard", "fa1", "fa2", "fa2", "pytorch", ""};
  const RunStatus statuses[] = {RunStatus::ok, RunStatus::oom, RunStatus::skipped, RunStatus::failed};
  std::uniform_int_distribution<long long> big(1, 1ll << 40);
  for (int k = 0; k < 40; ++k) {
    BenchRow row;
    row.kernel = kernels[k % 7];
    row.model = models[k % 7];
    row.direction = k % 5 == 0 ? "bwd" : "fwd";
    row.problem.batch = 1 + k;
    row.problem.heads = 1 + k % 7;
    row.problem.seq_q = 1 + big(rng()) % 20000;
    row.problem.seq_kv = k % 3 == 0 ? row.problem.seq_q : 1 + big(rng()) % 20000;
    row.problem.head_dim = 32 * (1 + k % 8);
    row.problem.causal = k % 2 == 0;
    row.problem.dtype = static_cast<sim::DType>(k % 3);
    row.tiles = {k % 4 == 0 ? 0 : 1 + k, k % 4 == 0 ? 0 : 3 * k};
    row.status = statuses[k % 4];
    row.reason = k % 4 == 0 ? "" : "out of memory: S and P need 17,179,869,184 B, \"x\"\nsecond line, é";
    row.time_ms_median = any_double();
    row.time_ms_min = any_double();
    row.time_ms_max = any_double();
    row.repeats = k * 3;
    row.tflops = any_double();
    row.tflops_exact = any_double();
    row.gbps = any_double();
    row.peak_memory_bytes = big(rng());
    row.predicted_memory_bytes = big(rng());
    row.mem_limit_bytes = k % 3 == 0 ? 0 : big(rng());
    row.rel_error = k % 6 == 0 ? -1 : k % 6 == 1 ? std::numeric_limits<double>::infinity() : any_double();
    r.rows.push_back(row);
  }
  return r;
}

void require_equal(const BenchResults& a, const BenchResults& b) {
  CHECK(a.meta.gpu == b.meta.gpu);
  CHECK(a.meta.driver == b.meta.driver);
  CHECK(a.meta.cuda_runtime == b.meta.cuda_runtime);
  CHECK(a.meta.commit == b.meta.commit);
  CHECK(a.meta.flop_convention == b.meta.flop_convention);
  CHECK(a.meta.date == b.meta.date);
  CHECK(a.meta.host == b.meta.host);
  CHECK(a.meta.sm_count == b.meta.sm_count);
  CHECK(a.meta.sm_clock_mhz == b.meta.sm_clock_mhz);
  CHECK(a.meta.mem_clock_mhz == b.meta.mem_clock_mhz);
  CHECK(a.meta.l2_flush == b.meta.l2_flush);
  REQUIRE(a.rows.size() == b.rows.size());
  for (std::size_t k = 0; k < a.rows.size(); ++k) {
    INFO("row " << k);
    const BenchRow &x = a.rows[k], &y = b.rows[k];
    CHECK(x.kernel == y.kernel);
    CHECK(x.model == y.model);
    CHECK(x.direction == y.direction);
    CHECK(x.problem.batch == y.problem.batch);
    CHECK(x.problem.heads == y.problem.heads);
    CHECK(x.problem.seq_q == y.problem.seq_q);
    CHECK(x.problem.n_kv() == y.problem.n_kv());
    CHECK(x.problem.head_dim == y.problem.head_dim);
    CHECK(x.problem.causal == y.problem.causal);
    CHECK(x.problem.dtype == y.problem.dtype);
    CHECK(x.tiles == y.tiles);
    CHECK(x.status == y.status);
    CHECK(x.reason == y.reason);
    CHECK(x.time_ms_median == y.time_ms_median);
    CHECK(x.time_ms_min == y.time_ms_min);
    CHECK(x.time_ms_max == y.time_ms_max);
    CHECK(x.repeats == y.repeats);
    CHECK(x.tflops == y.tflops);
    CHECK(x.tflops_exact == y.tflops_exact);
    CHECK(x.gbps == y.gbps);
    CHECK(x.peak_memory_bytes == y.peak_memory_bytes);
    CHECK(x.predicted_memory_bytes == y.predicted_memory_bytes);
    CHECK(x.mem_limit_bytes == y.mem_limit_bytes);
    CHECK(x.rel_error == y.rel_error);
  }
}

}  // namespace

TEST_CASE("bench results round-trip through JSON and CSV exactly", "[analysis][bench_results]") {
  const BenchResults r = random_results();
  SECTION("JSON") { require_equal(r, bench_from_text(bench_to_json(r), "mem.json")); }
  SECTION("CSV") { require_equal(r, bench_from_text(bench_to_csv(r), "mem.csv")); }
  SECTION("CSV, then JSON") {
    require_equal(r, bench_from_text(bench_to_json(bench_from_text(bench_to_csv(r), "a.csv")), "b.json"));
  }
  SECTION("through files") {
    const auto dir = std::filesystem::temp_directory_path() / ("flashlab-bench-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir);
    write_file_atomic((dir / "r.json").string(), bench_to_json(r));
    write_file_atomic((dir / "r.csv").string(), bench_to_csv(r));
    require_equal(r, bench_from_file((dir / "r.json").string()));
    require_equal(r, bench_from_file((dir / "r.csv").string()));
    std::filesystem::remove_all(dir);
  }
}

TEST_CASE("the runs alone as CSV: the header first, no metadata lines, read back with the method not recorded",
          "[analysis][bench_results]") {
  const BenchResults r = random_results();
  const std::string csv = bench_rows_to_csv(r);
  CHECK(csv.rfind("kernel,model,direction,", 0) == 0);
  CHECK(csv.find("\n#") == std::string::npos);  // no metadata line anywhere
  const BenchResults back = bench_from_text(csv, "plain.csv");
  CHECK(back.meta.gpu.empty());
  CHECK(back.meta.date.empty());
  REQUIRE(back.rows.size() == r.rows.size());
  CHECK(back.rows.back().mem_limit_bytes == r.rows.back().mem_limit_bytes);
  CHECK(back.rows.back().time_ms_median == r.rows.back().time_ms_median);
}

TEST_CASE("results files merge by the stated rule: a run twice kept from the first file, two GPUs refused",
          "[analysis][bench_results]") {
  BenchResults ours, torch, other;
  ours.meta.gpu = torch.meta.gpu = "NVIDIA H100 80GB HBM3";
  ours.meta.commit = "abc";
  other.meta.gpu = "Tesla T4";
  BenchRow a;
  a.kernel = "fa2_tc";
  a.problem.batch = 16;
  a.time_ms_median = 1.0;
  BenchRow again = a;
  again.time_ms_median = 2.0;  // the same run measured again
  BenchRow capped = a;
  capped.mem_limit_bytes = 15LL << 30;  // under an allocation limit: another run
  BenchRow eager = a;
  eager.kernel = "torch_eager";
  ours.rows = {a, capped};
  torch.rows = {eager, again};
  const MergedResults m = merge_results({{"ours.json", ours}, {"torch.json", torch}});
  REQUIRE(m.results.rows.size() == 3);
  CHECK(m.repeats_dropped == 1);
  CHECK(m.results.rows[0].time_ms_median == 1.0);  // the first file's
  CHECK(m.results.rows[1].mem_limit_bytes == (15LL << 30));
  CHECK(m.results.rows[2].kernel == "torch_eager");
  CHECK(m.results.meta.commit == "abc");
  CHECK_THROWS_WITH(merge_results({{"ours.json", ours}, {"t4.json", other}}),
                    Catch::Contains("t4.json was measured on Tesla T4") && Catch::Contains("NVIDIA H100"));
}

TEST_CASE("a row without tiles (PyTorch, a skipped case) writes br and bc empty, not 0, and reads back",
          "[analysis][bench_results]") {
  BenchResults r;
  BenchRow torch;
  torch.kernel = "sdpa_flash";
  torch.time_ms_median = 0.5;
  BenchRow tiled = torch;
  tiled.kernel = "fa2_tc";
  tiled.tiles.Br = 128;
  tiled.tiles.Bc = 64;
  r.rows = {torch, tiled};
  const auto rows = csv_parse(bench_rows_to_csv(r));
  const auto& h = rows.front();
  const auto col = [&](const char* name) { return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
  CHECK(rows[1][col("br")].empty());
  CHECK(rows[1][col("bc")].empty());
  CHECK(rows[2][col("br")] == "128");
  CHECK(rows[2][col("bc")] == "64");
  for (const BenchResults& back : {bench_from_text(bench_to_csv(r), "runs.csv"), bench_from_text(bench_to_json(r), "runs.json")}) {
    REQUIRE(back.rows.size() == 2);
    CHECK(back.rows[0].tiles.Br == 0);
    CHECK(back.rows[1].tiles.Bc == 64);
  }
  CHECK(bench_to_json(r).find("\"br\": null") != std::string::npos);
}

TEST_CASE("merged repeats whose times spread over 10 % are listed, the widest first, the kept row named",
          "[analysis][bench_results]") {
  BenchRow a;
  a.kernel = "sdpa_flash";
  a.direction = "fwd";
  a.problem.batch = 16;
  a.time_ms_median = 0.093;
  BenchRow b = a;
  b.problem.batch = 32;
  b.time_ms_median = 1.0;
  BenchRow c = a;
  c.problem.batch = 64;
  c.time_ms_median = 2.0;
  auto at = [](BenchRow r, double ms) {
    r.time_ms_median = ms;
    return r;
  };
  BenchRow oom = at(c, 0);
  oom.status = RunStatus::oom;  // not a time: it neither widens nor narrows the spread
  BenchResults first, second, third;
  first.rows = {a, b, c};
  second.rows = {at(a, 0.045), at(b, 1.05), at(c, 2.1)};  // b and c: 5 % apart, within the spread
  third.rows = {at(a, 0.120), oom};
  const MergedResults m = merge_results({{"1.json", first}, {"2.json", second}, {"3.json", third}});
  CHECK(m.repeats_dropped == 5);
  REQUIRE(m.disagreeing.size() == 1);
  const DisagreeingRepeat& w = m.disagreeing.front();
  CHECK(w.kept.problem.batch == 16);
  CHECK(w.kept.time_ms_median == 0.093);  // the first is kept
  CHECK(w.times == 3);
  CHECK(w.min_ms == 0.045);
  CHECK(w.max_ms == 0.120);
  CHECK(w.spread() == Approx(0.075 / 0.045));
  // Two runs apart by 12 % and 40 %: both listed, the wider first.
  second.rows = {at(a, 0.093 * 1.12), at(b, 1.4)};
  const MergedResults two = merge_results({{"1.json", first}, {"2.json", second}});
  REQUIRE(two.disagreeing.size() == 2);
  CHECK(two.disagreeing[0].kept.problem.batch == 32);
  CHECK(two.disagreeing[1].kept.problem.batch == 16);
  // Exactly the threshold apart is agreement.
  second.rows = {at(b, 1.0 * (1 + kRepeatSpread) * 0.999)};
  CHECK(merge_results({{"1.json", first}, {"2.json", second}}).disagreeing.empty());
}

TEST_CASE("the CSV is a spreadsheet's CSV: metadata lines, one header, one row per result",
          "[analysis][bench_results]") {
  BenchResults r;
  r.meta.gpu = "G";
  BenchRow row;
  row.kernel = "fa2";
  row.problem = flashlab::test::problem(16, 32, 1024, 64);
  row.time_ms_median = 1.5;
  r.rows.push_back(row);
  const std::string csv = bench_to_csv(r);
  CHECK(csv.rfind("# format: \"flashlab-bench/1\"\n", 0) == 0);
  flashlab::test::check_contains_each(csv, {
      "# gpu: \"G\"\n",
      "\nkernel,model,direction,batch,heads,seq_q,seq_kv,head_dim,causal,dtype,br,bc,status,",
      // Nothing measured but the median, no tiles given: every other measured cell empty, not 0 or -1.
      "\nfa2,,fwd,16,32,1024,1024,64,false,fp16,,,ok,,1.5,,,0,,,,,,,,false,,,,,,,,,,32,,,\n",
  });
  // A kernel that keeps O in fp32 between steps says so in its column, and reads back.
  r.rows[0].storage.o_accumulator = flashlab::sim::DType::fp32;
  CHECK_THAT(bench_to_csv(r), Catch::Contains(",,fp32,,32,,,\n"));
  CHECK(bench_from_text(bench_to_csv(r), "t.csv").rows.at(0).storage.o_accumulator == flashlab::sim::DType::fp32);
  CHECK(bench_from_text(bench_to_json(r), "t.json").rows.at(0).storage.o_accumulator == flashlab::sim::DType::fp32);
  // A backward rung's fp32 dQ accumulator round-trips too.
  r.rows[0].storage.dq_accumulator = flashlab::sim::DType::fp32;
  CHECK(bench_from_text(bench_to_csv(r), "t.csv").rows.at(0).storage.dq_accumulator == flashlab::sim::DType::fp32);
  CHECK(bench_from_text(bench_to_json(r), "t.json").rows.at(0).storage.dq_accumulator == flashlab::sim::DType::fp32);
  // Grouped K/V heads (H_kv) and the fp32 dK, dV of a rung that adds them apart round-trip.
  r.rows[0].problem.kv_heads = 8;
  r.rows[0].storage.dkv_accumulator = flashlab::sim::DType::fp32;
  CHECK_THAT(bench_to_csv(r), Catch::Contains(",fp32,fp32,8,fp32,,\n"));
  for (const char* name : {"t.csv", "t.json"}) {
    const BenchRow back =
        bench_from_text(std::string(name) == "t.csv" ? bench_to_csv(r) : bench_to_json(r), name).rows.at(0);
    CHECK(back.problem.h_kv() == 8);
    CHECK(back.storage.dkv_accumulator == flashlab::sim::DType::fp32);
  }
  r.rows[0].problem.kv_heads = 0;
  r.rows[0].storage = {};
  const std::string text = bench_to_json(r);
  flashlab::test::check_contains_each(text, {
      "\"format\": \"flashlab-bench/1\"",
      "\"time_ms_median\": 1.5",
      "\"seq_kv\": 1024",
  });
  CHECK(to_string(RunStatus::oom) == "OOM");
}

TEST_CASE("files written before rows carried a model still read, with the model empty", "[analysis][bench_results]") {
  BenchResults r;
  BenchRow row;
  row.kernel = "fa2";
  row.model = "fa2";
  row.problem = flashlab::test::problem(2, 4, 512, 64);
  row.time_ms_median = 0.25;
  r.rows.push_back(row);

  std::string csv = bench_to_csv(r);
  CHECK_THAT(csv, Catch::Contains("\nfa2,fa2,fwd,2,4,512,"));
  const std::string header = "kernel,model,", data = "\nfa2,fa2,";
  csv.replace(csv.find(header), header.size(), "kernel,");
  csv.replace(csv.find(data), data.size(), "\nfa2,");
  const BenchResults from_csv = bench_from_text(csv, "old.csv");
  REQUIRE(from_csv.rows.size() == 1);
  CHECK(from_csv.rows[0].model.empty());
  CHECK(from_csv.rows[0].time_ms_median == 0.25);

  std::string text = bench_to_json(r);
  CHECK_THAT(text, Catch::Contains("\"model\": \"fa2\""));
  const std::string key = "\"model\": \"fa2\",";
  text.replace(text.find(key), key.size(), "");
  const BenchResults from_json = bench_from_text(text, "old.json");
  REQUIRE(from_json.rows.size() == 1);
  CHECK(from_json.rows[0].model.empty());
  CHECK(from_json.rows[0].problem.seq_q == 512);
}

TEST_CASE("bad result files fail with the file, the place and the reason", "[analysis][bench_results]") {
  const BenchResults r = random_results();
  CHECK_THROWS_WITH(bench_from_text("", "e.csv"), Catch::Contains("e.csv: empty"));
  CHECK_THROWS_WITH(bench_from_text("{\"format\": \"other\"}", "f.json"), Catch::StartsWith("f.json: format"));
  CHECK_THROWS_WITH(bench_from_text("{", "g.json"), Catch::StartsWith("g.json: not valid JSON"));
  // A CSV without metadata lines is the runs alone, and must hold their columns.
  CHECK_THROWS_WITH(bench_from_text("kernel,batch\nfa2,1\n", "h.csv"),
                    Catch::Contains("h.csv: header: missing column 'direction'"));
  CHECK_THROWS_WITH(bench_from_text("# gpu: \"G\"\nkernel,batch\nfa2,1\n", "i.csv"),
                    Catch::Contains("i.csv") && Catch::Contains("format"));

  std::string csv = bench_to_csv(r);
  const auto at = csv.find(",ok,");
  REQUIRE(at != std::string::npos);
  std::string bad_status = csv;
  bad_status.replace(at, 4, ",great,");
  CHECK_THROWS_WITH(bench_from_text(bad_status, "s.csv"),
                    Catch::Contains("s.csv") && Catch::Contains("status") && Catch::Contains("great"));

  std::string no_column = csv;
  no_column.replace(no_column.find(",gbps,"), 6, ",gbs,");
  CHECK_THROWS_WITH(bench_from_text(no_column, "c.csv"), Catch::Contains("missing column 'gbps'"));

  std::string text = bench_to_json(r);
  text.replace(text.find("\"batch\": 1,"), 11, "\"batch\": \"one\",");
  CHECK_THROWS_WITH(bench_from_text(text, "b.json"),
                    Catch::Contains("b.json: rows[0], batch") && Catch::Contains("'one' is not a whole number"));
  CHECK_THROWS_WITH(bench_from_file("/nonexistent/x.json"), Catch::Contains("cannot open"));
}

TEST_CASE("missing is not zero: an OOM row's measured cells are empty in CSV and null in JSON, and read back",
          "[analysis][bench_results]") {
  BenchResults r;
  r.meta.gpu = "G";
  BenchRow oom;
  oom.kernel = "torch_eager";
  oom.problem = flashlab::test::problem(64, 32, 2048, 64);
  oom.status = RunStatus::oom;
  oom.reason = "torch: CUDA out of memory. Tried to allocate 16.00 GiB.";
  oom.mem_limit_bytes = 15LL << 30;
  r.rows.push_back(oom);
  const auto rows = csv_parse(bench_rows_to_csv(r));
  REQUIRE(rows.size() >= 2);
  const std::vector<std::string>& header = rows[0];
  for (const char* c : {"time_ms_median", "time_ms_min", "time_ms_max", "repeats", "tflops", "tflops_exact", "gbps",
                        "peak_memory_bytes", "rel_error", "ctas_per_sm", "dram_read_bytes", "l2_write_bytes",
                        "launch_host_us"}) {
    INFO(c);
    const auto at = std::find(header.begin(), header.end(), c);
    REQUIRE(at != header.end());
    CHECK(rows[1][static_cast<size_t>(at - header.begin())].empty());
  }
  const auto status = std::find(header.begin(), header.end(), "status");
  CHECK(rows[1][static_cast<size_t>(status - header.begin())] == "OOM");
  const std::string text = bench_to_json(r);
  flashlab::test::check_contains_each(text, {
      "\"time_ms_median\": null",
      "\"peak_memory_bytes\": null",
      "\"mem_limit_bytes\": 16106127360",
  });
  for (const BenchResults& back : {bench_from_text(bench_to_csv(r), "oom.csv"), bench_from_text(text, "oom.json")}) {
    REQUIRE(back.rows.size() == 1);
    CHECK(back.rows[0].status == RunStatus::oom);
    CHECK(back.rows[0].time_ms_median == 0);
    CHECK(back.rows[0].rel_error == -1);
    CHECK(back.rows[0].dram_read_bytes == -1);
    CHECK(back.rows[0].mem_limit_bytes == (15LL << 30));
  }
}

TEST_CASE("PyTorch's versions and a writer's method round-trip in the metadata, and a merge keeps every file's",
          "[analysis][bench_results]") {
  BenchResults torch, ours;
  torch.meta.gpu = ours.meta.gpu = "NVIDIA H200";
  torch.meta.torch_version = "2.11.0+cu130";
  torch.meta.torch_cuda = "13.0";
  torch.meta.cudnn_version = "91002";
  torch.meta.method = "outputs poisoned with NaN";
  BenchRow a;
  a.kernel = "sdpa_flash";
  torch.rows = {a};
  a.kernel = "fa2_tc";
  ours.rows = {a};
  for (const std::string& text : {bench_to_json(torch), bench_to_csv(torch)}) {
    const BenchMeta m = bench_from_text(text, text[0] == '{' ? "t.json" : "t.csv").meta;
    CHECK(m.torch_version == "2.11.0+cu130");
    CHECK(m.torch_cuda == "13.0");
    CHECK(m.cudnn_version == "91002");
    CHECK(m.method == "outputs poisoned with NaN");
  }
  CHECK_THAT(bench_to_json(ours), !Catch::Contains("torch_version"));  // written only where recorded
  const MergedResults m = merge_results({{"ours.json", ours}, {"torch.json", torch}});
  REQUIRE(m.results.sources.size() == 2);
  CHECK(m.results.sources[0].origin == "ours.json");
  CHECK(m.results.sources[0].kernels == std::vector<std::string>{"fa2_tc"});
  CHECK(m.results.sources[1].meta.cudnn_version == "91002");
}

TEST_CASE("a table that is not a results file says what it is and what reads it", "[analysis][bench_results]") {
  CHECK_THROWS_WITH(bench_from_text("batch_size,seq_len,Forward Time (s)\n16,1024,0.006\n", "mine.csv"),
                    Catch::Contains("mine.csv: header: not a results file of flashlab bench") &&
                        Catch::Contains("flashlab check mine.csv"));
  CHECK_THROWS_WITH(bench_from_text("# my lab, run on a T4\nbatch,time_ms\n16,6.1\n", "lab.csv"),
                    Catch::Contains("lab.csv: line 1: not a results file of flashlab bench") &&
                        Catch::Contains("flashlab check lab.csv"));
  CHECK_THROWS_WITH(bench_from_text("batch;seq;time_ms\n16;1024;6,1\n", "semi.csv"),
                    Catch::Contains("separated by ';'"));
}
