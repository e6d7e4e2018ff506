// Rung 5 of the ladder, fa2_tc: FlashAttention-2 forward on tensor cores.
//
// What changed from fa2: the two products run on tensor cores
// (mma.sync.m16n8k16, fp16/bf16 in, fp32 accumulate) fed by ldmatrix from
// padded shared memory; K_j, V_j are double-buffered with cp.async; P_ij goes
// from the S accumulators to the PV A operand without leaving registers; the
// softmax runs in base 2 with τ·log2(e) folded into one FFMA per element.
// Tiles are fixed at compile time per head dim (sim::kFa2TcConfigs) and reported to
// the simulator through fa2_tc_tiles().
// Expected bottleneck: mma.sync issue rate, then ldmatrix shared-memory
// bandwidth; exp2 (MUFU) matters at d = 64.
// Measured (H100, fp16, 16k tokens, hidden 2048, 2026-11-22): 244–346 TFLOP/s,
// 0.94–1.15× PyTorch SDPA FLASH in the same run — see kernels/README.md.
//
// The kernel itself is in fa2_tc_kernel.cuh; design notes in docs/fa2_tc.md.

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "compiled_configs.cuh"
#include "fa2_tc_kernel.cuh"
#include "flashlab/sim/problem/tensor_core_configs.hpp"
#include "flashlab/kernels/rungs/fa2_tc.hpp"

namespace flashlab::kernels {
namespace {

namespace detail = fa2_tc_detail;

// The compiled configurations, one per head dim: sim::kFa2TcConfigs (registers
// from ptxas, sm_90, CUDA 13.0; no spills: 234 at d 64, 178 at d 96, 247 at d 256).
// Alternatives are timed by tests/kernels/fa2_tc_standalone.cu built with
// -DFA2_TC_VARIANTS; see docs/fa2_tc.md for the choice.
template <std::size_t I>
using CfgAt = detail::Config<sim::kFa2TcConfigs[I].head_dim, sim::kFa2TcConfigs[I].Br, sim::kFa2TcConfigs[I].Bc,
                             sim::kFa2TcConfigs[I].warps, sim::kFa2TcConfigs[I].q_in_registers,
                             sim::kFa2TcConfigs[I].min_blocks>;

}  // namespace

void fa2_tc_forward(const LaunchArgs& a) {
  kernels::detail::launch_mma_sync_rung<CfgAt, sim::kFa2TcConfigs, &sim::fa2_tc_smem_bytes>(
      a, "fa2_tc",
      [&](auto cfg, auto t) { fa2_tc_detail::launch<typename decltype(cfg)::type, typename decltype(t)::type>(a, "fa2_tc"); },
      &fa2_tc_config);
}

}  // namespace flashlab::kernels
