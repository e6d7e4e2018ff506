// Checked cuBLAS calls, as cuda_check.hpp checks the runtime's: file:line,
// the call and cuBLAS's own words, thrown as CudaError or the error type named.
#pragma once

#include <cublas_v2.h>

#include <string>

#include "cuda_check.hpp"

namespace flashlab::kernels::detail {

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
