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
#include <string>
#include <vector>

#include "fa2_tc_bwd_kernel.cuh"
#include "flashlab/kernels/fa2_tc_bwd.hpp"

namespace flashlab::kernels {
namespace {

namespace bwd = fa2_tc_bwd_detail;

// The compiled configurations, one per head dim. Alternatives are timed by
// tests/kernels/bwd_check.cu (FLASHLAB_BWD_VARIANTS); docs/kernels.md has the choice.
//                            d   B_c  B_r  warps  K_j,V_j in regs  blocks/SM  dQ deferred
using Cfg64 = bwd::Config<64, 128, 32, 4, false, 2, true>;   // 32 keys per warp: B fragments feed two mma rows
using Cfg128 = bwd::Config<128, 128, 64, 8, false, 1, true>;  // 16 keys per warp (32 would need 256 accumulators)

template <class Cfg>
sim::TileShape tiles_of() {
  return sim::TileShape{Cfg::kBr, Cfg::kBc};
}

template <class Cfg>
void backward_dtype(const LaunchArgs& a) {
  switch (a.problem.dtype) {
    case sim::DType::fp16:
      bwd::launch<Cfg, __half>(a, "fa2_tc_bwd");
      return;
    case sim::DType::bf16:
      bwd::launch<Cfg, __nv_bfloat16>(a, "fa2_tc_bwd");
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
