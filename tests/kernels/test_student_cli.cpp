// `flashlab bench --kernel-file` as a student runs it on a machine without a
// GPU: --compile-only compiles with NVRTC alone (a file's errors on its own
// lines, exit 1), the flags that belong to kernel files are refused without
// one, and a run without a device says so and how to check a file anyway.
#include <catch2/catch.hpp>

#include "../support/run_flashlab.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/student/compile.hpp"
#include "flashlab/sim/core/assets.hpp"

namespace {

using flashlab::test::check_refused;
using flashlab::test::Run;

// `flashlab bench ARGS` in this file's own scratch folder.
const flashlab::test::ScratchRuns bench("flashlab-student-cli", "bench");

std::string starter(const std::string& name) { return "'" + flashlab::sim::assets_dir() + "/kernels/" + name + "'"; }
std::string data_kernel(const std::string& name) {
  return "'" + std::string(FLASHLAB_TEST_DATA) + "/kernels/" + name + "'";
}

bool have_nvrtc() {
  const std::string why = flashlab::kernels::student::nvrtc_unavailable_reason();
  if (!why.empty()) WARN("SKIPPED: " << why);
  return why.empty();
}

}  // namespace

TEST_CASE("bench --kernel-file: its flags are one line and exit 2 when wrong", "[cli][bench][student]") {
  flashlab::test::check_refusals(bench, {
      {"--kernel-timeout 5", "--kernel-timeout belongs to --kernel-file"},
      {"--compile-only", "--compile-only belongs to --kernel-file"},
      {"--no-isolation", "--no-isolation belongs to --kernel-file"},
      {"--kernels none", "--kernels none leaves nothing to run without --kernel-file"},
      {"--kernel-file k.cu --kernel-timeout 0", "--kernel-timeout: expected seconds above 0"},
      {"--kernel-file k.cu --pass bwd", "--pass bwd: a kernel file is a forward kernel"},
      {"--kernel-file k.cu --gpus 2", "--kernel-file runs on one GPU"},
      {"--kernel-file k.cu --results r.json", "--kernel-file belongs to a run"},
      {"--kernel-file k.cu --compile-only --no-isolation", "--compile-only runs nothing"},
  });
}

TEST_CASE("bench --kernel-file --compile-only: the starters compile for every dtype and head dim asked, no GPU "
          "needed",
          "[cli][bench][student][nvrtc]") {
  if (!have_nvrtc()) return;
  const Run r = bench("--kernel-file " + starter("naive.cu") + " --kernel-file " + starter("fa2.cu") +
                      " --compile-only -d 64,256 --dtype fp16,bf16 -n 100");
  INFO("stderr: " << r.err);
  CHECK(r.code == 0);
  CHECK_THAT(r.out, Catch::StartsWith("NVRTC "));
  flashlab::test::check_contains_each(r.out, {
      "naive.cu: user:naive (standard, 64 x 64 tiles) compiled for sm_",
      "fp16 d = 64, 256; bf16 d = 64, 256",
      // fa2.cu declares no d = 256: only d = 64 is compiled.
      "fa2.cu: user:my_fa2 (fa2, 64 x 64 tiles) compiled for sm_",
      ": fp16 d = 64; bf16 d = 64\n",
  });
}

TEST_CASE("bench --kernel-file --compile-only: a file that does not compile shows its own lines, the others still "
          "compile, exit 1",
          "[cli][bench][student][nvrtc]") {
  if (!have_nvrtc()) return;
  const Run r = bench("--kernel-file " + data_kernel("compile_error.cu") + " --kernel-file " + starter("fa2.cu") +
                      " --kernel-file " + data_kernel("no_entry.cu") + " --compile-only -d 64");
  CHECK(r.code == 1);
  flashlab::test::check_contains_each(r.err, {
      "compile_error.cu does not compile (compiled for fp16, d = 64, sm_",
      "compile_error.cu:10: error: identifier \"undeclared_value\" is undefined",
      "float x = undeclared_value * a.scale;",
      "no_entry.cu: no kernel named flashlab_attention",
  });
  CHECK_THAT(r.out, Catch::Contains("fa2.cu: user:my_fa2"));
}

TEST_CASE("bench --kernel-file: a declaration's mistake is its file and line, and a missing file says so",
          "[cli][bench][student][nvrtc]") {
  if (!have_nvrtc()) return;
  const flashlab::test::ScratchDir dir("flashlab-student-decl");
  const auto path = dir.path() / "bad_tiles.cu";
  std::ofstream(path) << "// flashlab kernel\n//   algorithm: fa1\n//   tiles: 64 x 0\n//   threads: 64\n"
                         "//   grid: B * H\n//   dtypes: fp16\n//   head_dims: 64\n";
  const Run r = bench("--kernel-file '" + path.string() + "' --kernel-file /no/such/kernel.cu --compile-only");
  CHECK(r.code == 1);
  CHECK_THAT(r.err, Catch::Contains("bad_tiles.cu:3: tiles: B_r = 64, B_c = 0 are impossible"));
  CHECK_THAT(r.err, Catch::Contains("/no/such/kernel.cu: cannot read the kernel file"));
}

TEST_CASE("bench --kernel-file without a device: one line, and how to check the file without one",
          "[cli][bench][student][nvrtc]") {
  if (!have_nvrtc()) return;
  if (flashlab::kernels::cuda_unavailable_reason().empty()) {
    WARN("SKIPPED: this machine has a GPU; the GPU tests run kernel files");
    return;
  }
  check_refused(bench("--kernel-file " + starter("naive.cu") + " -n 100"),
                "(--compile-only checks that a kernel file compiles without a GPU)");
}
