// Rung 6 of the ladder, fa3_hopper: FlashAttention forward on Hopper (sm_90a).
//
// What changed from fa2_tc: TMA copies (cp.async.bulk.tensor, 128-byte swizzle)
// into a multi-stage ring completed on mbarriers, issued by a producer warp;
// two consumer warpgroups run S_ij = Q_i K_jᵀ and O_i += P_ij V_j on wgmma
// (m64nNk16, B from shared memory through descriptors, P_ij from registers);
// setmaxnreg gives the consumers the producer's registers; O_i leaves through
// shared memory by TMA too. HBM traffic is FlashAttention-2's (model fa2).
// The consumer warpgroups take turns on the tensor cores (ping-pong on named
// barriers), so one's softmax runs under another's products, and each runs its
// own softmax under its P V.
// The softmax's exp2 costs as much as the products at d = 64. Its figures
// beside PyTorch (H200, fp16, the 16k-token grid) and each tuning step's are
// in kernels/README.md's version table and docs/kernels.md.
//
// The kernel itself is in fa3_hopper_kernel.cuh. This file is compiled for
// sm_90a alone (kernels/CMakeLists.txt); with FLASHLAB_FA3_HOPPER_NO_SM90A
// (an nvcc that cannot target sm_90a) the entry points remain and refuse to run.

#include <algorithm>
#include <cmath>
#include <limits>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "device/cuda_check.hpp"
#include "hopper_device.hpp"
#include "device/smem_opt_in.hpp"
#include "flashlab/kernels/rungs/fa3_hopper.hpp"

#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
#include "compiled_configs.cuh"
#include "fa3_hopper_kernel.cuh"
#include "tensor_map.hpp"
#endif

namespace flashlab::kernels {
namespace {

// The row of kFa3HopperConfigs that runs the problem (its head dim and sequence length).
std::size_t row_or_throw(const sim::AttentionProblem& p) {
  if (const auto k = sim::hopper_row(p.head_dim, sim::hopper_seq(p), p.causal)) return *k;
  throw Unsupported("fa3_hopper is compiled for head dims " + sim::hopper_head_dims_text() +
                    "; got d=" + std::to_string(p.head_dim));
}

std::size_t smem_bytes_of(const Fa3HopperConfig& c) { return fa3_hopper_smem_bytes(c); }

#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
namespace detail = fa3_hopper_detail;
// Every configuration runs its consumer warpgroups in ping-pong (named barriers
// ordering their products); a persistent row launches one block per SM that walks
// the tiles instead of one block per tile.
constexpr bool kPingPong = true;
constexpr int kExpPoly64 = 0;  // d = 64: 0, or k: one exp2 in k from the FMA pipe (measured slower: kernels/README.md)
template <std::size_t kIndex>
using ConfigAt = detail::Config<kFa3HopperConfigs[kIndex].head_dim, kFa3HopperConfigs[kIndex].Br / 64,
                                kFa3HopperConfigs[kIndex].Bc, kFa3HopperConfigs[kIndex].stages,
                                kFa3HopperConfigs[kIndex].overlap,
                                kPingPong && kFa3HopperConfigs[kIndex].Br / 64 >= 2,
                                kFa3HopperConfigs[kIndex].persistent,
                                kFa3HopperConfigs[kIndex].head_dim == 64 ? kExpPoly64 : 0>;
constexpr std::size_t kConfigs = std::size(kFa3HopperConfigs);

template <std::size_t... I>
constexpr bool whole_warpgroups(std::index_sequence<I...>) {
  return ((kFa3HopperConfigs[I].Br % 64 == 0 && ConfigAt<I>::kBr == kFa3HopperConfigs[I].Br) && ...);
}
static_assert(whole_warpgroups(std::make_index_sequence<kConfigs>{}), "B_r is 64 rows per consumer warpgroup");
static_assert(kernels::detail::smem_agrees<ConfigAt>(kFa3HopperConfigs, &fa3_hopper_smem_bytes,
                                                      std::make_index_sequence<kConfigs>{}),
              "the header's shared-memory formula is the kernel's");

CUtensorMap make_map(const void* ptr, sim::DType dtype, long long n, int d, long long heads, int box_rows) {
  return kernels::detail::make_head_map(ptr, dtype, n, d, heads, box_rows, "fa3_hopper");
}

template <class Cfg, typename T>
void launch(const LaunchArgs& a) {
  const sim::AttentionProblem& pr = a.problem;
  const int64_t heads = pr.batch * pr.heads;
  const int64_t T_r = (pr.n_q() + Cfg::kBr - 1) / Cfg::kBr;
  const CUtensorMap tm_q = make_map(a.q, pr.dtype, pr.n_q(), Cfg::kHeadDim, heads, Cfg::kBr);
  const int64_t kv_group = kv_group_of(a, "fa3_hopper");
  const int64_t kv_heads = heads / kv_group;  // B·H_kv: the K/V tensors' heads
  const CUtensorMap tm_k = make_map(a.k, pr.dtype, pr.n_kv(), Cfg::kHeadDim, kv_heads, Cfg::kBc);
  const CUtensorMap tm_v = make_map(a.v, pr.dtype, pr.n_kv(), Cfg::kHeadDim, kv_heads, Cfg::kBc);
  // O as Q, a box of one warpgroup's 64 rows: the epilogue's copy out of shared memory.
  const CUtensorMap tm_o = make_map(a.o, pr.dtype, pr.n_q(), Cfg::kHeadDim, heads, 64);

  const std::size_t smem = Cfg::kSmemBytes;
  auto* kernel = &detail::fa3_hopper_forward_kernel<Cfg, T>;
  kernels::detail::opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), smem);  // per device
  if (a.ctas_per_sm != nullptr)
    FLASHLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(a.ctas_per_sm, kernel, Cfg::kThreads, smem));

  detail::Params p{};
  p.o = a.o;
  p.lse = a.lse;
  p.n_q = static_cast<int>(pr.n_q());
  p.n_kv = static_cast<int>(pr.n_kv());
  p.T_r = static_cast<int>(T_r);
  p.num_tiles = static_cast<int>(T_r * heads);  // ≤ 2^31 − 1: fa3_hopper_forward checks it
  int64_t blocks = T_r * heads;
  if constexpr (Cfg::kPersistent) {
    int dev = 0, sms = 0;
    FLASHLAB_CUDA_CHECK(cudaGetDevice(&dev));
    FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    blocks = std::min<int64_t>(blocks, sms);  // one block per SM (registers: 1 block fits)
  }
  p.scale_log2 = static_cast<float>(static_cast<double>(a.softmax_scale) * 1.4426950408889634);
  p.causal = pr.causal ? 1 : 0;
  p.kv_group = static_cast<int>(kv_group);
  p.fold = static_cast<int>(a.running.step);
  p.o_run = a.running.o;
  kernel<<<dim3(static_cast<unsigned>(blocks)), dim3(Cfg::kThreads), smem, static_cast<cudaStream_t>(a.stream)>>>(
      tm_q, tm_k, tm_v, tm_o, p);
  FLASHLAB_LAUNCH_CHECK("fa3_hopper_forward_kernel");
}

#endif  // !FLASHLAB_FA3_HOPPER_NO_SM90A

}  // namespace

bool fa3_hopper_compiled() {
#if defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
  return false;
#else
  return true;
#endif
}

void fa3_hopper_forward(const LaunchArgs& a) {
  const sim::AttentionProblem& pr = a.problem;
  if (pr.dtype != sim::DType::fp16 && pr.dtype != sim::DType::bf16)
    throw Unsupported("fa3_hopper runs fp16 and bf16 only (wgmma takes 16-bit inputs here); got fp32");
  const std::size_t row = row_or_throw(pr);
  const Fa3HopperConfig& cfg = kFa3HopperConfigs[row];
  const int dev = kernels::detail::require_hopper_device("fa3_hopper");
  if (pr.batch < 1 || pr.heads < 1 || pr.n_q() < 1 || pr.n_kv() < 1)
    throw std::invalid_argument("fa3_hopper: batch, heads, seq_q and seq_kv must be at least 1");
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr)
    throw std::invalid_argument("fa3_hopper: q, k, v and o must be device pointers, got null");
  if (!kernels::detail::aligned16(a.q) || !kernels::detail::aligned16(a.k) || !kernels::detail::aligned16(a.v) ||
      !kernels::detail::aligned16(a.o))
    throw Unsupported("fa3_hopper needs q, k, v and o 16-byte aligned (tensor maps, 16-byte stores)");
  if (!(a.softmax_scale > 0.f) || !std::isfinite(a.softmax_scale))
    throw Unsupported("fa3_hopper needs a positive finite softmax scale τ; got " + std::to_string(a.softmax_scale));
  (void)kv_group_of(a, "fa3_hopper");
  check_running_output(a, "fa3_hopper");
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (pr.n_q() > kIntMax || pr.n_kv() > kIntMax)
    throw Unsupported("fa3_hopper indexes rows with 32-bit ints (TMA coordinates too): seq_q and seq_kv must be at most " +
                      std::to_string(kIntMax));
  const int64_t heads = pr.batch * pr.heads;
  if (heads > kIntMax || (pr.n_q() + cfg.Br - 1) / cfg.Br > kIntMax / heads)
    throw Unsupported("fa3_hopper: T_r·B·H blocks exceed the grid limit 2^31-1");
  kernels::detail::require_hopper_smem(a, dev, "fa3_hopper", cfg.head_dim, smem_bytes_of(cfg));
#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
  kernels::detail::launch_row<ConfigAt>(
      row, pr.dtype, [&](auto c, auto t) { launch<typename decltype(c)::type, typename decltype(t)::type>(a); },
      std::make_index_sequence<kConfigs>{});
#else
  (void)row;
#endif
}

}  // namespace flashlab::kernels
