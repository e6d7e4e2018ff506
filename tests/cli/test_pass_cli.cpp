// --pass fwd | bwd | fwd+bwd for sim, compare and sweep: the backward of an
// algorithm, a training step as the sum of its passes, the convention's
// 2.5× and 3.5×, the memory a step keeps, and the paper's table.
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"

using flashlab::test::Run;

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
  const Run r = run_flashlab("compare --pass fwd+bwd --csv step.csv");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("standard fwd+bwd"));
  CHECK_THAT(r.out, Catch::Contains("The FlashAttention paper's table"));
  CHECK_THAT(r.out, Catch::Contains("40.3"));
  CHECK_THAT(r.out, Catch::Contains("14·B·H·N²·d"));
  CHECK_THAT(r.out, Catch::Contains("Kept for the backward"));
  // Another problem: the paper's columns are left out, and it says why.
  const Run other = run_flashlab("compare --pass fwd+bwd --seq 2048 --csv step2.csv");
  REQUIRE(other.code == 0);
  CHECK_THAT(other.out, Catch::Contains("this problem is not the paper's"));
}

TEST_CASE("compare --pass fwd+bwd --results: each backward rung beside its own forward rung, the step summed",
          "[cli][pass][compare]") {
  // GPT-2 medium's training step measured on an H200, both passes with counters.
  const Run r = run_flashlab("compare --pass fwd+bwd --hw H200-SXM-141GB --csv step3.csv --results " +
                             data("h200-paper-step.json"));
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("The training step rung by rung"));
  CHECK_THAT(r.out, Catch::Contains("placed with today's model on H200-SXM-141GB"));
  // The registry pairs the rungs: fa2_tc with fa2_tc_bwd, fa2 with fa2_bwd, naive_cublas with naive_bwd.
  CHECK_THAT(r.out, Catch::Contains("fa2_tc + fa2_tc_bwd"));
  CHECK_THAT(r.out, Catch::Contains("fa2 + fa2_bwd"));
  CHECK_THAT(r.out, Catch::Contains("naive_cublas + naive_bwd"));
  // fa2_tc 0.53 GB and fa2_tc_bwd 2.29 GB measured: the step's 2.82 GB.
  const auto line = r.out.substr(r.out.find("fa2_tc + fa2_tc_bwd"));
  CHECK_THAT(line.substr(0, line.find('\n')), Catch::Contains("2.82 GB"));
  // A file with the backward alone: the forward rung's run is missing, and it says so.
  const Run half = run_flashlab("compare --pass fwd+bwd --hw H200-SXM-141GB --batch 128 --heads 8 --seq 1024 "
                                "--head-dim 64 --csv step4.csv --results " + data("h200-validate-excerpt.json"));
  REQUIRE(half.code == 0);
  CHECK_THAT(half.out, Catch::Contains("no backward run of this problem in the file"));
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
  const std::pair<std::string, std::string> cases[] = {
      {"sim --pass sideways", "--pass: 'sideways' is not a pass"},
      {"sim --pass fwd+bwd --trace t.csv", "--trace writes one pass"},
      {"compare --pass backwards", "--pass:"},
      {"sweep --vary seq=512 --pass nope", "--pass:"},
  };
  for (const auto& [args, message] : cases) {
    const Run r = run_flashlab(args);
    INFO(args << "\n" << r.err);
    CHECK(r.code == 2);
    CHECK_THAT(r.err, Catch::Contains(message));
  }
}
