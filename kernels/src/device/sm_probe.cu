// One CTA per SM, each filling its SM's shared memory, each holding the SM
// for a while: the CTAs that start late are those that waited for an SM
// another kernel held (sm_probe.hpp).
#include "sm_probe.hpp"

#include "cuda_check.hpp"

namespace flashlab::kernels::detail {

namespace {

__device__ __forceinline__ long long global_ns() {
  long long t;
  asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
  return t;
}

__global__ void sm_probe_kernel(long long hold_ns, unsigned* smid, long long* start_ns) {
  extern __shared__ unsigned char held[];
  if (threadIdx.x != 0) return;
  const long long t0 = global_ns();
  unsigned id;
  asm volatile("mov.u32 %0, %%smid;" : "=r"(id));
  held[0] = static_cast<unsigned char>(id);  // the shared memory is asked for, and touched
  smid[blockIdx.x] = id;
  start_ns[blockIdx.x] = t0;
  while (global_ns() - t0 < hold_ns) {
  }
}

}  // namespace

void launch_sm_probe(int ctas, int smem_bytes, long long hold_ns, unsigned* smid, long long* start_ns, void* stream) {
  FLASHLAB_CUDA_CHECK(cudaFuncSetAttribute(sm_probe_kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, smem_bytes));
  sm_probe_kernel<<<ctas, 32, static_cast<size_t>(smem_bytes), static_cast<cudaStream_t>(stream)>>>(hold_ns, smid,
                                                                                                  start_ns);
  FLASHLAB_CUDA_CHECK(cudaGetLastError());
}

}  // namespace flashlab::kernels::detail
