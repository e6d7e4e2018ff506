// Kernel files on the GPU, through `flashlab bench --kernel-file` as a student
// runs it: the naive starter right on ragged and causal shapes beside the
// ladder; kernels that write out of bounds, trap, hang, compute NaN, launch a
// grid or ask for shared memory the GPU refuses, or are right only for N a
// multiple of their tile — each its own failed rows with one sentence, none
// losing the rungs' rows; a declaration that lies about its loop nest, told
// so by the counters. Part of the GPU binary: SKIPPED without a device.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cstdio>
#include <fstream>

#include <nlohmann/json.hpp>

// The flashlab binary: $FLASHLAB_EXE, else the one beside this test binary
// (scripts/device-build.sh copies both to build-device/bin), else the one this
// build made.
#include <filesystem>
#include <string>
inline const char* gpu_test_flashlab() {
  static const std::string path = [] {
    if (const char* e = std::getenv("FLASHLAB_EXE"); e && *e) return std::string(e);
    std::error_code ec;
    const auto beside = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path() / "flashlab";
    if (!ec && std::filesystem::exists(beside)) return beside.string();
    return std::string(FLASHLAB_BUILT_EXE);
  }();
  return path.c_str();
}
#define FLASHLAB_EXE gpu_test_flashlab()
#include "../support/run_flashlab.hpp"
#include "flashlab/kernels/student/compile.hpp"
#include "flashlab/sim/core/assets.hpp"

namespace {

using flashlab::test::Run;
using nlohmann::json;

const flashlab::test::ScratchDir& scratch() {
  static const flashlab::test::ScratchDir dir("flashlab-gpu-student");
  return dir;
}

std::string starter(const std::string& name) { return flashlab::sim::assets_dir() + "/kernels/" + name; }
// tests/data of the tree this build came from, else of the tree beside the assets (the GPU machine's copy).
std::string data_kernel(const std::string& name) {
  std::error_code ec;
  const std::filesystem::path built = FLASHLAB_TEST_DATA;
  const std::filesystem::path dir = std::filesystem::exists(built, ec)
                                        ? built
                                        : std::filesystem::path(flashlab::sim::assets_dir()).parent_path() / "tests" / "data";
  return (dir / "kernels" / name).string();
}

// The naive starter named `name` (the file's stem) with one line of its
// declaration changed, written to the scratch folder.
std::string variant(const std::string& line, const std::string& with, const std::string& name) {
  std::ifstream in(starter("naive.cu"));
  std::stringstream ss;
  ss << in.rdbuf();
  std::string text = ss.str();
  for (const auto& [from, to] : {std::pair{line, with}, std::pair<std::string, std::string>{"name:      naive\n", ""}}) {
    const auto at = text.find(from);
    REQUIRE(at != std::string::npos);
    text.replace(at, from.size(), to);
  }
  const auto path = scratch().path() / (name + ".cu");
  std::ofstream(path) << text;
  return path.string();
}

struct Graded {
  Run run;
  json grade;  // the --json file
};

Graded bench(const std::string& files, const std::string& args) {
  const std::string out = (scratch().path() / "grade.json").string();
  std::remove(out.c_str());
  Graded g;
  g.run = flashlab::test::run_flashlab(scratch().path(), "bench " + files + " " + args + " --quiet --json '" + out + "'");
  std::ifstream in(out);
  if (in) g.grade = json::parse(in);
  return g;
}

std::string file(const std::string& path) { return "--kernel-file '" + path + "'"; }

const json& shapes_of(const Graded& g, const std::string& id) {
  for (const json& k : g.grade.at("kernel_files"))
    if (k.at("id") == id) return k.at("shapes");
  FAIL("no grade for " << id);
  static const json none;
  return none;
}

// Every rung row of the run was measured: a kernel file lost none of them.
void rungs_ok(const Graded& g) {
  for (const json& row : g.grade.at("rows")) {
    const std::string kernel = row.at("kernel");
    if (kernel.rfind("user:", 0) == 0) continue;
    CAPTURE(kernel);
    CHECK(row.at("status") == "ok");
  }
}

bool nvrtc_here() {
  const std::string why = flashlab::kernels::student::nvrtc_unavailable_reason();
  if (!why.empty()) WARN("SKIPPED: " << why);
  return why.empty();
}

}  // namespace

TEST_CASE("kernel file: the naive starter is right on ragged and causal shapes in every dtype, beside the rungs",
          "[gpu][student]") {
  if (!nvrtc_here()) return;
  const Graded g = bench(file(starter("naive.cu")),
                         "-b 1 --heads 2 --kv-heads 1 -n 1,100,1000 -d 64 --causal both --dtype fp32,fp16,bf16 "
                         "--check-only");
  INFO("stderr: " << g.run.err);
  REQUIRE(g.run.code == 0);
  const json& shapes = shapes_of(g, "user:naive");
  CHECK(shapes.size() == 18);
  for (const json& s : shapes) {
    CAPTURE(s.dump());
    CHECK(s.at("correct") == true);
  }
  rungs_ok(g);
  CHECK_THAT(g.run.out, Catch::Contains("naive (your kernel) — declares standard: 18 of 18 shapes correct"));
}

TEST_CASE("kernel file: its bytes beside the model: the naive starter within the tolerance, the same kernel "
          "declared as FlashAttention-2 told it is not",
          "[gpu][student]") {
  if (!nvrtc_here()) return;
  const std::string lying = variant("algorithm: naive", "algorithm: fa2", "naive_as_fa2");
  const Graded g = bench(file(starter("naive.cu")) + " " + file(lying),
                         "--kernels fa2 -b 2 --heads 4 -n 1024 -d 64 --counters --repeats 10");
  INFO("stderr: " << g.run.err);
  REQUIRE(g.run.code == 0);
  const json& honest = shapes_of(g, "user:naive").at(0);
  if (honest.at("requests").at("measured") == false) {
    WARN("SKIPPED: no counters on this machine (" << g.run.out << ")");
    return;
  }
  CHECK(honest.at("correct") == true);
  CHECK(honest.at("requests").at("within") == true);
  CHECK(honest.at("verdict") == "");
  CHECK(honest.at("speed_vs_fa2").is_number());
  const json& lie = shapes_of(g, "user:naive_as_fa2").at(0);
  CHECK(lie.at("correct") == true);
  CHECK(lie.at("requests").at("within") == false);
  CHECK_THAT(lie.at("verdict").get<std::string>(), Catch::Contains("more bytes than fa2 with 64 × 64 tiles would"));
  CHECK_THAT(lie.at("verdict").get<std::string>(),
             Catch::Contains("the loop nest or the tiles it runs are not the ones it declares"));
  CHECK_THAT(g.run.out, Catch::Contains("! reads "));
}

TEST_CASE("kernel file: out of bounds, a trap, a hang, a NaN: each fails its own rows in one sentence and the run "
          "goes on",
          "[gpu][student]") {
  if (!nvrtc_here()) return;
  const Graded g = bench(file(data_kernel("oob_write.cu")) + " " + file(data_kernel("trap.cu")) + " " +
                             file(data_kernel("hang.cu")) + " " + file(data_kernel("nan.cu")),
                         "--kernels fa2 -b 1 --heads 2 -n 64,100 -d 64 --check-only --kernel-timeout 3");
  INFO("stderr: " << g.run.err);
  CHECK(g.run.code == 1);
  rungs_ok(g);
  const std::vector<std::pair<std::string, std::string>> expected{
      {"user:oob_write", "your kernel read or wrote outside its buffers"},
      {"user:trap", "your kernel stopped"},
      {"user:hang", "hung: no answer within 3 s (--kernel-timeout)"},
      {"user:nan", "first NaN or ∞ computed (b=0, h=0, row 0, col 0)"},
  };
  for (const auto& [id, reason] : expected) {
    const json& shapes = shapes_of(g, id);
    REQUIRE(shapes.size() == 2);
    for (const json& s : shapes) {
      CAPTURE(id, s.dump());
      CHECK(s.at("status") == "failed");
      CHECK(s.at("correct") == false);
      const std::string why = s.at("reason");
      CHECK_THAT(why, Catch::Contains(reason));
      CHECK(std::count(why.begin(), why.end(), '\n') == 0);
    }
  }
  CHECK_THAT(shapes_of(g, "user:oob_write").at(0).at("reason").get<std::string>(),
             Catch::Contains("compute-sanitizer --tool memcheck flashlab bench --kernel-file"));
}

TEST_CASE("kernel file: a launch the GPU would refuse is refused first, naming the limit", "[gpu][student]") {
  if (!nvrtc_here()) return;
  const Graded g = bench(file(data_kernel("grid_y.cu")) + " " + file(data_kernel("too_much_smem.cu")),
                         "--kernels fa2 -b 1 --heads 1 -n 64,70000 -d 64 --check-only");
  INFO("stderr: " << g.run.err);
  CHECK(g.run.code == 1);
  rungs_ok(g);
  const json& grid = shapes_of(g, "user:grid_y");
  CHECK(grid.at(0).at("status") == "ok");
  CHECK_THAT(grid.at(1).at("reason").get<std::string>(),
             Catch::Contains("launch refused: grid (1, 70,000, 1) has y = 70,000"));
  CHECK_THAT(grid.at(1).at("reason").get<std::string>(), Catch::Contains("put the largest count in x"));
  for (const json& s : shapes_of(g, "user:too_much_smem")) {
    CHECK_THAT(s.at("reason").get<std::string>(),
               Catch::Contains("launch refused: shared memory 49,152 B static (__shared__ arrays) + 190,000 B dynamic"));
    CHECK_THAT(s.at("reason").get<std::string>(), Catch::Contains("cudaDevAttrMaxSharedMemoryPerBlockOptin"));
  }
}

TEST_CASE("kernel file: right only for N a multiple of its tile: the other N fail, naming the last, partial tile",
          "[gpu][student]") {
  if (!nvrtc_here()) return;
  const std::string multiple =
      variant("grid:      T_c, T_r, B * H", "grid:      T_c, N_q / Br, B * H", "multiple_only");
  const Graded g = bench(file(multiple), "--kernels fa2 -b 1 --heads 2 -n 1024,1000 -d 64 --check-only");
  INFO("stderr: " << g.run.err);
  CHECK(g.run.code == 1);
  rungs_ok(g);
  const json& shapes = shapes_of(g, "user:multiple_only");
  CHECK(shapes.at(0).at("correct") == true);
  const std::string why = shapes.at(1).at("reason");
  CHECK_THAT(why, Catch::Contains("were not written"));
  CHECK_THAT(why, Catch::Contains("first element not written (b=0, h=0, row 960, col 0)"));
  CHECK_THAT(why, Catch::Contains("rows of head (b=0, h=0): 960–999 — the last, partial tile of B_r = 64 rows"));
}
