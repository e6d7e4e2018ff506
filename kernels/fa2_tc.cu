// Rung 5 of the ladder, fa2_tc: FlashAttention-2 forward on tensor cores.
//
// What changed from fa2: the two products run on tensor cores
// (mma.sync.m16n8k16, fp16/bf16 in, fp32 accumulate) fed by ldmatrix from
// padded shared memory; K_j, V_j are double-buffered with cp.async; P_ij goes
// from the S accumulators to the PV A operand without leaving registers; the
// softmax runs in base 2 with τ·log2(e) folded into one FFMA per element.
// Tiles are fixed at compile time per head dim (table below) and reported to
// the simulator through fa2_tc_tiles().
// Expected bottleneck: mma.sync issue rate, then ldmatrix shared-memory
// bandwidth; exp2 (MUFU) matters at d = 64.
// Measured (H100, fp16, 16k tokens, hidden 2048, 2026-11-22): 244–346 TFLOP/s,
// 0.94–1.15× PyTorch SDPA FLASH in the same run — see kernels/README.md.
//
// The kernel itself is in fa2_tc_kernel.cuh; design notes in docs/fa2_tc.md.

#include <string>
#include <vector>

#include "fa2_tc_kernel.cuh"
#include "flashlab/kernels/fa2_tc.hpp"

namespace flashlab::kernels {
namespace {

namespace detail = fa2_tc_detail;

// The compiled configurations, one per head dim (registers from ptxas, sm_90,
// CUDA 13.0; no spills). Alternatives are timed by tests/kernels/fa2_tc_standalone.cu
// built with -DFA2_TC_VARIANTS; see docs/fa2_tc.md for the choice.
//                            d   B_r  B_c  warps  Q_i in regs  blocks/SM
using Cfg64 = detail::Config<64, 128, 64, 4, true, 2>;    // 32 rows/warp; 234 regs
using Cfg96 = detail::Config<96, 128, 64, 8, true, 1>;    // 16 rows/warp; 178 regs
using Cfg128 = detail::Config<128, 128, 32, 4, false, 2>;  // 32 rows/warp, Q_i in smem; chosen by the H100 run of 2026-11-22
using Cfg256 = detail::Config<256, 128, 64, 8, false, 1>; // 16 rows/warp; 247 regs, Q_i reloaded

template <class Cfg>
sim::TileShape tiles_of() {
  return sim::TileShape{Cfg::kBr, Cfg::kBc};
}

template <class Cfg>
void forward_dtype(const LaunchArgs& a) {
  switch (a.problem.dtype) {
    case sim::DType::fp16:
      detail::launch<Cfg, __half>(a, "fa2_tc");
      return;
    case sim::DType::bf16:
      detail::launch<Cfg, __nv_bfloat16>(a, "fa2_tc");
      return;
    case sim::DType::fp32:
      break;
  }
  throw Unsupported("fa2_tc runs fp16 and bf16 only (mma.sync.m16n8k16 takes 16-bit inputs); got fp32");
}

std::string head_dim_list() {
  std::string s;
  for (int d : fa2_tc_head_dims()) s += (s.empty() ? "" : ", ") + std::to_string(d);
  return s;
}

[[noreturn]] void unsupported_head_dim(long long d) {
  throw Unsupported("fa2_tc is compiled for head dims " + head_dim_list() + "; got d=" + std::to_string(d));
}

}  // namespace

std::vector<int> fa2_tc_head_dims() { return {64, 96, 128, 256}; }

sim::TileShape fa2_tc_tiles(int head_dim) {
  switch (head_dim) {
    case 64: return tiles_of<Cfg64>();
    case 96: return tiles_of<Cfg96>();
    case 128: return tiles_of<Cfg128>();
    case 256: return tiles_of<Cfg256>();
    default: unsupported_head_dim(head_dim);
  }
}

std::size_t fa2_tc_smem_bytes(int head_dim) {
  switch (head_dim) {
    case 64: return Cfg64::kSmemBytes;
    case 96: return Cfg96::kSmemBytes;
    case 128: return Cfg128::kSmemBytes;
    case 256: return Cfg256::kSmemBytes;
    default: unsupported_head_dim(head_dim);
  }
}

void fa2_tc_forward(const LaunchArgs& a) {
  // dtype first: fp32 is refused whatever the head dim.
  if (a.problem.dtype == sim::DType::fp32)
    throw Unsupported("fa2_tc runs fp16 and bf16 only (mma.sync.m16n8k16 takes 16-bit inputs); got fp32");
  switch (a.problem.head_dim) {
    case 64: return forward_dtype<Cfg64>(a);
    case 96: return forward_dtype<Cfg96>(a);
    case 128: return forward_dtype<Cfg128>(a);
    case 256: return forward_dtype<Cfg256>(a);
    default: unsupported_head_dim(a.problem.head_dim);
  }
}

}  // namespace flashlab::kernels
