#include "cublas_gemm.hpp"

#include "device/cublas_check.hpp"
#include "check.hpp"

#define CEILINGS_CUBLAS_CHECK(call) FLASHLAB_CUBLAS_CHECK_AS(::flashlab::ceilings::MeasureError, call)

namespace flashlab::ceilings::detail {

namespace {

cublasHandle_t as_handle(void* h) { return static_cast<cublasHandle_t>(h); }
cudaDataType_t data_type(Element e) { return e == Element::fp16 ? CUDA_R_16F : CUDA_R_16BF; }

}  // namespace

CublasGemm::CublasGemm(cudaStream_t s, int n) : stream_(s), n_(n) {
  const size_t bytes = static_cast<size_t>(n) * n * 2;
  try {
    CEILINGS_CHECK(cudaMalloc(&a_, bytes));
    CEILINGS_CHECK(cudaMalloc(&b_, bytes));
    CEILINGS_CHECK(cudaMalloc(&c_, bytes));
    cublasHandle_t h = nullptr;
    CEILINGS_CUBLAS_CHECK(cublasCreate(&h));
    handle_ = h;
    CEILINGS_CUBLAS_CHECK(cublasSetStream(h, stream_));
    // Default math: tensor cores for 16-bit inputs; no TF32 down-conversion is involved.
    CEILINGS_CUBLAS_CHECK(cublasSetMathMode(h, CUBLAS_DEFAULT_MATH));
  } catch (...) {
    release();
    throw;
  }
}

CublasGemm::~CublasGemm() { release(); }

void CublasGemm::release() {
  if (handle_) (void)cublasDestroy(as_handle(handle_));
  handle_ = nullptr;
  for (void** p : {&a_, &b_, &c_}) {
    if (*p) (void)cudaFree(*p);
    *p = nullptr;
  }
}

void CublasGemm::prepare(Element e, std::uint32_t seed) {
  element_ = e;
  const i64 count = static_cast<i64>(n_) * n_;
  fill_values(a_, count, e, seed, stream_);
  fill_values(b_, count, e, seed ^ 0x9e3779b9u, stream_);
  fill_values(c_, count, e, seed ^ 0x7f4a7c15u, stream_);  // beta = 0, but no zeros anywhere
}

void CublasGemm::run() {
  const float alpha = 1.0f, beta = 0.0f;
  const cudaDataType_t t = data_type(element_);
  CEILINGS_CUBLAS_CHECK(cublasGemmEx(as_handle(handle_), CUBLAS_OP_N, CUBLAS_OP_N, n_, n_, n_, &alpha, a_, t, n_, b_, t,
                                     n_, &beta, c_, t, n_, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

double CublasGemm::flops() const { return 2.0 * n_ * static_cast<double>(n_) * n_; }

std::string CublasGemm::method() const {
  const std::string n = std::to_string(n_);
  return "cublasGemmEx " + n + "x" + n + "x" + n + ", A, B, C " + (element_ == Element::fp16 ? "fp16" : "bf16") +
         ", CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT, beta = 0";
}

}  // namespace flashlab::ceilings::detail
