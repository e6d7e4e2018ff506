// The vendor yardstick for the tensor cores: one cuBLAS GEMM, n × n × n,
// 16-bit inputs and output, fp32 accumulate (cublasGemmEx, CUBLAS_COMPUTE_32F).
// On Hopper cuBLAS picks wgmma kernels, which mma.sync cannot match.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "micro_kernels.hpp"

namespace flashlab::ceilings::detail {

class CublasGemm {
 public:
  CublasGemm(cudaStream_t s, int n);  // allocates A, B, C (3 n² 16-bit values)
  ~CublasGemm();
  CublasGemm(const CublasGemm&) = delete;
  CublasGemm& operator=(const CublasGemm&) = delete;

  // Refills A and B with values in ±[0.25, 1) of this type (never zero).
  void prepare(Element e, std::uint32_t seed);
  void run();  // one GEMM on the stream, of the type last prepared
  double flops() const;  // 2 n³
  std::string method() const;

 private:
  void release();
  cudaStream_t stream_;
  int n_;
  Element element_ = Element::fp16;
  void* handle_ = nullptr;  // cublasHandle_t
  void *a_ = nullptr, *b_ = nullptr, *c_ = nullptr;
};

}  // namespace flashlab::ceilings::detail
