// The ladder, in lecture order. Each entry names the simulator algorithm that
// has its HBM traffic: every row the runner writes carries it, so the analysis
// library places the measurement beside that model's bytes and FLOPs.
#include "flashlab/kernels/rungs/registry.hpp"

#include <algorithm>
#include <cstddef>
#include <sstream>
#include <utility>
#include <vector>

#include "flashlab/kernels/rungs/fa3_hopper.hpp"
#include "flashlab/kernels/rungs/fa3_hopper_bwd.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/core/format.hpp"

#include "flashlab/kernels/rungs/fa2_tc.hpp"
#include "flashlab/kernels/rungs/fa2_tc_bwd.hpp"

namespace flashlab::kernels {

namespace {

using sim::AttentionProblem;
using sim::DType;
using sim::TileShape;

// Without CUDA no .cu file is compiled: the entries stay (the CLI lists them,
// the GUI shows them) but cannot launch.
#if defined(FLASHLAB_HAVE_CUDA)
#define FLASHLAB_RUNG(fn) (&fn)
#else
#define FLASHLAB_RUNG(fn) (nullptr)
#endif

i64 zero_shape(const AttentionProblem&, TileShape) { return 0; }

// An entry built on a base entry (what its family shares): its own id, name and summary.
KernelInfo derived(KernelInfo k, std::string id, std::string name, std::string summary) {
  k.id = std::move(id);
  k.name = std::move(name);
  k.summary = std::move(summary);
  return k;
}

KernelInfo naive_info() {
  KernelInfo k;
  k.id = "naive";
  k.name = "naive (our GEMM, S and P in HBM)";
  k.summary = "S = τQKᵀ with a tiled shared-memory GEMM (tensor cores via WMMA for fp16/bf16), "
              "a row softmax with the causal mask fused, O = PV; S and P in HBM in the problem dtype";
  k.model = sim::Algorithm::standard;
  k.dtypes = {DType::fp16, DType::bf16, DType::fp32};
  k.min_sm = 80;  // WMMA on bf16
  k.tile_source = TileSource::none;
  k.launch = FLASHLAB_RUNG(naive_forward);
  k.smem_bytes = zero_shape;
  k.threads_per_block = zero_shape;
  k.workspace_bytes = [](const AttentionProblem& p, TileShape) { return layout::materialized_workspace_bytes(p); };
  k.workspace_holds = "S and P";
  return k;
}

KernelInfo naive_cublas_info() {
  KernelInfo k = derived(naive_info(), "naive_cublas", "naive with cuBLAS (eager PyTorch)",
                         "the naive rung with cuBLAS GEMMs (cublasGemmStridedBatchedEx, fp32 accumulation): "
                         "what eager PyTorch launches");
  k.min_sm = 70;
  k.launch = FLASHLAB_RUNG(naive_cublas_forward);
  return k;
}

KernelInfo fa_info() {
  KernelInfo k;
  k.dtypes = {DType::fp16, DType::bf16, DType::fp32};
  k.head_dims = layout::fa_head_dims();
  k.min_sm = 70;
  k.tile_source = TileSource::runtime;
  k.default_tiles = [](const AttentionProblem& p) { return layout::fa_default_tiles(p.head_dim); };
  k.smem_bytes = [](const AttentionProblem& p, TileShape t) { return layout::fa_smem_bytes(p.head_dim, t); };
  k.threads_per_block = [](const AttentionProblem& p, TileShape t) {
    return layout::fa_threads_per_block(p.head_dim, t);
  };
  k.max_threads_per_block = [](const AttentionProblem& p) {
    return static_cast<i64>(layout::fa_max_threads_per_block(p.head_dim));
  };
  return k;
}

KernelInfo fa1_info() {
  KernelInfo k = derived(fa_info(), "fa1", "FlashAttention-1 (Algorithm 1 as written)",
                         "S and P never reach HBM: outer loop over K_j, V_j (one launch each), inner loop over Q_i; "
                         "O_i, ℓ_i, m_i are read from and written to HBM at every step");
  k.model = sim::Algorithm::fa1;
  k.launch = FLASHLAB_RUNG(fa1_forward);
  k.workspace_bytes = [](const AttentionProblem& p, TileShape) { return layout::fa1_workspace_bytes(p); };
  k.workspace_holds = "O, ℓ, m";
  k.storage.o_accumulator = sim::DType::fp32;  // O_acc between steps; the last step writes the problem's dtype
  return k;
}

KernelInfo fa2_info() {
  KernelInfo k = derived(fa_info(), "fa2", "FlashAttention-2 (CUDA cores)",
                         "loops swapped: one block per Q_i streams K_j, V_j; O_i, ℓ_i, m_i stay in registers "
                         "(online softmax); O and the logsumexp are written once");
  k.model = sim::Algorithm::fa2;
  k.writes_lse = true;
  k.launch = FLASHLAB_RUNG(fa2_forward);
  k.workspace_bytes = zero_shape;
  return k;
}

// What the tensor-core forward rungs share: FlashAttention-2's model, the
// heaviest row block first, fp16/bf16, tiles compiled per head dim, the
// logsumexp written and the ring's running output folded, their threads fixed
// by the rung (it checks its own launch), no workspace.
KernelInfo tensor_core_forward_info() {
  KernelInfo k;
  k.model = sim::Algorithm::fa2;
  k.heaviest_first = true;
  k.dtypes = {DType::fp16, DType::bf16};
  k.tile_source = TileSource::compiled;
  k.writes_lse = true;
  k.folds_running_output = true;
  k.threads_per_block = zero_shape;
  k.workspace_bytes = zero_shape;
  return k;
}

// The head dims, tiles and shared memory of a Hopper rung, from its table of
// configurations (rows with head_dim, B_r, B_c; the first row that serves a
// problem's head dim, mask and sequence length is its configuration) and the table's
// shared-memory formula: the same in every build. A head dim no row has gets no tiles.
template <class Config, std::size_t N>
void set_table_tiles(KernelInfo& k, const Config (&table)[N], std::size_t (*smem_bytes)(const Config&)) {
  for (const Config& c : table)
    if (std::find(k.head_dims.begin(), k.head_dims.end(), c.head_dim) == k.head_dims.end())
      k.head_dims.push_back(c.head_dim);
  auto config = [rows = &table](const AttentionProblem& p) -> const Config* {
    for (const Config& c : *rows)
      if (c.serves(p.head_dim, p.causal, sim::hopper_seq(p))) return &c;
    return nullptr;
  };
  k.default_tiles = [config, id = k.id](const AttentionProblem& p) {
    const Config* c = config(p);
    if (c == nullptr) throw Unsupported(id + " is not compiled for head dim d=" + std::to_string(p.head_dim));
    return TileShape{c->Br, c->Bc};
  };
  k.smem_bytes = [config, smem_bytes](const AttentionProblem& p, TileShape) -> i64 {
    const Config* c = config(p);
    return c == nullptr ? i64{0} : static_cast<i64>(smem_bytes(*c));
  };
}

#if defined(FLASHLAB_HAVE_FA2_TC) || defined(FLASHLAB_LIST_FA2_TC)
// The head dims, tiles and shared memory of a rung compiled per head dim, from
// its table's functions: the same in a build without CUDA.
void set_compiled_tiles(KernelInfo& k, std::vector<int> head_dims, TileShape (*tiles)(int),
                        std::size_t (*smem_bytes)(int)) {
  k.head_dims = std::move(head_dims);
  k.default_tiles = [tiles](const AttentionProblem& p) { return tiles(static_cast<int>(p.head_dim)); };
  k.smem_bytes = [smem_bytes](const AttentionProblem& p, TileShape) {
    return static_cast<i64>(smem_bytes(static_cast<int>(p.head_dim)));
  };
}

KernelInfo fa2_tc_info() {
  KernelInfo k = derived(tensor_core_forward_info(), "fa2_tc", "FlashAttention-2 (tensor cores)",
                         "mma.sync m16n8k16 on fp16/bf16 with fp32 accumulation, ldmatrix, cp.async double-buffered "
                         "K_j/V_j, exp2 with log2(e) folded into the scale; tiles fixed at compile time");
  k.min_sm = 80;
  set_compiled_tiles(k, fa2_tc_head_dims(), &fa2_tc_tiles, &fa2_tc_smem_bytes);  // sim::kFa2TcConfigs
#if defined(FLASHLAB_HAVE_FA2_TC)
  k.launch = &fa2_tc_forward;
#endif
  return k;
}
#endif

// The Hopper rung: listed in every build (its tiles are a table of the header,
// kFa3HopperConfigs); it runs where its sm_90a code exists and the device is
// compute capability 9.0, and says why not elsewhere.
KernelInfo fa3_hopper_info() {
  KernelInfo k = derived(tensor_core_forward_info(), "fa3_hopper",
                         "FlashAttention forward on Hopper (TMA, wgmma, warp specialisation)",
                         "a producer warp copies Q_i once and K_j, V_j through TMA into a multi-stage shared-memory "
                         "ring completed on mbarriers; two consumer warpgroups run S_ij = Q_i K_jᵀ and O_i += P_ij V_j "
                         "on wgmma (P_ij from registers) with the online softmax between; setmaxnreg; sm_90a only");
  k.min_sm = 90;
  set_table_tiles(k, kFa3HopperConfigs, &fa3_hopper_smem_bytes);
  k.launch = FLASHLAB_RUNG(fa3_hopper_forward);
  return k;
}

// ---- the backward rungs: each names the forward rung it reads from ----------------

KernelInfo naive_bwd_info() {
  KernelInfo k;
  k.id = "naive_bwd";
  k.name = "naive backward with cuBLAS (eager PyTorch's autograd)";
  k.summary = "the backward of standard attention: dV = PᵀdO, dP = dO Vᵀ, dS = P∘(dP − rowsum(P∘dP)), "
              "dQ = τ dS K, dK = τ dSᵀQ with cuBLAS GEMMs and one softmax-backward kernel; P from the "
              "naive_cublas forward, dP and dS in HBM in the problem dtype";
  k.model = sim::Algorithm::standard_bwd;
  k.forward = "naive_cublas";
  k.dtypes = {DType::fp16, DType::bf16, DType::fp32};
  k.min_sm = 70;
  k.tile_source = TileSource::none;
  k.launch = FLASHLAB_RUNG(naive_backward);
  k.smem_bytes = zero_shape;
  k.threads_per_block = zero_shape;
  k.workspace_bytes = [](const AttentionProblem& p, TileShape) { return layout::naive_bwd_workspace_bytes(p); };
  k.workspace_holds = "dP and dS";
  return k;
}

KernelInfo fa2_bwd_info() {
  KernelInfo k;
  k.id = "fa2_bwd";
  k.name = "FlashAttention-2 backward (CUDA cores)";
  k.summary = "one block per K_j, V_j with dK_j, dV_j on chip; the inner loop over Q_i recomputes S_ij and "
              "P_ij = exp(S_ij − L_i) from the forward's logsumexp; dQ_i += dS_ij K_j by fp32 atomics into "
              "dQaccum, converted once; D_i = rowsum(dO_i∘O_i) in a pre-pass";
  k.model = sim::Algorithm::fa2_bwd;
  k.forward = "fa2";
  k.dtypes = {DType::fp16, DType::bf16, DType::fp32};
  k.head_dims = layout::fa_head_dims();
  k.min_sm = 70;
  k.tile_source = TileSource::runtime;
  k.heaviest_first = true;  // column block j = 0 of each head, the one every Q_i visits, is dispatched first
  k.storage.dq_accumulator = sim::DType::fp32;
  k.launch = FLASHLAB_RUNG(fa2_backward);
  k.default_tiles = [](const AttentionProblem& p) { return layout::fa_bwd_default_tiles(p.head_dim); };
  k.smem_bytes = [](const AttentionProblem& p, TileShape t) { return layout::fa_bwd_smem_bytes(p.head_dim, t); };
  k.threads_per_block = [](const AttentionProblem& p, TileShape t) {
    return layout::fa_bwd_threads_per_block(p.head_dim, t);
  };
  k.max_threads_per_block = [](const AttentionProblem&) {
    return static_cast<i64>(layout::fa_bwd_max_threads_per_block());
  };
  k.workspace_bytes = [](const AttentionProblem& p, TileShape) { return layout::fa_bwd_workspace_bytes(p); };
  k.workspace_holds = "dQaccum in fp32, L and D";
  return k;
}

// What the tensor-core backward rungs share: FlashAttention-2's backward model
// with dQ accumulated in fp32 (and, for grouped K/V heads on one GPU, dK, dV in
// the rung's own fp32 accumulators), fp16/bf16, tiles compiled per head dim,
// their threads fixed by the rung, the workspace of layout::fa2_tc_bwd_workspace_bytes.
KernelInfo tensor_core_backward_info() {
  KernelInfo k;
  k.model = sim::Algorithm::fa2_bwd;
  k.heaviest_first = true;
  k.dtypes = {DType::fp16, DType::bf16};
  k.min_sm = 90;  // red.global.add.v2.f32
  k.tile_source = TileSource::compiled;
  k.storage.dq_accumulator = sim::DType::fp32;
  k.storage.dkv_accumulator = sim::DType::fp32;  // grouped K/V heads on one GPU: the rung's own dKaccum, dVaccum
  k.accumulates_gradients = true;
  k.threads_per_block = zero_shape;  // fixed by the rung; it checks its own launch
  k.workspace_bytes = [](const AttentionProblem& p, TileShape) { return layout::fa2_tc_bwd_workspace_bytes(p); };
  k.workspace_holds = "dQaccum in fp32, L and D (with grouped K/V heads, dKaccum and dVaccum in fp32 too)";
  return k;
}

#if defined(FLASHLAB_HAVE_FA2_TC) || defined(FLASHLAB_LIST_FA2_TC)
KernelInfo fa2_tc_bwd_info() {
  KernelInfo k = derived(tensor_core_backward_info(), "fa2_tc_bwd", "FlashAttention-2 backward (tensor cores)",
                         "the five products of a step on mma.sync m16n8k16 (fp16/bf16, fp32 accumulation) fed by "
                         "ldmatrix, cp.async double-buffered Q_i/dO_i, P_ij and dS_ij kept in registers (dS_ij once "
                         "through shared memory for dQ), dQ by red.global.add.v2.f32 into dQaccum; tiles fixed at "
                         "compile time");
  k.forward = "fa2_tc";
  set_compiled_tiles(k, fa2_tc_bwd_head_dims(), &fa2_tc_bwd_tiles, &fa2_tc_bwd_smem_bytes);  // sim::kFa2TcBwdConfigs
#if defined(FLASHLAB_HAVE_FA2_TC)
  k.launch = &fa2_tc_backward;
#endif
  return k;
}
#endif

// The Hopper backward: listed in every build (its tiles are sim::kHopperBwdConfigs);
// it runs where its sm_90a code exists on a compute capability 9.0 device.
KernelInfo fa3_hopper_bwd_info() {
  KernelInfo k = derived(tensor_core_backward_info(), "fa3_hopper_bwd",
                         "FlashAttention backward on Hopper (TMA, wgmma, warp specialisation)",
                         "one block per K_j, V_j (dK_j, dV_j in two consumer warpgroups' registers); a producer thread "
                         "copies Q_i, dO_i, L_i and D_i by TMA into a ring completed on mbarriers; "
                         "S_ijᵀ, dP_ijᵀ, dV_j += P_ijᵀ dO_i, dK_j += dS_ijᵀ Q_i and dQ_i = dS_ij K_j on wgmma "
                         "(P_ijᵀ, dS_ijᵀ from registers; dS_ijᵀ once through shared memory for dQ), " +
                             std::string(sim::kHopperBwdDqBuffers > 0
                                             ? "dQ_i's fp32 blocks through shared memory to a writer thread's TMA "
                                               "reduce-adds into dQaccum"
                                             : "dQ by red.global.add.v2.f32 into dQaccum") +
                             "; setmaxnreg; sm_90a only");
  k.forward = "fa3_hopper";
  set_table_tiles(k, sim::kHopperBwdConfigs, &sim::hopper_bwd_smem_bytes);
  k.launch = FLASHLAB_RUNG(fa3_hopper_backward);
  return k;
}

std::vector<KernelInfo> make_registry() {
  // The forward ladder, then the backward rungs: ids never shared, never overwritten.
  std::vector<KernelInfo> r{naive_info(), naive_cublas_info(), fa1_info(), fa2_info()};
#if defined(FLASHLAB_HAVE_FA2_TC) || defined(FLASHLAB_LIST_FA2_TC)
  r.push_back(fa2_tc_info());
#endif
  r.push_back(fa3_hopper_info());
  r.push_back(naive_bwd_info());
  r.push_back(fa2_bwd_info());
#if defined(FLASHLAB_HAVE_FA2_TC) || defined(FLASHLAB_LIST_FA2_TC)
  r.push_back(fa2_tc_bwd_info());
#endif
  r.push_back(fa3_hopper_bwd_info());
  return r;
}

std::string join(const std::vector<std::string>& v) {
  std::string s;
  for (const std::string& x : v) s += (s.empty() ? "" : ", ") + x;
  return s;
}

}  // namespace

sim::Pass KernelInfo::pass() const { return sim::algorithm_info(model).pass; }

bool KernelInfo::supports(sim::DType t) const { return std::find(dtypes.begin(), dtypes.end(), t) != dtypes.end(); }

bool KernelInfo::supports_head_dim(i64 d) const {
  if (head_dims.empty()) return d >= 1;
  return std::find(head_dims.begin(), head_dims.end(), d) != head_dims.end();
}

const std::vector<KernelInfo>& registry() {
  static const std::vector<KernelInfo> r = make_registry();
  return r;
}

const KernelInfo* find_kernel(std::string_view id) {
  for (const KernelInfo& k : registry())
    if (k.id == id) return &k;
  return nullptr;
}

std::vector<const KernelInfo*> kernels_of(sim::PassSelection s) {
  std::vector<const KernelInfo*> out;
  for (const KernelInfo& k : registry()) {
    if (sim::includes(s, k.pass())) out.push_back(&k);
  }
  return out;
}

const KernelInfo* forward_rung(const KernelInfo& k) { return k.forward.empty() ? nullptr : find_kernel(k.forward); }

std::string kernel_ids() {
  std::vector<std::string> ids;
  for (const KernelInfo& k : registry()) ids.push_back(k.id);
  return join(ids);
}

std::string dtype_list(const KernelInfo& k) {
  std::vector<std::string> v;
  for (DType t : k.dtypes) v.emplace_back(sim::to_string(t));
  return join(v);
}

std::string head_dim_list(const KernelInfo& k) {
  if (k.head_dims.empty()) return "any";
  std::vector<std::string> v;
  for (int d : k.head_dims) v.push_back(std::to_string(d));
  return join(v);
}

TileShape resolve_tiles(const KernelInfo& k, const AttentionProblem& p, const TileRequest& req,
                        const DeviceLimits& dev) {
  switch (k.tile_source) {
    case TileSource::none:
      return {0, 0};
    case TileSource::compiled:
      return k.default_tiles ? k.default_tiles(p) : TileShape{0, 0};
    case TileSource::runtime:
      break;
  }
  switch (req.rule) {
    case TileRule::explicit_tiles:
      return req.tiles;
    case TileRule::paper:
      // M of the paper is the SRAM of one SM; the simulator's rule, in the
      // problem dtype's elements.
      return sim::paper_tile_rule(dev.smem_per_sm_bytes, p);
    case TileRule::rung_default:
      break;
  }
  return k.default_tiles(p);
}

std::optional<std::string> unsupported_reason(const KernelInfo& k, const AttentionProblem& p, TileShape tiles,
                                              const DeviceLimits& dev) {
  if (!k.supports(p.dtype))
    return k.id + " has no " + std::string(sim::to_string(p.dtype)) + " version (it runs " + dtype_list(k) + ")";
  if (!k.supports_head_dim(p.head_dim))
    return k.id + " is not compiled for head dim d=" + std::to_string(p.head_dim) + " (it has d = " +
           head_dim_list(k) + ")";
  if (dev.compute_capability > 0 && dev.compute_capability < k.min_sm)
    return k.id + " needs compute capability " + std::to_string(k.min_sm / 10) + "." + std::to_string(k.min_sm % 10) +
           " or newer; this device has " + std::to_string(dev.compute_capability / 10) + "." +
           std::to_string(dev.compute_capability % 10);
  if (k.tile_source == TileSource::runtime) {
    if (tiles.Br < 1 || tiles.Bc < 1)
      return "tiles must be at least 1×1 (got B_r=" + std::to_string(tiles.Br) + ", B_c=" + std::to_string(tiles.Bc) +
             ")";
  }
  try {
    const i64 threads = k.threads_per_block ? k.threads_per_block(p, tiles) : 0;
    if (threads > dev.max_threads_per_block)
      return "B_r=" + std::to_string(tiles.Br) + " needs " + sim::group_digits(threads) +
             " threads per block; the device allows " + std::to_string(dev.max_threads_per_block) +
             " (cudaDevAttrMaxThreadsPerBlock)";
    const i64 kernel_max = k.max_threads_per_block ? k.max_threads_per_block(p) : 0;
    if (kernel_max > 0 && threads > kernel_max)
      return "B_r=" + std::to_string(tiles.Br) + " needs " + sim::group_digits(threads) + " threads per block; " +
             k.id + " is compiled for at most " + std::to_string(kernel_max) + " at d=" + std::to_string(p.head_dim) +
             " (__launch_bounds__, for its registers)";
    const i64 smem = k.smem_bytes ? k.smem_bytes(p, tiles) : 0;
    if (dev.smem_optin_bytes > 0 && smem > dev.smem_optin_bytes)
      return "B_r=" + std::to_string(tiles.Br) + ", B_c=" + std::to_string(tiles.Bc) + ", d=" +
             std::to_string(p.head_dim) + " need " + sim::group_digits(smem) +
             " B of shared memory per block; the device allows " + sim::group_digits(dev.smem_optin_bytes) +
             " B (cudaDevAttrMaxSharedMemoryPerBlockOptin)";
  } catch (const sim::OverflowError& e) {
    return std::string("tiles too large: ") + e.what();
  }
  return std::nullopt;
}

}  // namespace flashlab::kernels
