// The runner's bookkeeping on a fake device (host memory): skipped rows with
// reasons, OOM rows that free everything and let the sweep go on, rows of what
// was measured (the rates beside the model are analysis's: tests/analysis/
// test_placement.cpp), failures that say what failed.
#include <catch2/catch.hpp>
#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <limits>
#include <string>

#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/core/format.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using sim::MeasuredRun;
using sim::RunStatus;
using kernels::test::FakeBackend;
using kernels::test::problem;
using kernels::test::runnable;

namespace {

RunOptions quick() {
  RunOptions o;
  o.repeats = 10;
  return o;
}

}  // namespace

TEST_CASE("a case that runs becomes a row of what was measured, naming the rung's model", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = {4.0, 1.0, 3.0, 2.0, 5.0, 2.5, 3.5, 1.5, 4.5, 6.0};  // median 3.25
  be.next.rel_error = 1.5e-4;
  const KernelInfo fa2 = runnable("fa2");
  const auto p = problem(4, 8, 1000, 64, true);
  const MeasuredRun row = run_case(be, fa2, p, quick());
  REQUIRE(row.status == RunStatus::ok);
  CHECK(row.kernel == "fa2");
  CHECK(row.model == "fa2");
  CHECK(sim::model_algorithm(row) == fa2.model);
  CHECK(row.reason.empty());
  CHECK(row.tiles == layout::fa_default_tiles(64));
  CHECK(row.repeats == 10);
  CHECK(row.time_ms_median == Approx(3.25));
  CHECK(row.time_ms_min == 1.0);
  CHECK(row.time_ms_max == 6.0);
  CHECK(row.rel_error == 1.5e-4);

  // Memory: Q, K, V, O and the logsumexp, measured as the device saw them.
  const i64 qkvo = 4 * 4 * 8 * 1000 * 64 * 2, lse = 4 * 8 * 1000 * 4;
  CHECK(row.peak_memory_bytes == qkvo + lse);
  // The case's buffers went to the backend and came back.
  REQUIRE(be.buffers.size() == 1);
  CHECK(be.buffers[0].lse != nullptr);
  CHECK(be.buffers[0].workspace == nullptr);
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("grouped K/V heads run on one GPU with K, V, dK and dV of H_kv heads", "[kernels][runner]") {
  FakeBackend be;
  auto p = problem(4, 8, 1000, 64, true);
  p.kv_heads = 2;
  const MeasuredRun fwd = run_case(be, runnable("fa2"), p, quick());
  REQUIRE(fwd.status == RunStatus::ok);
  const i64 q = 4 * 8 * 1000 * 64 * 2, kv = 4 * 2 * 1000 * 64 * 2, lse = 4 * 8 * 1000 * 4;
  CHECK(fwd.peak_memory_bytes == 2 * q + 2 * kv + lse);

  // The tensor-core backward adds the group's dK, dV in fp32 in its workspace.
  const KernelInfo bwd = runnable("fa2_tc_bwd");
  const KernelInfo fa2_tc = runnable("fa2_tc");
  const MeasuredRun row = run_case(be, bwd, p, quick(), &fa2_tc);
  REQUIRE(row.status == RunStatus::ok);
  const i64 accum = 2 * layout::align256(4 * 2 * 1000 * 64 * 4);
  CHECK(layout::fa_bwd_kv_accum_bytes(p) == accum);
  CHECK(be.buffers.back().workspace_bytes == layout::fa_bwd_workspace_bytes(p) + accum);
  CHECK(row.peak_memory_bytes == 4 * q + 4 * kv + lse + layout::fa_bwd_workspace_bytes(p) + accum);
  CHECK(sim::training_step_memory(bwd.model, p, bwd.storage).kv_accumulator_bytes == 2 * 4 * 2 * 1000 * 64 * 4);
  p.kv_heads = 0;
  CHECK(layout::fa_bwd_kv_accum_bytes(p) == 0);

  p.kv_heads = 3;  // 8 heads do not split into groups of 3
  const MeasuredRun refused = run_case(be, runnable("fa2"), p, quick());
  CHECK(refused.status == RunStatus::skipped);
  CHECK_THAT(refused.reason, Catch::Contains("H_kv"));
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("measured peak memory includes what libraries allocate on the way", "[kernels][runner]") {
  const KernelInfo naive = runnable("naive_cublas");
  const auto p = problem(1, 2, 300, 64);
  // A backend whose device shows 32 MiB more in use once the run started.
  class Lib : public Backend {
   public:
    FakeBackend inner;
    bool ran = false;
    const DeviceInfo& device() const override { return inner.device(); }
    DeviceAllocator& allocator() override { return inner.allocator(); }
    i64 device_used_bytes() override { return inner.device_used_bytes() + (ran ? 32 << 20 : 0); }
    Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
      ran = true;
      return inner.measure(c, b, o);
    }
  } lib;
  lib.inner.next.times_ms = std::vector<double>(10, 1.0);
  const MeasuredRun row = run_case(lib, naive, p, quick());
  REQUIRE(row.status == RunStatus::ok);
  const i64 s_and_p = layout::materialized_workspace_bytes(p);
  CHECK(row.peak_memory_bytes == 4 * 2 * 300 * 64 * 2 + s_and_p + (32 << 20));
  CHECK(row.model == "standard");
}

TEST_CASE("what only the measurement allocates is made before a case's baseline: not in its peak",
          "[kernels][runner]") {
  const KernelInfo naive = runnable("naive_cublas");
  const auto p = problem(1, 2, 300, 64);
  // A backend that, like the CUDA one, makes a 120 MiB flush buffer and a counter
  // session the first time counters are asked for, and keeps them.
  class Counting : public Backend {
   public:
    FakeBackend inner;
    i64 kept = 0;
    const DeviceInfo& device() const override { return inner.device(); }
    DeviceAllocator& allocator() override { return inner.allocator(); }
    i64 device_used_bytes() override { return inner.device_used_bytes() + kept; }
    void prepare(const RunOptions& o) override {
      if (o.counters) kept = 134 << 20;
    }
    Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
      return inner.measure(c, b, o);
    }
  };
  RunOptions o = quick();
  o.counters = true;
  const i64 buffers = 4 * 2 * 300 * 64 * 2 + layout::materialized_workspace_bytes(p);
  for (int first_or_later = 0; first_or_later < 2; ++first_or_later) {
    Counting be;
    be.inner.next.times_ms = std::vector<double>(10, 1.0);
    if (first_or_later == 1) be.prepare(o);  // an earlier case made them
    const MeasuredRun row = run_case(be, naive, p, o);
    REQUIRE(row.status == RunStatus::ok);
    CHECK(row.peak_memory_bytes == buffers);
  }
}

TEST_CASE("what a case allocates is the model's memory of the run, rung by rung", "[kernels][runner][memory]") {
  // Sizes whose buffers need no alignment and whose rows fill the backward's
  // statistics (a multiple of 128 and of 80, layout::fa_bwd_stat_rows): the
  // layouts add nothing there.
  const sim::DType dtype = GENERATE(sim::DType::fp16, sim::DType::bf16, sim::DType::fp32);
  const sim::i64 kv_heads = GENERATE(0, 4, 2);
  const bool causal = GENERATE(false, true);
  auto p = problem(2, 8, 1280, 64, causal, dtype);
  p.kv_heads = kv_heads;
  REQUIRE(layout::fa_bwd_stat_rows(p) == 1280);
  const sim::i64 bh_rows_fp32 = 2 * 8 * 1280 * 4;
  for (const KernelInfo& k : registry()) {
    if (std::find(k.dtypes.begin(), k.dtypes.end(), dtype) == k.dtypes.end()) continue;
    if (!k.head_dims.empty() && std::find(k.head_dims.begin(), k.head_dims.end(), 64) == k.head_dims.end()) continue;
    INFO(k.id << " " << sim::to_string(dtype) << " H_kv " << p.h_kv() << (causal ? " causal" : ""));
    const bool backward = k.pass() == sim::Pass::bwd;
    const KernelInfo* fwd = backward ? forward_rung(k) : nullptr;
    REQUIRE((!backward || fwd != nullptr));
    // The FlashAttention backward rungs keep L·log2(e) beside D in their workspace
    // (the exp2 of P_ij), a copy of the logsumexp the model does not hold, and a
    // counter per head (the blocks of a head that are done, for dQ's convert).
    const sim::i64 log2_copy =
        k.model == sim::Algorithm::fa2_bwd ? bh_rows_fp32 + layout::fa_bwd_counter_bytes(p) : 0;
    sim::i64 allocated = 0;
    std::vector<sim::i64> buffers;
    for (const CaseBuffer& b : case_buffers(k, p, sim::TileShape{64, 64}, fwd, sim::TileShape{64, 64})) {
      allocated += b.bytes;
      buffers.push_back(b.bytes - (b.slot == CaseBuffer::Slot::workspace ? log2_copy : 0));
    }
    sim::i64 modelled = 0;
    for (const sim::TensorMemory& t : sim::run_buffers(k.model, p, k.storage)) modelled += t.bytes;
    CHECK(allocated == modelled + log2_copy);
    // Buffer by buffer, as the model groups them (sim::run_memory_bytes takes each in whole granules).
    std::vector<sim::i64> model = sim::run_allocations(k.model, p, k.storage);
    std::sort(buffers.begin(), buffers.end());
    std::sort(model.begin(), model.end());
    CHECK(buffers == model);
  }
}

TEST_CASE("out of memory under an allocation limit: a row with the bytes, nothing leaks, the sweep goes on",
          "[kernels][runner][oom]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  RunOptions o = quick();
  o.mem_limit_bytes = 15ll << 30;  // a T4
  const KernelInfo naive = runnable("naive"), fa2 = runnable("fa2");
  // batch 64 × 32 heads × 2048²: S alone is 16 GiB.
  const auto big = problem(64, 32, 2048, 64), small = problem(16, 32, 512, 64);

  const MeasuredRun oom = run_case(be, naive, big, o);
  CHECK(oom.status == RunStatus::oom);
  const i64 ws = layout::materialized_workspace_bytes(big);
  CHECK_THAT(oom.reason, Catch::Contains("out of memory") && Catch::Contains("S and P") &&
                             Catch::Contains(sim::group_digits(ws)) && Catch::Contains("allocation limit") &&
                             Catch::Contains("15 GiB"));
  CHECK(be.fake_allocator().outstanding() == 0);
  CHECK(be.fake_allocator().used() == 0);
  CHECK(be.cases.empty());  // never launched
  CHECK(oom.model == "standard");  // analysis places its footprint beside the limit

  // The sweep goes on: the next cases run, with their own memory.
  const auto rows = run_bench(be, {&naive, &fa2}, {big, small}, o);
  REQUIRE(rows.runs.size() == 4);
  CHECK(rows.runs[0].status == RunStatus::oom);
  CHECK(rows.runs[1].status == RunStatus::ok);  // fa2 fits where naive did not
  CHECK(rows.runs[2].status == RunStatus::ok);
  CHECK(rows.runs[3].status == RunStatus::ok);
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("out of device memory: the allocator's refusal is a row too", "[kernels][runner][oom]") {
  FakeBackend be(1ll << 30);  // a 1 GiB device
  be.next.times_ms = std::vector<double>(10, 1.0);
  const KernelInfo naive = runnable("naive");
  const auto p = problem(8, 16, 2048, 64);  // S and P: 2 GiB
  const MeasuredRun row = run_case(be, naive, p, quick());
  CHECK(row.status == RunStatus::oom);
  CHECK_THAT(row.reason, Catch::Contains("the device has no more") && Catch::Contains("asks for"));
  CHECK(be.fake_allocator().outstanding() == 0);
  CHECK(be.fake_allocator().allocations() == 4);  // Q, K, V, O fitted; the workspace did not
}

TEST_CASE("the arena frees everything, in every way a case can end", "[kernels][runner][oom]") {
  kernels::test::FakeAllocator a(1000);
  {
    DeviceArena arena(a, 600);
    CHECK(arena.allocate(0, "nothing") == nullptr);
    arena.allocate(300, "first");
    arena.allocate(200, "second");
    CHECK(arena.in_use_bytes() == 500);
    CHECK_THROWS_AS(arena.allocate(200, "third"), OutOfMemory);
    try {
      arena.allocate(101, "third");
    } catch (const OutOfMemory& e) {
      CHECK(e.bytes_asked == 101);
      CHECK(e.bytes_in_use == 500);
      CHECK_THAT(e.what(), Catch::Contains("third needs 101 B"));
    }
    CHECK(arena.peak_bytes() == 500);
    CHECK(a.outstanding() == 2);
  }
  CHECK(a.outstanding() == 0);
  {
    DeviceArena arena(a);  // no limit: the allocator's capacity decides
    arena.allocate(900, "big");
    CHECK_THROWS_WITH(arena.allocate(200, "more"), Catch::Contains("no more"));
  }
  CHECK(a.outstanding() == 0);
}

TEST_CASE("impossible cases are skipped with the reason and allocate nothing", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  RunOptions o = quick();

  SECTION("a head dim the rung lacks") {
    const MeasuredRun row = run_case(be, runnable("fa2"), problem(1, 1, 64, 48), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK_THAT(row.reason, Catch::Contains("d=48"));
  }
  SECTION("a dtype the rung lacks") {
    if (find_kernel("fa2_tc") == nullptr) return;
    const MeasuredRun row =
        run_case(be, runnable("fa2_tc"), problem(1, 1, 64, 64, false, sim::DType::fp32), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK_THAT(row.reason, Catch::Contains("fp32"));
  }
  SECTION("tiles too large for shared memory") {
    o.tiles = {TileRule::explicit_tiles, {64, 4096}};
    const MeasuredRun row = run_case(be, runnable("fa1"), problem(1, 1, 64, 128), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK(row.tiles == sim::TileShape{64, 4096});
    CHECK_THAT(row.reason, Catch::Contains("cudaDevAttrMaxSharedMemoryPerBlockOptin"));
  }
  SECTION("the paper's tiles in fp32 shared memory") {
    o.tiles = {TileRule::paper, {}};
    const MeasuredRun row = run_case(be, runnable("fa2"), problem(1, 1, 4096, 64), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK(row.tiles == sim::TileShape{64, 456});
    CHECK_THAT(row.reason, Catch::Contains("shared memory"));
  }
  SECTION("the launch itself refuses") {
    be.throw_unsupported = true;
    const MeasuredRun row = run_case(be, runnable("fa2"), problem(1, 1, 64, 64), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK_THAT(row.reason, Catch::Contains("fake refusal"));
    CHECK(be.fake_allocator().outstanding() == 0);
    return;
  }
  SECTION("a build without CUDA") {
    KernelInfo unbuilt = *find_kernel("fa2");
    unbuilt.launch = nullptr;
    const MeasuredRun row = run_case(be, unbuilt, problem(1, 1, 64, 64), o);
    CHECK(row.status == RunStatus::skipped);
    CHECK_THAT(row.reason, Catch::Contains("no CUDA support"));
  }
  CHECK(be.fake_allocator().allocations() == 0);
  CHECK(be.cases.empty());
}

TEST_CASE("wrong or unwritten output fails the row, saying so", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  const auto p = problem(1, 2, 100, 64, false, sim::DType::bf16);

  be.next.not_written = 64;
  MeasuredRun row = run_case(be, runnable("fa2"), p, quick());
  CHECK(row.status == RunStatus::failed);
  CHECK_THAT(row.reason, Catch::Contains("64 of 12,800 output elements were not written"));

  be.next.not_written = 0;
  be.next.rel_error = 0.05;
  be.next.check_note = "all 2 heads";
  row = run_case(be, runnable("fa2"), p, quick());
  CHECK(row.status == RunStatus::failed);
  CHECK_THAT(row.reason, Catch::Contains("relative error 0.05") && Catch::Contains("0.02") &&
                             Catch::Contains("all 2 heads"));

  be.next.rel_error = 0.015;  // within the bf16 bound
  CHECK(run_case(be, runnable("fa2"), p, quick()).status == RunStatus::ok);
  be.next.rel_error = std::numeric_limits<double>::infinity();
  CHECK(run_case(be, runnable("fa2"), p, quick()).status == RunStatus::failed);
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("after an error that poisons the device, the remaining cases are marked, not run",
          "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  be.next.not_written = 1;  // every case "fails"
  be.sticky = "cudaErrorIllegalAddress: an illegal memory access was encountered";
  const KernelInfo a = runnable("fa1"), b = runnable("fa2");
  const auto r = run_bench(be, {&a, &b}, {problem(1, 1, 64, 64), problem(1, 1, 128, 64)}, quick());
  REQUIRE(r.runs.size() == 4);
  CHECK(r.runs[0].status == RunStatus::failed);
  for (int k = 1; k < 4; ++k) {
    CHECK(r.runs[k].status == RunStatus::failed);
    CHECK_THAT(r.runs[k].reason, Catch::Contains("not run") && Catch::Contains("cudaErrorIllegalAddress"));
    CHECK(r.runs[k].model == std::string(sim::to_string(k % 2 == 0 ? a.model : b.model)));
  }
  CHECK(be.cases.size() == 1);
}

TEST_CASE("each problem gets fresh inputs, shared by its kernels", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  const KernelInfo a = runnable("fa1"), b = runnable("fa2");
  RunOptions o = quick();
  o.seed = 42;
  std::vector<std::size_t> seen;
  const auto r = run_bench(be, {&a, &b}, {problem(1, 1, 64, 64), problem(1, 1, 65, 64), problem(1, 1, 66, 64)}, o,
                           [&](std::size_t done, std::size_t total, const MeasuredRun&) {
                             CHECK(total == 6);
                             seen.push_back(done);
                           });
  CHECK(seen == std::vector<std::size_t>{1, 2, 3, 4, 5, 6});
  REQUIRE(be.cases.size() == 6);
  CHECK(be.cases[0].seed == be.cases[1].seed);
  CHECK(be.cases[2].seed == be.cases[3].seed);
  CHECK(be.cases[0].seed != be.cases[2].seed);
  CHECK(be.cases[2].seed != be.cases[4].seed);
  CHECK(be.cases[0].seed == case_seed(42, 0));
  CHECK(case_seed(42, 0) != case_seed(43, 0));
}

TEST_CASE("results carry the metadata a lab report needs", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  const KernelInfo a = runnable("fa2");
  RunOptions o = quick();
  o.l2_flush = false;
  const auto r = run_bench(be, {&a}, {problem(1, 1, 64, 64)}, o);
  CHECK(r.meta.gpu == "Fake H100 (host memory)");
  CHECK(r.meta.sm_count == 132);
  CHECK(r.meta.sm_clock_mhz == 1755);
  CHECK(r.meta.driver == "13.0");
  CHECK(r.meta.cuda_runtime == "13.0");
  // The commit CMake wrote into this build (build_commit.cpp), unless
  // $FLASHLAB_COMMIT names another; "unknown" where the tree had no git.
  if (std::getenv("FLASHLAB_COMMIT") == nullptr) {
    std::ifstream in(FLASHLAB_BUILD_COMMIT_FILE);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const std::string key = "kBuildCommit[] = \"";
    const size_t at = text.find(key);
    REQUIRE(at != std::string::npos);
    const std::string written = text.substr(at + key.size(), text.find('"', at + key.size()) - at - key.size());
    CHECK(r.meta.commit == (written.empty() ? "unknown" : written));
  }
  CHECK_FALSE(r.meta.commit.empty());
  CHECK_THAT(r.meta.flop_convention, Catch::Contains("4·B·H·N_q·N_kv·d") && Catch::Contains("halved when causal"));
  CHECK(r.meta.date.size() == 20);
  CHECK_FALSE(r.meta.l2_flush);
}

TEST_CASE("a check-only run has no times", "[kernels][runner]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 1.0);
  be.next.rel_error = 1e-3;
  RunOptions o = quick();
  o.repeats = 0;
  const MeasuredRun row = run_case(be, runnable("fa1"), problem(1, 1, 64, 64), o);
  CHECK(row.status == RunStatus::ok);
  CHECK(row.repeats == 0);
  CHECK(row.time_ms_median == 0);
  CHECK(row.rel_error == 1e-3);
}

// ---- backward cases ----------------------------------------------------------------

TEST_CASE("a backward case runs after its forward rung, with dO, dQ, dK, dV and both workspaces",
          "[kernels][runner][bwd]") {
  FakeBackend be;
  be.next.times_ms = std::vector<double>(10, 2.0);
  be.next.rel_error = 3e-4;
  const KernelInfo bwd = runnable("naive_bwd"), fwd = runnable("naive_cublas");
  const auto p = problem(2, 3, 300, 64, true);
  const MeasuredRun row = run_case(be, bwd, p, quick(), &fwd);
  REQUIRE(row.status == RunStatus::ok);
  CHECK(row.kernel == "naive_bwd");
  CHECK(row.model == "standard_bwd");
  CHECK(row.direction == "bwd");
  CHECK(row.rel_error == 3e-4);
  REQUIRE(be.cases.size() == 1);
  CHECK(be.cases[0].forward == &fwd);
  CHECK(be.cases[0].forward_tiles == sim::TileShape{0, 0});
  const CaseBuffers& b = be.buffers.at(0);
  CHECK(b.d_o != nullptr);
  CHECK(b.dq != nullptr);
  CHECK(b.dk != nullptr);
  CHECK(b.dv != nullptr);
  CHECK(b.lse == nullptr);  // naive_cublas writes none, naive_bwd reads none
  CHECK(b.forward_workspace != nullptr);
  CHECK(b.forward_workspace_bytes == layout::materialized_workspace_bytes(p));  // S and P, P read by the backward
  CHECK(b.workspace_bytes == layout::naive_bwd_workspace_bytes(p));             // dP, then dS
  // The peak is every buffer of the case: Q, K, V, O, dO, dQ, dK, dV and both workspaces.
  const i64 t = 2 * 3 * 300 * 64 * 2;
  CHECK(row.peak_memory_bytes == 8 * t + b.forward_workspace_bytes + b.workspace_bytes);
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("fa2_bwd reads fa2's logsumexp and runs with its own tiles", "[kernels][runner][bwd]") {
  FakeBackend be;
  const KernelInfo bwd = runnable("fa2_bwd"), fwd = runnable("fa2");
  const auto p = problem(1, 2, 1000, 128, false, sim::DType::bf16, 17);
  const MeasuredRun row = run_case(be, bwd, p, quick(), &fwd);
  REQUIRE(row.status == RunStatus::ok);
  CHECK(row.tiles == layout::fa_bwd_default_tiles(128));
  CHECK(be.cases.at(0).forward_tiles == layout::fa_default_tiles(128));
  CHECK(be.buffers.at(0).lse != nullptr);
  CHECK(be.buffers.at(0).workspace_bytes == layout::fa_bwd_workspace_bytes(p));
  CHECK(row.storage.dq_accumulator == sim::DType::fp32);
  CHECK(row.heaviest_first);
  // Explicit tiles are the backward's; the forward keeps its default.
  RunOptions o = quick();
  o.tiles = {TileRule::explicit_tiles, {33, 17}};
  const MeasuredRun odd = run_case(be, bwd, p, o, &fwd);
  REQUIRE(odd.status == RunStatus::ok);
  CHECK(odd.tiles == sim::TileShape{33, 17});
  CHECK(be.cases.back().forward_tiles == layout::fa_default_tiles(128));
}

TEST_CASE("a backward rung whose forward rung cannot run is skipped, naming it", "[kernels][runner][bwd]") {
  FakeBackend be;
  const auto p = problem(1, 2, 64, 64);
  KernelInfo orphan = runnable("naive_bwd");
  orphan.forward = "no_such_rung";
  MeasuredRun row = run_case(be, orphan, p, quick());
  CHECK(row.status == RunStatus::skipped);
  CHECK(row.direction == "bwd");
  CHECK_THAT(row.reason, Catch::Contains("no_such_rung"));
  KernelInfo fp32_only = runnable("naive_cublas");
  fp32_only.dtypes = {sim::DType::fp32};
  row = run_case(be, runnable("naive_bwd"), p, quick(), &fp32_only);
  CHECK(row.status == RunStatus::skipped);
  CHECK_THAT(row.reason, Catch::Contains("naive_cublas") && Catch::Contains("fp16"));
  CHECK(be.cases.empty());  // nothing measured, nothing allocated
  CHECK(be.fake_allocator().allocations() == 0);
}

TEST_CASE("a backward case out of memory is a row naming its buffers and bytes", "[kernels][runner][bwd]") {
  const KernelInfo bwd = runnable("naive_bwd"), fwd = runnable("naive_cublas");
  const auto p = problem(1, 32, 16384, 64);
  // Room for S and P (the forward's workspace) but not for dP as well.
  const i64 s_and_p = layout::materialized_workspace_bytes(p);
  FakeBackend be(s_and_p + (1 << 30));
  const MeasuredRun row = run_case(be, bwd, p, quick(), &fwd);
  CHECK(row.status == RunStatus::oom);
  CHECK_THAT(row.reason, Catch::Contains("dP and dS") && Catch::Contains("in all"));
  CHECK(be.fake_allocator().outstanding() == 0);
}

TEST_CASE("run_bench gives every row its direction", "[kernels][runner][bwd]") {
  FakeBackend be;
  const auto rows = run_bench(be, kernels_of(sim::PassSelection::fwd_bwd), {problem(1, 1, 64, 64)}, quick());
  REQUIRE(rows.runs.size() == registry().size());
  for (std::size_t i = 0; i < rows.runs.size(); ++i) {
    INFO(rows.runs[i].kernel);
    CHECK(rows.runs[i].direction == sim::to_string(registry()[i].pass()));
  }
}
