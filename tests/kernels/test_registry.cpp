// The registry as every front end sees it: the ladder in order, what each
// rung supports, and the checks that turn an impossible case into a reason.
#include <catch2/catch.hpp>
#include <set>

#include "flashlab/kernels/device.hpp"
#include "flashlab/kernels/layouts.hpp"
#include "flashlab/kernels/registry.hpp"
#include "flashlab/sim/format.hpp"
#include "flashlab/sim/tiles.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using test::problem;

TEST_CASE("the registry lists the ladder in lecture order, with or without CUDA", "[kernels][registry]") {
  const auto& r = registry();
  REQUIRE(r.size() >= 4);
  CHECK(r[0].id == "naive");
  CHECK(r[1].id == "naive_cublas");
  CHECK(r[2].id == "fa1");
  CHECK(r[3].id == "fa2");
  std::set<std::string> ids;
  for (const KernelInfo& k : r) {
    INFO(k.id);
    CHECK(ids.insert(k.id).second);
    CHECK_FALSE(k.name.empty());
    CHECK_FALSE(k.summary.empty());
    CHECK_FALSE(k.dtypes.empty());
    CHECK(k.min_sm >= 70);
    CHECK(k.built() == built_with_cuda());
    CHECK(find_kernel(k.id) == &k);
    CHECK(k.workspace_bytes);
    // A build without CUDA cannot ask a compiled rung for its tiles.
    if (k.tile_source == TileSource::runtime || (k.tile_source == TileSource::compiled && k.built()))
      CHECK(k.default_tiles);
  }
  CHECK(find_kernel("nope") == nullptr);
  CHECK(kernel_ids().find("naive, naive_cublas, fa1, fa2") == 0);
}

TEST_CASE("each rung names the simulator algorithm with its HBM traffic", "[kernels][registry]") {
  CHECK(find_kernel("naive")->model == sim::Algorithm::standard);
  CHECK(find_kernel("naive_cublas")->model == sim::Algorithm::standard);
  CHECK(find_kernel("fa1")->model == sim::Algorithm::fa1);
  CHECK(find_kernel("fa2")->model == sim::Algorithm::fa2);
  if (const KernelInfo* tc = find_kernel("fa2_tc")) {
    CHECK(tc->model == sim::Algorithm::fa2);
    CHECK(tc->tile_source == TileSource::compiled);
    CHECK_FALSE(tc->supports(sim::DType::fp32));
  }
}

TEST_CASE("the CUDA-core rungs cover fp32/fp16/bf16 and d in {32, 64, 128} at least", "[kernels][registry]") {
  for (const char* id : {"naive", "naive_cublas", "fa1", "fa2"}) {
    const KernelInfo& k = *find_kernel(id);
    INFO(id);
    for (sim::DType t : {sim::DType::fp32, sim::DType::fp16, sim::DType::bf16}) CHECK(k.supports(t));
    for (int d : {32, 64, 128}) CHECK(k.supports_head_dim(d));
  }
  CHECK(find_kernel("naive")->supports_head_dim(80));   // any d
  CHECK_FALSE(find_kernel("fa2")->supports_head_dim(80));
}

TEST_CASE("an impossible case gets a reason naming the limit", "[kernels][registry]") {
  const DeviceLimits dev = test::fake_h100().limits();
  const KernelInfo& fa2 = *find_kernel("fa2");

  SECTION("a head dim the rung is not compiled for") {
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 48), {64, 64}, dev);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("d=48") && Catch::Contains("32, 64, 96, 128, 256"));
  }
  SECTION("tiles larger than the device's shared memory") {
    const sim::TileShape t{64, 4096};
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 128), t, dev);
    REQUIRE(why);
    const i64 need = layout::fa_smem_bytes(128, t);
    CHECK(need == 4 * (2 * 4096 * 128 + 64 * 4097));
    CHECK_THAT(*why, Catch::Contains("cudaDevAttrMaxSharedMemoryPerBlockOptin") && Catch::Contains("232,448") &&
                         Catch::Contains(sim::group_digits(need)));
  }
  SECTION("more threads than the compiled kernel allows") {
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 128), {256, 8}, dev);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("1,024 threads") && Catch::Contains("at most 512"));
  }
  SECTION("an older GPU") {
    DeviceLimits old = dev;
    old.compute_capability = 75;
    const auto why = unsupported_reason(*find_kernel("naive"), problem(1, 1, 64, 64), {0, 0}, old);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("8.0") && Catch::Contains("7.5"));
  }
  SECTION("zero-sized tiles") {
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 64), {0, 64}, dev);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("at least 1×1"));
  }
  SECTION("a case that fits has no reason") {
    CHECK_FALSE(unsupported_reason(fa2, problem(2, 3, 1000, 64), layout::fa_default_tiles(64), dev));
    CHECK_FALSE(unsupported_reason(*find_kernel("naive"), problem(2, 3, 1000, 80), {0, 0}, dev));
  }
}

TEST_CASE("default tiles fit an H100 and leave room for two or more blocks per SM", "[kernels][registry]") {
  const DeviceLimits dev = test::fake_h100().limits();
  for (int d : layout::fa_head_dims()) {
    INFO("d=" << d);
    const sim::TileShape t = layout::fa_default_tiles(d);
    for (const char* id : {"fa1", "fa2"}) CHECK_FALSE(unsupported_reason(*find_kernel(id), problem(1, 1, 64, d), t, dev));
    CHECK(layout::fa_threads_per_block(d, t) % 32 == 0);
    if (d <= 128) CHECK(2 * layout::fa_smem_bytes(d, t) <= dev.smem_per_sm_bytes);
  }
  // Threads round up to whole warps: B_r = 33 rows of one lane is two warps.
  CHECK(layout::fa_threads_per_block(32, {33, 17}) == 64);
  CHECK(layout::fa_threads_per_block(128, {7, 17}) == 32);
}

TEST_CASE("tiles come from the request, the rung or the paper's rule", "[kernels][registry]") {
  const DeviceLimits dev = test::fake_h100().limits();
  const auto p = problem(1, 1, 4096, 64);
  const KernelInfo& fa2 = *find_kernel("fa2");
  CHECK(resolve_tiles(fa2, p, {}, dev) == layout::fa_default_tiles(64));
  CHECK(resolve_tiles(fa2, p, {TileRule::explicit_tiles, {33, 17}}, dev) == sim::TileShape{33, 17});
  const sim::TileShape paper = resolve_tiles(fa2, p, {TileRule::paper, {}}, dev);
  CHECK(paper == sim::paper_tile_rule(dev.smem_per_sm_bytes, p));
  CHECK(paper.Br == 64);
  CHECK(paper.Bc == (233472 / 2 + 4 * 64 - 1) / (4 * 64));  // ⌈M/4d⌉, M in fp16 elements
  // The materialising rungs are not tiled in the model's sense.
  CHECK(resolve_tiles(*find_kernel("naive"), p, {TileRule::explicit_tiles, {33, 17}}, dev) == sim::TileShape{0, 0});
}

TEST_CASE("predicted memory is the model's HBM tensors, exactly", "[kernels][registry]") {
  const i64 B = 3, H = 5, N = 1000, d = 64;
  const auto p16 = problem(B, H, N, d, false, sim::DType::fp16);
  const i64 qkvo = 4 * B * H * N * d * 2;
  CHECK(predicted_memory_bytes(*find_kernel("naive"), p16) == qkvo + 2 * B * H * N * N * 2);
  CHECK(predicted_memory_bytes(*find_kernel("naive_cublas"), p16) == qkvo + 2 * B * H * N * N * 2);
  CHECK(predicted_memory_bytes(*find_kernel("fa1"), p16) == qkvo + 2 * B * H * N * 4);  // ℓ, m fp32
  CHECK(predicted_memory_bytes(*find_kernel("fa2"), p16) == qkvo + B * H * N * 4);      // logsumexp fp32
  const auto p32 = problem(B, H, N, d, false, sim::DType::fp32, 17);
  CHECK(predicted_memory_bytes(*find_kernel("naive"), p32) ==
        (2 * B * H * N * d + 2 * B * H * 17 * d) * 4 + 2 * B * H * N * 17 * 4);
}

TEST_CASE("workspaces hold what the rungs put there", "[kernels][registry]") {
  const auto p = problem(2, 3, 1001, 64, false, sim::DType::bf16, 17);
  // S then P, each B·H·N_q·N_kv in the dtype, P starting on a 256-byte boundary.
  CHECK(layout::score_matrix_bytes(p) == 2 * 3 * 1001 * 17 * 2);
  CHECK(layout::materialized_workspace_bytes(p) == 2 * layout::align256(2 * 3 * 1001 * 17 * 2));
  // fa1: O in fp32, ℓ and m in fp32.
  CHECK(layout::fa1_workspace_bytes(p) ==
        layout::align256(2 * 3 * 1001 * 64 * 4) + 2 * layout::align256(2 * 3 * 1001 * 4));
  CHECK(find_kernel("fa2")->workspace_bytes(p, {64, 64}) == 0);
}
