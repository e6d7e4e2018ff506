// What every rung shares: checked CUDA calls (file:line in the message), the
// dtypes (device/dtype.cuh), the dispatch from runtime values (head dim) to
// template instances, workspaces, shared-memory and thread checks, warp reductions.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <algorithm>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <utility>

#include "device/cuda_check.hpp"
#include "device/dtype.cuh"
#include "device/smem_opt_in.hpp"
#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/kernels/launch/layouts.hpp"

namespace flashlab::kernels::detail {

using sim::i64;

// exp(x) = exp2(x · log2 e): the rungs' softmax runs on exp2 (MUFU ex2), the
// logsumexp back in natural log (· ln 2).
constexpr float kLog2e = 1.4426950408889634f;
constexpr float kLn2 = 0.6931471805599453f;

// Launch grids put the B·H heads on y (at most 65,535); larger products run
// in chunks of heads, each with its own base pointers.
constexpr i64 kMaxGridY = 65535;
template <class F>
void for_each_head_chunk(i64 heads, F&& f) {
  for (i64 first = 0; first < heads; first += kMaxGridY) f(first, static_cast<unsigned>(std::min(kMaxGridY, heads - first)));
}

inline cudaStream_t stream_of(const LaunchArgs& a) { return static_cast<cudaStream_t>(a.stream); }

// A rung that writes O and its gradients plainly and folds nothing refuses a
// launch asking otherwise (a running output, gradient accumulators), so that
// no caller gets numbers computed for another layout. Grouped K/V heads are
// every rung's: each reads them in place (kv_group_of).
inline void refuse_launch_extensions(const LaunchArgs& a, const char* rung) {
  const std::string who(rung);
  if (a.running.step != Fold::none) throw Unsupported(who + " does not fold into a running output");
  if (a.bwd.dq_accum != nullptr || a.bwd.dk_accum != nullptr || a.bwd.dv_accum != nullptr)
    throw Unsupported(who + " writes dQ, dK, dV; it does not add into accumulators");
}

// The launch's workspace, refused (naming what it is for) when it is missing or
// smaller than the `need` bytes the rung's layout asks for.
inline char* checked_workspace(const LaunchArgs& a, i64 need, const char* rung, const char* holds) {
  if (a.workspace == nullptr || static_cast<i64>(a.workspace_bytes) < need)
    throw Unsupported(std::string(rung) + ": needs a workspace of " + std::to_string(need) + " B for " + holds +
                      " (got " + std::to_string(a.workspace_bytes) + ")");
  return static_cast<char*>(a.workspace);
}

// S and P of the materialising rungs (naive, naive_cublas): (B, H, N_q, N_kv)
// each in the problem dtype, P after S at the next 256-byte boundary.
struct MaterializedSP {
  char* S;
  char* P;
};
inline MaterializedSP materialized_workspace(const LaunchArgs& a, const char* rung) {
  const sim::AttentionProblem& p = a.problem;
  char* S = checked_workspace(a, layout::materialized_workspace_bytes(p), rung, "S and P");
  if (p.causal && p.n_kv() != p.n_q()) throw Unsupported(std::string(rung) + ": causal attention needs seq_kv = seq_q");
  return {S, S + layout::align256(layout::score_matrix_bytes(p))};
}

// What a launch checks about a compiled kernel, asked once per kernel and
// device (host work between the timing events and the launch would be timed
// as GPU idle); keyed by (device, kernel) like the opt-in (smem_opt_in.hpp):
// two devices may differ.
struct KernelFacts {
  int max_threads = 0;          // cudaFuncAttributes::maxThreadsPerBlock
  int regs = 0;
};

template <class Kernel>
KernelFacts& facts_of(Kernel kernel) {
  static std::mutex m;
  static std::map<std::pair<int, const void*>, KernelFacts> facts;
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(m);
  KernelFacts& f = facts[{dev, reinterpret_cast<const void*>(kernel)}];
  if (f.max_threads == 0) {
    cudaFuncAttributes attr{};
    FLASHLAB_CUDA_CHECK(cudaFuncGetAttributes(&attr, kernel));
    f.max_threads = attr.maxThreadsPerBlock;
    f.regs = attr.numRegs;
  }
  return f;
}

// Before a launch with `bytes` of dynamic shared memory: refuse, naming the
// limit, when the device cannot give it, and opt in above the 48 KiB default.
template <class Kernel>
void prepare_smem(Kernel kernel, i64 bytes, i64 device_optin, const std::string& what) {
  if (device_optin <= 0) {  // a caller that did not fill LaunchArgs::device_smem_optin: ask the device
    int optin = 0;
    FLASHLAB_CUDA_CHECK(cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, current_device()));
    device_optin = optin;
  }
  if (bytes > device_optin)
    throw Unsupported(what + " needs " + std::to_string(bytes) + " B of shared memory per block; the device allows " +
                      std::to_string(device_optin) + " B (cudaDevAttrMaxSharedMemoryPerBlockOptin)");
  opt_in_dynamic_smem(reinterpret_cast<const void*>(kernel), static_cast<std::size_t>(bytes));
}

// Before a launch with `threads` per block: the compiled kernel's register use
// may allow fewer than 1024.
template <class Kernel>
void check_threads(Kernel kernel, i64 threads, const std::string& what) {
  const KernelFacts& f = facts_of(kernel);
  if (threads > f.max_threads)
    throw Unsupported(what + " needs " + std::to_string(threads) + " threads per block; this kernel's register use (" +
                      std::to_string(f.regs) + " per thread) allows " + std::to_string(f.max_threads) +
                      " (cudaFuncAttributes::maxThreadsPerBlock)");
}

// What a launch of `kernel` with `threads` per block and `smem` bytes of
// dynamic shared memory checks and sets first: the threads its registers
// allow, the shared memory (refused above the device's opt-in, opted in above
// 48 KiB), and the resident blocks per SM when the caller asks for them.
template <class Kernel>
void prepare_launch(Kernel kernel, const LaunchArgs& a, i64 threads, i64 smem, const std::string& what) {
  check_threads(kernel, threads, what);
  prepare_smem(kernel, smem, a.device_smem_optin, what);
  if (a.ctas_per_sm != nullptr)
    FLASHLAB_CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(a.ctas_per_sm, kernel, static_cast<int>(threads),
                                                                      static_cast<std::size_t>(smem)));
}

// ---- reductions ----------------------------------------------------------------

__device__ __forceinline__ float warp_max(float v) {
  for (int o = 16; o > 0; o >>= 1) v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
  return v;
}
__device__ __forceinline__ float warp_sum(float v) {
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
  return v;
}

// Programmatic dependent launch (compute capability 9.0): a kernel launched
// with cudaLaunchAttributeProgrammaticStreamSerialization may start once every
// block of the kernel before it in the stream has let it (or finished), and
// reads that kernel's results only after wait_for_previous_grid. Elsewhere,
// and for a kernel launched without the attribute, both do nothing.
__device__ __forceinline__ void let_next_grid_launch() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.launch_dependents;\n" ::: "memory");
#endif
}
__device__ __forceinline__ void wait_for_previous_grid() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;\n" ::: "memory");
#endif
}

// Launches kernel<<<grid, block, smem, stream>>>(args...), with the attribute
// above when `programmatic` (a launch error is a CudaError naming `name`).
template <class... Params, class... Args>
void launch_kernel(const char* name, void (*kernel)(Params...), dim3 grid, dim3 block, std::size_t smem,
                   cudaStream_t stream, bool programmatic, Args&&... args) {
  cudaLaunchConfig_t cfg{};
  cfg.gridDim = grid;
  cfg.blockDim = block;
  cfg.dynamicSmemBytes = smem;
  cfg.stream = stream;
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeProgrammaticStreamSerialization;
  attr.val.programmaticStreamSerializationAllowed = 1;
  cfg.attrs = &attr;
  cfg.numAttrs = programmatic ? 1 : 0;
  FLASHLAB_CUDA_CHECK(cudaLaunchKernelEx(&cfg, kernel, std::forward<Args>(args)...));
  check_cuda<>(cudaGetLastError(), (std::string("launch of ") + name).c_str(), __FILE__, __LINE__);
}

// Block-wide reductions (every thread of the block calls them; blockDim.x a
// multiple of 32). Each call needs its own scratch of 32 floats, so that one
// barrier suffices: no thread can still be reading a scratch another call writes.
__device__ __forceinline__ float block_max(float v, float* scratch) {
  v = warp_max(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = scratch[0];
  for (unsigned w = 1; w < (blockDim.x >> 5); ++w) r = fmaxf(r, scratch[w]);
  return r;
}
__device__ __forceinline__ float block_sum(float v, float* scratch) {
  v = warp_sum(v);
  if ((threadIdx.x & 31) == 0) scratch[threadIdx.x >> 5] = v;
  __syncthreads();
  float r = 0;
  for (unsigned w = 0; w < (blockDim.x >> 5); ++w) r += scratch[w];
  return r;
}

// Sixteen bytes as elements of T (8 of a 16-bit type, 4 of fp32): the vector
// the row kernels load and store.
template <class T>
struct Vec16 {
  static constexpr int n = 16 / sizeof(T);
};

}  // namespace flashlab::kernels::detail
