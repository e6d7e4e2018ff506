// Tensor-core peaks through mma.sync (the instruction our tensor-core rung
// uses): FP16 and BF16 m16n8k16 and TF32 m16n8k8, fp32 accumulate. Operands
// live in registers (loaded once, never zero), each warp keeps kAcc
// independent accumulators so that consecutive mma.sync do not wait on each
// other, and the loop is unrolled. On Hopper this measures the legacy
// mma.sync path; the full tensor-core rate needs wgmma (docs/roofline.md).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "check.hpp"
#include "device/dtype.cuh"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kMmaThreads = 128;  // 4 warps: one per SM sub-partition (scheduler)

// D = A·B + D for one tile of `shape_types`: A 4 registers, B 2, D 4 fp32 per lane.
#define FLASHLAB_MMA_SYNC(shape_types)                                                           \
  asm volatile("mma.sync.aligned." shape_types " {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, " \
               "{%0, %1, %2, %3};"                                                                \
               : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])                                   \
               : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]))
template <Op kOp>
struct Mma {
  static_assert(kOp == Op::fp16_mma || kOp == Op::bf16_mma || kOp == Op::tf32_mma, "an mma.sync figure");
  static constexpr int kK = kOp == Op::tf32_mma ? 8 : 16;  // m16n8k16 on fp16/bf16, m16n8k8 on TF32
  static constexpr int kFlops = 2 * 16 * 8 * kK;
  __device__ static void run(float (&d)[4], const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
    if constexpr (kOp == Op::fp16_mma)
      FLASHLAB_MMA_SYNC("m16n8k16.row.col.f32.f16.f16.f32");
    else if constexpr (kOp == Op::bf16_mma)
      FLASHLAB_MMA_SYNC("m16n8k16.row.col.f32.bf16.bf16.f32");
    else
      FLASHLAB_MMA_SYNC("m16n8k8.row.col.f32.tf32.tf32.f32");
  }
};
#undef FLASHLAB_MMA_SYNC

template <Op kOp, int kAcc>
__global__ void __launch_bounds__(kMmaThreads)
    mma_kernel(const std::uint32_t* __restrict__ operands, int iters, float* __restrict__ out, ClockProbe clocks) {
  const int lane = threadIdx.x & 31;
  std::uint32_t a[4], b[2];  // this lane's A (16×k) and B (k×8) fragments, in registers
#pragma unroll
  for (int i = 0; i < 4; ++i) a[i] = operands[lane * 8 + i];
#pragma unroll
  for (int i = 0; i < 2; ++i) b[i] = operands[lane * 8 + 4 + i];
  float acc[kAcc][4];  // kAcc independent 16×8 fp32 accumulators per warp
#pragma unroll
  for (int k = 0; k < kAcc; ++k)
#pragma unroll
    for (int i = 0; i < 4; ++i) acc[k][i] = 1e-3f * static_cast<float>(1 + lane + k + i);
  BlockClock::start();
#pragma unroll 2
  for (int it = 0; it < iters; ++it) {
#pragma unroll
    for (int k = 0; k < kAcc; ++k) Mma<kOp>::run(acc[k], a, b);
  }
  BlockClock::stop(clocks);
  float s = 0;
#pragma unroll
  for (int k = 0; k < kAcc; ++k) s += acc[k][0] + acc[k][1] + acc[k][2] + acc[k][3];
  out[static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

// Operand words: fp16/bf16 pairs or tf32 (an fp32 bit pattern) in ±[0.25, 1).
template <Op kOp>
__global__ void init_operands_kernel(std::uint32_t* operands, std::uint32_t seed) {
  const int k = threadIdx.x;
  if (k >= kOperandWords) return;
  auto value = [&](std::uint32_t salt) {
    return unit_value(mix32(static_cast<std::uint32_t>(k) * 2654435761u ^ seed ^ salt));
  };
  if constexpr (kOp == Op::tf32_mma)
    operands[k] = __float_as_uint(value(0));
  else if constexpr (kOp == Op::fp16_mma)
    operands[k] = kernels::detail::pack2<__half>(value(0), value(1));
  else
    operands[k] = kernels::detail::pack2<__nv_bfloat16>(value(0), value(1));
}

template <Op kOp, int kAcc>
void launch(const ComputeConfig& c, int sm_count, int iters, const std::uint32_t* operands, void* out,
            ClockProbe clocks, cudaStream_t s) {
  mma_kernel<kOp, kAcc><<<sm_count * c.blocks_per_sm, c.threads, 0, s>>>(operands, iters, static_cast<float*>(out),
                                                                          clocks);
  CEILINGS_LAUNCH_CHECK("mma_kernel");
}

template <Op kOp>
void launch_op(const ComputeConfig& c, int sm_count, int iters, const std::uint32_t* operands, void* out,
               ClockProbe clocks, cudaStream_t s) {
  if (c.chains == 4)
    launch<kOp, 4>(c, sm_count, iters, operands, out, clocks, s);
  else if (c.chains == 8)
    launch<kOp, 8>(c, sm_count, iters, operands, out, clocks, s);
  else
    throw MeasureError("mma: no kernel with " + std::to_string(c.chains) + " accumulators (4 or 8)");
}

}  // namespace

void init_operands(Op op, std::uint32_t* operands, std::uint32_t seed, cudaStream_t s) {
  switch (op) {
    case Op::fp16_mma: init_operands_kernel<Op::fp16_mma><<<1, kOperandWords, 0, s>>>(operands, seed); break;
    case Op::bf16_mma: init_operands_kernel<Op::bf16_mma><<<1, kOperandWords, 0, s>>>(operands, seed); break;
    case Op::tf32_mma: init_operands_kernel<Op::tf32_mma><<<1, kOperandWords, 0, s>>>(operands, seed); break;
    default: return;
  }
  CEILINGS_LAUNCH_CHECK("init_operands_kernel");
}

void run_mma(Op op, const ComputeConfig& c, int sm_count, int iters, const std::uint32_t* operands, void* out,
             ClockProbe clocks, cudaStream_t s) {
  switch (op) {
    case Op::fp16_mma: return launch_op<Op::fp16_mma>(c, sm_count, iters, operands, out, clocks, s);
    case Op::bf16_mma: return launch_op<Op::bf16_mma>(c, sm_count, iters, operands, out, clocks, s);
    case Op::tf32_mma: return launch_op<Op::tf32_mma>(c, sm_count, iters, operands, out, clocks, s);
    default: break;
  }
  throw MeasureError("run_mma: not a tensor-core operation");
}

// Warps per SM and accumulators per warp both hide the mma.sync latency; which
// mix is fastest differs between GPUs, so the driver tries these and keeps the best.
std::vector<ComputeConfig> mma_configs(Op) {
  return {{4, kMmaThreads, 8}, {8, kMmaThreads, 8}, {8, kMmaThreads, 4}, {16, kMmaThreads, 4}};
}

double mma_flops(Op op, const ComputeConfig& c, int sm_count, int iters) {
  const int per_mma = op == Op::tf32_mma   ? Mma<Op::tf32_mma>::kFlops
                      : op == Op::fp16_mma ? Mma<Op::fp16_mma>::kFlops
                                           : Mma<Op::bf16_mma>::kFlops;
  const double warps = static_cast<double>(sm_count) * c.blocks_per_sm * (c.threads / 32);
  return warps * static_cast<double>(iters) * c.chains * per_mma;
}

}  // namespace flashlab::ceilings::detail
