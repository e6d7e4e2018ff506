// The Hopper backward rung, fa3_hopper_bwd: FlashAttention backward on sm_90a.
//
// What changed from fa2_tc_bwd: the five products on wgmma (operands from
// shared memory through descriptors, P_ijᵀ and dS_ijᵀ from registers), Q_i,
// dO_i, L_i and D_i by TMA into a ring of stages completed on
// mbarriers, one producer thread and two consumer warpgroups (setmaxnreg).
// dQ is added in fp32 into dQaccum through two shared-memory buffers per
// warpgroup by a writer warp's TMA reductions (a build with
// -DFLASHLAB_HOPPER_BWD_DQ_WRITER=1: one buffer; =0: vector reductions from
// registers); HBM traffic is FlashAttention-2's backward (model fa2_bwd, dQ
// accumulator fp32). At d = 128 dQ's convert takes each head as its blocks finish.
// Its figures beside PyTorch (H200, fp16, the 16k-token grid) and each tuning
// step's are in kernels/README.md's version table and docs/kernels.md.
//
// The kernel is in fa3_hopper_bwd_kernel.cuh. This file is compiled for sm_90a
// alone (kernels/CMakeLists.txt); with FLASHLAB_FA3_HOPPER_NO_SM90A the entry
// points remain and refuse to run.

#include <cmath>
#include <cstdint>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "device/cuda_check.hpp"
#include "hopper_device.hpp"
#include "fa_bwd_common.cuh"
#include "device/smem_opt_in.hpp"
#include "flashlab/kernels/rungs/fa3_hopper.hpp"
#include "flashlab/kernels/rungs/fa3_hopper_bwd.hpp"

#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
#include "compiled_configs.cuh"
#include "fa3_hopper_bwd_kernel.cuh"
#include "tensor_map.hpp"
#endif

namespace flashlab::kernels {
namespace {

constexpr const char* kRung = "fa3_hopper_bwd";

// The row of sim::kHopperBwdConfigs that serves the problem (its head dim and mask).
std::size_t row_or_throw(const sim::AttentionProblem& p) {
  if (const auto k = sim::hopper_bwd_row(p.head_dim, p.causal)) return *k;
  throw Unsupported(std::string(kRung) + " is compiled for head dims " + sim::hopper_bwd_head_dims_text() +
                    "; got d=" + std::to_string(p.head_dim));
}

#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
namespace bwd = fa3_hopper_bwd_detail;
template <std::size_t kIndex>
using ConfigAt = bwd::Config<sim::kHopperBwdConfigs[kIndex].head_dim, sim::kHopperBwdConfigs[kIndex].Br,
                             sim::kHopperBwdConfigs[kIndex].Bc, sim::kHopperBwdConfigs[kIndex].stages,
                             sim::kHopperBwdConfigs[kIndex].dq_buffers>;
constexpr std::size_t kConfigs = std::size(sim::kHopperBwdConfigs);
static_assert(detail::smem_agrees<ConfigAt>(sim::kHopperBwdConfigs, &sim::hopper_bwd_smem_bytes,
                                            std::make_index_sequence<kConfigs>{}),
              "the table's shared-memory formula is the kernel's");

// The swapped dQ's kernel compiles no causal mask: only unmasked rows may have it.
constexpr bool swapped_rows_unmasked() {
  for (const sim::HopperBwdConfig& c : sim::kHopperBwdConfigs)
    if (c.dq_swapped() && c.mask != sim::HopperMask::non_causal) return false;
  return true;
}
static_assert(swapped_rows_unmasked(), "a row with dQ swapped (B_r = 80) serves unmasked problems only");

template <class Cfg, typename T>
void launch(const LaunchArgs& a) {
  const sim::AttentionProblem& pr = a.problem;
  if (Cfg::kSwapDq && pr.causal) throw std::logic_error(std::string(kRung) + ": the B_r = 80 kernel has no causal mask");
  const std::string who = std::string(kRung) + " (d=" + std::to_string(Cfg::kHeadDim) + ", B_r=" +
                          std::to_string(Cfg::kBr) + ", B_c=" + std::to_string(Cfg::kBc) + ")";
  const detail::FaBwdWorkspace w = detail::check_fa_bwd_args(a, kRung);
  const int64_t heads = pr.head_count();
  const int64_t T_c = (pr.n_kv() + Cfg::kBc - 1) / Cfg::kBc;
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (T_c > kIntMax / heads)
    throw Unsupported(who + ": T_c·B·H = " + std::to_string(T_c) + "·" + std::to_string(heads) +
                      " blocks exceed the grid limit 2^31-1");
  auto* kernel = &bwd::fa3_hopper_backward_kernel<Cfg, T>;
  detail::opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), Cfg::kSmemBytes);  // per device
  if (a.ctas_per_sm != nullptr)
    FLASHLAB_CUDA_CHECK(
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(a.ctas_per_sm, kernel, Cfg::kThreads, Cfg::kSmemBytes));
  const detail::FaBwdTargets tg = detail::begin_fa_bwd(a, w, who, kRung);

  const int64_t kv_heads = heads / tg.kv_group;
  const int d = Cfg::kHeadDim;
  const CUtensorMap tm_q = detail::make_head_map(a.q, pr.dtype, pr.n_q(), d, heads, Cfg::kBr, kRung);
  const CUtensorMap tm_do = detail::make_head_map(a.bwd.d_o, pr.dtype, pr.n_q(), d, heads, Cfg::kBr, kRung);
  const CUtensorMap tm_k = detail::make_head_map(a.k, pr.dtype, pr.n_kv(), d, kv_heads, Cfg::kBc, kRung);
  const CUtensorMap tm_v = detail::make_head_map(a.v, pr.dtype, pr.n_kv(), d, kv_heads, Cfg::kBc, kRung);
  const CUtensorMap tm_l = detail::make_stat_map(w.l_log2, w.stat_rows, heads, Cfg::kBr, kRung);
  const CUtensorMap tm_d = detail::make_stat_map(w.d_row, w.stat_rows, heads, Cfg::kBr, kRung);
  // dQ's fp32 sums (the workspace's or the caller's, [B·H, N_q, d]) for the writer's
  // reductions: boxes of 64 rows (B_r when dQ is swapped) and 32 columns; unused
  // without the writer.
  CUtensorMap tm_dq{};
  if constexpr (Cfg::kDqWriter)
    tm_dq = detail::make_head_map(tg.dq_accum, sim::DType::fp32, pr.n_q(), d, heads, Cfg::kDqBoxRows, kRung);

  bwd::Params p{};
  p.dq_accum = tg.dq_accum;
  p.dq_scaled = tg.dq_scaled ? 1 : 0;
  p.dk = a.bwd.dk;
  p.dv = a.bwd.dv;
  p.dk_accum = tg.dk_accum;
  p.dv_accum = tg.dv_accum;
  p.kv_group = static_cast<int>(tg.kv_group);
  p.n_q = static_cast<int>(pr.n_q());
  p.n_kv = static_cast<int>(pr.n_kv());
  p.T_c = static_cast<int>(T_c);
  p.scale = a.softmax_scale;
  p.scale_log2 = static_cast<float>(static_cast<double>(a.softmax_scale) * 1.4426950408889634);
  p.causal = pr.causal ? 1 : 0;
  // dQ's convert takes each head as soon as its blocks are done (the writer's
  // configurations count them), on the SMs the last wave leaves idle: at d = 128
  // (+1.5 % to +5 % at N 1K on an H200; at d = 64 within the spread, kernels/README.md).
  const bool by_head = Cfg::kDqWriter && Cfg::kHeadDim == 128 && !tg.dq_scaled;
  p.head_done = by_head ? w.head_done : nullptr;
  // Programmatic: the blocks may start (K_j, V_j copies) while the pre-pass finishes.
  detail::launch_kernel("fa3_hopper_backward_kernel", kernel, dim3(static_cast<unsigned>(T_c * heads)),
                        dim3(Cfg::kThreads), Cfg::kSmemBytes, static_cast<cudaStream_t>(a.stream),
                        /*programmatic=*/true, tm_q, tm_k, tm_v, tm_do, tm_l, tm_d, tm_dq, p);
  detail::end_fa_bwd(a, w, tg, /*programmatic=*/true, /*blocks_per_head=*/by_head ? T_c : 0);
}

#endif  // !FLASHLAB_FA3_HOPPER_NO_SM90A

}  // namespace

void fa3_hopper_backward(const LaunchArgs& a) {
  const sim::AttentionProblem& pr = a.problem;
  if (pr.dtype != sim::DType::fp16 && pr.dtype != sim::DType::bf16)
    throw Unsupported(std::string(kRung) + " runs fp16 and bf16 only (wgmma takes 16-bit inputs here); got fp32");
  const std::size_t row = row_or_throw(pr);
  const sim::HopperBwdConfig& cfg = sim::kHopperBwdConfigs[row];
  const int dev = detail::require_hopper_device(kRung);
  if (pr.batch < 1 || pr.heads < 1 || pr.n_q() < 1 || pr.n_kv() < 1)
    throw std::invalid_argument(std::string(kRung) + ": batch, heads, seq_q and seq_kv must be at least 1");
  for (const void* ptr : {a.q, a.k, a.v, a.bwd.d_o, static_cast<const void*>(a.bwd.dk), static_cast<const void*>(a.bwd.dv),
                          static_cast<const void*>(a.bwd.dk_accum), static_cast<const void*>(a.bwd.dv_accum),
                          static_cast<const void*>(a.bwd.dq_accum)})
    if (!detail::aligned16(ptr))
      throw Unsupported(std::string(kRung) +
                        " needs Q, K, V, dO, dK, dV and the accumulators 16-byte aligned (tensor maps, vector adds)");
  constexpr int64_t kIntMax = std::numeric_limits<int>::max();
  if (pr.n_q() > kIntMax || pr.n_kv() > kIntMax || layout::fa_bwd_stat_rows(pr) > kIntMax)
    throw Unsupported(std::string(kRung) +
                      " indexes rows with 32-bit ints (TMA coordinates too): seq_q and seq_kv must be below 2^31");
  detail::require_hopper_smem(a, dev, kRung, cfg.head_dim, sim::hopper_bwd_smem_bytes(cfg));
  (void)row;  // unused where the sm_90a code is not compiled
#if !defined(FLASHLAB_FA3_HOPPER_NO_SM90A)
  detail::launch_row<ConfigAt>(
      row, pr.dtype, [&](auto c, auto t) { launch<typename decltype(c)::type, typename decltype(t)::type>(a); },
      std::make_index_sequence<kConfigs>{});
#endif
}

}  // namespace flashlab::kernels
