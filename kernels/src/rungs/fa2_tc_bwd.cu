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
// Each step's dQ product runs at the top of the next step (one barrier per
// step). Tiles are fixed at compile time per head dim and reported through
// fa2_tc_bwd_tiles(). The kernel is in fa2_tc_bwd_kernel.cuh.
// Expected bottleneck: mma.sync issue and ldmatrix bandwidth, then dQ's atomics.
// Measured (H200, fp16, 16k tokens, hidden 2048, 2026-11-25): 180–294 TFLOP/s by the backward
// convention (2.5× the forward's FLOPs), 0.85–1.31× PyTorch's SDPA FLASH backward in the same run
// (d = 64: 1.01–1.31×; d = 128: 0.85–1.06×) — see kernels/README.md.
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "compiled_configs.cuh"
#include "fa2_tc_bwd_kernel.cuh"
#include "flashlab/sim/problem/tensor_core_configs.hpp"
#include "flashlab/kernels/rungs/fa2_tc_bwd.hpp"

namespace flashlab::kernels {
namespace {

namespace bwd = fa2_tc_bwd_detail;

// The compiled configurations, one per head dim: sim::kFa2TcBwdConfigs. Alternatives
// are timed by tests/kernels/bwd_check.cu (FLASHLAB_BWD_VARIANTS); docs/kernels.md has the choice.
template <std::size_t I>
using CfgAt = bwd::Config<sim::kFa2TcBwdConfigs[I].head_dim, sim::kFa2TcBwdConfigs[I].Bc, sim::kFa2TcBwdConfigs[I].Br,
                          sim::kFa2TcBwdConfigs[I].warps, sim::kFa2TcBwdConfigs[I].kv_in_registers,
                          sim::kFa2TcBwdConfigs[I].min_blocks, sim::kFa2TcBwdConfigs[I].defer_dq>;

}  // namespace

void fa2_tc_backward(const LaunchArgs& a) {
  detail::launch_mma_sync_rung<CfgAt, sim::kFa2TcBwdConfigs, &sim::fa2_tc_bwd_smem_bytes>(
      a, "fa2_tc_bwd",
      [&](auto cfg, auto t) { bwd::launch<typename decltype(cfg)::type, typename decltype(t)::type>(a, "fa2_tc_bwd"); },
      &fa2_tc_bwd_config);
}

}  // namespace flashlab::kernels
