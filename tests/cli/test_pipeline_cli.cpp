// flashlab pipeline: the Hopper rung's schedule inside a CTA, its launch, the
// timeline as CSV, and a clear refusal (exit code 2) of what the rung cannot run.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "../support/run_flashlab.hpp"

// Its own namespace: the file-local helpers (a scratch runner, a problem
// maker) carry the names other test files give theirs, in one unity batch.
namespace test_pipeline_cli_cases {

using flashlab::test::Run;

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-pipeline-cli");

namespace {

struct Timeline {
  std::string header;
  int rows = 0;
};

// The header line of a timeline CSV the command wrote, and how many rows follow it.
Timeline timeline_csv(const std::string& name) {
  std::ifstream f(run_flashlab.path() / name);
  REQUIRE(f.good());
  Timeline t;
  std::getline(f, t.header);
  for (std::string line; std::getline(f, line);) ++t.rows;
  return t;
}

}  // namespace

TEST_CASE("pipeline prints the schedule of a row block and the launch", "[cli][hopper]") {
  run_flashlab.check_prints(
      "pipeline --batch 2 --heads 4 --seq 1000 --head-dim 128 --causal --row-block 3 --csv timeline.csv", {
          "B_r × B_c = 128 × 128",  // causal up to 1K tokens
          "row block i = 3: 4 K_j, V_j visited",  // rows 384..511 see keys 0..511: 512/128
          "64 CTAs on 132 SMs",  // 2·4·⌈1000/128⌉
          "the L2's share",
      });
  const Timeline t = timeline_csv("timeline.csv");
  CHECK(t.header == "op,unit,warpgroup,j,stage,start_ns,busy_ns,end_ns");
  // Q_i, K_j and V_j of 4 blocks, 2 warpgroups × 3 ops × 4 blocks, the epilogue.
  CHECK(t.rows == 1 + 8 + 24 + 1);
}

TEST_CASE("pipeline takes the rung's row for the sequence and mask, and says when a measured run had other tiles",
          "[cli][hopper]") {
  // d = 64: 256 × 64 up to 1K tokens; the excerpt's run (an older build) had 192 × 128.
  run_flashlab.check_prints("pipeline --batch 16 --heads 32 --seq 1024 --head-dim 64 --results " +
                                std::string(FLASHLAB_TEST_DATA) + "/h200-fa3-hopper-d64-1k-excerpt.json",
                            {
                                "B_r × B_c = 256 × 64 (T_r = 4, T_c = 16), 4 consumer warpgroups",
                                "measured  fa3_hopper 0.351 ms",
                                "(that run had tiles 192 × 128, another build's; the model above is today's 256 × 64)",
                            });
  run_flashlab.check_prints("pipeline --batch 8 --heads 32 --seq 2048 --head-dim 64",
                            {"B_r × B_c = 192 × 128 (T_r = 11, T_c = 16), 3 consumer warpgroups"});
  // d = 128: 128 × 128 up to 1K tokens, persistent when unmasked; 128 × 176 beyond.
  run_flashlab.check_prints("pipeline --batch 2 --heads 4 --seq 1000 --head-dim 128 --row-block 3",
                            {"B_r × B_c = 128 × 128 (T_r = 8, T_c = 8)", "row block i = 3: 8 K_j, V_j visited",
                             "persistent (Q_i in two buffers)", "launch    64 tiles on 64 persistent blocks (1 tile each; "
                             "block b takes tiles b, b + 64, ... as the rung does)"});
  run_flashlab.check_prints("pipeline --batch 2 --heads 4 --seq 1000 --head-dim 128 --causal --row-block 3",
                            {"B_r × B_c = 128 × 128 (T_r = 8, T_c = 8)", "row block i = 3: 4 K_j, V_j visited",
                             "launch    64 CTAs on 132 SMs"});
  run_flashlab.check_prints("pipeline --batch 16 --heads 16 --seq 1024 --head-dim 128",
                            {"launch    2,048 tiles on 132 persistent blocks (at most 16 tiles each; "});
  run_flashlab.check_prints("pipeline --batch 2 --heads 4 --seq 2048 --head-dim 128 --row-block 3",
                            {"B_r × B_c = 128 × 176 (T_r = 16, T_c = 12)", "row block i = 3: 12 K_j, V_j visited"});
}

TEST_CASE("pipeline refuses what the rung cannot run, with exit code 2", "[cli][hopper]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"pipeline --head-dim 96", "--head-dim: the Hopper rung is compiled for d = 64, 128, not d = 96"},
      {"pipeline --dtype fp32", "--dtype: the Hopper rung runs fp16 and bf16, not fp32"},
      {"pipeline --seq 1000 --row-block 8", "--row-block: 8 is outside 0..7"},
  });
  // A results file is read before anything is printed.
  const Run r = run_flashlab("pipeline --results no-such-file.json");
  CHECK(r.code == 2);
  CHECK(r.out.empty());
  CHECK(r.err == "flashlab: error: --results: no-such-file.json: cannot open for reading\n");
}

TEST_CASE("pipeline --pass bwd prints the backward's CTA and its timeline", "[cli][hopper]") {
  run_flashlab.check_prints("pipeline --pass bwd --batch 2 --heads 4 --seq 1000 --head-dim 128 --causal --col-block 3 "
                            "--csv bwd-timeline.csv", {
      "fa3_hopper_bwd",
      "B_r × B_c = 64 × 128 (T_r = 16, T_c = 8)",
      // Column block 3 starts at row block 3·128/64 = 6: 16 − 6 = 10 steps.
      "column block j = 3: 10 Q_i visited (i = 6..15)",
      "lockstep",
      "the barrier opens",
  });
  const Timeline t = timeline_csv("bwd-timeline.csv");
  CHECK(t.header == "op,unit,warpgroup,i,stage,start_ns,busy_ns,work_ns,end_ns");
  // K_j and V_j, 3 copies per step, 2 warpgroups × 9 ops per step (their block of
  // dQ_i stored to shared memory and the writer's addition of it among them), 2 epilogues.
  CHECK(t.rows == 2 + 3 * 10 + 2 * 9 * 10 + 2);
}

TEST_CASE("pipeline --pass bwd refuses what the backward rung cannot run, with exit code 2", "[cli][hopper]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"pipeline --pass bwd --head-dim 96", "--head-dim: the Hopper backward is compiled for d = 64, 128, not d = 96"},
      {"pipeline --pass bwd --dtype fp32", "--dtype: the Hopper backward runs fp16 and bf16, not fp32"},
      {"pipeline --pass bwd --seq 1000 --col-block 8", "--col-block: 8 is outside 0..7"},
      {"pipeline --pass bwd --col-block -1", "--col-block: -1 is outside 0..31"},
      {"pipeline --pass bwd --row-block 1", "--row-block: the backward's CTA owns a column block: use --col-block"},
      {"pipeline --pass fwd+bwd", "--pass: 'fwd+bwd' is not a pass the pipeline shows (expected fwd or bwd)"},
      {"pipeline --col-block 1", "--col-block: only with --pass bwd (the forward's CTA owns a row block: --row-block)"},
      {"pipeline --pass bwd --results runs.json", "--results: the backward's launch is not modelled; only its CTA's schedule"},
  });
}

}  // namespace test_pipeline_cli_cases
