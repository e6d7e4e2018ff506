// The CLI as a user runs it: exit codes, one-line errors, JSON equal to the
// closed forms of docs/model.md.
#include <sys/wait.h>

#include <catch2/catch.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"
#include "../analysis/chart_fixtures.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/text/csv.hpp"

namespace fs = std::filesystem;

namespace {

using flashlab::test::Run;
using flashlab::test::slurp;

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-cli-test");

std::string data(const char* name) { return std::string(FLASHLAB_TEST_DATA) + "/" + name; }

long long ceil_div(long long a, long long b) { return (a + b - 1) / b; }

}  // namespace

TEST_CASE("sim --json equals the closed forms, ragged and causal included", "[cli]") {
  struct Shape {
    const char* algo;
    long long B, H, N, d;
    const char* dtype;
    long long br, bc;
  };
  const Shape shapes[] = {{"standard", 2, 3, 1000, 64, "fp16", 64, 128}, {"pytorch", 1, 2, 333, 32, "bf16", 32, 32},
                          {"fa1", 3, 5, 1000, 64, "fp16", 64, 384},      {"fa1", 1, 1, 17, 128, "fp32", 16, 32},
                          {"fa2", 4, 4, 4097, 64, "bf16", 128, 64},      {"fa2", 1, 1, 1, 64, "fp16", 64, 64}};
  for (const Shape& s : shapes) {
    const std::string args = std::string("sim --json --algo ") + s.algo + " --batch " + std::to_string(s.B) +
                             " --heads " + std::to_string(s.H) + " --seq " + std::to_string(s.N) + " --head-dim " +
                             std::to_string(s.d) + " --dtype " + s.dtype + " --br " + std::to_string(s.br) +
                             " --bc " + std::to_string(s.bc) + " --sram 1GiB";
    INFO(args);
    const Run r = run_flashlab(args);
    REQUIRE(r.code == 0);
    REQUIRE(r.err.empty());
    const auto j = nlohmann::json::parse(r.out);
    const long long N = s.N, d = s.d, BH = s.B * s.H;
    const long long q = std::string(s.dtype) == "fp32" ? 4 : 2;
    const long long Tr = ceil_div(N, s.br), Tc = ceil_div(N, s.bc);
    long long rd = 0, wr = 0;
    const std::string a = s.algo;
    if (a == "standard") {
      rd = (3 * N * d + 2 * N * N) * q;
      wr = (2 * N * N + N * d) * q;
    } else if (a == "pytorch") {
      rd = (3 * N * d + 3 * N * N) * q;
      wr = (3 * N * N + N * d) * q;
    } else if (a == "fa1") {
      rd = 2 * N * d * q + Tc * (2 * N * d * q + 2 * N * 4);
      wr = (N * d * q + 2 * N * 4) + Tc * (N * d * q + 2 * N * 4);
    } else {
      rd = (N * d + 2 * N * d * Tr) * q;
      wr = N * d * q + N * 4;
    }
    CHECK(j["hbm"]["read_bytes"].get<long long>() == rd * BH);
    CHECK(j["hbm"]["write_bytes"].get<long long>() == wr * BH);
    CHECK(j["tiles"]["Tr"] == Tr);
    CHECK(j["tiles"]["Tc"] == Tc);
    CHECK(j["tiles"]["visited_blocks"] == Tr * Tc);
    CHECK(j["flops"]["matmul"].get<long long>() == 4 * BH * N * N * d);
    CHECK(j["flops"]["convention"].get<long long>() == 4 * BH * N * N * d);
  }
}

TEST_CASE("sim --json, causal: visited and masked blocks, halved convention", "[cli]") {
  const Run r = run_flashlab("sim --json --algo fa2 --causal --batch 2 --heads 2 --seq 1000 --head-dim 64 --br 64 --bc 64");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  // 16 row blocks of 64 (the last holds 40 rows): 16·17/2 visited, 16 on the diagonal.
  CHECK(j["tiles"]["visited_blocks"] == 136);
  CHECK(j["tiles"]["masked_blocks"] == 16);
  CHECK(j["flops"]["convention"].get<long long>() == 2LL * 4 * 1000 * 1000 * 64);
  // K_j, V_j once per visited block: reads Nd + 2d·Σ_visited c_j, per head.
  long long sum_c = 0;
  for (long long i = 0; i < 16; ++i)
    for (long long jj = 0; jj <= i; ++jj) sum_c += std::min<long long>(64, 1000 - jj * 64);
  CHECK(j["hbm"]["read_bytes"].get<long long>() == 4 * (1000 * 64 + 2 * 64 * sum_c) * 2);
}

TEST_CASE("sim --o-accumulator fp32: FlashAttention-1's O read and written in fp32 between its steps, as a kernel keeps it",
          "[cli]") {
  const std::string base = "sim --json --algo fa1 --batch 2 --heads 2 --seq 1000 --head-dim 64 --br 64 --bc 64";
  const Run paper = run_flashlab(base), fp32 = run_flashlab(base + " --o-accumulator fp32");
  REQUIRE(paper.code == 0);
  REQUIRE(fp32.code == 0);
  const auto a = nlohmann::json::parse(paper.out), b = nlohmann::json::parse(fp32.out);
  // O: read at every K_j block but the first, written at every one; twice the bytes in fp32.
  const auto o_bytes = [](const nlohmann::json& j) {
    const auto& o = j["hbm"]["per_tensor"]["O"];
    return o["read_bytes"].get<long long>() + o["write_bytes"].get<long long>();
  };
  REQUIRE(o_bytes(a) > 0);
  CHECK(o_bytes(b) == 2 * o_bytes(a));
  // FlashAttention-2 writes O once: the flag changes nothing and says so.
  const Run fa2 = run_flashlab("sim --algo fa2 --o-accumulator fp32");
  REQUIRE(fa2.code == 0);
  CHECK_THAT(fa2.out, Catch::Contains("--o-accumulator: O is written once and never read back here"));
}

TEST_CASE("every bad input class: exit code 2 and one clear line", "[cli][errors]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"sim --seq abc", "--seq: 'abc' is not a whole number"},
      {"sim --batch=-4", "--batch"},
      {"sim --heads 0", "--heads: must be at least 1"},
      {"sim --head-dim 0", "--head-dim: must be at least 1"},
      {"sim --seq 1.5", "--seq"},
      {"sim --seq 4G --batch 1M", "too large for 64-bit counters"},
      {"sim --seq 99999999999999999999", "--seq"},
      {"sim --head-dim 100000", "does not fit"},
      {"sim --algo fa1 --br 512 --bc 512", "do not fit in SRAM"},
      {"sim --br 64", "--br and --bc go together"},
      {"sim --algo fa3", "unknown algorithm 'fa3'"},
      {"sim --hw Z80", "unknown hardware preset 'Z80'"},
      {"sim --dtype fp8", "unknown dtype 'fp8'"},
      {"sim --hw /nonexistent/gpu.json", "not found"},
      {"sim --hw " + data("malformed.json"), "not valid JSON"},
      {"sim --hw " + data("missing-field.json"), "missing field 'hbm_bandwidth_gbs'"},
      {"sim --hw " + data("bad-value.json"), "must be a positive integer"},
      {"sim --causal --seq-kv 77", "causal attention needs seq_kv = seq_q"},
      {"sim --sram 0", "--sram: must be at least 1"},
      {"sim --sram 1TB", "--sram: '1TB' is more than 1 GiB of SRAM per SM"},
      {"sim --algo fa1 --o-accumulator fp64", "--o-accumulator: unknown dtype 'fp64'"},
      {"gui --ui-scale 0", "--ui-scale must be between 1.0 and 3.0"},
      // An output that cannot be written is refused before any table is printed.
      {"compare --csv /nonexistent-dir/x.csv", "--csv: folder '/nonexistent-dir' does not exist"},
      {"compare --csv /proc/flashlab.csv", "--csv: cannot write in '/proc'"},
      {"compare --csv .", "--csv: '.' is a folder, not a file"},
      {"check " + data("flash2-lab-tables.csv") + " --out /proc/flashlab-check", "--out: cannot create '/proc/flashlab-check'"},
      {"pipeline --csv /nonexistent-dir/x.csv", "--csv: folder '/nonexistent-dir' does not exist"},
      {"sim --no-such-flag", "no-such-flag"},
      {"compare --results /nonexistent-dir/r.json", "--results: /nonexistent-dir/r.json: cannot open for reading"},
      {"compare --results " + data("malformed.json"), "--results:"},
      {"bench --check-roof", "--check-roof: give the results files"},
      {"bench --results x.json", "--results: x.json: cannot open for reading"},
      {"bench --check-roof --results /nonexistent-dir/r.json", "cannot open for reading"},
      {"sweep --vary seq=8:4:x2", "stop is below start"},
      {"sweep --vary colour=1,2", "unknown sweep axis"},
      {"sweep --vary haeds=8,16", "did you mean heads"},
      {"sweep --vary emb-dim=1024,2048", "the embedding dim is heads · head-dim"},
      {"sweep --vary seq=512,1024 --algos fa1,bogus", "unknown algorithm 'bogus'"},
      {"sweep --vary head-dim=100000,200000 --algos fa2", "no point of the sweep could be simulated"},
      {"sweep --vary seq=512,1024 --csv /nonexistent-dir/x.csv", "does not exist"},
      {"hw show Z80", "unknown hardware preset"},
      {"compare --algos standard,fa9", "unknown algorithm 'fa9'"},
      {"sim --trace /nonexistent-dir/t.csv --seq 64", "does not exist"},
      {"sim --trace t.csv --seq 64K --br 1 --bc 1 --algo fa2 --sram 1GiB", "trace limit"},
  });
}

TEST_CASE("with no arguments and no display: the lecture comparison, printed and written as CSV", "[cli]") {
  fs::remove(run_flashlab.path() / "flashlab-comparison.csv");
  const Run r = run_flashlab("");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("B=64 H=16 N=1024 d=64 fp16"));
  CHECK_THAT(r.out, Catch::Contains("A100"));
  for (const char* a : {"standard", "fa1", "fa2"}) CHECK_THAT(r.out, Catch::Contains(a));
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "flashlab-comparison.csv"));
  REQUIRE(rows.size() == 4);  // header, standard, fa1, fa2
  CHECK(rows[1][2] == "standard");
  CHECK(rows[2][2] == "fa1");
  CHECK(rows[3][2] == "fa2");
  // Each algorithm with the tiles its loop order wants: the paper's rule for
  // FlashAttention-1 (B_r = d = 64, B_c = ⌈M/4d⌉ = 384), transposed for FlashAttention-2.
  CHECK((rows[2][12] == "64" && rows[2][13] == "384"));
  CHECK((rows[3][12] == "384" && rows[3][13] == "64"));
}

TEST_CASE("sweep writes one CSV row per point and algorithm", "[cli]") {
  const Run r = run_flashlab("sweep --vary seq=512:65536:x2 --algos standard,fa1,fa2 --csv sweep.csv");
  REQUIRE(r.code == 0);
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "sweep.csv"));
  CHECK(rows.size() == 1 + 8 * 3);
  CHECK_THAT(r.out, Catch::Contains("65,536"));
}

TEST_CASE("hw list and hw show", "[cli]") {
  Run r = run_flashlab("hw list");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("A100-PCIe-80GB"));
  CHECK_THAT(r.out, Catch::Contains("161.2"));
  r = run_flashlab("hw show h100-sxm5-80gb --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["sm_count"] == 132);
  r = run_flashlab("sim --hw " + std::string(FLASHLAB_TEST_DATA) + "/../../assets/hardware/T4.json --algo fa1 --json");
  REQUIRE(r.code == 0);
  CHECK(nlohmann::json::parse(r.out)["hardware"] == "T4");
}

TEST_CASE("sim --trace writes one row per event of one head", "[cli]") {
  const Run r = run_flashlab("sim --algo fa1 --seq 100 --head-dim 16 --br 32 --bc 48 --trace trace.csv --json");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "trace.csv"));
  CHECK(static_cast<long long>(rows.size()) == 1 + j["events_per_head"].get<long long>());
  CHECK(rows[1][1] == "store");  // line 2: O, ℓ, m initialised in HBM
}

TEST_CASE("export takes exactly the chart table's ids, and says which when given another", "[cli][export]") {
  // Measured results for the bench charts: two kernels over batch × seq, with OOM cells.
  const flashlab::analysis::BenchResults results = flashlab::analysis::test::lab_grid();
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "results.json").string(), flashlab::analysis::bench_to_json(results));

  const Run help = run_flashlab("export --help");
  REQUIRE(help.code == 0);
  CHECK_THAT(help.out, Catch::Contains(flashlab::analysis::chart_id_list("|")));
  for (const flashlab::analysis::ChartEntry& e : flashlab::analysis::chart_table()) {
    const std::string id(e.id);
    INFO(id);
    const Run with = run_flashlab("export --seq 512 --chart " + id + " --results results.json --out " + id + ".csv");
    CHECK(with.code == 0);
    CHECK_THAT(with.out, Catch::Contains("wrote " + id));
    CHECK(fs::exists(run_flashlab.path() / (id + ".csv")));
    const Run without = run_flashlab("export --seq 512 --chart " + id + " --out " + id + "-bare.csv");
    if (e.needs_results) {
      CHECK(without.code == 2);
      CHECK_THAT(without.err, Catch::Contains("--results"));
    } else {
      CHECK(without.code == 0);
    }
  }
  const Run bad = run_flashlab("export --chart pie --out pie.csv");
  CHECK(bad.code == 2);
  CHECK(bad.err.rfind("flashlab: error: --chart: unknown chart 'pie'", 0) == 0);
  CHECK_THAT(bad.err, Catch::Contains(flashlab::analysis::chart_id_list()));
}

TEST_CASE("export: a filter or kernel the results do not hold is one line naming what they hold, exit 2, no file",
          "[cli][export][errors]") {
  const flashlab::analysis::BenchResults results = flashlab::analysis::test::lab_grid();  // batch 16-64, H 32, d 64
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "lab.json").string(), flashlab::analysis::bench_to_json(results));
  const auto export_lab = [](const std::string& args) {
    const Run r = run_flashlab("export " + args + " --results lab.json --out bad.png");
    CHECK_FALSE(fs::exists(run_flashlab.path() / "bad.png"));
    return r;
  };
  flashlab::test::check_refusals(export_lab, {
      {"--chart bench-time --filter batch=48", "--filter: no run has batch 48 (batch in the results: 16, 32, 64)"},
      {"--chart bench-time --filter emb-dim=4096", "--filter: no run has emb-dim 4096 (emb-dim in the results: 2048)"},
      {"--chart bench-time --filter causal=yes", "--filter: no run has causal yes (only non-causal runs)"},
      {"--chart bench-time --filter colour=red", "unknown filter key 'colour'"},
      {"--chart bench-time --filter hads=32", "(did you mean heads?)"},
      {"--chart bench-heatmap --kernel flash2", "--kernel: no run of 'flash2' in the results (kernels there: torch_eager, fa2)"},
      {"--chart bench-speedup --baseline torch_eagre", "(did you mean torch_eager?)"},
      {"--chart bench-time --casual", "(did you mean --causal?)"},
  });
  // The filters that match: emb-dim = heads · head-dim, and the K/V heads (= H without groups).
  CHECK(run_flashlab("export --chart bench-time --filter emb-dim=2048,kv-heads=32 --results lab.json --out ok.csv").code == 0);
}

TEST_CASE("export's --filter help, the parser and its error name the same keys, from one list", "[cli][export]") {
  const std::string keys = flashlab::analysis::bench_filter_key_list();
  const Run help = run_flashlab("export --help");
  REQUIRE(help.code == 0);
  // The --filter line of the help, and every key of the list in it.
  const size_t at = help.out.find("--filter");
  REQUIRE(at != std::string::npos);
  const std::string line = help.out.substr(at, help.out.find('\n', at) - at);
  CHECK_THAT(line, Catch::Contains("(keys: " + keys + ";"));
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "keys.json").string(),
                                        flashlab::analysis::bench_to_json(flashlab::analysis::test::lab_grid()));
  for (const flashlab::analysis::BenchFilterKey& k : flashlab::analysis::bench_filter_keys()) {
    const std::string name(k.name);
    INFO(name);
    CHECK_THAT(line, Catch::Contains(name));
    // Every key the help names is one the parser takes, by its name and by each alias.
    const std::string value = name == "causal" ? "no" : name == "dtype" ? "fp16" : "32";
    CHECK_NOTHROW(flashlab::analysis::parse_bench_filter(name + "=" + value));
    for (std::string_view a : k.aliases) CHECK_NOTHROW(flashlab::analysis::parse_bench_filter(std::string(a) + "=" + value));
  }
  CHECK_THAT(line, Catch::Contains("seq"));  // the key the help once left out
  const Run bad = run_flashlab("export --chart bench-time --filter colour=red --results keys.json --out k.png");
  CHECK(bad.code == 2);
  CHECK_THAT(bad.err, Catch::Contains("unknown filter key 'colour' (expected " + keys + ")"));
}

TEST_CASE("export and report of the README's constant-token results: charts along N, no layout note", "[cli][export]") {
  const fs::path results = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results";
  const Run t = run_flashlab("export --chart bench-tflops --results " + (results / "h100-perf-bench.json").string() +
                             " --out tokens-tflops.csv");
  REQUIRE(t.code == 0);
  CHECK_THAT(t.out, !Catch::Contains("note: layout:"));
  // One line per rung over the three N of the grid (B·N = 16K), not one dot at N 1K.
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "tokens-tflops.csv"));
  std::map<std::string, std::set<std::string>> xs;
  for (size_t k = 1; k < rows.size(); ++k) xs[rows[k][1]].insert(rows[k][2]);
  CHECK(xs.size() == 5);
  for (const auto& [series, x] : xs) {
    INFO(series);
    CHECK(x == std::set<std::string>{"1024", "4096", "16384"});
  }
  const fs::path out = run_flashlab.path() / "tokens-report";
  fs::remove_all(out);
  const Run r = run_flashlab("report --results " + (results / "h200-perf-bench.json").string() + " --out tokens-report");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, !Catch::Contains("note: layout:"));
  CHECK_THAT(r.out, Catch::Contains("bench-heatmap: left out, nothing to draw (not a batch × N grid: the batch follows N"));
  CHECK(fs::exists(out / "charts" / "runs-bench-tflops.png"));
}

TEST_CASE("sim prints three levels: requests, the L2 model, DRAM", "[cli][l2]") {
  const Run r = run_flashlab.check_prints(
      "sim --algo fa2 --hw H200-SXM-141GB --batch 1 --heads 16 --seq 8192 --head-dim 128", {
          "  requests  to global memory (the paper's HBM accesses): read ",
          "  L2 model  30 MiB LRU (one of the 2 partitions of a 60 MiB L2: each keeps its own copy of what every SM reads): read hits ",
          "hit rate ",
          "            launch: 132 CTAs resident (132 SMs × 1)",
          "            method: simulated",
          "  DRAM      predicted read ",
          "FLOP/B of DRAM (",
      });
  CHECK(r.out.find("HBM       read") == std::string::npos);
  // Standard attention: the GEMMs' re-reads of K_j, V_j sent to the L2, apart from the requests.
  const Run s = run_flashlab("sim --algo standard --hw H200-SXM-141GB --batch 1 --heads 16 --seq 8192 --head-dim 128");
  REQUIRE(s.code == 0);
  CHECK_THAT(s.out, Catch::Contains("re-read by the GEMMs from the L2 after their first block"));
}

TEST_CASE("sim --json: the L2 model's section, per tensor and in total", "[cli][l2]") {
  const Run r = run_flashlab("sim --json --algo fa2 --hw H200-SXM-141GB --batch 2 --heads 4 --seq 4096 --head-dim 64");
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  const auto& l2 = j["l2"];
  CHECK(l2["modelled"] == true);
  CHECK(l2["why_not"] == "");
  CHECK(l2["l2_bytes"] == 31457280);  // one of the H200's two 30 MiB partitions
  CHECK(l2["l2_partitions"] == 2);
  CHECK(l2["launch"]["sm_count"] == 132);
  CHECK(l2["launch"]["concurrent_ctas"] == l2["launch"]["sm_count"].get<long long>() * l2["launch"]["ctas_per_sm"].get<long long>());
  CHECK_THAT(l2["method"].get<std::string>(), Catch::Contains("simulated"));
  // Requests per tensor are the HBM accesses of the same run, and each splits into hits and misses.
  long long hits = 0, reads = 0;
  for (const char* t : {"Q", "K", "V", "O", "LSE"}) {
    INFO(t);
    const auto& x = l2["per_tensor"][t];
    CHECK(x["request_read_bytes"] == j["hbm"]["per_tensor"][t]["read_bytes"]);
    CHECK(x["request_write_bytes"] == j["hbm"]["per_tensor"][t]["write_bytes"]);
    CHECK(x["l2_hit_read_bytes"].get<long long>() + x["dram_read_bytes"].get<long long>() == x["request_read_bytes"].get<long long>());
    CHECK(x["dram_write_bytes"].get<long long>() ==
          x["dram_write_during_run_bytes"].get<long long>() + x["dirty_at_end_bytes"].get<long long>());
    hits += x["l2_hit_read_bytes"].get<long long>();
    reads += x["request_read_bytes"].get<long long>();
  }
  CHECK(l2["total"]["l2_hit_read_bytes"] == hits);
  CHECK(l2["read_hit_rate"].get<double>() == Approx(static_cast<double>(hits) / static_cast<double>(reads)));
  // Compulsory traffic at least: Q, K, V read once per head.
  CHECK(l2["per_tensor"]["K"]["dram_read_bytes"].get<long long>() >= 2LL * 4 * 4096 * 64 * 2);
  CHECK(j["dram"]["read_bytes"] == l2["total"]["dram_read_bytes"]);
  CHECK(j["dram"]["write_bytes"] == l2["total"]["dram_write_bytes"]);
  // The old key of the event stream's L2 level, renamed: zero for FlashAttention ...
  CHECK(j["gemm_l2_rereads"]["read_bytes"] == 0);
  // ... and, for standard attention, K_j and V_j re-read by every row block after the first: 2·(T_r − 1)·N·d elements per head.
  const Run st = run_flashlab("sim --json --algo standard --batch 2 --heads 3 --seq 1000 --head-dim 64 --br 64 --bc 128");
  REQUIRE(st.code == 0);
  const auto js = nlohmann::json::parse(st.out);
  CHECK(js["gemm_l2_rereads"]["read_bytes"].get<long long>() == 2LL * (ceil_div(1000, 64) - 1) * 1000 * 64 * 2 * 6);
  CHECK(js["gemm_l2_rereads"]["write_bytes"] == 0);
}

TEST_CASE("compare --results: DRAM measured per kernel beside the requests and the prediction", "[cli][compare]") {
  const std::string args = "compare --hw H200-SXM-141GB --batch 128 --heads 8 --seq 1024 --head-dim 64 --csv cmp.csv --results " +
                           data("h200-validate-excerpt.json");
  const Run r = run_flashlab(args);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("requests read"));
  CHECK_THAT(r.out, Catch::Contains("DRAM measured"));
  CHECK(r.out.find("HBM read") == std::string::npos);
  // fa2_tc: measured 402,686,208 + 127,651,584 B; the file's own prediction
  // (402,653,184 + 121,380,864 B: −1.2 %) is placed again with today's model,
  // 402,653,184 + 129,355,776 B: +0.3 %.
  flashlab::test::check_contains_each(r.out, {
      "placed with today's model on H200-SXM-141GB",
      "  fa2_tc         128×64",
      "530 MB (model +0.3%)",
      "  naive_cublas",
  });
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "cmp.csv"));
  REQUIRE(rows.size() == 1 + 5);  // naive, naive_cublas, fa1, fa2, fa2_tc
  const auto& h = rows[0];
  const auto col = [&](const std::string& name) { return flashlab::test::column(h, name); };
  const auto& tc = rows[5];
  CHECK(tc[col("algorithm")] == "fa2");
  CHECK(tc[col("kernel")] == "fa2_tc");
  CHECK(tc[col("measured_dram_read_bytes")] == "402686208");
  CHECK(tc[col("measured_dram_write_bytes")] == "127651584");
  CHECK(tc[col("kernel_predicted_dram_read_bytes")] == "402653184");
  CHECK(tc[col("kernel_predicted_dram_write_bytes")] == "129085440");
  CHECK(tc[col("measured_note")] == "");

  // Another problem: no run of it. A file without counters: says so.
  const Run other = run_flashlab("compare --hw H200-SXM-141GB --batch 64 --heads 8 --seq 1024 --head-dim 64 --csv cmp2.csv --results " +
                                 data("h200-validate-excerpt.json"));
  REQUIRE(other.code == 0);
  CHECK_THAT(other.out, Catch::Contains("no run of this problem"));
  const auto rows2 = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "cmp2.csv"));
  REQUIRE(rows2.size() == 4);
  CHECK(rows2[1].back() == "no run of this problem");
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "no-counters.json").string(),
                                        flashlab::analysis::bench_to_json(flashlab::analysis::test::lab_grid()));
  const Run bare = run_flashlab("compare --csv cmp3.csv --results no-counters.json");
  REQUIRE(bare.code == 0);
  CHECK_THAT(bare.out, Catch::Contains("no counters in no-counters.json"));
  CHECK_THAT(bare.out, Catch::Contains("note: the runs were measured on"));
}

TEST_CASE("sweep CSV: predicted DRAM, the L2 read hit rate and whether it was modelled, beside the requests", "[cli][l2]") {
  const Run r = run_flashlab("sweep --vary seq=1024,2048 --algos fa2 --hw H200-SXM-141GB --batch 1 --heads 2 --csv l2sweep.csv");
  REQUIRE(r.code == 0);
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "l2sweep.csv"));
  REQUIRE(rows.size() == 3);
  const auto& h = rows[0];
  const auto col = [&](const std::string& name) { return flashlab::test::column(h, name); };
  CHECK(col("l2_modelled") == col("gemm_l2_reread_bytes") + 1);
  CHECK(col("dram_read_bytes") == col("l2_modelled") + 1);
  CHECK(col("dram_write_bytes") == col("dram_read_bytes") + 1);
  CHECK(col("l2_read_hit_rate") == col("dram_write_bytes") + 1);
  // The row at N = 2048 equals `flashlab sim --json` of the same problem (small enough to follow every head).
  const Run s = run_flashlab("sim --json --algo fa2 --hw H200-SXM-141GB --batch 1 --heads 2 --seq 2048");
  REQUIRE(s.code == 0);
  const auto j = nlohmann::json::parse(s.out);
  const auto& row = rows[2];
  CHECK(row[col("value")] == "2048");
  CHECK(row[col("hbm_bytes")] == std::to_string(j["hbm"]["read_bytes"].get<long long>() + j["hbm"]["write_bytes"].get<long long>()));
  CHECK(row[col("l2_modelled")] == "1");
  CHECK(row[col("dram_read_bytes")] == std::to_string(j["dram"]["read_bytes"].get<long long>()));
  CHECK(row[col("dram_write_bytes")] == std::to_string(j["dram"]["write_bytes"].get<long long>()));
  CHECK(std::stod(row[col("l2_read_hit_rate")]) == Approx(j["l2"]["read_hit_rate"].get<double>()).epsilon(1e-5));
  CHECK(std::stod(row[col("l2_read_hit_rate")]) > 0.5);  // K_j, V_j re-read from the L2
}

TEST_CASE("bench --results: a results file placed again against today's model, no GPU needed", "[cli][bench]") {
  run_flashlab.check_prints("bench --results " + data("h200-validate-excerpt.json"), {
      "placed against H200-SXM-141GB (L2 60 MiB, 132 SMs",
      "DRAM bytes: the counter pass",
      // fa2_tc: measured 402,686,208 + 127,651,584 B beside the model's prediction for its launch.
      "fa2_tc: median |error| ",
      "points within the target",
  });
  // A GPU no preset knows: the rows as written, and it says so.
  auto js = nlohmann::json::parse(slurp(fs::path(data("h200-validate-excerpt.json"))));
  js["meta"]["gpu"] = "Z80 Turbo";
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "z80.json").string(), js.dump());
  const Run z = run_flashlab("bench --results z80.json");
  REQUIRE(z.code == 0);
  CHECK_THAT(z.out, Catch::Contains("no datasheet preset matches the GPU 'Z80 Turbo'"));
}

TEST_CASE("bench --results runs nothing: a run's flag beside it is refused, named", "[cli][results]") {
  const std::string file = data("h200-validate-excerpt.json");
  for (const char* flag : {"--sweep ring-llama2-7b", "--kernels fa2", "--seq 4K", "--gpus 2", "--json out.json"}) {
    INFO(flag);
    const Run r = run_flashlab(std::string("bench --results ") + file + " " + flag);
    CHECK(r.code == 2);
    const std::string name = std::string(flag).substr(0, std::string(flag).find(' '));
    CHECK_THAT(r.err, Catch::Contains(name + " belongs to a run; --results reads results files and runs nothing"));
  }
  CHECK(run_flashlab(std::string("bench --check-roof --results ") + file + " --sweep perf").code == 2);
}

TEST_CASE("bench --check-roof: every committed results file, no run above its roof", "[cli][roof]") {
  std::string args = "bench --check-roof";
  const fs::path dir = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results";
  for (const auto& e : fs::directory_iterator(dir))
    if (e.path().extension() == ".json") args += " --results " + e.path().string();
  const Run r = run_flashlab(args);
  CHECK(r.code == 0);
  flashlab::test::check_contains_each(r.out, {
      "1347 run(s) checked, 0 above the roof",
      "h200-perf-bench.json: NVIDIA H200 against H200-SXM-141GB: 60 timed run(s) checked "
      "(60 with measured DRAM bytes)",
      "h200-perf-torch.json: NVIDIA H200 against H200-SXM-141GB: 36 timed run(s) checked",
      "88 row(s) left out: checked only, not timed",
  });
}

TEST_CASE("check: the FlashAttention-2 lab's tables, rows flagged and exit 1, check.csv and the roofline written", "[cli][check]") {
  const fs::path out = run_flashlab.path() / "check-flash2-lab";
  fs::remove_all(out);
  const Run r = run_flashlab("check " + data("flash2-lab-tables.csv") + " --out check-flash2-lab");
  CHECK(r.code == 1);
  CHECK(r.err.empty());
  flashlab::test::check_contains_each(r.out, {
      "14 row(s) of " + data("flash2-lab-tables.csv") + " against A100-PCIe-80GB",
      "note: 'Total Flops (FLOPs/s)' read as TFLOP/s",
      "reported 29.8 TFLOP/s is 1.33× the 22.3 its time gives",
      "14 rows: 5 consistent, 9 flagged (4 TFLOP/s off its own time by more than 10 %",
  });
  const auto rows = flashlab::analysis::csv_parse(slurp(out / "check.csv"));
  CHECK(rows.size() == 15);
  CHECK(rows.front().front() == "line");
  const std::string svg = slurp(out / "check-roofline.svg");
  CHECK_THAT(svg, Catch::Contains("flagged rows"));
  CHECK_THAT(svg, Catch::Contains("consistent rows"));
  // Every flagged row labelled with its line: alone ("line 2") or with the rows at its spot ("lines 3, 6, 10"),
  // on the A100's roofline alone and on the H100's among FlashLab's own runs measured there (a crowd of
  // crosses round the rows); a row labelled alone by its own ✕ (the label's start nearer to it than to
  // any other flagged row's), or joined to its label by a leader line.
  const fs::path labs = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "h100-labs.json";
  REQUIRE(run_flashlab("check " + data("flash2-lab-tables.csv") + " --hw H100-SXM5-80GB --out check-flash2-h100 --results " +
                       labs.string()).code == 1);
  for (const fs::path& chart : {out / "check-roofline.svg", run_flashlab.path() / "check-flash2-h100" / "check-roofline.svg"}) {
    INFO(chart.string());
    const std::string drawn = slurp(chart);
    std::set<int> labelled;
    const std::regex text_re(">(lines? [0-9][0-9, ]*)</text>");
    for (auto it = std::sregex_iterator(drawn.begin(), drawn.end(), text_re); it != std::sregex_iterator(); ++it) {
      const std::string t = (*it)[1];
      const std::regex num("[0-9]+");
      for (auto n = std::sregex_iterator(t.begin(), t.end(), num); n != std::sregex_iterator(); ++n)
        labelled.insert(std::stoi(n->str()));
    }
    CHECK(labelled == std::set<int>{2, 3, 5, 6, 9, 10, 12, 13, 14});
  }
  {
    // On the H100: a row labelled alone has the label start nearer its own ✕ than any other flagged row's.
    const std::string drawn = slurp(run_flashlab.path() / "check-flash2-h100" / "check-roofline.svg");
    const auto flagged = drawn.find("data-name=\"flagged rows\"");
    REQUIRE(flagged != std::string::npos);
    std::vector<std::pair<double, double>> crosses;  // each ✕ is two lines; the first's middle
    const std::regex cross_re(R"re(<line x1="([0-9.]+)" y1="([0-9.]+)" x2="([0-9.]+)" y2="([0-9.]+)")re");
    const std::string group = drawn.substr(flagged, drawn.find("</g>", flagged) - flagged);
    size_t k = 0;
    for (auto it = std::sregex_iterator(group.begin(), group.end(), cross_re); it != std::sregex_iterator(); ++it, ++k)
      if (k % 2 == 0)
        crosses.emplace_back((std::stod((*it)[1]) + std::stod((*it)[3])) / 2, (std::stod((*it)[2]) + std::stod((*it)[4])) / 2);
    const std::vector<int> lines{2, 3, 5, 6, 9, 10, 12, 13, 14};  // the flagged rows, in the file's order
    REQUIRE(crosses.size() == lines.size());
    const std::regex alone(R"re(<text x="([0-9.]+)" y="([0-9.]+)"[^>]*>line ([0-9]+)</text>)re");
    size_t checked = 0;
    for (auto it = std::sregex_iterator(drawn.begin(), drawn.end(), alone); it != std::sregex_iterator(); ++it, ++checked) {
      const double x = std::stod((*it)[1]), y = std::stod((*it)[2]);
      const auto own = static_cast<size_t>(std::find(lines.begin(), lines.end(), std::stoi((*it)[3])) - lines.begin());
      REQUIRE(own < lines.size());
      auto from = [&](size_t c) { return std::hypot(crosses[c].first - x, crosses[c].second - y); };
      for (size_t other = 0; other < lines.size(); ++other) {
        INFO("line " << lines[own] << " at " << x << ", " << y << " against line " << lines[other]);
        if (other != own) CHECK(from(own) < from(other));
      }
    }
    CHECK(checked > 0);
  }
  CHECK_THAT(svg, Catch::Contains("so its true point lies at or left of the one drawn"));
  CHECK_THAT(r.out, Catch::Contains("wrote check-flash2-lab/check-roofline.svg"));
}

TEST_CASE("check: every row consistent is exit 0, and FlashLab's own runs join the chart", "[cli][check]") {
  // Lines 3 and 4 of the FlashAttention-2 lab (batch 32 and 64), within 10 % of their times.
  const std::string text = slurp(fs::path(data("flash2-lab-tables.csv")));
  std::istringstream lines(text);
  std::string header, line2, line3, line4;
  std::getline(lines, header);
  std::getline(lines, line2);
  std::getline(lines, line3);
  std::getline(lines, line4);
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "consistent.csv").string(), header + "\n" + line3 + "\n" + line4 + "\n");
  // FlashLab's lab sweeps measured on an H100, beside them on the H100's roofline.
  const fs::path labs = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "h100-labs.json";
  const Run r = run_flashlab("check consistent.csv --hw H100-SXM5-80GB --out check-consistent --results " + labs.string());
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("2 rows: 2 consistent, 0 flagged"));
  const std::string svg = slurp(run_flashlab.path() / "check-consistent" / "check-roofline.svg");
  CHECK_THAT(svg, Catch::Contains("fa2_tc — measured"));
  CHECK_THAT(svg, Catch::Contains("consistent rows"));
  // The same rows against a T4 (65 TFLOP/s fp16): still under its roof.
  CHECK(run_flashlab("check consistent.csv --hw T4").code == 0);
}

TEST_CASE("check: one configuration timed again is flagged when its times spread over the threshold it states",
          "[cli][check]") {
  // The lab's default shape (B=32, N=1024, H=32, d=64) is timed in four of its
  // tables, 6.95–9.38 ms; 16 heads at emb 2048 in two, 6.87–8.72 ms.
  const Run r = run_flashlab("check " + data("flash2-lab-tables.csv"));
  INFO(r.out << r.err);
  CHECK(r.code == 1);
  flashlab::test::check_contains_each(r.out, {
      "repeats: a configuration timed more than once is flagged when its times spread "
      "more than 10 % ((max − min) / min)",
      "B=32 H=32 N=1024 d=64 fp16 fwd: lines 3, 6, 10, 14, 6.95–9.38 ms, spread 35 % — flagged",
      "one of 4 times of its configuration, 6.95–9.38 ms: spread 35 % > 10 %",
      "lines 9, 12, 6.87–8.72 ms, spread 27 % — flagged",
      "6 timed again with a spread over 10 %",
  });
  // A threshold of 30 %: the 27 % pair passes, named without the flag.
  const Run wide = run_flashlab("check " + data("flash2-lab-tables.csv") + " --spread 30");
  CHECK_THAT(wide.out, Catch::Contains("lines 9, 12, 6.87–8.72 ms, spread 27 %\n"));
  CHECK_THAT(wide.out, Catch::Contains("4 timed again with a spread over 30 %"));
  CHECK(run_flashlab("check " + data("flash2-lab-tables.csv") + " --spread x").code == 2);
}

TEST_CASE("check: OOM rows stay in check.csv with their status, nothing measured written as 0", "[cli][check]") {
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "with-oom.csv").string(),
                                        "batch_size,seq_len,num_heads,emb_dim,Forward Time (s),Peak Memory (MB)\n"
                                        "16,1024,32,2048,0.006150229772,644.0004883\n"
                                        "64,2048,32,2048,OOM,OOM\n"
                                        "32,2048,32,2048,,\n");
  const Run r = run_flashlab("check with-oom.csv --out check-oom");
  INFO(r.out << r.err);
  REQUIRE(r.code <= 1);  // a row without a time does not refuse the file
  CHECK_THAT(r.out, Catch::Contains("note: line 4: no time (empty), not checked"));
  CHECK_THAT(r.out, Catch::Contains("; 1 row(s) without a time left out"));
  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "check-oom" / "check.csv"));
  REQUIRE(rows.size() >= 3);
  const auto& h = rows[0];
  auto col = [&](const char* name) { return static_cast<size_t>(std::find(h.begin(), h.end(), name) - h.begin()); };
  REQUIRE(col("status") < h.size());
  CHECK(rows[1][col("status")] == "ok");
  CHECK(rows[2][col("line")] == "3");
  CHECK(rows[2][col("status")] == "OOM");
  for (const char* c : {"time_s", "recomputed_tflops", "memory_bytes", "rate_mismatch"}) CHECK(rows[2][col(c)].empty());
  CHECK_FALSE(rows[2][col("convention_flops")].empty());  // the model's count of the shape, not a measurement
  REQUIRE(rows.size() == 4);
  CHECK(rows[3][col("status")] == "skipped");
  for (const char* c : {"time_s", "recomputed_tflops", "memory_bytes", "rate_mismatch"}) CHECK(rows[3][col(c)].empty());
}

TEST_CASE("check: a column or row it cannot read is exit 2 and one line", "[cli][check]") {
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "bad-row.csv").string(),
                                        "batch,seq,heads,head_dim,time_ms\n32,1024,32,64,8\n32,1O24,32,64,8\n");
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "all-oom.csv").string(),
                                        "batch,seq,heads,head_dim,time_ms\n64,1024,32,64,OOM\n64,2048,32,64,OOM\n");
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "semicolons.csv").string(),
                                        "batch;seq;heads;head_dim;time_ms\n32;1024;32;64;8,5\n");
  flashlab::analysis::write_file_atomic((run_flashlab.path() / "no-unit.csv").string(),
                                        "batch,seq,heads,head_dim,time\n32,1024,32,64,8\n");
  flashlab::test::check_refusals(run_flashlab, {
      {"check bad-row.csv", "bad-row.csv: line 3, column 'seq': '1O24' is not a whole number"},
      {"check no-unit.csv", "no-unit.csv: line 2, column 'time': '8' has no unit, and the column's name gives none"},
      {"check no-unit.csv --tolerance ten", "--tolerance: 'ten' is not a percentage above 0 (e.g. 10)"},
      {"check missing.csv", "missing.csv: cannot open for reading"},
      {"check " + data("flash2-lab-tables.csv") + " --batch 8", "--batch: the file gives the batch in column 'batch_size'"},
      {"check " + data("flash2-lab-tables.csv") + " --results x.json", "--results draws FlashLab's runs on the chart: give --out"},
      {"check " + data("flash2-lab-tables.csv") + " --hw Z80", "--hw:"},
      {"check all-oom.csv", "all-oom.csv: no row to check: all 2 data row(s) say OOM, so none has a time (lines 2–3)"},
      {"check semicolons.csv", "semicolons.csv: line 1: the columns are separated by ';'"},
  });
}
