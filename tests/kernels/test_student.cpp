// A student's kernel file on the CPU: its declaration read (the starters' and
// every mistake's), its expressions, NVRTC's compile (skipped, saying why,
// without libnvrtc), the rung it becomes, and its child process — crashes,
// hangs, exits and a child that cannot start — played by fake children of the
// flashlab binary, no GPU needed.
#include <catch2/catch.hpp>

#include <chrono>
#include <filesystem>
#include <fstream>

#include "../support/run_flashlab.hpp"
#include "flashlab/kernels/student/compile.hpp"
#include "flashlab/kernels/student/declaration.hpp"
#include "flashlab/kernels/student/isolation.hpp"
#include "flashlab/kernels/student/student_bench.hpp"
#include "flashlab/kernels/student/student_rung.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "support.hpp"

namespace fs = std::filesystem;
using namespace flashlab;
using namespace flashlab::kernels::student;
using flashlab::test::problem;

namespace {

std::string starter(const std::string& name) { return sim::assets_dir() + "/kernels/" + name; }
std::string data_kernel(const std::string& name) { return std::string(FLASHLAB_TEST_DATA) + "/kernels/" + name; }

// A declaration block above a trivial kernel, with `lines` as its keys.
std::string file_with(const std::string& lines) {
  return "// a test kernel\n// flashlab kernel\n" + lines + "\nextern \"C\" __global__ void flashlab_attention(FlashLabArgs a) {}\n";
}

const std::string kValid =
    "//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: Br\n//   grid: T_r, B * H\n//   dtypes: fp16\n"
    "//   head_dims: 64";

std::string declaration_error(const std::string& source) {
  try {
    parse_declaration(source, "k.cu");
  } catch (const DeclarationError& e) {
    return e.what();
  }
  return "(no error)";
}

// NVRTC is opened at run time: without it the compile tests say why and stop.
bool have_nvrtc() {
  const std::string why = nvrtc_unavailable_reason();
  if (!why.empty()) WARN("SKIPPED: " << why);
  return why.empty();
}

}  // namespace

TEST_CASE("student: the starters' declarations are read as they are written", "[student]") {
  const KernelFile naive = load_kernel_file(starter("naive.cu"));
  CHECK(naive.id() == "user:naive");
  CHECK(naive.declaration.algorithm == sim::Algorithm::standard);
  CHECK(naive.declaration.tiles == sim::TileShape{64, 64});
  CHECK(model_tiles(naive.declaration) == sim::TileShape{0, 0});  // standard attention's bytes do not depend on tiles
  CHECK(naive.declaration.dtypes.size() == 3);
  CHECK(naive.declaration.head_dims == std::vector<int>{16, 32, 64, 96, 128, 256});
  // N = 1000: T_r = T_c = 16; S and P of 2·4 heads in fp16.
  const LaunchShape n = launch_shape(naive.declaration, problem(2, 4, 1000, 64));
  CHECK(n.grid == std::array<i64, 3>{16, 16, 8});
  CHECK(n.launches == 3);
  CHECK(n.block.threads == 256);
  CHECK(n.block.smem_bytes == 0);
  CHECK(n.workspace_bytes == 2 * 4 * 1000 * 1000 * 2);

  const KernelFile fa1 = load_kernel_file(starter("fa1.cu"));
  CHECK(fa1.id() == "user:my_fa1");
  CHECK(fa1.declaration.algorithm == sim::Algorithm::fa1);
  CHECK(fa1.declaration.o_accumulator == sim::DType::fp32);
  const LaunchShape f1 = launch_shape(fa1.declaration, problem(2, 4, 1000, 128, true, sim::DType::bf16));
  CHECK(f1.grid == std::array<i64, 3>{8, 1, 1});
  CHECK(f1.block.threads == 64);
  CHECK(f1.block.smem_bytes == (2 * 64 + 2 * 64) * 128 * 4);
  CHECK(f1.workspace_bytes == 2 * 4 * 1000 * (128 + 2) * 4);

  const KernelFile fa2 = load_kernel_file(starter("fa2.cu"));
  CHECK(fa2.declaration.algorithm == sim::Algorithm::fa2);
  const LaunchShape f2 = launch_shape(fa2.declaration, problem(3, 5, 65, 32));
  CHECK(f2.grid == std::array<i64, 3>{2, 15, 1});
  CHECK(f2.block.smem_bytes == (64 + 2 * 64) * 32 * 4);
  CHECK(f2.workspace_bytes == 0);
}

TEST_CASE("student: every mistake of a declaration is one line naming the file, the line and the key", "[student]") {
  const auto [source, expected] = GENERATE(table<std::string, std::string>({
      {"extern \"C\" __global__ void flashlab_attention(FlashLabArgs a) {}\n", "k.cu: no declaration"},
      {file_with(kValid + "\n//   tile: 64 x 64"), "k.cu:9: unknown key 'tile' (did you mean tiles?)"},
      {file_with(kValid + "\n//   threads: 128"), "k.cu:9: threads is declared twice (first on line 5)"},
      {file_with("//   tiles: 64 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n//   head_dims: 64"),
       "k.cu:2: the declaration has no algorithm"},
      {file_with("//   algorithm: flash3\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "k.cu:3: algorithm: 'flash3' is not one the simulator models for your kernel"},
      {file_with("//   algorithm: fa2_bwd\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "algorithm: fa2_bwd is a backward algorithm: FlashLab runs forward kernels only"},
      {file_with(kValid + "\n//   pass: bwd"), "k.cu:9: pass: bwd: FlashLab runs forward kernels only"},
      {file_with("//   algorithm: fa1\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n//   head_dims: 64"),
       "k.cu:2: the declaration has no tiles"},
      {file_with("//   algorithm: fa2\n//   tiles: 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "k.cu:4: tiles: expected B_r x B_c"},
      {file_with("//   algorithm: fa2\n//   tiles: 0 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "tiles: B_r = 0, B_c = 64 are impossible"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: Br * 32\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "k.cu:5: threads: Br * 32 = 2,048 (for fp16, d = 64) is impossible: a block has 1 to 1,024 threads"},
      {file_with("//   algorithm: fa2\n//   tiles: 256 x 256\n//   threads: 256\n//   smem: (Br + 2 * Bc) * d * 4\n"
                 "//   grid: 1\n//   dtypes: fp32\n//   head_dims: 128"),
       "k.cu:6: smem: (Br + 2 * Bc) * d * 4 = 393,216 B (for fp32, d = 128) is impossible: no NVIDIA GPU gives a "
       "block more than 232,448 B"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: cdiv(N, Br), B * H\n"
                 "//   dtypes: fp16\n//   head_dims: 64"),
       "k.cu:6: grid: unknown name 'N' (did you mean N_q? N_kv for the keys)"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: N_q\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "the problem's sizes are not known when the kernel is compiled"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: (T_r, B\n//   dtypes: fp16\n"
                 "//   head_dims: 64"),
       "k.cu:6: grid: missing ')'"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp8\n"
                 "//   head_dims: 64"),
       "k.cu:7: dtypes: unknown dtype 'fp8'"},
      {file_with("//   algorithm: fa2\n//   tiles: 64 x 64\n//   threads: 64\n//   grid: 1\n//   dtypes: fp16\n"
                 "//   head_dims: 0"),
       "k.cu:8: head_dims: '0' is not a head dim"},
      {file_with(kValid + "\n//   o_accumulator: fp32"), "o_accumulator: only a fa1 kernel keeps O"},
      {file_with(kValid + "\n//   name: my kernel"), "name: 'my kernel' must be"},
  }));
  CAPTURE(source);
  CHECK_THAT(declaration_error(source), Catch::Contains(expected));
}

TEST_CASE("student: the block ends at the first line that is not a key, and a file that is not there says so",
          "[student]") {
  const KernelDeclaration d = parse_declaration(file_with(kValid + "\n//\n//   tile: ignored, the block has ended"), "k.cu");
  CHECK(d.tiles == sim::TileShape{64, 64});
  CHECK(d.line == 2);
  CHECK_THROWS_WITH(load_kernel_file("/no/such/kernel.cu"), Catch::Contains("/no/such/kernel.cu: cannot read"));
  // The default name is the file's stem.
  CHECK(load_kernel_file(data_kernel("trap.cu")).id() == "user:trap");
}

TEST_CASE("student: expressions evaluate as integers, and say what is wrong", "[student]") {
  const std::vector<std::string> names = run_time_names();
  Symbols s{{{"N_q", 1000}, {"Br", 64}, {"d", 128}, {"B", 2}, {"H", 3}}};
  CHECK(Expression::parse("cdiv(N_q, Br)", names).evaluate(s) == 16);
  CHECK(Expression::parse("N_q / Br", names).evaluate(s) == 15);
  CHECK(Expression::parse("N_q % Br", names).evaluate(s) == 40);
  CHECK(Expression::parse("(Br + 2 * Br) * d * 4", names).evaluate(s) == 98304);
  CHECK(Expression::parse("max(B, H) - min(B, H) * -1", names).evaluate(s) == 5);
  CHECK_THROWS_AS(Expression::parse("N_q / (Br - 64)", names).evaluate(s), std::domain_error);
  CHECK_THROWS_AS(Expression::parse("4611686018427387904 * 4", names).evaluate(s), std::domain_error);
  CHECK_THROWS_WITH(Expression::parse("Br +", names), Catch::Contains("ends too early"));
  CHECK_THROWS_WITH(Expression::parse("cdiv(Br)", names), Catch::Contains("cdiv takes two arguments"));
  CHECK_THROWS_WITH(Expression::parse("Br $ 2", names), Catch::Contains("unexpected '$'"));
}

TEST_CASE("student: a kernel file as a rung: its id, model, tiles, workspace and what it declares",
          "[student]") {
  const KernelFile f = load_kernel_file(starter("fa1.cu"));
  const kernels::KernelInfo k = student_rung(f, {});
  CHECK(k.id == "user:my_fa1");
  CHECK(k.model == sim::Algorithm::fa1);
  CHECK(k.pass() == sim::Pass::fwd);
  CHECK_FALSE(k.built());  // no compiled version
  CHECK(k.storage.o_accumulator == sim::DType::fp32);
  const sim::AttentionProblem p = problem(1, 2, 100, 64);
  CHECK(k.default_tiles(p) == sim::TileShape{64, 64});
  CHECK(k.workspace_bytes(p, {64, 64}) == 1 * 2 * 100 * 66 * 4);
  const kernels::DeviceLimits h100{90, 232448, 233472, 1024};
  CHECK_FALSE(kernels::unsupported_reason(k, p, {64, 64}, h100));
  CHECK_THAT(*kernels::unsupported_reason(k, problem(1, 2, 100, 256), {64, 64}, h100),
             Catch::Contains("not compiled for head dim d=256"));
}

TEST_CASE("student: a CUDA error of a case is said in a student's words, with the command that finds the line",
          "[student]") {
  const std::string rerun = rerun_command("my.cu", problem(1, 2, 1000, 64, true));
  CHECK(rerun == "flashlab bench --kernel-file my.cu --no-isolation --kernels none -b 1 --heads 2 -n 1000 -d 64 "
                 "--causal yes --dtype fp16 --check-only");
  const std::string illegal = explain_failure(
      "kernels/src/runner/cuda_backend.cpp:187: cudaStreamSynchronize(stream_) failed: cudaErrorIllegalAddress (an "
      "illegal memory access was encountered)",
      rerun);
  CHECK_THAT(illegal, Catch::StartsWith("your kernel read or wrote outside its buffers"));
  CHECK_THAT(illegal, Catch::Contains("compute-sanitizer --tool memcheck " + rerun));
  CHECK_THAT(explain_failure("...: cudaErrorIllegalInstruction (an illegal instruction was encountered)", rerun),
             Catch::StartsWith("your kernel stopped at a trap"));
  CHECK_THAT(explain_failure("cuLaunchKernel failed: CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES (too many resources)", rerun),
             Catch::Contains("declare fewer threads per block"));
  CHECK(explain_failure("wrong result: relative error 0.5", rerun) == "wrong result: relative error 0.5");
}

// ---- NVRTC: compiled on the CPU -------------------------------------------------------

TEST_CASE("student: the starters compile with NVRTC for sm_90, no GPU needed", "[student][nvrtc]") {
  if (!have_nvrtc()) return;
  const auto [name, dtype, d] = GENERATE(table<std::string, sim::DType, int>({
      {"naive.cu", sim::DType::fp32, 64},
      {"fa1.cu", sim::DType::fp16, 32},
      {"fa2.cu", sim::DType::bf16, 128},
  }));
  CAPTURE(name, d);
  const KernelFile f = load_kernel_file(starter(name));
  const CompiledVersion v = compile_version(f, dtype, d, 90);
  CHECK(v.target == "sm_90");
  CHECK(v.image.size() > 1000);
  CHECK(v.block.threads == (name == "naive.cu" ? 256 : 64));
  // A compute capability NVRTC has no SASS for gets PTX of the newest one below it.
  CHECK(compile_version(f, dtype, d, 91).target.rfind("compute_", 0) == 0);
}

TEST_CASE("student: a file that does not compile names its own line, and a missing or wrong entry point says what "
          "to write",
          "[student][nvrtc]") {
  if (!have_nvrtc()) return;
  const auto [name, first, whole] = GENERATE(table<std::string, std::string, std::string>({
      {"compile_error.cu", "compile_error.cu:10: error: identifier \"undeclared_value\" is undefined",
       "float x = undeclared_value * a.scale;"},
      {"no_entry.cu", "no_entry.cu: no kernel named flashlab_attention: FlashLab launches extern \"C\" __global__ void "
                      "flashlab_attention(FlashLabArgs args)",
       "no_entry.cu: no kernel named flashlab_attention"},
      {"wrong_signature.cu", "wrong_signature.cu: flashlab_attention takes other arguments than FlashLab passes",
       "takes other arguments"},
      {"not_extern_c.cu", "not_extern_c.cu: flashlab_attention is not extern \"C\"", "is not extern \"C\""},
      {"device_function.cu", "device_function.cu: flashlab_attention is not a kernel", "a __device__ function"},
  }));
  CAPTURE(name);
  const KernelFile f = load_kernel_file(data_kernel(name));
  try {
    compile_version(f, sim::DType::fp16, 64, 90);
    FAIL("compiled");
  } catch (const CompileError& e) {
    CHECK_THAT(e.first_error(), Catch::Contains(first));
    CHECK_THAT(e.what(), Catch::Contains(whole));
    // The check FlashLab appends is never shown.
    CHECK_THAT(e.what(), !Catch::Contains("flashlab_check"));
    CHECK_THAT(e.what(), !Catch::Contains("flashlab-entry-check"));
  }
}

TEST_CASE("student: prepared files keep their own errors, the others compile, and names must differ", "[student][nvrtc]") {
  if (!have_nvrtc()) return;
  const std::vector<sim::AttentionProblem> problems{problem(1, 2, 100, 64), problem(1, 2, 100, 256)};
  const std::vector<PreparedKernel> files = prepare_kernel_files(
      {starter("fa2.cu"), data_kernel("compile_error.cu"), "/no/such.cu", starter("fa2.cu")}, problems, 90);
  REQUIRE(files.size() == 4);
  CHECK(files[0].ok());
  REQUIRE(files[0].versions.size() == 1);  // fa2.cu declares d = 64, not 256
  CHECK(files[0].versions[0].head_dim == 64);
  CHECK_THAT(files[1].error, Catch::StartsWith("does not compile: "));
  CHECK_THAT(files[1].error, Catch::Contains("compile_error.cu:10: error"));
  CHECK_THAT(files[1].message, Catch::Contains("does not compile (compiled for fp16, d = 64, sm_90)"));
  CHECK_THAT(files[2].error, Catch::Contains("cannot read"));
  CHECK(files[2].id() == "user:such");
  CHECK_THAT(files[3].error, Catch::Contains("another kernel file of this run is named my_fa2"));
  CHECK(comparison_rungs(files) == std::vector<std::string>{"fa2"});
  CHECK(comparison_rungs(prepare_kernel_files({starter("naive.cu")}, {}, 90)) ==
        std::vector<std::string>{"naive", "fa2"});
}

// ---- the child process, played by fake children ----------------------------------------

namespace {

KernelFile any_file() { return load_kernel_file(starter("fa2.cu")); }

std::vector<sim::AttentionProblem> five_problems() {
  std::vector<sim::AttentionProblem> v;
  for (i64 n : {64, 100, 128, 1000, 1024}) v.push_back(problem(1, 2, n, 64));
  return v;
}

IsolationOptions fake(const std::string& spec, double timeout_s = 2) {
  IsolationOptions o;
  o.case_timeout_s = timeout_s;
  o.start_timeout_s = timeout_s;
  o.child_command = {FLASHLAB_EXE, kKernelFileChildFlag, "--fake", spec};
  return o;
}

}  // namespace

TEST_CASE("student: a row comes back from the child whole, every field", "[student][isolation]") {
  kernels::RunOptions o;
  o.mem_limit_bytes = 777;
  KernelProcess child(any_file(), {}, five_problems(), o, 0, fake("ok"));
  const sim::MeasuredRun r = child.run(3, 42);
  CHECK(r.status == sim::RunStatus::ok);
  CHECK(r.kernel == "user:my_fa2");
  CHECK(r.model == "fa1");
  CHECK(r.direction == "fwd");
  CHECK(r.problem == five_problems()[3]);
  CHECK(r.tiles == sim::TileShape{64, 32});
  CHECK(r.time_ms_min == 4.0);
  CHECK(r.time_ms_median == 4.25);
  CHECK(r.time_ms_max == 4.5);
  CHECK(r.repeats == 11);
  CHECK(r.launch_host_us == 3.5);
  CHECK(r.peak_memory_bytes == 123456789);
  CHECK(r.mem_limit_bytes == 777);
  CHECK(r.rel_error == 1.5e-5);
  CHECK(r.ctas_per_sm == 3);
  CHECK(r.heaviest_first);
  CHECK(r.storage.o_accumulator == sim::DType::fp32);
  CHECK(r.storage.dq_accumulator == sim::DType::bf16);
  CHECK_FALSE(r.storage.dkv_accumulator);
  CHECK(r.dram_read_bytes == 1001);
  CHECK(r.dram_write_bytes == 1002);
  CHECK(r.l2_read_bytes == 1003);
  CHECK(r.l2_write_bytes == 1004);
  CHECK(r.counters_note == "fake counters");
  CHECK(r.reason == "fake row of case 3, seed 42");
  CHECK(child.children_started() == 1);
}

TEST_CASE("student: a child that crashes, hangs or exits loses its own case only, and the next case gets a new child",
          "[student][isolation]") {
  KernelProcess child(any_file(), {}, five_problems(), {}, 0, fake("crash@1,hang@2,exit@3", 1.0));
  std::vector<sim::MeasuredRun> rows;
  const auto t0 = std::chrono::steady_clock::now();
  for (std::size_t i = 0; i < 5; ++i) rows.push_back(child.run(i, 100 + i));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(rows[0].status == sim::RunStatus::ok);
  for (std::size_t i : {1, 2, 3}) {
    CAPTURE(i);
    CHECK(rows[i].status == sim::RunStatus::failed);
    CHECK(rows[i].kernel == "user:my_fa2");  // the parent's row: the file's id, model, problem
    CHECK(rows[i].model == "fa2");
    CHECK(rows[i].problem == five_problems()[i]);
  }
  CHECK_THAT(rows[1].reason, Catch::Contains("ended during this case without a result: it ended with signal 11 "
                                             "(SIGSEGV"));
  CHECK_THAT(rows[1].reason, Catch::Contains("run it alone: flashlab bench --kernel-file"));
  CHECK_THAT(rows[2].reason, Catch::StartsWith("hung: no answer within 1 s (--kernel-timeout)"));
  CHECK_THAT(rows[2].reason, Catch::Contains("compute-sanitizer --tool synccheck"));
  CHECK_THAT(rows[3].reason, Catch::Contains("it exited with code 5"));
  CHECK(rows[4].status == sim::RunStatus::ok);
  CHECK(rows[4].reason == "fake row of case 4, seed 104");
  CHECK(child.children_started() == 4);
  CHECK(seconds < 8);  // the hang costs its timeout, not more
}

TEST_CASE("student: a child whose CUDA context is spent hands the next case to a new child", "[student][isolation]") {
  KernelProcess child(any_file(), {}, five_problems(), {}, 0, fake("sticky@1"));
  CHECK(child.run(0, 1).status == sim::RunStatus::ok);
  CHECK(child.run(1, 1).reason == "fake: the context is unusable");
  const sim::MeasuredRun after = child.run(2, 9);
  CHECK(after.status == sim::RunStatus::ok);
  CHECK(after.reason == "fake row of case 2, seed 9");
  CHECK(child.children_started() == 2);
}

TEST_CASE("student: a child that cannot start says why for every case, started once, and one that never starts is "
          "stopped",
          "[student][isolation]") {
  {
    KernelProcess child(any_file(), {}, five_problems(), {}, 0, fake("fail-start"));
    for (std::size_t i = 0; i < 3; ++i) CHECK(child.run(i, 1).reason == "no CUDA device (a fake child that cannot start)");
    CHECK(child.children_started() == 1);
  }
  {
    KernelProcess child(any_file(), {}, five_problems(), {}, 0, fake("hang-start", 1.0));
    CHECK_THAT(child.run(0, 1).reason, Catch::Contains("did not start within 1 s"));
  }
  {
    IsolationOptions o = fake("ok");
    o.child_command = {"/no/such/flashlab"};
    KernelProcess child(any_file(), {}, five_problems(), {}, 0, o);
    CHECK_THAT(child.run(0, 1).reason, Catch::Contains("cannot start the child process"));
  }
}

TEST_CASE("student: the files' rows sit beside the rungs' problem by problem, and a file that does not compile fails "
          "each of its rows and loses no other",
          "[student][isolation]") {
  using kernels::KernelInfo;
  using kernels::RunOptions;
  kernels::test::FakeBackend backend;
  const KernelInfo rung = kernels::test::runnable("fa2");
  PreparedKernel good;  // declares fp32 and fp16, d = 64
  good.path = data_kernel("nan.cu");
  good.file = load_kernel_file(good.path);
  PreparedKernel bad;
  bad.path = data_kernel("compile_error.cu");
  bad.file = load_kernel_file(bad.path);
  bad.error = "does not compile: compile_error.cu:10: error: identifier \"undeclared_value\" is undefined";
  std::vector<sim::AttentionProblem> problems{problem(1, 2, 100, 64), problem(1, 2, 100, 32),
                                              problem(1, 2, 100, 64, false, sim::DType::bf16)};
  KernelFileOptions kf;
  kf.isolation = fake("crash@0");
  std::vector<std::string> seen;
  const sim::MeasuredRuns runs = run_bench_with_kernel_files(
      backend, {&rung}, {good, bad}, problems, RunOptions{}, kf,
      [&](std::size_t done, std::size_t total, const sim::MeasuredRun& r) {
        CHECK(total == 9);
        seen.push_back(std::to_string(done) + " " + r.kernel);
      });
  REQUIRE(runs.runs.size() == 9);
  const std::vector<std::string> order{"fa2", "user:nan", "user:compile_error"};
  for (std::size_t i = 0; i < 9; ++i) {
    CAPTURE(i);
    CHECK(runs.runs[i].kernel == order[i % 3]);
    CHECK(runs.runs[i].problem == problems[i / 3]);
  }
  // The first case crashed its child; the others never reach one: not the file's dtype or head dim.
  CHECK(runs.runs[1].status == sim::RunStatus::failed);
  CHECK_THAT(runs.runs[1].reason, Catch::Contains("SIGSEGV"));
  CHECK(runs.runs[4].status == sim::RunStatus::skipped);
  CHECK_THAT(runs.runs[4].reason, Catch::Contains("not compiled for head dim d=32"));
  CHECK(runs.runs[7].status == sim::RunStatus::skipped);
  CHECK_THAT(runs.runs[7].reason, Catch::Contains("has no bf16 version"));
  for (std::size_t i : {2, 5, 8}) {
    CHECK(runs.runs[i].status == sim::RunStatus::failed);
    CHECK(runs.runs[i].reason == bad.error);
  }
  // Every rung row ran in this process.
  for (std::size_t i : {0, 3, 6}) CHECK(runs.runs[i].status == sim::RunStatus::ok);
  CHECK(seen.size() == 9);
  // The files run first (one child at a time), the rungs after.
  CHECK(seen.front() == "1 user:nan");
  CHECK(seen.back() == "9 fa2");
}

TEST_CASE("student: the hidden child flag refuses to run by hand", "[student][isolation]") {
  const test::ScratchDir dir("flashlab-student-child");
  const test::Run r = test::run_flashlab(dir.path(), std::string(kKernelFileChildFlag) + " request.json 3>&-");
  CHECK(r.code == 2);
  CHECK_THAT(r.err, Catch::Contains("is started by flashlab bench --kernel-file, not by hand"));
}
