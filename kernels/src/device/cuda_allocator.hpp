// cudaMalloc and cudaFree on one device, whatever device the calling thread
// had current: device memory belongs to a device, and the ring's GPUs and a
// backend on another ordinal each keep their own. Out of memory is nullptr
// (the arena turns it into OutOfMemory with the bytes); other failures throw.
#pragma once

#include <cuda_runtime_api.h>

#include "cuda_check.hpp"
#include "flashlab/kernels/device/memory.hpp"

namespace flashlab::kernels {

class CudaAllocator final : public DeviceAllocator {
 public:
  explicit CudaAllocator(int device) : device_(device) {}
  void* allocate(i64 bytes) override {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(device_));
    void* p = nullptr;
    const cudaError_t e = cudaMalloc(&p, static_cast<std::size_t>(bytes));
    if (e == cudaErrorMemoryAllocation) {
      (void)cudaGetLastError();  // not sticky: clear it so the next case starts clean
      return nullptr;
    }
    FLASHLAB_CUDA_CHECK(e);
    return p;
  }
  void release(void* p) noexcept override {
    (void)cudaSetDevice(device_);
    (void)cudaFree(p);
  }
  int device() const { return device_; }

 private:
  int device_;
};

}  // namespace flashlab::kernels
