// Tensor-core peaks through wgmma (Hopper, sm_90a): FP16 and BF16
// wgmma.mma_async m64n256k16, fp32 accumulate, A and B read from shared memory
// through matrix descriptors — the instruction cuBLAS's Hopper GEMMs use, which
// mma.sync (mma.cu, the Ampere path) cannot match. Each warpgroup (4 consecutive
// warps) keeps one 64×256 fp32 accumulator (128 registers per thread) and
// issues a K = 64 tile (4 wgmma) per commit group, with kInFlight groups in
// flight (wgmma.wait_group kInFlight − 1): the tensor cores never wait for the
// issue. The operands are hashed random values in ±[0.25, 1) written by the
// block once before the timed loop (never zeros: zeros draw less power and
// would flatter the clock).
//
// This file is compiled for sm_90a alone (-gencode=arch=compute_90a,code=sm_90a,
// kernels/ceilings/CMakeLists.txt) where nvcc can, which defines
// FLASHLAB_CEILINGS_SM90A; otherwise only the host functions exist and
// wgmma_unavailable_reason() says why nothing can be measured.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "check.hpp"
#include "device/dtype.cuh"
#include "device_common.cuh"

namespace flashlab::ceilings::detail {
namespace {

constexpr int kWarpgroupThreads = 128;  // 4 consecutive warps, the first one's index divisible by 4
constexpr int kMaxWarpgroups = 3;       // per block; 3 × 128 registers of accumulators still fit an SM
constexpr int kM = 64, kN = 256, kK = 16;  // one wgmma: D(64×256) += A(64×16)·B(16×256)
constexpr int kSteps = 4;                  // wgmma per K tile: K = 64, one commit group
constexpr int kFlopsPerWgmma = 2 * kM * kN * kK;
// Shared memory, bf16/fp16 elements, K-major "core matrices" of 8 rows × 16 bytes
// (128 contiguous bytes, conflict-free), no swizzle: one K step of A is 8 row
// groups × 2 core matrices (2 KiB), of B 32 × 2 (8 KiB). Each warpgroup has its
// own A (its 64 rows of M); all share B.
constexpr int kCoreBytes = 128;
constexpr int kAStepBytes = kM * kK * 2;  // 2 KiB
constexpr int kBStepBytes = kN * kK * 2;  // 8 KiB
constexpr int kBBytes = kSteps * kBStepBytes;
constexpr int kAWarpgroupBytes = kSteps * kAStepBytes;
static_assert(kAStepBytes == (kM / 8) * 2 * kCoreBytes && kBStepBytes == (kN / 8) * 2 * kCoreBytes);

int smem_bytes(int warpgroups) { return kBBytes + warpgroups * kAWarpgroupBytes; }

#if defined(FLASHLAB_CEILINGS_SM90A)

// The descriptor of one K step (K-major, no swizzle): start address, the
// leading-dimension offset (the next core matrix along K, 128 bytes on) and the
// stride offset (the next 8 rows, 256 bytes on), all in 16-byte units.
__device__ __forceinline__ std::uint64_t smem_descriptor(std::uint32_t smem_addr) {
  std::uint64_t d = 0;
  d |= static_cast<std::uint64_t>((smem_addr & 0x3FFFF) >> 4);
  d |= static_cast<std::uint64_t>(kCoreBytes >> 4) << 16;        // leading byte offset
  d |= static_cast<std::uint64_t>((2 * kCoreBytes) >> 4) << 32;  // stride byte offset
  return d;  // base offset 0, swizzle mode 0 (none)
}

#define FLASHLAB_WGMMA_M64N256K16(TYPE)                                                                         \
  asm volatile(                                                                                                 \
      "{\n.reg .pred p;\nsetp.ne.b32 p, %130, 0;\n"                                                             \
      "wgmma.mma_async.sync.aligned.m64n256k16.f32." TYPE "." TYPE " {"                                          \
        "%0, %1, %2, %3, %4, %5, %6, %7, %8, %9, %10, %11, %12, %13, %14, %15, " \
        "%16, %17, %18, %19, %20, %21, %22, %23, %24, %25, %26, %27, %28, %29, %30, %31, " \
        "%32, %33, %34, %35, %36, %37, %38, %39, %40, %41, %42, %43, %44, %45, %46, %47, " \
        "%48, %49, %50, %51, %52, %53, %54, %55, %56, %57, %58, %59, %60, %61, %62, %63, " \
        "%64, %65, %66, %67, %68, %69, %70, %71, %72, %73, %74, %75, %76, %77, %78, %79, " \
        "%80, %81, %82, %83, %84, %85, %86, %87, %88, %89, %90, %91, %92, %93, %94, %95, " \
        "%96, %97, %98, %99, %100, %101, %102, %103, %104, %105, %106, %107, %108, %109, %110, %111, " \
        "%112, %113, %114, %115, %116, %117, %118, %119, %120, %121, %122, %123, %124, %125, %126, %127" \
      "}, %128, %129, p, 1, 1, 0, 0;\n}\n"                                                                       \
      :                                                                                                         \
          "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3]), "+f"(d[4]), "+f"(d[5]), "+f"(d[6]), "+f"(d[7]), \
          "+f"(d[8]), "+f"(d[9]), "+f"(d[10]), "+f"(d[11]), "+f"(d[12]), "+f"(d[13]), "+f"(d[14]), "+f"(d[15]), \
          "+f"(d[16]), "+f"(d[17]), "+f"(d[18]), "+f"(d[19]), "+f"(d[20]), "+f"(d[21]), "+f"(d[22]), "+f"(d[23]), \
          "+f"(d[24]), "+f"(d[25]), "+f"(d[26]), "+f"(d[27]), "+f"(d[28]), "+f"(d[29]), "+f"(d[30]), "+f"(d[31]), \
          "+f"(d[32]), "+f"(d[33]), "+f"(d[34]), "+f"(d[35]), "+f"(d[36]), "+f"(d[37]), "+f"(d[38]), "+f"(d[39]), \
          "+f"(d[40]), "+f"(d[41]), "+f"(d[42]), "+f"(d[43]), "+f"(d[44]), "+f"(d[45]), "+f"(d[46]), "+f"(d[47]), \
          "+f"(d[48]), "+f"(d[49]), "+f"(d[50]), "+f"(d[51]), "+f"(d[52]), "+f"(d[53]), "+f"(d[54]), "+f"(d[55]), \
          "+f"(d[56]), "+f"(d[57]), "+f"(d[58]), "+f"(d[59]), "+f"(d[60]), "+f"(d[61]), "+f"(d[62]), "+f"(d[63]), \
          "+f"(d[64]), "+f"(d[65]), "+f"(d[66]), "+f"(d[67]), "+f"(d[68]), "+f"(d[69]), "+f"(d[70]), "+f"(d[71]), \
          "+f"(d[72]), "+f"(d[73]), "+f"(d[74]), "+f"(d[75]), "+f"(d[76]), "+f"(d[77]), "+f"(d[78]), "+f"(d[79]), \
          "+f"(d[80]), "+f"(d[81]), "+f"(d[82]), "+f"(d[83]), "+f"(d[84]), "+f"(d[85]), "+f"(d[86]), "+f"(d[87]), \
          "+f"(d[88]), "+f"(d[89]), "+f"(d[90]), "+f"(d[91]), "+f"(d[92]), "+f"(d[93]), "+f"(d[94]), "+f"(d[95]), \
          "+f"(d[96]), "+f"(d[97]), "+f"(d[98]), "+f"(d[99]), "+f"(d[100]), "+f"(d[101]), "+f"(d[102]), "+f"(d[103]), \
          "+f"(d[104]), "+f"(d[105]), "+f"(d[106]), "+f"(d[107]), "+f"(d[108]), "+f"(d[109]), "+f"(d[110]), "+f"(d[111]), \
          "+f"(d[112]), "+f"(d[113]), "+f"(d[114]), "+f"(d[115]), "+f"(d[116]), "+f"(d[117]), "+f"(d[118]), "+f"(d[119]), \
          "+f"(d[120]), "+f"(d[121]), "+f"(d[122]), "+f"(d[123]), "+f"(d[124]), "+f"(d[125]), "+f"(d[126]), "+f"(d[127]) \
      : "l"(a_desc), "l"(b_desc), "r"(1))

// One m64n256k16 wgmma of the figure's dtype; its operand words pack two
// elements each (kernels::detail::pack2).
template <Op kOp>
struct Wgmma {
  static_assert(kOp == Op::fp16_wgmma || kOp == Op::bf16_wgmma, "a wgmma figure");
  using Elem = std::conditional_t<kOp == Op::bf16_wgmma, __nv_bfloat16, __half>;
  __device__ __forceinline__ static void run(float (&d)[128], std::uint64_t a_desc, std::uint64_t b_desc) {
    if constexpr (kOp == Op::bf16_wgmma)
      FLASHLAB_WGMMA_M64N256K16("bf16");
    else
      FLASHLAB_WGMMA_M64N256K16("f16");
  }
};
#undef FLASHLAB_WGMMA_M64N256K16

// Pins the accumulators' reads and writes in program order around the async
// instructions (the compiler sees no dependence between wait_group and them).
__device__ __forceinline__ void fence_operands(float (&d)[128]) {
#pragma unroll
  for (int i = 0; i < 128; ++i) asm volatile("" : "+f"(d[i])::"memory");
}

// blockDim.x = 128 × warpgroups. Dynamic shared memory: B (kBBytes), then each warpgroup's A.
template <Op kOp, int kInFlight>
__global__ void __launch_bounds__(kWarpgroupThreads* kMaxWarpgroups, 1)
    wgmma_kernel(int iters, std::uint32_t seed, float* __restrict__ out, ClockProbe clocks) {
  static_assert(kInFlight >= 1 && kInFlight <= 2);
  extern __shared__ __align__(128) std::uint32_t smem[];  // (B | A_0 | A_1 | ...) as 32-bit words
  const int warpgroup = static_cast<int>(threadIdx.x) / kWarpgroupThreads;
  const int words = (kBBytes + static_cast<int>(blockDim.x / kWarpgroupThreads) * kAWarpgroupBytes) / 4;
  for (int w = static_cast<int>(threadIdx.x); w < words; w += static_cast<int>(blockDim.x)) {
    const std::uint32_t h = mix32(static_cast<std::uint32_t>(w) * 2654435761u ^ seed ^ (blockIdx.x << 20));
    smem[w] = kernels::detail::pack2<typename Wgmma<kOp>::Elem>(unit_value(h), unit_value(mix32(h ^ 0x9e3779b9u)));
  }
  // Ordinary stores, read next by the tensor cores (the async proxy).
  asm volatile("fence.proxy.async.shared::cta;" ::: "memory");
  __syncthreads();

  const std::uint32_t base = static_cast<std::uint32_t>(__cvta_generic_to_shared(smem));
  const std::uint32_t b_addr = base;
  const std::uint32_t a_addr = base + kBBytes + static_cast<std::uint32_t>(warpgroup * kAWarpgroupBytes);
  float d[128];  // this thread's share of the warpgroup's 64×256 fp32 accumulator
#pragma unroll
  for (int i = 0; i < 128; ++i) d[i] = 1e-3f * static_cast<float>(1 + (threadIdx.x & 31) + i);

  BlockClock::start();
  for (int it = 0; it < iters; ++it) {
    asm volatile("wgmma.fence.sync.aligned;" ::: "memory");
#pragma unroll
    for (int k = 0; k < kSteps; ++k)
      Wgmma<kOp>::run(d, smem_descriptor(a_addr + k * kAStepBytes), smem_descriptor(b_addr + k * kBStepBytes));
    asm volatile("wgmma.commit_group.sync.aligned;" ::: "memory");
    asm volatile("wgmma.wait_group.sync.aligned %0;" ::"n"(kInFlight - 1) : "memory");
  }
  asm volatile("wgmma.wait_group.sync.aligned 0;" ::: "memory");
  fence_operands(d);
  BlockClock::stop(clocks);
  float s = 0;
#pragma unroll
  for (int i = 0; i < 128; ++i) s += d[i];
  out[static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x] = s;
}

template <Op kOp, int kInFlight>
void launch(const ComputeConfig& c, int sm_count, int iters, std::uint32_t seed, void* out, ClockProbe clocks,
            cudaStream_t s) {
  const int warpgroups = c.threads / kWarpgroupThreads;
  const int bytes = smem_bytes(warpgroups);
  int device = 0, optin = 0;
  CEILINGS_CHECK(cudaGetDevice(&device));
  CEILINGS_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, device));
  if (bytes > optin)
    throw MeasureError("wgmma_kernel: " + std::to_string(bytes) + " bytes of shared memory per block exceed the device's " +
                       std::to_string(optin) + " (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
  CEILINGS_CHECK(cudaFuncSetAttribute(wgmma_kernel<kOp, kInFlight>, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes));
  wgmma_kernel<kOp, kInFlight><<<sm_count * c.blocks_per_sm, c.threads, bytes, s>>>(iters, seed, static_cast<float*>(out),
                                                                                    clocks);
  CEILINGS_LAUNCH_CHECK("wgmma_kernel");
}

template <Op kOp>
void launch_op(const ComputeConfig& c, int sm_count, int iters, std::uint32_t seed, void* out, ClockProbe clocks,
               cudaStream_t s) {
  if (c.chains == 1) return launch<kOp, 1>(c, sm_count, iters, seed, out, clocks, s);
  if (c.chains == 2) return launch<kOp, 2>(c, sm_count, iters, seed, out, clocks, s);
  throw MeasureError("wgmma: no kernel with " + std::to_string(c.chains) + " commit groups in flight (1 or 2)");
}

cudaError_t probe_wgmma_image() {
  cudaFuncAttributes a{};
  return cudaFuncGetAttributes(&a, wgmma_kernel<Op::bf16_wgmma, 2>);
}

#endif  // FLASHLAB_CEILINGS_SM90A

}  // namespace

std::string wgmma_unavailable_reason(int compute_capability) {
#if defined(FLASHLAB_CEILINGS_SM90A)
  if (compute_capability != 90)
    return "wgmma runs on Hopper alone (sm_90a code, compute capability 9.0); this GPU is " +
           std::to_string(compute_capability / 10) + "." + std::to_string(compute_capability % 10) +
           ", so its tensor-core ceiling is the mma.sync figure";
  if (const cudaError_t e = probe_wgmma_image(); e != cudaSuccess) {
    (void)cudaGetLastError();
    return std::string("the sm_90a wgmma kernel does not load on this GPU: ") + cudaGetErrorName(e);
  }
  return {};
#else
  (void)compute_capability;
  return "this build has no sm_90a code (wgmma needs -gencode=arch=compute_90a,code=sm_90a, nvcc 12.0 or newer)";
#endif
}

void run_wgmma(Op op, const ComputeConfig& c, int sm_count, int iters, std::uint32_t seed, void* out,
               ClockProbe clocks, cudaStream_t s) {
  if (c.threads % kWarpgroupThreads != 0 || c.threads / kWarpgroupThreads < 1 ||
      c.threads / kWarpgroupThreads > kMaxWarpgroups)
    throw MeasureError("wgmma: " + std::to_string(c.threads) + " threads is not 1 to " +
                       std::to_string(kMaxWarpgroups) + " warpgroups of 128");
#if defined(FLASHLAB_CEILINGS_SM90A)
  switch (op) {
    case Op::fp16_wgmma: return launch_op<Op::fp16_wgmma>(c, sm_count, iters, seed, out, clocks, s);
    case Op::bf16_wgmma: return launch_op<Op::bf16_wgmma>(c, sm_count, iters, seed, out, clocks, s);
    default: break;
  }
  throw MeasureError("run_wgmma: not a wgmma operation");
#else
  (void)op, (void)sm_count, (void)iters, (void)seed, (void)out, (void)clocks, (void)s;
  throw MeasureError(wgmma_unavailable_reason(0));
#endif
}

// Warpgroups per SM (in one block or two) and commit groups in flight both
// keep the tensor cores fed; the driver tries these and keeps the fastest.
std::vector<ComputeConfig> wgmma_configs(Op) {
  return {{1, 2 * kWarpgroupThreads, 2}, {1, 3 * kWarpgroupThreads, 2}, {2, kWarpgroupThreads, 2},
          {1, 2 * kWarpgroupThreads, 1}};
}

double wgmma_flops(Op, const ComputeConfig& c, int sm_count, int iters) {
  const double warpgroups = static_cast<double>(sm_count) * c.blocks_per_sm * (c.threads / kWarpgroupThreads);
  return warpgroups * static_cast<double>(iters) * kSteps * kFlopsPerWgmma;
}

std::string wgmma_shape(const ComputeConfig& c) {
  return std::to_string(c.threads / kWarpgroupThreads) + " warpgroup(s) per block, m64n256k16 (A and B in shared "
         "memory, " + std::to_string(smem_bytes(c.threads / kWarpgroupThreads) / 1024) + " KiB per block), " +
         std::to_string(kSteps) + " wgmma per commit group, " + std::to_string(c.chains) + " group(s) in flight";
}

}  // namespace flashlab::ceilings::detail
