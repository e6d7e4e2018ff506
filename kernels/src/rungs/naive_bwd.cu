// Rung 2, backward — naive_bwd: the backward of standard attention (Algorithm 3
// of Dao et al. 2022) as eager PyTorch's autograd runs it, S, P, dP and dS in HBM:
//   dV = Pᵀ dO          cuBLAS
//   dP = dO Vᵀ          cuBLAS, written to HBM in the problem dtype
//   dS = P ∘ (dP − rowsum(P ∘ dP))   one kernel, a row per block, over dP in place
//   dQ = τ dS K         cuBLAS (τ in alpha)
//   dK = τ dSᵀ Q        cuBLAS (τ in alpha)
// P is what the naive_cublas forward left in its workspace (what eager PyTorch
// keeps for the backward); under a causal mask its masked entries are 0, so dS
// is 0 there without a mask of its own. τ is folded into the two GEMMs that
// follow dS, where it costs nothing (eager PyTorch scales dS in a pass of its
// own, and masks it in another).
//
// Changed from the forward rung (naive_cublas): the pass, not the method — four
// cuBLAS GEMMs (cublasGemmStridedBatchedEx, fp32 accumulation) and one fused
// elementwise pass over N_q × N_kv.
// Expected bottleneck: HBM traffic of P, dP and dS (Θ(N²) per head: P read
// three times, dP written and read, dS written and read twice), then the GEMMs.
// Measured (H200, fp16, 16k tokens, hidden 2048, 2026-11-25): 84–357 TFLOP/s by the backward
// convention (2.5× the forward's FLOPs), 1.47–2.72× eager PyTorch's autograd in the same run,
// 3.6–4.1 TB/s of DRAM traffic measured — see kernels/README.md.
#include <cmath>

#include "common.cuh"
#include "device/cublas_check.hpp"
#include "device/cublas_handle.hpp"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"

namespace flashlab::kernels {
namespace detail {
namespace {

constexpr int kVectorsPerThread = 4;   // 16-byte vectors of P and of dP each thread keeps
constexpr int kRowBwdMaxThreads = 512;

template <class T>
__device__ __forceinline__ float elem(const uint4& u, int e) {
  return to_float(reinterpret_cast<const T*>(&u)[e]);
}

// One block per row r of all heads: D_r = Σ_c P_rc dP_rc in fp32, then
// dS_rc = P_rc (dP_rc − D_r) written over dP_rc. The row stays in registers
// between the two (kVectorsPerThread 16-byte vectors of P and of dP per thread:
// rows up to 16,384 fp16 elements in one read). n_kv a multiple of the vector
// width, so every row starts 16-byte aligned.
template <class T>
__global__ void __launch_bounds__(kRowBwdMaxThreads)
    softmax_backward_rows(const T* __restrict__ P, T* __restrict__ dPS, i64 first_row, i64 n_kv) {
  constexpr int V = Vec16<T>::n;
  __shared__ float red[32];
  const i64 row = first_row + blockIdx.x;
  const T* p = P + row * n_kv;   // (n_kv) P_r
  T* ds = dPS + row * n_kv;      // (n_kv) dP_r, then dS_r
  uint4 pv[kVectorsPerThread], gv[kVectorsPerThread];
  float sum = 0.f;
#pragma unroll
  for (int c = 0; c < kVectorsPerThread; ++c) {
    const i64 col0 = (static_cast<i64>(c) * blockDim.x + threadIdx.x) * V;
    if (col0 < n_kv) {
      pv[c] = *reinterpret_cast<const uint4*>(p + col0);
      gv[c] = *reinterpret_cast<const uint4*>(ds + col0);
#pragma unroll
      for (int e = 0; e < V; ++e) sum += elem<T>(pv[c], e) * elem<T>(gv[c], e);
    }
  }
  const float D = block_sum(sum, red);
#pragma unroll
  for (int c = 0; c < kVectorsPerThread; ++c) {
    const i64 col0 = (static_cast<i64>(c) * blockDim.x + threadIdx.x) * V;
    if (col0 < n_kv) {
      uint4 out;
      T* o = reinterpret_cast<T*>(&out);
#pragma unroll
      for (int e = 0; e < V; ++e) o[e] = from_float<T>(elem<T>(pv[c], e) * (elem<T>(gv[c], e) - D));
      *reinterpret_cast<uint4*>(ds + col0) = out;
    }
  }
}

// Any n_kv: element by element, reading the row twice (D, then dS).
template <class T>
__global__ void __launch_bounds__(kRowBwdMaxThreads)
    softmax_backward_rows_any(const T* __restrict__ P, T* __restrict__ dPS, i64 first_row, i64 n_kv) {
  __shared__ float red[32];
  const i64 row = first_row + blockIdx.x;
  const T* p = P + row * n_kv;
  T* ds = dPS + row * n_kv;
  float sum = 0.f;
  for (i64 c = threadIdx.x; c < n_kv; c += blockDim.x) sum += to_float(p[c]) * to_float(ds[c]);
  const float D = block_sum(sum, red);
  for (i64 c = threadIdx.x; c < n_kv; c += blockDim.x) ds[c] = from_float<T>(to_float(p[c]) * (to_float(ds[c]) - D));
}

void softmax_backward(sim::DType dtype, const void* P, void* dPS, i64 rows, i64 n_kv, cudaStream_t stream) {
  constexpr i64 kMaxGridX = 0x7fffffff;
  dispatch_dtype(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    constexpr int V = Vec16<T>::n;
    const T* p = static_cast<const T*>(P);
    T* ds = static_cast<T*>(dPS);
    const i64 vectors = (n_kv + V - 1) / V;
    const bool in_registers = n_kv % V == 0 && vectors <= static_cast<i64>(kVectorsPerThread) * kRowBwdMaxThreads;
    unsigned threads = 64;
    while (in_registers && threads < kRowBwdMaxThreads && static_cast<i64>(threads) * kVectorsPerThread < vectors)
      threads *= 2;
    if (!in_registers) threads = 256;
    for (i64 first = 0; first < rows; first += kMaxGridX) {
      const auto blocks = static_cast<unsigned>(std::min(kMaxGridX, rows - first));
      if (in_registers) {
        softmax_backward_rows<T><<<blocks, threads, 0, stream>>>(p, ds, first, n_kv);
        FLASHLAB_LAUNCH_CHECK("softmax_backward_rows");
      } else {
        softmax_backward_rows_any<T><<<blocks, threads, 0, stream>>>(p, ds, first, n_kv);
        FLASHLAB_LAUNCH_CHECK("softmax_backward_rows_any");
      }
    }
  });
}

cudaDataType_t bwd_gemm_type(sim::DType t) { return detail::cublas_type(t, "naive_bwd"); }

int bwd_gemm_dim(i64 v, const char* what) { return detail::cublas_int(v, "naive_bwd", what); }

}  // namespace
}  // namespace detail

void naive_backward(const LaunchArgs& a) {
  detail::refuse_launch_extensions(a, "naive_bwd");
  using namespace detail;
  const sim::AttentionProblem& p = a.problem;
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.bwd.d_o == nullptr || a.bwd.dq == nullptr ||
      a.bwd.dk == nullptr || a.bwd.dv == nullptr)
    throw Unsupported("naive_bwd: Q, K, V, dO, dQ, dK and dV must be device pointers (got null)");
  if (p.causal && p.n_kv() != p.n_q()) throw Unsupported("naive_bwd: causal attention needs seq_kv = seq_q");
  // P: the naive_cublas forward's workspace, S then P (layout::materialized_workspace_bytes).
  const i64 forward_need = layout::materialized_workspace_bytes(p);
  if (a.bwd.forward_workspace == nullptr || static_cast<i64>(a.bwd.forward_workspace_bytes) < forward_need)
    throw Unsupported("naive_bwd: needs the naive_cublas forward's workspace (S and P, " + std::to_string(forward_need) +
                      " B; got " + std::to_string(a.bwd.forward_workspace_bytes) + ")");
  const char* P = static_cast<const char*>(a.bwd.forward_workspace) + layout::align256(layout::score_matrix_bytes(p));
  char* dPS = checked_workspace(a, layout::naive_bwd_workspace_bytes(p), "naive_bwd", "dP and dS");

  // Grouped K/V heads: the query heads of a K/V head are adjacent, so each
  // GEMM's batch is a K/V head and its N_q the G·N_q query rows of the group;
  // dV = Pᵀ dO and dK = τ dSᵀ Q then sum over the group's heads in the GEMM.
  const i64 G = kv_group_of(a, "naive_bwd");
  const int nq = bwd_gemm_dim(G * p.n_q(), "H/H_kv·N_q"), nkv = bwd_gemm_dim(p.n_kv(), "N_kv");
  const int d = bwd_gemm_dim(p.head_dim, "d");
  const int batch = bwd_gemm_dim(p.head_count() / G, "B·H_kv");
  const cudaDataType_t type = bwd_gemm_type(p.dtype);
  cublasHandle_t h = shared_cublas_handle();
  FLASHLAB_CUBLAS_CHECK(cublasSetStream(h, stream_of(a)));
  const float tau = a.softmax_scale, one = 1.f, zero = 0.f;
  const long long nq_d = static_cast<long long>(nq) * d, nkv_d = static_cast<long long>(nkv) * d;
  const long long nq_nkv = static_cast<long long>(nq) * nkv;
  // Row-major X (r × c) is cuBLAS's column-major Xᵀ (c × r) with ld = c; each
  // product below is written as the column-major one it is.

  // dV (N_kv, d) = Pᵀ dO: column-major dVᵀ (d × N_kv) = dOᵀ (d × N_q) · P (N_q × N_kv),
  // P read as the column-major N_kv × N_q it is stored as, transposed.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_T, d, nkv, nq, &one, a.bwd.d_o, type, d,
                                                   nq_d, P, type, nkv, nq_nkv, &zero, a.bwd.dv, type, d, nkv_d, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // dP (N_q, N_kv) = dO Vᵀ: column-major dPᵀ (N_kv × N_q) = V (N_kv × d) · dOᵀ (d × N_q),
  // as the forward's S = Q Kᵀ.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_T, CUBLAS_OP_N, nkv, nq, d, &one, a.v, type, d, nkv_d,
                                                   a.bwd.d_o, type, d, nq_d, &zero, dPS, type, nkv, nq_nkv, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // dS = P ∘ (dP − rowsum(P ∘ dP)), over dP.
  softmax_backward(p.dtype, P, dPS, p.head_count() * p.n_q(), p.n_kv(), stream_of(a));
  // dQ (N_q, d) = τ dS K: column-major dQᵀ (d × N_q) = Kᵀ (d × N_kv) · dSᵀ (N_kv × N_q), as the forward's O = P V.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_N, d, nq, nkv, &tau, a.k, type, d, nkv_d,
                                                   dPS, type, nkv, nq_nkv, &zero, a.bwd.dq, type, d, nq_d, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
  // dK (N_kv, d) = τ dSᵀ Q: as dV, with dS for P and Q for dO.
  FLASHLAB_CUBLAS_CHECK(cublasGemmStridedBatchedEx(h, CUBLAS_OP_N, CUBLAS_OP_T, d, nkv, nq, &tau, a.q, type, d, nq_d,
                                                   dPS, type, nkv, nq_nkv, &zero, a.bwd.dk, type, d, nkv_d, batch,
                                                   CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

}  // namespace flashlab::kernels
