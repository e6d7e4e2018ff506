// `flashlab ceilings` and `flashlab hw compare` as a user runs them: one-line
// errors with exit 2 where nothing can be measured, profiles that load
// wherever a preset does, charts written without a GPU.
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "../analysis/profile_fixture.hpp"
#include "../support/run_flashlab.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/ceilings/ceilings.hpp"

namespace fs = std::filesystem;
using namespace flashlab;

namespace {

using flashlab::test::Run;
using flashlab::test::slurp;

// `flashlab ARGS` in this file's own scratch folder (run_flashlab.path()).
const flashlab::test::ScratchRuns run_flashlab("flashlab-ceilings-cli");

std::string write_profile() {
  const std::string path = (run_flashlab.path() / "measured.json").string();
  analysis::write_file_atomic(path, sim::profile_to_json(flashlab::test::h100_like_profile()));
  return path;
}

std::string write_results() {
  analysis::BenchResults r;
  r.meta.gpu = "NVIDIA H100 80GB HBM3";
  r.meta.sm_clock_mhz = 1755;
  for (const char* k : {"fa1", "fa2"}) {
    analysis::BenchRow row;
    row.kernel = k;
    row.model = k;  // the simulator algorithm of fa1 and fa2 has their name
    row.problem.batch = 8;
    row.problem.heads = 16;
    row.problem.seq_q = 4096;
    row.problem.head_dim = 64;
    row.tiles = {64, 64};
    row.time_ms_median = row.time_ms_min = row.time_ms_max = 3.5;
    row.repeats = 10;
    r.rows.push_back(row);
  }
  const std::string path = (run_flashlab.path() / "bench.json").string();
  analysis::write_file_atomic(path, analysis::bench_to_json(r));
  return path;
}

}  // namespace

TEST_CASE("flashlab ceilings where nothing can be measured: one line, exit 2, no file", "[cli][ceilings]") {
  flashlab::test::check_refusals(run_flashlab, {
      {"ceilings", "flashlab: error: ceilings: give --out PROFILE.json (where the measured profile goes)\n"},
      {"ceilings --repeats 5 --out p.json", "--repeats: at least 10"},
      {"ceilings --out no/such/folder/p.json", "flashlab: error: --out: folder 'no/such/folder' does not exist\n"},
      {"ceilings --datasheet H999 --out p.json", "flashlab: error: --datasheet: unknown hardware preset 'H999'"},
  });
  const std::string why = ceilings::unavailable_reason();
  if (why.empty()) {
    WARN("a CUDA device is present: the no-device path is not exercised here (the GPU tests measure instead)");
    return;
  }
  const Run r = run_flashlab("ceilings --quick --out p.json");
  flashlab::test::check_refused(r, "flashlab: error: ceilings: " + why + "\n");
  CHECK_FALSE(fs::exists(run_flashlab.path() / "p.json"));
  if (!ceilings::built_with_cuda()) CHECK_THAT(r.err, Catch::Contains("this build has no CUDA support"));
}

TEST_CASE("a measured profile loads wherever a preset does", "[cli][ceilings]") {
  const std::string p = write_profile();
  const Run show = run_flashlab("hw show '" + p + "'");
  CHECK(show.code == 0);
  CHECK_THAT(show.out, Catch::Contains("NVIDIA H100 80GB HBM3 (measured) (measured-NVIDIA-H100-80GB-HBM3, measured)"));
  CHECK_THAT(show.out, Catch::Matches("[\\s\\S]*L2 bandwidth +7400 GB/s[\\s\\S]*"));
  const Run sim = run_flashlab("sim --hw '" + p + "' --seq 2048 --json");
  CHECK(sim.code == 0);
  CHECK(sim.err.empty());
}

TEST_CASE("flashlab ceilings report: a stored profile's figures and targets, printed again", "[cli][ceilings]") {
  const std::string p = write_profile();
  const Run r = run_flashlab("ceilings report '" + p + "'");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("NVIDIA H100 80GB HBM3: 132 SMs, compute capability 9.0, driver 580.65.06"));
  flashlab::test::check_contains_each(r.out, {"datasheet (H100-SXM5-80GB)", "note: the sweep stopped at 4 GiB"});
  flashlab::test::check_matches_each(r.out, {
      "hbm_read +3010 +GB/s +3350 +0\\.90",
      "bf16 mma.sync / cuBLAS bf16 GEMM 8192\\^3 +0\\.737 +0\\.85 +NO",
      "\\n4 GiB +3000 +3000\\n",
  });
  const Run other = run_flashlab("ceilings report '" + p + "' --datasheet A100-PCIe-80GB");
  CHECK_THAT(other.out, Catch::Contains("datasheet (A100-PCIe-80GB)"));
  // A datasheet preset measured nothing.
  flashlab::test::check_refused(run_flashlab("ceilings report " + std::string(FLASHLAB_ASSETS) + "/hardware/T4.json"),
                                "kind is 'datasheet', not 'measured'");
}

TEST_CASE("flashlab ceilings report: on Hopper the tensor-core target is wgmma over cuBLAS", "[cli][ceilings]") {
  sim::MeasuredProfile hopper = flashlab::test::hopper_profile_with_wgmma();
  const std::string p = (run_flashlab.path() / "measured-wgmma.json").string();
  analysis::write_file_atomic(p, sim::profile_to_json(hopper));
  const Run r = run_flashlab("ceilings report '" + p + "'");
  REQUIRE(r.code == 0);
  flashlab::test::check_matches_each(r.out, {
      "bf16_wgmma +870\\.0 +TFLOP/s +989\\.4 +0\\.88",
      "bf16 wgmma / cuBLAS bf16 GEMM 8192\\^3 +1\\.145 +0\\.90 +yes",
      "bf16_mma +560\\.0 +TFLOP/s",  // still a figure
  });
  // A build without sm_90a on the same GPU: no wgmma figures, a note, the mma.sync target.
  hopper = flashlab::test::h100_like_profile();
  hopper.notes.push_back("bf16_wgmma not measured: this build has no sm_90a code");
  analysis::write_file_atomic(p, sim::profile_to_json(hopper));
  const Run old = run_flashlab("ceilings report '" + p + "'");
  REQUIRE(old.code == 0);
  CHECK_THAT(old.out, Catch::Contains("note: bf16_wgmma not measured: this build has no sm_90a code"));
  CHECK_THAT(old.out, Catch::Contains("no wgmma figure in this profile"));
}

TEST_CASE("flashlab hw compare: a measured profile beside its datasheet, figure by figure", "[cli][ceilings]") {
  const std::string p = write_profile();
  const Run r = run_flashlab.check_prints("hw compare '" + p + "' H100-SXM5-80GB", {
      "A: NVIDIA H100 80GB HBM3 (measured)",
      "B: NVIDIA H100 SXM5 80GB (H100-SXM5-80GB, datasheet)",
      "figures measured on NVIDIA H100 80GB HBM3 (A) against H100-SXM5-80GB",
  });
  flashlab::test::check_matches_each(r.out, {
      "HBM bandwidth +GB/s +3010 +3350 +0\\.90",  // 3,010 measured over 3,350 GB/s on the datasheet
      "bf16_mma +TFLOP/s +560\\.0 +989\\.4 +0\\.57",
  });
  flashlab::test::check_refusals(run_flashlab, {
      {"hw compare '" + p + "' H999", "flashlab: error: hw compare: unknown hardware preset 'H999'"},
      {"hw compare H100-SXM5-80GB", "b is required"},
  });
}

TEST_CASE("flashlab ceilings chart: the hierarchical roofline and the sweep, no GPU needed", "[cli][ceilings]") {
  const std::string p = write_profile(), results = write_results();
  const Run r = run_flashlab("ceilings chart --hw '" + p + "' --results '" + results + "' --out hier.svg");
  REQUIRE(r.code == 0);
  CHECK_THAT(r.out, Catch::Contains("wrote hier.svg (roofline-hier"));
  CHECK_THAT(r.out, Catch::Contains("fa1 N=4,096 d=64"));
  CHECK_THAT(slurp(run_flashlab.path() / "hier.svg"), Catch::Contains("<svg"));
  const Run csv = run_flashlab("ceilings chart --hw '" + p + "' --chart bandwidth-sweep --out sweep.csv");
  REQUIRE(csv.code == 0);
  CHECK_THAT(slurp(run_flashlab.path() / "sweep.csv"), Catch::Contains("ld.global.cg (L2 only)"));
  const Run datasheet = run_flashlab("ceilings chart --hw A100-PCIe-80GB --out a100.csv");
  CHECK(datasheet.code == 0);
  CHECK_THAT(slurp(run_flashlab.path() / "a100.csv"), Catch::Contains("HBM 1,935 GB/s"));

  // A measured profile with a broken figure: the field named, exit 2, no chart.
  auto j = nlohmann::json::parse(slurp(p));
  j["measurements"][4]["value"] = "fast";
  analysis::write_file_atomic((run_flashlab.path() / "broken.json").string(), j.dump());
  flashlab::test::check_refusals(run_flashlab, {
      {"ceilings chart --hw H100-SXM5-80GB --chart bandwidth-sweep --out s.svg", "--hw must be a measured profile"},
      {"ceilings chart --hw H100-SXM5-80GB --chart pie --out s.svg", "unknown chart 'pie'"},
      {"ceilings chart --hw H100-SXM5-80GB --out s.txt", "--out: 's.txt' must end in .svg, .png, .pdf or .csv"},
      {"ceilings chart --hw broken.json --out b.svg", "field 'measurements[4].value' must be a positive number"},
  });
  CHECK_FALSE(fs::exists(run_flashlab.path() / "b.svg"));
}
