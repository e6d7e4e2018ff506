// Rung 2 — naive_cublas: the naive rung with cuBLAS doing both GEMMs
// (cublasGemmStridedBatchedEx, fp32 accumulation, outputs in the problem dtype)
// and the same fused softmax. This is what eager PyTorch launches
// (matmul, scale, softmax, matmul; PyTorch scales in a separate kernel, we in
// the GEMM's alpha), and the baseline of every lab report.
//
// Changed from naive: only the GEMMs, so the gap between the two rungs is the
// gap between a lecture GEMM and a tuned one; S and P still go through HBM.
//
// Expected bottleneck: HBM traffic of S and P (the GEMMs run near tensor-core
// peak; the softmax and the S/P reads and writes do not shrink).
//
// Measured (H100, fp16, 16k tokens, hidden 2048): 32–163 TFLOP/s, 1.16–3.49× eager PyTorch (2026-11-22) — see
// kernels/README.md.
#include "common.cuh"
#include "device/cublas_check.hpp"
#include "device/cublas_handle.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"
#include "softmax.cuh"

namespace flashlab::kernels {
namespace detail {
namespace {

// cuBLAS wants a workspace; 32 MiB is what NVIDIA recommends for Hopper.
constexpr std::size_t kCublasWorkspaceBytes = 32u << 20;

// One handle per device (a cuBLAS handle belongs to the device that was
// current when it was made), made before any measured case
// (naive_cublas_prepare, on the backend's device) and destroyed by the backend
// that made it (naive_cublas_release), so that compute-sanitizer's leak check
// sees every byte returned.
struct Cublas {
  cublasHandle_t handle = nullptr;
  void* workspace = nullptr;
};

std::mutex& cublas_mutex() {
  static std::mutex m;
  return m;
}
std::map<int, Cublas>& cublas_state() {
  static std::map<int, Cublas> by_device;
  return by_device;
}

Cublas& cublas() {
  const int dev = current_device();
  std::lock_guard<std::mutex> lock(cublas_mutex());
  Cublas& c = cublas_state()[dev];
  if (c.handle == nullptr) {
    FLASHLAB_CUBLAS_CHECK(cublasCreate(&c.handle));
    FLASHLAB_CUDA_CHECK(cudaMalloc(&c.workspace, kCublasWorkspaceBytes));
    FLASHLAB_CUBLAS_CHECK(cublasSetWorkspace(c.handle, c.workspace, kCublasWorkspaceBytes));
  }
  return c;
}

cudaDataType_t fwd_gemm_type(sim::DType t) { return detail::cublas_type(t, "naive_cublas"); }

int fwd_gemm_dim(i64 v, const char* what) { return detail::cublas_int(v, "naive_cublas", what); }

}  // namespace

cublasHandle_t shared_cublas_handle() { return cublas().handle; }

}  // namespace detail

void naive_cublas_prepare() { detail::cublas(); }

void naive_cublas_release() noexcept {
  try {
    const int dev = detail::current_device();
    std::lock_guard<std::mutex> lock(detail::cublas_mutex());
    auto& all = detail::cublas_state();
    auto it = all.find(dev);
    if (it == all.end()) return;
    if (it->second.handle != nullptr) (void)cublasDestroy(it->second.handle);
    if (it->second.workspace != nullptr) (void)cudaFree(it->second.workspace);
    all.erase(it);
  } catch (...) {
    // No device to ask: nothing was made on it.
  }
}

void naive_cublas_forward(const LaunchArgs& a) {
  detail::refuse_launch_extensions(a, "naive_cublas");
  using namespace detail;
  const sim::AttentionProblem& p = a.problem;
  const MaterializedSP sp = materialized_workspace(a, "naive_cublas");  // S, P: (B, H, N_q, N_kv) in the dtype
  // The query heads of a K/V head are adjacent ([B, H_kv, H/H_kv, N_q, d]): each
  // GEMM's batch is a K/V head, its N_q the G·N_q query rows of the group.
  const i64 G = kv_group_of(a, "naive_cublas");
  const int nq = fwd_gemm_dim(G * p.n_q(), "H/H_kv·N_q"), nkv = fwd_gemm_dim(p.n_kv(), "N_kv");
  const int d = fwd_gemm_dim(p.head_dim, "d");
  const int batch = fwd_gemm_dim(p.head_count() / G, "B·H_kv");
  const cudaDataType_t type = fwd_gemm_type(p.dtype);
  char* const S = sp.S;
  char* const P = sp.P;
  cublasHandle_t h = cublas().handle;
  FLASHLAB_CUBLAS_CHECK(cublasSetStream(h, stream_of(a)));
  const float tau = a.softmax_scale, one = 1.f, zero = 0.f;
  const long long nq_d = static_cast<long long>(nq) * d, nkv_d = static_cast<long long>(nkv) * d;
  const long long nq_nkv = static_cast<long long>(nq) * nkv;

  // S = τ Q Kᵀ, row-major (N_q, N_kv). cuBLAS is column-major: it computes
  // Sᵀ (N_kv × N_q) = τ K Qᵀ, reading row-major K (N_kv, d) as the column-major
  // d × N_kv matrix Kᵀ and transposing it, and Q as the column-major d × N_q.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, nkv, nq, d, &tau, a.k, type, d, nkv_d,
                                                   a.q, type, d, nq_d, &zero, S, type, nkv, nq_nkv, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // P = softmax(S), causal mask fused.
  row_softmax(p.dtype, S, P, p.head_count() * p.n_q(), p.n_q(), p.n_kv(), 1.f, p.causal, stream_of(a));
  // O = P V, row-major (N_q, d): column-major Oᵀ (d × N_q) = Vᵀ Pᵀ, with V read
  // as the column-major d × N_kv and P as the column-major N_kv × N_q.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, nq, nkv, &one, a.v, type, d, nkv_d, P,
                                                   type, nkv, nq_nkv, &zero, a.o, type, d, nq_d, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace flashlab::kernels
