// The cuBLAS handle of the current device (naive_cublas.cu owns one per
// device: made before any measured case by naive_cublas_prepare, destroyed by
// naive_cublas_release), shared by every rung that calls cuBLAS.
#pragma once

#include <cublas_v2.h>

namespace flashlab::kernels::detail {

cublasHandle_t shared_cublas_handle();

}  // namespace flashlab::kernels::detail
