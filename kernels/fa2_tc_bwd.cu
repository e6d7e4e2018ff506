// Rung 5, backward — fa2_tc_bwd: FlashAttention-2 backward on tensor cores.
//
// What changed from fa2_bwd: S_ijᵀ = K_j Q_iᵀ, dP_ijᵀ = V_j dO_iᵀ, dV_j += P_ijᵀ dO_i,
// dK_j += dS_ijᵀ Q_i and dQ_i += dS_ij K_j run on tensor cores (mma.sync.m16n8k16,
// fp16/bf16 in, fp32 accumulate) fed by ldmatrix; Q_i, dO_i, L_i, D_i are
// double-buffered with cp.async; P_ij and dS_ij stay in registers between
// products except for the one trip of dS_ij through shared memory that dQ
// needs. dQ is accumulated in fp32 with vector reductions (red.global.add.v2.f32)
// into dQaccum, as FlashAttention-2 does: one pass over K_j per block, at the
// price of a run-to-run order of additions (not bitwise deterministic).
// Tiles are fixed at compile time per head dim and reported through
// fa2_tc_bwd_tiles(). The kernel is in fa2_tc_bwd_kernel.cuh.
// Expected bottleneck: mma.sync issue and ldmatrix bandwidth, then dQ's atomics.
// Measured: see kernels/README.md (the 16k-token grid beside PyTorch's SDPA FLASH backward).
#include <limits>
#include <string>
#include <vector>

#include "fa2_tc_bwd_kernel.cuh"
#include "fa_bwd_common.cuh"
#include "flashlab/kernels/fa2_tc_bwd.hpp"

namespace flashlab::kernels {
namespace {

namespace bwd = fa2_tc_bwd_detail;

// The compiled configurations, one per head dim. Alternatives are timed by
// tests/kernels/bwd_check.cu (FLASHLAB_BWD_VARIANTS); docs/kernels.md has the choice.
//                            d   B_c  B_r  warps  K_j,V_j in regs  blocks/SM
using Cfg64 = bwd::Config<64, 128, 64, 8, true, 1>;
using Cfg128 = bwd::Config<128, 128, 64, 8, false, 1>;

template <class Cfg>
sim::TileShape tiles_of() {
  return sim::TileShape{Cfg::kBr, Cfg::kBc};
}

int smem_optin_limit(const LaunchArgs& a) {
  if (a.device_smem_optin > 0) return a.device_smem_optin;
  int dev = 0, limit = 0;
  FLASHLAB_CUDA_CHECK(cudaGetDevice(&dev));
  FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&limit, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev));
  return limit;
}

bool aligned16(const void* ptr) { return reinterpret_cast<std::uintptr_t>(ptr) % 16 == 0; }

template <class Cfg, typename T>
void launch(const LaunchArgs& a) {
  const sim::AttentionProblem& pr = a.problem;
  const std::string who = "fa2_tc_bwd (d=" + std::to_string(Cfg::kHeadDim) + ", B_r=" + std::to_string(Cfg::kBr) +
                          ", B_c=" + std::to_string(Cfg::kBc) + ")";
  const detail::FaBwdWorkspace w = detail::check_fa_bwd_args(a, "fa2_tc_bwd");
  for (const void* ptr : {a.q, a.k, a.v, a.bwd.d_o, static_cast<const void*>(a.bwd.dk), static_cast<const void*>(a.bwd.dv)})
    if (!aligned16(ptr)) throw Unsupported(who + " needs Q, K, V, dO, dK and dV 16-byte aligned (16-byte copies)");
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (pr.n_q() > kIntMax || pr.n_kv() > kIntMax || w.stat_rows > kIntMax)
    throw Unsupported(who + " indexes rows with 32-bit ints: seq_q and seq_kv must be below 2^31");
  const int64_t heads = pr.head_count();
  const int64_t T_c = (pr.n_kv() + Cfg::kBc - 1) / Cfg::kBc;
  if (T_c > kIntMax / heads)
    throw Unsupported(who + ": T_c·B·H = " + std::to_string(T_c) + "·" + std::to_string(heads) +
                      " blocks exceed the grid limit 2^31-1");
  const std::size_t smem = Cfg::kSmemBytes;
  const int limit = smem_optin_limit(a);
  if (smem > static_cast<std::size_t>(limit))
    throw Unsupported(who + " needs " + std::to_string(smem) + " bytes of shared memory per block; the device allows " +
                      std::to_string(limit) + " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
  auto* kernel = &bwd::fa2_tc_backward_kernel<Cfg, T>;
  // Asked once per instantiation: host work between the timing events would be timed.
  static bool opted_in = false;
  if (!opted_in && smem > 48 * 1024) {
    FLASHLAB_CUDA_CHECK(
        cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, static_cast<int>(smem)));
    opted_in = true;
  }
  if (a.ctas_per_sm != nullptr)
    FLASHLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(a.ctas_per_sm, kernel, Cfg::kThreads, smem));

  detail::fa_bwd_preprocess(a, w);
  bwd::Params p{};
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.d_o = a.bwd.d_o;
  p.l_log2 = w.l_log2;
  p.d_row = w.d_row;
  p.dq_accum = w.dq_accum;
  p.dk = a.bwd.dk;
  p.dv = a.bwd.dv;
  p.n_q = static_cast<int>(pr.n_q());
  p.n_kv = static_cast<int>(pr.n_kv());
  p.stat_rows = static_cast<int>(w.stat_rows);
  p.T_c = static_cast<int>(T_c);
  p.scale = a.softmax_scale;
  p.scale_log2 = static_cast<float>(static_cast<double>(a.softmax_scale) * 1.4426950408889634);
  p.causal = pr.causal ? 1 : 0;
  kernel<<<static_cast<unsigned>(T_c * heads), Cfg::kThreads, smem, static_cast<cudaStream_t>(a.stream)>>>(p);
  FLASHLAB_LAUNCH_CHECK("fa2_tc_backward_kernel");
  detail::fa_bwd_convert_dq(a, w);
}

template <class Cfg>
void backward_dtype(const LaunchArgs& a) {
  switch (a.problem.dtype) {
    case sim::DType::fp16:
      launch<Cfg, __half>(a);
      return;
    case sim::DType::bf16:
      launch<Cfg, __nv_bfloat16>(a);
      return;
    case sim::DType::fp32:
      break;
  }
  throw Unsupported("fa2_tc_bwd runs fp16 and bf16 only (mma.sync.m16n8k16 takes 16-bit inputs); got fp32");
}

std::string head_dim_list() {
  std::string s;
  for (int d : fa2_tc_bwd_head_dims()) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

[[noreturn]] void unsupported_head_dim(long long d) {
  throw Unsupported("fa2_tc_bwd is compiled for head dims " + head_dim_list() + "; got d=" + std::to_string(d));
}

}  // namespace

std::vector<int> fa2_tc_bwd_head_dims() { return {64, 128}; }

sim::TileShape fa2_tc_bwd_tiles(int head_dim) {
  switch (head_dim) {
    case 64: return tiles_of<Cfg64>();
    case 128: return tiles_of<Cfg128>();
    default: unsupported_head_dim(head_dim);
  }
}

std::size_t fa2_tc_bwd_smem_bytes(int head_dim) {
  switch (head_dim) {
    case 64: return Cfg64::kSmemBytes;
    case 128: return Cfg128::kSmemBytes;
    default: unsupported_head_dim(head_dim);
  }
}

void fa2_tc_backward(const LaunchArgs& a) {
  if (a.problem.dtype == sim::DType::fp32)
    throw Unsupported("fa2_tc_bwd runs fp16 and bf16 only (mma.sync.m16n8k16 takes 16-bit inputs); got fp32");
  switch (a.problem.head_dim) {
    case 64: return backward_dtype<Cfg64>(a);
    case 128: return backward_dtype<Cfg128>(a);
    default: unsupported_head_dim(a.problem.head_dim);
  }
}

}  // namespace flashlab::kernels
