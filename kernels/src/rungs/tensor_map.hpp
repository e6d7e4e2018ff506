// Tensor maps of the Hopper rungs (fa3_hopper.cu, fa3_hopper_bwd.cu): a
// [B·H, N, d] tensor as a 3-D map (d, N, B·H) whose box is (128 bytes of
// columns — 64 16-bit or 32 fp32 elements —, rows, 1 head) with the 128-byte
// swizzle, so that rows past N read as zeros instead of the next head's first
// rows, and are not written by a tensor store or reduction. cuTensorMapEncodeTiled is
// reached through the runtime (cudaGetDriverEntryPointByVersion): the static
// cudart build needs no -lcuda at link time.
#pragma once

#include <cuda.h>  // CUtensorMap and its enums (the types only)
#include <cuda_runtime.h>

#include <string>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/launch/launch.hpp"

namespace flashlab::kernels::detail {

using EncodeTiledFn = CUresult (*)(CUtensorMap*, CUtensorMapDataType, cuuint32_t, void*, const cuuint64_t*,
                                   const cuuint64_t*, const cuuint32_t*, const cuuint32_t*, CUtensorMapInterleave,
                                   CUtensorMapSwizzle, CUtensorMapL2promotion, CUtensorMapFloatOOBfill);

// Looked up once per process (a thread-safe static: the ring launches from
// several threads); a failed lookup throws, naming the rung, and is tried again
// by the next call.
inline EncodeTiledFn encode_tiled(const char* rung) {
  static const EncodeTiledFn fn = [rung] {
    void* f = nullptr;
    cudaDriverEntryPointQueryResult q{};
    FLASHLAB_CUDA_CHECK(cudaGetDriverEntryPointByVersion("cuTensorMapEncodeTiled", &f, 12000, cudaEnableDefault, &q));
    if (q != cudaDriverEntryPointSuccess || f == nullptr)
      throw Unsupported(std::string(rung) +
                        " needs the driver's cuTensorMapEncodeTiled (CUDA 12.0+); the driver does not provide it");
    return reinterpret_cast<EncodeTiledFn>(f);
  }();
  return fn;
}

// The map of one [heads, n, d] tensor of `dtype` whose box holds `box_rows` rows
// of 128 bytes (the backward's dQ accumulator is the fp32 one).
inline CUtensorMap make_head_map(const void* ptr, sim::DType dtype, long long n, int d, long long heads, int box_rows,
                                 const char* rung) {
  CUtensorMap map;
  const cuuint64_t elem = static_cast<cuuint64_t>(sim::dtype_bytes(dtype));
  const cuuint64_t dims[3] = {static_cast<cuuint64_t>(d), static_cast<cuuint64_t>(n), static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[2] = {static_cast<cuuint64_t>(d) * elem, static_cast<cuuint64_t>(n) * d * elem};  // bytes
  const cuuint32_t box[3] = {static_cast<cuuint32_t>(128 / elem), static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[3] = {1, 1, 1};
  const CUtensorMapDataType type = dtype == sim::DType::fp32   ? CU_TENSOR_MAP_DATA_TYPE_FLOAT32
                                   : dtype == sim::DType::bf16 ? CU_TENSOR_MAP_DATA_TYPE_BFLOAT16
                                                               : CU_TENSOR_MAP_DATA_TYPE_FLOAT16;
  const CUresult r = encode_tiled(rung)(&map, type, 3, const_cast<void*>(ptr), dims, strides, box, elem_strides,
                                        CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_128B,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError(std::string(rung) + ": cuTensorMapEncodeTiled failed with CUresult " + std::to_string(r) +
                    " (N=" + std::to_string(n) + ", d=" + std::to_string(d) + ")");
  return map;
}

// The map of a [heads, rows] fp32 array (the backward's statistics L_i·log2 e,
// D_i) whose box is `box_rows` consecutive rows of one head, no swizzle.
inline CUtensorMap make_stat_map(const float* ptr, long long rows, long long heads, int box_rows, const char* rung) {
  CUtensorMap map;
  const cuuint64_t dims[2] = {static_cast<cuuint64_t>(rows), static_cast<cuuint64_t>(heads)};
  const cuuint64_t strides[1] = {static_cast<cuuint64_t>(rows) * 4};  // bytes
  const cuuint32_t box[2] = {static_cast<cuuint32_t>(box_rows), 1};
  const cuuint32_t elem_strides[2] = {1, 1};
  const CUresult r = encode_tiled(rung)(&map, CU_TENSOR_MAP_DATA_TYPE_FLOAT32, 2, const_cast<float*>(ptr), dims, strides,
                                        box, elem_strides, CU_TENSOR_MAP_INTERLEAVE_NONE, CU_TENSOR_MAP_SWIZZLE_NONE,
                                        CU_TENSOR_MAP_L2_PROMOTION_L2_256B, CU_TENSOR_MAP_FLOAT_OOB_FILL_NONE);
  if (r != CUDA_SUCCESS)
    throw CudaError(std::string(rung) + ": cuTensorMapEncodeTiled (statistics) failed with CUresult " +
                    std::to_string(r) + " (rows=" + std::to_string(rows) + ")");
  return map;
}

}  // namespace flashlab::kernels::detail
