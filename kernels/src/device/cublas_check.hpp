// Checked cuBLAS calls, as cuda_check.hpp checks the runtime's: file:line,
// the call and cuBLAS's own words, thrown as CudaError or the error type named.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "cuda_check.hpp"
#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels::detail {

// The cuBLAS type of a problem's dtype; `who` names the rung in the message.
inline cudaDataType_t cublas_type(sim::DType t, const char* who) {
  switch (t) {
    case sim::DType::fp32: return CUDA_R_32F;
    case sim::DType::fp16: return CUDA_R_16F;
    case sim::DType::bf16: return CUDA_R_16BF;
  }
  throw Unsupported(std::string(who) + ": unknown dtype");
}

// A size as cuBLAS's int argument, or Unsupported naming it.
inline int cublas_int(sim::i64 v, const char* who, const char* what) {
  if (v > 0x7fffffff)
    throw Unsupported(std::string(who) + ": " + what + " = " + std::to_string(v) + " exceeds cuBLAS's int arguments");
  return static_cast<int>(v);
}

template <class Error = CudaError>
inline void check_cublas(cublasStatus_t s, const char* call, const char* file, int line) {
  if (s == CUBLAS_STATUS_SUCCESS) return;
  throw Error(failure_message(call, file, line,
                              std::string(cublasGetStatusName(s)) + " (" + cublasGetStatusString(s) + ")"));
}

}  // namespace flashlab::kernels::detail

#define FLASHLAB_CUBLAS_CHECK(call) ::flashlab::kernels::detail::check_cublas<>((call), #call, __FILE__, __LINE__)
#define FLASHLAB_CUBLAS_CHECK_AS(Error, call) \
  ::flashlab::kernels::detail::check_cublas<Error>((call), #call, __FILE__, __LINE__)
