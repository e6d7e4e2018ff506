// The registry as every front end sees it: the ladder in order, what each
// rung supports, the checks that turn an impossible case into a reason, and
// what ties a rung to its model: the rows it reports, the tiles the simulator
// is given, the workspace that holds the model's intermediate tensors.
#include <catch2/catch.hpp>
#include <algorithm>
#include <set>
#include <type_traits>

#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/memory/footprint.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/memory/simulate.hpp"
#include "flashlab/sim/problem/tensor_core_configs.hpp"
#include "flashlab/sim/problem/tiles.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using kernels::test::problem;

namespace {

// Bytes of one whole tensor of the model, all heads, at the model's element size.
i64 model_tensor_bytes(sim::Tensor t, const sim::AttentionProblem& p) {
  const sim::TensorExtent e = sim::tensor_extent(t, p);
  return p.head_count() * e.rows * e.cols * sim::element_bytes(t, p.dtype);
}

// A sequence length a table's row serves: its longest where it has one
// (sim::HopperConfig's rows for short sequences), else 4096, past every such row.
template <class Config>
sim::i64 row_seq(const Config& c) {
  if constexpr (std::is_same_v<Config, sim::HopperConfig>) return c.max_seq > 0 ? c.max_seq : 4096;
  return 1024;
}

// Whether a table's row serves a problem of head dim d under the mask at its
// sequence length: the Hopper tables' rows say so (a row may serve one mask),
// the others serve both.
template <class Config>
bool row_serves(const Config& c, sim::i64 d, bool causal) {
  if constexpr (std::is_same_v<Config, sim::HopperBwdConfig> || std::is_same_v<Config, sim::HopperConfig>)
    return c.serves(d, causal, row_seq(c));
  return c.head_dim == d;
}

// A rung compiled for the configurations of a simulator table (`configs`):
// it lists their head dims (each once), takes its default tiles from them
// (the first row that serves a problem's head dim, mask and sequence length)
// and declares the shared memory `smem_bytes` gives each, on a problem of
// `dtype`, causal when `causal` unless the row serves the other mask only.
template <class Configs, class SmemBytes>
void check_compiled_configs(const KernelInfo& k, const Configs& configs, SmemBytes smem_bytes, bool causal,
                            sim::DType dtype) {
  std::vector<int> want;
  for (const auto& c : configs)
    if (std::find(want.begin(), want.end(), c.head_dim) == want.end()) want.push_back(c.head_dim);
  CHECK(k.head_dims == want);
  for (const auto& c : configs) {
    const bool mask = row_serves(c, c.head_dim, causal) ? causal : !causal;
    INFO(k.id << " d " << c.head_dim << (mask ? " causal" : ""));
    const sim::AttentionProblem p = problem(1, 4, row_seq(c), c.head_dim, mask, dtype);
    REQUIRE(k.default_tiles);
    CHECK(k.default_tiles(p) == sim::TileShape{c.Br, c.Bc});
    CHECK(k.smem_bytes(p, sim::TileShape{c.Br, c.Bc}) == static_cast<sim::i64>(smem_bytes(c)));
  }
}

RunOptions check_only() {
  RunOptions o;
  o.repeats = 0;
  return o;
}

}  // namespace

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

TEST_CASE("every row a rung reports names its model, with the tiles that ran", "[kernels][registry]") {
  const auto p = problem(1, 2, 300, 64);
  for (const KernelInfo& k : registry()) {
    INFO(k.id);
    kernels::test::FakeBackend be;
    // A backward rung runs after its forward one: made runnable too (no CUDA needed).
    const KernelInfo fwd = k.forward.empty() ? KernelInfo{} : kernels::test::runnable(k.forward);
    const sim::MeasuredRun row =
        run_case(be, kernels::test::runnable(k.id), p, check_only(), k.forward.empty() ? nullptr : &fwd);
    CHECK(row.direction == sim::to_string(k.pass()));
    REQUIRE(row.status == sim::RunStatus::ok);
    CHECK(row.model == sim::to_string(k.model));
    CHECK(sim::model_algorithm(row) == k.model);
    // The tiles in the row are the tiles the launch was given: what analysis hands the simulator.
    REQUIRE(be.cases.size() == 1);
    CHECK(be.cases[0].tiles == row.tiles);
    CHECK(row.tiles == resolve_tiles(k, p, {}, be.device().limits()));
  }
  if (const KernelInfo* tc = find_kernel("fa2_tc")) {
    // A compiled rung runs its own tiles whatever is asked, and has no fp32 version.
    const DeviceLimits dev = kernels::test::fake_h100().limits();
    CHECK(resolve_tiles(*tc, p, {TileRule::explicit_tiles, {33, 17}}, dev) == resolve_tiles(*tc, p, {}, dev));
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
  const DeviceLimits dev = kernels::test::fake_h100().limits();
  const KernelInfo& fa2 = *find_kernel("fa2");

  SECTION("a head dim the rung is not compiled for") {
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 48), {64, 64}, dev);
    REQUIRE(why);
    CHECK_THAT(*why, Catch::Contains("d=48") && Catch::Contains("16, 32, 64, 96, 128, 256"));
  }
  SECTION("tiles larger than the device's shared memory") {
    const sim::TileShape t{64, 4096};
    const auto why = unsupported_reason(fa2, problem(1, 1, 64, 128), t, dev);
    REQUIRE(why);
    const i64 need = layout::fa_smem_bytes(128, t);
    CHECK(need > dev.smem_optin_bytes);
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
  const DeviceLimits dev = kernels::test::fake_h100().limits();
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

TEST_CASE("tiles come from the request, the rung or the paper's rule, and reach the simulator unchanged",
          "[kernels][registry]") {
  const DeviceLimits dev = kernels::test::fake_h100().limits();
  const auto p = problem(1, 1, 4096, 64);
  const KernelInfo& fa2 = *find_kernel("fa2");
  CHECK(resolve_tiles(fa2, p, {}, dev) == layout::fa_default_tiles(64));
  CHECK(resolve_tiles(fa2, p, {TileRule::explicit_tiles, {33, 17}}, dev) == sim::TileShape{33, 17});
  const sim::TileShape paper = resolve_tiles(fa2, p, {TileRule::paper, {}}, dev);
  CHECK(paper == sim::paper_tile_rule(dev.smem_per_sm_bytes, p));
  // The paper's rule on the device's M is the simulator's own choice there for
  // FlashAttention-1, whose loop order the rule was made for.
  CHECK(sim::choose_tiles(sim::Algorithm::fa1, p, dev.smem_per_sm_bytes, std::nullopt).tiles == paper);
  // The materialising rungs are not tiled in the model's sense.
  CHECK(resolve_tiles(*find_kernel("naive"), p, {TileRule::explicit_tiles, {33, 17}}, dev) == sim::TileShape{0, 0});

  // Whatever the rule, the row carries the resolved tiles and the simulator
  // counts exactly those (the device as the simulator's hardware).
  for (const TileRequest& req : {TileRequest{}, TileRequest{TileRule::explicit_tiles, {33, 17}}}) {
    kernels::test::FakeBackend be;
    RunOptions o = check_only();
    o.tiles = req;
    const sim::MeasuredRun row = run_case(be, kernels::test::runnable("fa2"), p, o);
    REQUIRE(row.status == sim::RunStatus::ok);
    CHECK(row.tiles == resolve_tiles(fa2, p, req, dev));
    sim::SimOptions so;
    so.tiles = row.tiles;
    const sim::SimResult r = sim::simulate(fa2.model, p, simulator_hardware(be.device()), so);
    REQUIRE(r.ok());
    CHECK(r.tiles == row.tiles);
  }
}

TEST_CASE("a rung's workspace is what the runner allocates and holds its model's intermediate tensors",
          "[kernels][registry]") {
  const auto p = problem(2, 3, 1001, 64, false, sim::DType::bf16, 17);
  const DeviceLimits dev = kernels::test::fake_h100().limits();
  for (const KernelInfo* kp : kernels_of(sim::PassSelection::fwd)) {
    const KernelInfo& k = *kp;
    if (!k.supports(p.dtype) || !k.supports_head_dim(p.head_dim)) continue;
    INFO(k.id);
    const sim::TileShape t = resolve_tiles(k, p, {}, dev);
    const i64 ws = k.workspace_bytes(p, t);
    // The runner hands the launch exactly that much (none at all when it is zero).
    kernels::test::FakeBackend be;
    REQUIRE(run_case(be, kernels::test::runnable(k.id), p, check_only()).status == sim::RunStatus::ok);
    CHECK(be.buffers.at(0).workspace_bytes == ws);
    CHECK((be.buffers.at(0).workspace != nullptr) == (ws > 0));
    CHECK((be.buffers.at(0).lse != nullptr) == k.writes_lse);

    const std::vector<sim::Tensor> model = sim::hbm_tensors(k.model, p);
    auto has = [&](sim::Tensor x) { return std::find(model.begin(), model.end(), x) != model.end(); };
    if (sim::algorithm_info(k.model).materializes_scores) {
      // S then P, each the model's whole tensor in the problem dtype, P on a 256-byte boundary.
      REQUIRE(has(sim::Tensor::S));
      REQUIRE(has(sim::Tensor::P));
      CHECK(layout::score_matrix_bytes(p) == model_tensor_bytes(sim::Tensor::S, p));
      CHECK(layout::score_matrix_bytes(p) == model_tensor_bytes(sim::Tensor::P, p));
      CHECK(ws == 2 * layout::align256(layout::score_matrix_bytes(p)));
    } else if (has(sim::Tensor::l)) {
      // Algorithm 1 keeps O (in fp32 between launches), ℓ and m in HBM.
      REQUIRE(has(sim::Tensor::m));
      CHECK(ws == layout::fa1_o_acc_bytes(p) + 2 * layout::fa1_stat_bytes(p));
      CHECK(layout::fa1_o_acc_bytes(p) >= p.head_count() * p.n_q() * p.head_dim * 4);
      CHECK(layout::fa1_stat_bytes(p) >= model_tensor_bytes(sim::Tensor::l, p));
      CHECK(layout::fa1_stat_bytes(p) >= model_tensor_bytes(sim::Tensor::m, p));
    } else {
      // FlashAttention-2 keeps nothing beyond O and the logsumexp.
      CHECK(has(sim::Tensor::LSE));
      CHECK(k.writes_lse);
      CHECK(ws == 0);
    }
  }
}

TEST_CASE("backward rungs follow the forward ladder, each naming the forward rung it reads", "[kernels][registry][bwd]") {
  const auto fwd = kernels_of(sim::PassSelection::fwd);
  const auto bwd = kernels_of(sim::PassSelection::bwd);
  REQUIRE(bwd.size() >= 2);
  // Forward rungs first, in lecture order; no backward rung replaces one.
  for (std::size_t i = 0; i < fwd.size(); ++i) CHECK(&registry()[i] == fwd[i]);
  CHECK(bwd[0]->id == "naive_bwd");
  CHECK(bwd[1]->id == "fa2_bwd");
  for (const KernelInfo* k : bwd) {
    INFO(k->id);
    // The pass is the model's, one definition.
    CHECK(k->pass() == sim::Pass::bwd);
    CHECK(sim::algorithm_info(k->model).pass == sim::Pass::bwd);
    const KernelInfo* f = forward_rung(*k);
    REQUIRE(f != nullptr);
    CHECK(f->pass() == sim::Pass::fwd);
    // The backward differentiates the algorithm its forward rung runs.
    CHECK(sim::forward_of(k->model) == f->model);
    // What the backward runs, its forward runs too.
    for (sim::DType t : k->dtypes) CHECK(f->supports(t));
    for (int d : k->head_dims) CHECK(f->supports_head_dim(d));
    if (k->head_dims.empty()) CHECK(f->head_dims.empty());
    CHECK_FALSE(k->workspace_holds.empty());
  }
  CHECK(find_kernel("naive_bwd")->forward == "naive_cublas");
  CHECK(find_kernel("naive_bwd")->model == sim::Algorithm::standard_bwd);
  const KernelInfo& fa2_bwd = *find_kernel("fa2_bwd");
  CHECK(fa2_bwd.forward == "fa2");
  CHECK(forward_rung(fa2_bwd)->writes_lse);  // P_ij = exp(S_ij − L_i) needs L_i
  CHECK(fa2_bwd.storage.dq_accumulator == sim::DType::fp32);
  CHECK(fa2_bwd.tile_source == TileSource::runtime);
  if (const KernelInfo* tc = find_kernel("fa2_tc_bwd")) {
    CHECK(tc->forward == "fa2_tc");
    CHECK(tc->model == sim::Algorithm::fa2_bwd);
    CHECK(tc->storage.dq_accumulator == sim::DType::fp32);
    CHECK(tc->tile_source == TileSource::compiled);
    CHECK_FALSE(tc->supports(sim::DType::fp32));
  }
  CHECK(forward_rung(*find_kernel("fa2")) == nullptr);
}

TEST_CASE("a backward rung's workspace holds its model's intermediate tensors", "[kernels][registry][bwd]") {
  const auto p = problem(2, 3, 1001, 64, false, sim::DType::bf16, 17);
  const DeviceLimits dev = kernels::test::fake_h100().limits();
  const KernelInfo& naive = *find_kernel("naive_bwd");
  // dP (dS written over it), the model's whole tensor in the problem dtype.
  const std::vector<sim::Tensor> std_bwd = sim::hbm_tensors(naive.model, p);
  CHECK(std::find(std_bwd.begin(), std_bwd.end(), sim::Tensor::dP) != std_bwd.end());
  CHECK(naive.workspace_bytes(p, {0, 0}) == layout::align256(model_tensor_bytes(sim::Tensor::dP, p)));
  CHECK(model_tensor_bytes(sim::Tensor::dS, p) == model_tensor_bytes(sim::Tensor::dP, p));
  // fa2_bwd: dQaccum in fp32 and D (and L·log2 e), padded rows of a head.
  const KernelInfo& fa2 = *find_kernel("fa2_bwd");
  const std::vector<sim::Tensor> fa = sim::hbm_tensors(fa2.model, p, fa2.storage);
  CHECK(std::find(fa.begin(), fa.end(), sim::Tensor::dQaccum) != fa.end());
  CHECK(std::find(fa.begin(), fa.end(), sim::Tensor::D) != fa.end());
  const i64 ws = fa2.workspace_bytes(p, resolve_tiles(fa2, p, {}, dev));
  CHECK(ws == layout::fa_bwd_workspace_bytes(p));
  CHECK(layout::fa_bwd_dq_accum_bytes(p) >= p.head_count() * p.n_q() * p.head_dim * 4);
  CHECK(layout::fa_bwd_stat_bytes(p) >= model_tensor_bytes(sim::Tensor::D, p));
  // 1001 rows: 1024 pads them for 64 and 128, 1040 for B_r = 80 (13 row blocks).
  CHECK(layout::fa_bwd_stat_rows(p) == (sim::kHopperBwdD128Br == 80 ? 1040 : 1024));
}

TEST_CASE("the backward's statistics hold every row block of every compiled B_r whole", "[kernels][registry][bwd]") {
  for (const sim::i64 n : {1, 17, 63, 64, 65, 80, 81, 127, 128, 129, 300, 1000, 1001, 4096, 4097, 16384}) {
    const auto p = problem(1, 2, n, 128, false, sim::DType::fp16);
    const sim::i64 rows = layout::fa_bwd_stat_rows(p);
    CAPTURE(n, rows);
    CHECK((rows % 128 == 0 || rows % 80 == 0));
    CHECK(rows % 4 == 0);  // a TMA map's row stride: a multiple of 16 bytes
    CHECK(rows >= (n + 127) / 128 * 128);  // fa2_bwd's and fa2_tc_bwd's 128-row tiles
    for (const sim::HopperBwdConfig& c : sim::kHopperBwdConfigs) CHECK(rows >= (n + c.Br - 1) / c.Br * c.Br);
    CHECK(rows < n + 128);
  }
}

TEST_CASE("fa2_bwd's default tiles fit an H100 as one block of 512 threads per SM", "[kernels][registry][bwd]") {
  const DeviceLimits dev = kernels::test::fake_h100().limits();
  const KernelInfo& k = *find_kernel("fa2_bwd");
  for (int d : layout::fa_head_dims()) {
    INFO("d=" << d);
    const sim::TileShape t = layout::fa_bwd_default_tiles(d);
    CHECK_FALSE(unsupported_reason(k, problem(1, 1, 64, d), t, dev));
    CHECK(layout::fa_bwd_threads_per_block(d, t) == layout::fa_bwd_max_threads_per_block());
    CHECK(layout::fa_bwd_smem_bytes(d, t) <= dev.smem_per_sm_bytes);
  }
  // Keys of d/16 lanes, whole warps: 33 keys at d = 128 are 264 lanes, 288 threads.
  CHECK(layout::fa_bwd_threads_per_block(128, {7, 33}) == 288);
  const auto why = unsupported_reason(k, problem(1, 1, 64, 128), {16, 128}, dev);
  REQUIRE(why);
  CHECK_THAT(*why, Catch::Contains("at most 512"));
}

TEST_CASE("the tensor-core rungs list what is compiled, from the simulator's table, with or without CUDA",
          "[kernels][registry]") {
  const KernelInfo* fwd = find_kernel("fa2_tc");
  const KernelInfo* bwd = find_kernel("fa2_tc_bwd");
  REQUIRE(fwd != nullptr);  // listed in every build (fa2_tc.cu is part of the tree)
  REQUIRE(bwd != nullptr);
  CHECK(fwd->head_dims == std::vector<int>{64, 96, 128, 256});
  check_compiled_configs(*fwd, sim::kFa2TcConfigs, sim::fa2_tc_smem_bytes, false, sim::DType::bf16);
  check_compiled_configs(*bwd, sim::kFa2TcBwdConfigs, sim::fa2_tc_bwd_smem_bytes, false, sim::DType::bf16);
  // A head dim not compiled: the reason names the compiled ones.
  CHECK_THROWS_WITH(fwd->default_tiles(problem(1, 4, 1024, 48, false, sim::DType::bf16)),
                    "fa2_tc is compiled for head dims 64, 96, 128, 256; got d=48");
  // The shared memory the kernels declare (checked against these formulas when
  // they compile): d 128 forward (128 + 4·32)·136·2 bytes.
  CHECK(sim::fa2_tc_smem_bytes(*sim::fa2_tc_config(128)) == 69632);
}

TEST_CASE("the Hopper forward lists what is compiled, a row per sequence length and mask, with or without CUDA",
          "[kernels][registry]") {
  const KernelInfo* fwd = find_kernel("fa3_hopper");
  REQUIRE(fwd != nullptr);
  CHECK(fwd->head_dims == std::vector<int>{64, 128});
  check_compiled_configs(*fwd, sim::kHopperConfigs, sim::hopper_smem_bytes, false, sim::DType::fp16);
  // d 64 up to 1K tokens (the longer of N_q and N_kv): 256 × 64; beyond, and for a long key sequence, 192 × 128.
  CHECK(fwd->default_tiles(problem(1, 4, 1024, 64, true, sim::DType::fp16)) == sim::TileShape{256, 64});
  CHECK(fwd->default_tiles(problem(1, 4, 1025, 64, true, sim::DType::fp16)) == sim::TileShape{192, 128});
  sim::AttentionProblem decode = problem(1, 4, 1, 64, false, sim::DType::fp16);
  decode.seq_kv = 8192;
  CHECK(fwd->default_tiles(decode) == sim::TileShape{192, 128});
  // d 128: up to 1K tokens 128 × 128 (persistent when unmasked), beyond 128 × 176.
  CHECK(fwd->default_tiles(problem(1, 4, 1024, 128, false, sim::DType::fp16)) == sim::TileShape{128, 128});
  CHECK(fwd->default_tiles(problem(1, 4, 1024, 128, true, sim::DType::fp16)) == sim::TileShape{128, 128});
  CHECK(fwd->default_tiles(problem(1, 4, 1025, 128, false, sim::DType::fp16)) == sim::TileShape{128, 176});
  CHECK(fwd->default_tiles(problem(1, 4, 1025, 128, true, sim::DType::fp16)) == sim::TileShape{128, 176});
}

TEST_CASE("the Hopper backward lists what is compiled, from the simulator's table, with or without CUDA",
          "[kernels][registry]") {
  const KernelInfo* bwd = find_kernel("fa3_hopper_bwd");
  REQUIRE(bwd != nullptr);
  CHECK(bwd->forward == "fa3_hopper");
  CHECK(bwd->pass() == sim::Pass::bwd);
  CHECK(bwd->min_sm == 90);
  CHECK(bwd->head_dims == std::vector<int>{64, 128});
  check_compiled_configs(*bwd, sim::kHopperBwdConfigs, sim::hopper_bwd_smem_bytes, true, sim::DType::fp16);
  for (const sim::HopperBwdConfig& c : sim::kHopperBwdConfigs) CHECK(c.consumers() == 2);
  // d 128: 1 KiB slack, K_j and V_j (2·128·128·2), two stages of Q_i and dO_i
  // (4·64·128·2), two dS buffers (2·128·64·2), the build's dQ buffers (each two
  // fp32 blocks of 64·64; with them no slack), L and D (4·64·4), 1 KiB of barriers.
  CHECK(sim::hopper_bwd_smem_bytes(*sim::hopper_bwd_config(128, true)) ==
        (sim::kHopperBwdDqBuffers > 0 ? 0 : 1024) + 65536 + 65536 + 32768 + sim::kHopperBwdDqBuffers * 2 * 16384 +
            1024 + 1024);
  CHECK_THROWS_WITH(bwd->default_tiles(problem(1, 4, 1024, 96, false, sim::DType::fp16)),
                    "fa3_hopper_bwd is not compiled for head dim d=96");
}

TEST_CASE("registry: the ring's rungs when none is named: the Hopper ones on 9.0 where they have the head dim") {
  const auto built = [](const char* id) {
    const KernelInfo* k = find_kernel(id);
    return k != nullptr && k->built();
  };
  const auto id = [](const KernelInfo* k) { return k != nullptr ? k->id : std::string("none"); };
  // What each choice must be in this build (a build without CUDA has none built: none).
  const std::string bwd_tc = built("fa2_tc_bwd") ? "fa2_tc_bwd" : "none";
  const std::string fwd_tc = built("fa2_tc") ? "fa2_tc" : "none";
  for (const int d : {64, 128}) {
    CAPTURE(d);
    REQUIRE(sim::hopper_bwd_config(d, false));
    REQUIRE(sim::hopper_bwd_config(d, true));
    REQUIRE(sim::hopper_config(d));
    for (const bool causal : {false, true}) {
      CHECK(id(default_ring_backward(90, d, causal)) == (built("fa3_hopper_bwd") ? "fa3_hopper_bwd" : bwd_tc));
      CHECK(id(default_ring_backward(80, d, causal)) == bwd_tc);  // Ampere: the mma.sync rungs
    }
    CHECK(id(default_ring_forward(90, d)) == (built("fa3_hopper") ? "fa3_hopper" : fwd_tc));
    CHECK(id(default_ring_forward(80, d)) == fwd_tc);
  }
  // A head dim the Hopper rungs are not compiled for: the mma.sync rungs, whose own check names the limit.
  REQUIRE_FALSE(sim::hopper_bwd_config(96, false));
  CHECK(id(default_ring_backward(90, 96, false)) == bwd_tc);
  CHECK(id(default_ring_forward(90, 96)) == fwd_tc);
}
