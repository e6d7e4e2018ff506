// flashlab pipeline: the Hopper rung's schedule inside a CTA, its launch, the
// timeline as CSV, and a clear refusal (exit code 2) of what the rung cannot run.
#include <catch2/catch.hpp>

#include <fstream>
#include <sstream>

#include "../support/run_flashlab.hpp"

using flashlab::test::Run;

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-pipeline-cli");

TEST_CASE("pipeline prints the schedule of a row block and the launch", "[cli][hopper]") {
  const Run r = run_flashlab("pipeline --batch 2 --heads 4 --seq 1000 --head-dim 128 --causal --row-block 3 --csv timeline.csv");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("B_r × B_c = 128 × 128") != std::string::npos);
  CHECK(r.out.find("row block i = 3: 4 K_j, V_j visited") != std::string::npos);
  CHECK(r.out.find("64 CTAs on 132 SMs") != std::string::npos);  // 2·4·⌈1000/128⌉
  CHECK(r.out.find("the L2's share") != std::string::npos);
  std::ifstream f(run_flashlab.path() / "timeline.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  CHECK(line == "op,unit,warpgroup,j,stage,start_ns,busy_ns,end_ns");
  int rows = 0;
  while (std::getline(f, line)) ++rows;
  // Q_i, K_j and V_j of 4 blocks, 2 warpgroups × 3 ops × 4 blocks, the epilogue.
  CHECK(rows == 1 + 8 + 24 + 1);
}

TEST_CASE("pipeline refuses what the rung cannot run, with exit code 2", "[cli][hopper]") {
  for (const char* args : {"pipeline --head-dim 96", "pipeline --dtype fp32", "pipeline --seq 1000 --row-block 8",
                           "pipeline --results no-such-file.json"}) {
    CAPTURE(args);
    const Run r = run_flashlab(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("flashlab: error:") != std::string::npos);
  }
  const Run d = run_flashlab("pipeline --head-dim 96");
  CHECK(d.err.find("compiled for d = 64, 128") != std::string::npos);
}

TEST_CASE("pipeline --pass bwd prints the backward's CTA and its timeline", "[cli][hopper]") {
  const Run r = run_flashlab("pipeline --pass bwd --batch 2 --heads 4 --seq 1000 --head-dim 128 --causal --col-block 3 "
                             "--csv bwd-timeline.csv");
  INFO(r.err);
  REQUIRE(r.code == 0);
  CHECK(r.out.find("fa3_hopper_bwd") != std::string::npos);
  CHECK(r.out.find("B_r × B_c = 64 × 128 (T_r = 16, T_c = 8)") != std::string::npos);
  // Column block 3 starts at row block 3·128/64 = 6: 16 − 6 = 10 steps.
  CHECK(r.out.find("column block j = 3: 10 Q_i visited (i = 6..15)") != std::string::npos);
  CHECK(r.out.find("lockstep") != std::string::npos);
  CHECK(r.out.find("the barrier opens") != std::string::npos);
  std::ifstream f(run_flashlab.path() / "bwd-timeline.csv");
  REQUIRE(f.good());
  std::string line;
  std::getline(f, line);
  CHECK(line == "op,unit,warpgroup,i,stage,start_ns,busy_ns,work_ns,end_ns");
  int rows = 0;
  while (std::getline(f, line)) ++rows;
  // K_j and V_j, 3 copies per step, 2 warpgroups × 8 ops per step, 2 epilogues.
  CHECK(rows == 2 + 3 * 10 + 2 * 8 * 10 + 2);
}

TEST_CASE("pipeline --pass bwd refuses what the backward rung cannot run, with exit code 2", "[cli][hopper]") {
  for (const char* args : {"pipeline --pass bwd --head-dim 96", "pipeline --pass bwd --dtype fp32",
                           "pipeline --pass bwd --seq 1000 --col-block 8", "pipeline --pass bwd --col-block -1",
                           "pipeline --pass bwd --row-block 1", "pipeline --pass fwd+bwd", "pipeline --col-block 1",
                           "pipeline --pass bwd --results runs.json"}) {
    CAPTURE(args);
    const Run r = run_flashlab(args);
    CHECK(r.code == 2);
    CHECK(r.err.find("flashlab: error:") != std::string::npos);
  }
  const Run d = run_flashlab("pipeline --pass bwd --head-dim 96");
  CHECK(d.err.find("the Hopper backward is compiled for d = 64, 128") != std::string::npos);
}
