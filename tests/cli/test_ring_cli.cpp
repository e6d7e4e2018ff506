// flashlab ring: the ring's simulation as a user runs it: the summary, JSON
// that parses and agrees with the closed form, the timeline, the
// extrapolation to 32 GPUs, measured runs placed beside the model, and one
// line with exit code 2 for bad input.
#include <catch2/catch.hpp>

#include <cmath>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include <nlohmann/json.hpp>

#include "../support/run_flashlab.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/results/ring_results.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_ring_cli_cases {

using flashlab::test::contains;
using flashlab::test::Run;
namespace fs = std::filesystem;

namespace {

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-ring-cli");

}  // namespace

TEST_CASE("ring prints the passes of a model's attention over P GPUs", "[cli][ring]") {
  const Run r = run_flashlab.check_prints("ring --model llama3.2-3b --seq 64K --gpus 8 --pass fwd+bwd", {
      "B=1 H=24 H_kv=8 N=65536 d=128 bf16 causal, 8 GPUs zigzag, fwd+bwd",
      "16 chunks of 4096 tokens",
      "NVLink 4",
      "scaling efficiency",
  });
  // The kernels' fused steps read the H_kv heads in place: no expanded copy.
  CHECK_FALSE(contains(r.out, "K_j, V_j expanded to H heads"));
  CHECK(contains(r.out, "dK, dV travelling (fp32, 2 buffers)"));
  CHECK_FALSE(contains(r.out, "between the"));  // one node
}

TEST_CASE("ring --json parses and carries the bytes of the closed form", "[cli][ring]") {
  const Run r = run_flashlab("ring --heads 16 --kv-heads 4 --head-dim 64 --seq 8K --gpus 4 --layout contiguous "
                             "--no-causal --batch 2 --json --timeline");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const nlohmann::json j = nlohmann::json::parse(r.out);
  CHECK(j["problem"]["gpus"] == 4);
  CHECK(j["problem"]["causal"] == false);
  CHECK(j["problem"]["layout"] == "contiguous");
  // 2·B·H_kv·(N/P)·d·2 bytes of K and V per step.
  CHECK(j["forward"]["bytes_per_step"].get<long long>() == 2LL * 2 * 4 * 2048 * 64 * 2);
  CHECK(j["backward"].is_null());
  CHECK(j["topology"]["intra"]["id"] == "nvlink4");
  CHECK_FALSE(j["topology"]["intra"]["source"].get<std::string>().empty());
  int transfers = 0;
  for (const auto& e : j["events"])
    if (e["kind"] == "transfer") ++transfers;
  CHECK(transfers == 4 * 3);
  CHECK(j["scaling_efficiency"].get<double>() > 0);
  CHECK(j["scaling_efficiency"].get<double>() <= 1.0);
}

TEST_CASE("ring --timeline shows the contiguous layout's idle bubbles, --csv writes the events", "[cli][ring]") {
  const Run r = run_flashlab("ring --heads 8 --seq 4096 --gpus 4 --layout contiguous --timeline --csv events.csv");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(contains(r.out, "idle"));
  CHECK(contains(r.out, "transfer K,V"));
  std::ifstream f(run_flashlab.path() / "events.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  CHECK(line == "pass,gpu,step,kind,start_s,end_s,kv_owner,peer,gradients,crosses_nodes,bytes,pairs,flops");
}

TEST_CASE("ring --extrapolate prints P = 1 … 32 for N = 8K … 128K and where communication stops hiding",
          "[cli][ring]") {
  run_flashlab.check_prints("ring --extrapolate --model all --pass fwd+bwd --csv sweep.csv", {
      "P=32 (4 nodes)",
      "P=16 (2 nodes)",
      "llama2-7b",
      "llama3.2-3b",
      "llama3.2-1b",
      "128K",
      "exposed from P=",
  });
  std::ifstream f(run_flashlab.path() / "sweep.csv");
  REQUIRE(f.good());
  int lines = 0;
  std::string line;
  while (std::getline(f, line)) ++lines;
  CHECK(lines == 1 + 3 * 5 * 6);
}

TEST_CASE("ring with the host measured: one process drives a node's GPUs, --ranks gives each GPU its own",
          "[cli][ring][host]") {
  const std::string base = "ring --model llama3.2-1b --seq 8K --gpus 8 --pass fwd+bwd --rung-timing measured-nvidia-h200 "
                           "--link measured-nvidia-h200-2gpu-2026-11-27 --json";
  const Run one = run_flashlab(base);
  INFO(one.err);
  REQUIRE(one.code == 0);
  const Run ranks = run_flashlab(base + " --ranks");
  REQUIRE(ranks.code == 0);
  const auto a = nlohmann::json::parse(one.out), b = nlohmann::json::parse(ranks.out);
  // 1K tokens a GPU: one thread issuing 8 GPUs' turns is slower than the GPUs; a process per GPU is not.
  CHECK(b["time_s"].get<double>() < 0.8 * a["time_s"].get<double>());
  CHECK(a["host"]["process_per_gpu"] == false);
  CHECK(b["host"]["process_per_gpu"] == true);
  // The measured 2-GPU exchange scaled: 8 GPUs' parts issued by one host against one GPU's part.
  CHECK(a["host"]["exchange_us"].get<double>() == Approx(8 * b["host"]["exchange_us"].get<double>()));
  const Run text = run_flashlab("ring --model llama3.2-1b --seq 8K --gpus 8 --rung-timing measured-nvidia-h200 "
                                "--link measured-nvidia-h200-2gpu-2026-11-27");
  REQUIRE(text.code == 0);
  CHECK(contains(text.out, "host      one thread issues every GPU's work: 0.25 µs a stream call"));
  CHECK(contains(text.out, "compute   each chunk pair's launch"));
  CHECK_FALSE(contains(text.out, "FlashAttention-2's FLOPs and HBM requests per chunk pair"));
  // Without the launch model the host is not timed: the efficiency's line, no host line.
  const Run plain = run_flashlab("ring --model llama3.2-1b --seq 8K --gpus 8 --link measured-nvidia-h200-2gpu-2026-11-27");
  REQUIRE(plain.code == 0);
  CHECK(contains(plain.out, "compute   FlashAttention-2's FLOPs and HBM requests per chunk pair"));
  CHECK_FALSE(contains(plain.out, "host      "));
  // --ranks without the host's prices, or beside a results file: one line, exit 2.
  const Run bare = run_flashlab("ring --model llama3.2-1b --ranks");
  CHECK(bare.code == 2);
  CHECK(contains(bare.err, "--ranks prices a process per GPU's issuing"));
  const Run with_results = run_flashlab("ring --ranks --results " + std::string(FLASHLAB_TEST_DATA) +
                                        "/ring-results-example.json");
  CHECK(with_results.code == 2);
  CHECK(contains(with_results.err, "--ranks is for a simulation"));
}

TEST_CASE("ring --results places measured runs beside the simulation", "[cli][ring]") {
  using namespace flashlab;
  sim::MeasuredRuns runs;
  runs.meta.gpu = "NVIDIA H200";
  sim::MeasuredRun run;
  run.problem = sim::default_ring_problem();
  run.problem.batch = 1;
  run.problem.heads = 32;
  run.problem.kv_heads = 32;
  run.problem.seq_q = 16384;
  run.problem.head_dim = 128;
  run.problem.parallel_part().gpus = 2;
  run.kernel = "fa3_hopper";
  run.parallel_part().transport = "nccl";
  run.time_ms_median = run.time_ms_min = run.time_ms_max = 2.0;
  run.parallel_part().forward.compute_ms = 1.9;
  run.parallel_part().forward.comm_ms = 0.3;
  runs.runs.push_back(run);
  run.problem.parallel_part().gpus = 1;
  run.time_ms_median = 3.6;
  runs.runs.push_back(run);
  {
    std::ofstream f(run_flashlab.path() / "ring.json");
    f << analysis::ring_results_to_json(runs);
  }
  const Run r = run_flashlab.check_prints("ring --results ring.json --rung-timing none",
                                          {"calibrated from the P = 1 run", "predicted", "error"});
  const Run j = run_flashlab("ring --results ring.json --json --rung-timing none");
  REQUIRE(j.code == 0);
  const nlohmann::json out = nlohmann::json::parse(j.out);
  const nlohmann::json& placed = out["runs"];
  REQUIRE(placed.size() == 2);
  CHECK(placed[0]["efficiency"]["from_single_gpu_run"] == true);
  // The score counts the multi-GPU passes only: the P = 1 run calibrates.
  const nlohmann::json& score = out["score"];
  int multi_gpu_passes = 0;
  for (const nlohmann::json& placed_run : placed)
    if (placed_run["problem"]["gpus"].get<int>() > 1) multi_gpu_passes += static_cast<int>(placed_run["passes"].size());
  CHECK(multi_gpu_passes > 0);
  CHECK(score["time"]["count"] == multi_gpu_passes);
  CHECK(score["time"]["count"].get<int>() == score["time_long"]["count"].get<int>() + score["time_short"]["count"].get<int>());
  double worst = 0, sum = 0;
  for (const nlohmann::json& placed_run : placed)
    if (placed_run["problem"]["gpus"].get<int>() > 1)
      for (const nlohmann::json& p : placed_run["passes"]) {
        const double e = p["time_error"].get<double>();
        sum += std::fabs(e);
        if (std::fabs(e) > std::fabs(worst)) worst = e;
      }
  CHECK(score["time"]["worst"].get<double>() == Approx(worst));
  CHECK(score["time"]["mean_abs"].get<double>() == Approx(sum / multi_gpu_passes));
  CHECK(contains(r.out, "The model's score on this file"));
  // By default the launch model fitted on an H200 (assets/rungs) times the
  // compute: no efficiency from the file's P = 1 run, which becomes a prediction.
  const Run l = run_flashlab("ring --results ring.json --json");
  REQUIRE(l.code == 0);
  const nlohmann::json lo = nlohmann::json::parse(l.out);
  CHECK(lo["runs"][0]["efficiency"]["launch_model"] == true);
  CHECK(lo["runs"][0]["efficiency"]["from_single_gpu_run"] == false);
  CHECK_THAT(lo["runs"][0]["efficiency"]["note"].get<std::string>(), Catch::Contains("fitted to"));
  CHECK(lo["score"]["time_one_gpu"]["count"].get<int>() > 0);
  const Run bad = run_flashlab("ring --results ring.json --rung-timing nowhere.json");
  CHECK(bad.code == 2);
  CHECK(contains(bad.err, "--rung-timing: cannot read 'nowhere.json'"));
}

TEST_CASE("ring --extrapolate --seq takes the lengths a small model is run at", "[cli][ring]") {
  const Run r = run_flashlab("ring --extrapolate --model llama3.2-1b --seq 256,512,1024 --csv short.csv");
  REQUIRE(r.code == 0);
  const auto rows = flashlab::analysis::csv_parse(flashlab::test::slurp(run_flashlab.path() / "short.csv"));
  REQUIRE(rows.size() > 1);
  const auto col = std::find(rows[0].begin(), rows[0].end(), "seq") - rows[0].begin();
  REQUIRE(col < static_cast<long>(rows[0].size()));
  std::set<std::string> seqs;
  for (size_t k = 1; k < rows.size(); ++k)
    if (rows[k].size() > static_cast<size_t>(col)) seqs.insert(rows[k][static_cast<size_t>(col)]);
  CHECK(seqs == std::set<std::string>{"256", "512", "1024"});
}

TEST_CASE("ring refuses bad input with one line and exit code 2", "[cli][ring]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"ring --gpus 0", "--gpus"},
      {"ring --model llama9", "unknown model 'llama9'"},
      {"ring --model llama2-7b --heads 8", "--heads: --model llama2-7b sets H, H_kv and d"},
      {"ring --heads 24 --kv-heads 7", "not a multiple of H_kv = 7"},
      {"ring --seq 7 --gpus 4", "cannot fill the 8 chunks"},
      {"ring --layout spiral", "--layout: 'spiral'"},
      {"ring --pass bwd", "use fwd+bwd"},
      {"ring --pass twice", "--pass: 'twice' is not fwd or fwd+bwd"},
      {"ring --link warp", "--link: unknown link 'warp'"},
      {"ring --efficiency 1.5", "--efficiency: '1.5' is not a fraction in (0, 1]"},
      {"ring --hw NoSuchGPU", "--hw"},
      {"ring --extrapolate --gpus 4", "--gpus: --extrapolate sweeps"},
      {"ring --extrapolate --seq 1K,12Q", "--seq"},
      {"ring --model all", "--model all names the three models for --extrapolate"},
      {"ring --results no-such-file.json", "--results"},
      {"ring --seq 12Q", "--seq"},
      // The problem's fields as every front end parses them (sim::parse_problem).
      {"ring --dtype fp8", "--dtype: unknown dtype 'fp8' (expected fp16, bf16 or fp32)"},
      {"ring --batch 0", "--batch: must be at least 1 (got '0')"},
      {"ring --gpus 5000", "the ring needs 1 to 4096 GPUs, not 5000"},
  });
}

// The H200's rung file is what the committed runs give: the launch model from
// the rung-timing sweep, the power limit from the one-GPU power-cap sweep.
TEST_CASE("flashlab ceilings rungs --power: the H200's rung file again from its committed runs", "[cli][ring][power]") {
  const fs::path docs = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results";
  const fs::path launch = docs / "h200-rung-timing.json", power = docs / "power-cap" / "h200-ring-power-cap.json";
  // The Hopper backward's runs, measured later on another H200: the same sweeps with that rung.
  const fs::path launch_bwd = docs / "h200-hopper-bwd-rung-timing.json",
                 power_bwd = docs / "power-cap" / "h200-hopper-bwd-ring-power-cap.json";
  const fs::path asset = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "assets" / "rungs" / "measured-nvidia-h200.json";
  for (const fs::path& f : {launch, power, launch_bwd, power_bwd, asset})
    if (!fs::exists(f)) {
      WARN("the H200's committed runs are not here (" + f.string() + "): skipped");
      return;
    }
  const Run r = run_flashlab("ceilings rungs --results '" + launch.string() + "' --results '" + launch_bwd.string() +
                             "' --power '" + power.string() + "' --power '" + power_bwd.string() + "' --out rungs.json");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("The rungs under the power limit: after 42 ms"));
  CHECK_THAT(r.out, Catch::Contains("fa3_hopper_bwd"));
  CHECK(nlohmann::json::parse(flashlab::test::slurp(run_flashlab.path() / "rungs.json")) == nlohmann::json::parse(flashlab::test::slurp(asset)));
  // A power file of another GPU, and one that is not there: one line, exit 2.
  const fs::path h100 = docs / "h100-rung-timing.json";
  if (fs::exists(h100)) {
    const Run other = run_flashlab("ceilings rungs --results '" + h100.string() + "' --power '" + power.string() + "'");
    CHECK(other.code == 2);
    CHECK_THAT(other.err, Catch::Contains("was measured on NVIDIA H200, the launch model on NVIDIA H100"));
  }
  // Power files of two GPUs: one line, exit 2.
  const fs::path h100_ring = docs / "ring" / "h100x2-ring.json";
  if (fs::exists(h100_ring)) {
    const Run mixed = run_flashlab("ceilings rungs --results '" + launch.string() + "' --power '" + power.string() +
                                   "' --power '" + h100_ring.string() + "'");
    CHECK(mixed.code == 2);
    CHECK_THAT(mixed.err, Catch::Contains("the power limit is fitted for one GPU"));
  }
  const Run missing = run_flashlab("ceilings rungs --results '" + launch.string() + "' --power nowhere.json");
  CHECK(missing.code == 2);
  CHECK_THAT(missing.err, Catch::Contains("--power: "));
}

}  // namespace test_ring_cli_cases
