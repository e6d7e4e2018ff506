// CUDA-core peaks: FP32 FFMA, FP16 and BF16 HFMA2. Each thread runs kChains
// independent chains a ← a·x + y (no chain waits on another, so the FMA
// pipes never starve for lack of independent work), every SM is full of
// warps, and the chains' sum is stored so that nothing is optimised away.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "check.hpp"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kFmaThreads = 256;
constexpr int kChains = 8;

// One FMA per element per chain step; FLOPs per step: 2 per lane of the type.
template <class T>
struct Fma;
template <>
struct Fma<float> {
  static constexpr int kFlops = 2;
  __device__ static float init(int t, int c) { return 1.0f + 1e-3f * static_cast<float>(t + 7 * c); }
  __device__ static float step(float a, float x, float y) { return fmaf(a, x, y); }
  __device__ static float to_float(float a) { return a; }
};
template <>
struct Fma<__half2> {
  static constexpr int kFlops = 4;  // two FMAs per HFMA2
  __device__ static __half2 init(int t, int c) {
    return __floats2half2_rn(0.5f + 1e-3f * static_cast<float>((t + c) & 63), 0.75f);
  }
  __device__ static __half2 step(__half2 a, __half2 x, __half2 y) { return __hfma2(a, x, y); }
  __device__ static float to_float(__half2 a) { return __low2float(a) + __high2float(a); }
};
template <>
struct Fma<__nv_bfloat162> {
  static constexpr int kFlops = 4;
  __device__ static __nv_bfloat162 init(int t, int c) {
    return __floats2bfloat162_rn(0.5f + 1e-3f * static_cast<float>((t + c) & 63), 0.75f);
  }
  __device__ static __nv_bfloat162 step(__nv_bfloat162 a, __nv_bfloat162 x, __nv_bfloat162 y) {
    return __hfma2(a, x, y);
  }
  __device__ static float to_float(__nv_bfloat162 a) { return __low2float(a) + __high2float(a); }
};

// x < 1 and y > 0: every chain converges to y / (1 − x), away from zero,
// infinity and denormals whatever the iteration count.
template <class T>
__global__ void __launch_bounds__(kFmaThreads)
    fma_kernel(int iters, T x, T y, float* __restrict__ out, ClockProbe clocks) {
  T a[kChains];
#pragma unroll
  for (int c = 0; c < kChains; ++c) a[c] = Fma<T>::init(threadIdx.x, c);
  BlockClock::start();
  // Unrolled 16 deep: the loop's own add, compare and branch take 3 issue slots
  // per iteration, under 3% of the 128 FMAs beside them (at 4 deep, 9%).
#pragma unroll 16
  for (int i = 0; i < iters; ++i) {
#pragma unroll
    for (int c = 0; c < kChains; ++c) a[c] = Fma<T>::step(a[c], x, y);
  }
  BlockClock::stop(clocks);
  float s = 0;
#pragma unroll
  for (int c = 0; c < kChains; ++c) s += Fma<T>::to_float(a[c]);
  out[static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

template <class T>
int resident(void) {
  int per_sm = 0;
  CEILINGS_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, fma_kernel<T>, kFmaThreads, 0));
  return per_sm > 0 ? per_sm : 1;
}

template <class T>
void launch(const ComputeConfig& c, int sm_count, int iters, T x, T y, void* out, ClockProbe clocks, cudaStream_t s,
            const char* name) {
  fma_kernel<T><<<sm_count * c.blocks_per_sm, c.threads, 0, s>>>(iters, x, y, static_cast<float*>(out), clocks);
  kernels::detail::check_cuda<MeasureError>(cudaGetLastError(), name, __FILE__, __LINE__);
}

}  // namespace

void run_fma(Op op, const ComputeConfig& c, int sm_count, int iters, void* out, ClockProbe clocks, cudaStream_t s) {
  switch (op) {
    case Op::fp32_fma:
      launch<float>(c, sm_count, iters, 0.999f, 1e-3f, out, clocks, s, "launch of fma_kernel<float>");
      return;
    case Op::fp16_hfma2:
      launch<__half2>(c, sm_count, iters, __floats2half2_rn(0.5f, 0.5f), __floats2half2_rn(0.25f, 0.25f), out, clocks,
                      s, "launch of fma_kernel<__half2>");
      return;
    case Op::bf16_hfma2:
      launch<__nv_bfloat162>(c, sm_count, iters, __floats2bfloat162_rn(0.5f, 0.5f), __floats2bfloat162_rn(0.25f, 0.25f),
                             out, clocks, s, "launch of fma_kernel<__nv_bfloat162>");
      return;
    default: break;
  }
  throw MeasureError("run_fma: not a CUDA-core operation");
}

std::vector<ComputeConfig> fma_configs(Op op) {
  int per_sm = 1;
  switch (op) {
    case Op::fp32_fma: per_sm = resident<float>(); break;
    case Op::fp16_hfma2: per_sm = resident<__half2>(); break;
    case Op::bf16_hfma2: per_sm = resident<__nv_bfloat162>(); break;
    default: break;
  }
  return {{per_sm, kFmaThreads, kChains}};
}

double fma_flops(Op op, const ComputeConfig& c, int sm_count, int iters) {
  const int per_step = op == Op::fp32_fma     ? Fma<float>::kFlops
                       : op == Op::fp16_hfma2 ? Fma<__half2>::kFlops
                                              : Fma<__nv_bfloat162>::kFlops;
  return static_cast<double>(sm_count) * c.blocks_per_sm * c.threads * static_cast<double>(iters) * c.chains * per_step;
}

}  // namespace flashlab::ceilings::detail
