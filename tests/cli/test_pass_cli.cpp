// --pass fwd | bwd | fwd+bwd for sim, compare and sweep: the backward of an
// algorithm, a training step as the sum of its passes, the convention's
// 2.5× and 3.5×, the memory a step keeps, and the paper's table.
#include <catch2/catch.hpp>

#include <algorithm>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/text/csv.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_pass_cli_cases {

using flashlab::test::Run;
using flashlab::test::slurp;

namespace {

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-pass-cli");

std::string data(const char* name) { return std::string(FLASHLAB_TEST_DATA) + "/" + name; }
}  // namespace

TEST_CASE("sim --pass bwd simulates the algorithm's backward, by its convention", "[cli][pass]") {
  const Run r = run_flashlab("sim --algo fa2 --pass bwd --batch 2 --heads 4 --seq 1000 --head-dim 64 --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["algorithm"] == "fa2_bwd");
  // 10·B·H·N²·d: five GEMMs of 2·N²·d against the forward's two.
  CHECK(j["flops"]["convention"].get<long long>() == 10LL * 2 * 4 * 1000 * 1000 * 64);
  // The backward reads dO and writes dQ, dK, dV.
  CHECK(j["hbm"]["per_tensor"].contains("dO"));
  CHECK(j["hbm"]["per_tensor"]["dK"]["write_bytes"].get<long long>() == 2LL * 4 * 1000 * 64 * 2);
  // Naming the backward directly is the same.
  const Run same = run_flashlab("sim --algo fa2_bwd --batch 2 --heads 4 --seq 1000 --head-dim 64 --json");
  REQUIRE(same.code == 0);
  CHECK(nlohmann::json::parse(same.out) == j);
}

TEST_CASE("sim --pass fwd+bwd: the training step is the sum of its passes", "[cli][pass]") {
  const Run r = run_flashlab("sim --algo fa2 --pass fwd+bwd --batch 1 --heads 2 --seq 777 --head-dim 64 --causal --json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const auto j = nlohmann::json::parse(r.out);
  REQUIRE(j["passes"].size() == 2);
  CHECK(j["passes"][0]["algorithm"] == "fa2");
  CHECK(j["passes"][1]["algorithm"] == "fa2_bwd");
  long long reads = 0, matmul = 0;
  for (const auto& p : j["passes"]) {
    reads += p["hbm"]["read_bytes"].get<long long>();
    matmul += p["flops"]["matmul"].get<long long>();
  }
  CHECK(j["step"]["hbm_read_bytes"].get<long long>() == reads);
  CHECK(j["step"]["matmul_flops"].get<long long>() == matmul);
  // 14·B·H·N²·d, halved when causal.
  CHECK(j["step"]["convention_flops"].get<double>() == Approx(14.0 * 2 * 777 * 777 * 64 / 2));
  // FlashAttention-2 keeps O (fp16) and the logsumexp (fp32) for its backward.
  CHECK(j["memory"]["saved"]["O"].get<long long>() == 2LL * 777 * 64 * 2);
  CHECK(j["memory"]["saved"]["LSE"].get<long long>() == 2LL * 777 * 4);
  CHECK(j["memory"]["saved"].size() == 2);

  const Run text = run_flashlab("sim --algo standard --pass fwd+bwd");
  REQUIRE(text.code == 0);
  CHECK_THAT(text.out, Catch::Contains("Training step (standard fwd+bwd"));
  CHECK_THAT(text.out, Catch::Contains("kept by the forward for the backward: P 2 GiB"));
}

TEST_CASE("compare --pass fwd+bwd prints the FlashAttention paper's table beside the model", "[cli][pass]") {
  run_flashlab.check_prints("compare --pass fwd+bwd --csv step.csv", {
      "standard fwd+bwd",
      "The FlashAttention paper's table",
      "40.3",
      "14·B·H·N²·d",
      "Kept for the backward",
  });
  // Another problem: the paper's columns are left out, and it says why.
  const Run other = run_flashlab("compare --pass fwd+bwd --seq 2048 --csv step2.csv");
  REQUIRE(other.code == 0);
  CHECK_THAT(other.out, Catch::Contains("this problem is not the paper's"));
}

TEST_CASE("compare --pass fwd+bwd --results: each backward rung beside its own forward rung, the step summed",
          "[cli][pass][compare]") {
  // GPT-2 medium's training step measured on an H200, both passes with counters.
  const Run r = run_flashlab.check_prints("compare --pass fwd+bwd --hw H200-SXM-141GB --csv step3.csv --results " +
                                          data("h200-paper-step.json"), {
      "Every measured run against today's model: the training step",
      "placed with today's model on H200-SXM-141GB",
      // The registry pairs the rungs: fa2_tc with fa2_tc_bwd, fa2 with fa2_bwd, naive_cublas with naive_bwd.
      "fa2_tc + fa2_tc_bwd",
      "fa2 + fa2_bwd",
      "naive_cublas + naive_bwd",
  });
  // fa2_tc 0.53 GB and fa2_tc_bwd 2.29 GB measured: the step's 2.82 GB.
  const auto line = r.out.substr(r.out.find("fa2_tc + fa2_tc_bwd"));
  CHECK_THAT(line.substr(0, line.find('\n')), Catch::Contains("2.82 GB"));
  // Forward rungs without a backward rung are named once, not listed as steps.
  CHECK_THAT(r.out, Catch::Contains("not in the table: naive: no backward rung (1 run); fa1: no backward rung (1 run)"));
  // A file with forward runs alone: each paired rung's forward listed, the backward's cells empty, and why.
  const Run half = run_flashlab("compare --pass fwd+bwd --hw H200-SXM-141GB --csv step4.csv --results " +
                                data("h200-validate-excerpt.json"));
  REQUIRE(half.code == 0);
  const auto fa2 = half.out.substr(half.out.find("fa2 + fa2_bwd"));
  const std::string fa2_line = fa2.substr(0, fa2.find('\n'));
  CHECK_THAT(fa2_line, Catch::Contains("no run of fa2_bwd (the backward) of this problem"));
  CHECK(fa2_line.find(" - ") != std::string::npos);
}

TEST_CASE("compare --pass --results: today's model for every measured problem, not the file's predictions",
          "[cli][pass][compare]") {
  // A fixture whose rows carry predictions of an older model (1 GB read, 0 written, for every run).
  const std::string file = data("h200-step-older-model.json");
  const Run r = run_flashlab("compare --pass fwd+bwd --csv old.csv --measured-csv old-measured.csv --results " + file);
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("its own predictions differ from today's model at 4 of 4 runs"));
  CHECK_THAT(r.out, Catch::Contains("the file's model is older"));

  // Today's model for each run, computed here the way bench --results places a file.
  const flashlab::analysis::BenchResults written = flashlab::analysis::bench_from_file(file);
  const auto hw = flashlab::analysis::results_hardware(written.meta, flashlab::analysis::datasheet_presets());
  REQUIRE(hw);
  const flashlab::analysis::BenchResults today = flashlab::analysis::replace_results(written, *hw);
  auto predicted = [&](const std::string& kernel) -> long long {
    for (const auto& row : today.rows)
      if (row.kernel == kernel) return row.predicted_dram_read_bytes + row.predicted_dram_write_bytes;
    return -1LL;
  };
  REQUIRE(predicted("fa2_tc") > 0);
  REQUIRE(predicted("fa2_tc_bwd") > 0);

  const auto rows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "old-measured.csv"));
  REQUIRE(rows.size() == 1 + 2);  // fa2 + fa2_bwd (the backward not run), fa2_tc + fa2_tc_bwd
  const auto& h = rows[0];
  const auto col = [&](const std::string& name) { return flashlab::test::column(h, name); };
  const auto& tc = rows[2];
  CHECK(tc[col("rungs")] == "fa2_tc + fa2_tc_bwd");
  CHECK(tc[col("bwd_file_predicted_dram_read_bytes")] == "1000000000");
  CHECK(std::stoll(tc[col("fwd_predicted_dram_read_bytes")]) + std::stoll(tc[col("fwd_predicted_dram_write_bytes")]) ==
        predicted("fa2_tc"));
  CHECK(std::stoll(tc[col("predicted_dram_bytes")]) == predicted("fa2_tc") + predicted("fa2_tc_bwd"));
  CHECK(tc[col("file_predicted_dram_bytes")] == "2000000000");
  CHECK(std::stoll(tc[col("measured_dram_bytes")]) > 0);
  // The rung whose backward did not run: its forward's bytes, no step, and why.
  const auto& fa2 = rows[1];
  CHECK(fa2[col("rungs")] == "fa2 + fa2_bwd");
  CHECK(fa2[col("fwd_measured_dram_read_bytes")] != "");
  CHECK(fa2[col("bwd_measured_dram_read_bytes")] == "");
  CHECK(fa2[col("measured_dram_bytes")] == "");
  CHECK(fa2[col("predicted_dram_bytes")] == "");
  CHECK(fa2[col("why_not")] == "no run of fa2_bwd (the backward) of this problem");
  // The step line prints today's prediction (2.82 GB), not the file's 2.00 GB.
  const auto at = r.out.substr(r.out.find("fa2_tc + fa2_tc_bwd"));
  const std::string step_line = at.substr(0, at.find('\n'));
  CHECK_THAT(step_line, Catch::Contains("2.82 GB"));
  CHECK(step_line.find("2.00 GB") == std::string::npos);
  CHECK(step_line.find("1.00 GB") == std::string::npos);

  // --pass fwd and --pass bwd: each run of the pass its own row.
  const Run fwd = run_flashlab("compare --pass fwd --csv old.csv --measured-csv fwd.csv --results " + file);
  REQUIRE(fwd.code == 0);
  CHECK(flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "fwd.csv")).size() == 1 + 3);
  const Run bwd = run_flashlab("compare --pass bwd --csv old.csv --measured-csv bwd.csv --results " + file);
  REQUIRE(bwd.code == 0);
  const auto brows = flashlab::analysis::csv_parse(slurp(run_flashlab.path() / "bwd.csv"));
  REQUIRE(brows.size() == 1 + 1);
  CHECK(brows[1][col("rungs")] == "fa2_tc_bwd");
}

TEST_CASE("compare --pass --results: the forward and the backward runs in two files of one GPU", "[cli][pass][compare]") {
  // The validate excerpt's forward runs and the fixture's backward run, both of an H200.
  run_flashlab.check_prints("compare --pass fwd+bwd --csv two.csv --results " + data("h200-validate-excerpt.json") +
                            " --results " + data("h200-step-older-model.json"), {
      "h200-validate-excerpt.json + ",
      "B=128 H=8 N=1024 d=64 fp16",
      "B=64 H=16 N=1024 d=64 fp16",
  });
}

TEST_CASE("compare --pass --results: a file it cannot compare is one line and exit code 2", "[cli][pass][compare]") {
  const std::pair<std::string, std::string> cases[] = {
      {"compare --pass fwd+bwd --results /nonexistent-dir/r.json", "--results: /nonexistent-dir/r.json: cannot open"},
      {"compare --pass fwd+bwd --results " + data("lab-first-flashlab-excerpt.json"), "has no DRAM counters"},
      {"compare --pass sideways --results " + data("h200-paper-step.json"), "--pass: 'sideways' is not a pass"},
      {"compare --pass fwd+bwd --results " + data("h200-paper-step.json") + " --results " + data("t4-runs.json"),
       "a report draws one GPU's runs"},
      {"compare --measured-csv m.csv", "--measured-csv: needs --results and --pass"},
  };
  for (const auto& [args, message] : cases) {
    const Run r = run_flashlab(args + " --csv err.csv");
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
    CHECK(r.out.empty());
  }
}

TEST_CASE("sweep --pass: the backward rows, and the training step's sums", "[cli][pass]") {
  const Run bwd = run_flashlab("sweep --vary seq=512,1024 --pass bwd");
  REQUIRE(bwd.code == 0);
  CHECK_THAT(bwd.out, Catch::Contains("fa2_bwd"));
  CHECK_THAT(bwd.out, Catch::Contains("standard_bwd"));
  const Run step = run_flashlab("sweep --vary seq=512,1024 --algos fa2 --pass fwd+bwd");
  REQUIRE(step.code == 0);
  CHECK_THAT(step.out, Catch::Contains("fa2 fwd+bwd"));
}

TEST_CASE("pass flag: bad values are one line and exit code 2", "[cli][pass]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"sim --pass sideways", "--pass: 'sideways' is not a pass"},
      {"sim --pass fwd+bwd --trace t.csv", "--trace writes one pass"},
      {"compare --pass backwards", "--pass:"},
      {"sweep --vary seq=512 --pass nope", "--pass:"},
  });
}

}  // namespace test_pass_cli_cases
