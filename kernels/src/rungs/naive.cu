// Rung 1 — naive: standard attention (Algorithm 0 of Dao et al. 2022), three
// kernels with S and P materialised in HBM in the problem dtype:
//   S = τ Q Kᵀ   our tiled shared-memory GEMM, τ applied in its epilogue
//   P = softmax(S)   softmax.cu, the causal mask fused
//   O = P V      the same GEMM
//
// Nothing changed yet: this is the baseline the ladder improves on. The GEMM is
// ours so the lecture can read it: a block computes a BM × BN tile of C from
// BK-deep slices of A and B staged in shared memory; for fp16/bf16 the warps
// multiply 16×16×16 fragments on tensor cores (WMMA) with fp32 accumulation,
// for fp32 each thread accumulates a 4×4 micro-tile on CUDA cores (exact fp32,
// so the fp32 tests can hold it to 1e-5). τ is applied in the S epilogue rather
// than by the softmax so that fp16 S cannot overflow for large inputs (the
// ×30 test), which also makes the HBM traffic that of the simulator's
// `standard` algorithm exactly.
//
// Expected bottleneck: HBM traffic of S and P — written once, read once each,
// Θ(N²) per head against Θ(Nd) for Q, K, V, O — plus a GEMM that is simpler
// than cuBLAS (no cp.async pipeline, no swizzle).
//
// Measured (H100, fp16, 16k tokens, hidden 2048): 22–72 TFLOP/s, 0.59–2.18× eager PyTorch (2026-11-22) — see
// kernels/README.md.
#include <mma.h>

#include <type_traits>

#include "common.cuh"
#include "flashlab/kernels/launch/layouts.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"
#include "softmax.cuh"

namespace flashlab::kernels {
namespace detail {
namespace {

// C[M, N] = alpha · A[M, K] · op(B) for each head z, all row-major:
// kBT: B is [N, K] (C = A Bᵀ, as S = Q Kᵀ); otherwise B is [K, N] (O = P V).
struct GemmArgs {
  i64 M, N, K;
  i64 lda, ldb, ldc;
  i64 stride_a, stride_b, stride_c;  // elements between heads
  float alpha;
  bool vec_a, vec_b, vec_c;          // 16-byte vector access is aligned for the operand
};

// ---- fp16 / bf16: tensor cores through WMMA ------------------------------------

constexpr int kWmmaThreads = 256;  // 8 warps
constexpr int kBK = 32;            // depth of a K slice
constexpr int kPad = 8;            // elements of padding per smem row: rows shift banks, stay 32-byte aligned

// A [rows, cols] tile of a row-major matrix into shared memory (ld_s), zeros
// outside [0, n_rows) × [0, n_cols). 8 elements (16 bytes) per step.
template <class T, int kRows, int kCols>
__device__ __forceinline__ void stage_tile(T* s, int ld_s, const T* g, i64 ld_g, i64 row0, i64 col0, i64 n_rows,
                                           i64 n_cols, bool vec) {
  constexpr int kVecs = kRows * kCols / 8;
  for (int v = threadIdx.x; v < kVecs; v += blockDim.x) {
    const int r = v / (kCols / 8), c = (v % (kCols / 8)) * 8;
    const i64 gr = row0 + r, gc = col0 + c;
    T* dst = s + r * ld_s + c;
    if (vec && gr < n_rows && gc + 8 <= n_cols) {
      *reinterpret_cast<uint4*>(dst) = *reinterpret_cast<const uint4*>(g + gr * ld_g + gc);
    } else {
#pragma unroll
      for (int e = 0; e < 8; ++e) dst[e] = (gr < n_rows && gc + e < n_cols) ? g[gr * ld_g + gc + e] : from_float<T>(0.f);
    }
  }
}

// Block tile BM × BN; 8 warps as WARPS_M × WARPS_N, each a (BM/WARPS_M) × 32
// warp tile of 16×16 fragments.
template <class T, bool kBT, int BM, int BN>
__global__ void __launch_bounds__(kWmmaThreads) gemm_wmma_kernel(const T* __restrict__ A, const T* __restrict__ B,
                                                                 T* __restrict__ C, GemmArgs g, i64 head0) {
  using namespace nvcuda;
  constexpr int WARPS_N = BN / 32, WARPS_M = 8 / WARPS_N;
  constexpr int WM = BM / WARPS_M, WN = 32;
  constexpr int FM = WM / 16, FN = WN / 16;
  constexpr int LDA = kBK + kPad;                 // As: (BM, BK)
  constexpr int LDB = kBT ? kBK + kPad : BN + kPad;  // Bs: (BN, BK) when kBT, else (BK, BN)
  __shared__ __align__(128) T As[BM * LDA];
  __shared__ __align__(128) T Bs[(kBT ? BN : kBK) * LDB];
  __shared__ __align__(128) float scratch[8][16 * 16];  // per-warp epilogue staging

  const i64 head = head0 + blockIdx.z;
  A += head * g.stride_a;
  B += head * g.stride_b;
  C += head * g.stride_c;
  const i64 m0 = static_cast<i64>(blockIdx.y) * BM, n0 = static_cast<i64>(blockIdx.x) * BN;
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;

  wmma::fragment<wmma::accumulator, 16, 16, 16, float> acc[FM][FN];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) wmma::fill_fragment(acc[i][j], 0.f);

  using BLayout = std::conditional_t<kBT, wmma::col_major, wmma::row_major>;
  for (i64 k0 = 0; k0 < g.K; k0 += kBK) {
    stage_tile<T, BM, kBK>(As, LDA, A, g.lda, m0, k0, g.M, g.K, g.vec_a);
    if constexpr (kBT) stage_tile<T, BN, kBK>(Bs, LDB, B, g.ldb, n0, k0, g.N, g.K, g.vec_b);
    else stage_tile<T, kBK, BN>(Bs, LDB, B, g.ldb, k0, n0, g.K, g.N, g.vec_b);
    __syncthreads();
#pragma unroll
    for (int kk = 0; kk < kBK; kk += 16) {
      wmma::fragment<wmma::matrix_a, 16, 16, 16, T, wmma::row_major> a[FM];
      wmma::fragment<wmma::matrix_b, 16, 16, 16, T, BLayout> b[FN];
#pragma unroll
      for (int i = 0; i < FM; ++i) wmma::load_matrix_sync(a[i], As + (wm * WM + 16 * i) * LDA + kk, LDA);
#pragma unroll
      for (int j = 0; j < FN; ++j) {
        // kBT: element (k, n) of the K×N operand is Bs[n][k]: column-major with ld LDB.
        const T* src = kBT ? Bs + (wn * WN + 16 * j) * LDB + kk : Bs + kk * LDB + wn * WN + 16 * j;
        wmma::load_matrix_sync(b[j], src, LDB);
      }
#pragma unroll
      for (int i = 0; i < FM; ++i)
#pragma unroll
        for (int j = 0; j < FN; ++j) wmma::mma_sync(acc[i][j], a[i], b[j], acc[i][j]);
    }
    __syncthreads();
  }

  // Epilogue: each fragment through the warp's scratch, then alpha, the dtype
  // and bounds on the way to HBM, 8 elements (16 bytes) per lane.
  float* sc = scratch[warp];
#pragma unroll
  for (int i = 0; i < FM; ++i)
#pragma unroll
    for (int j = 0; j < FN; ++j) {
      wmma::store_matrix_sync(sc, acc[i][j], 16, wmma::mem_row_major);
      __syncwarp();
      const int r = lane / 2, c = (lane % 2) * 8;
      const i64 gr = m0 + wm * WM + 16 * i + r, gc = n0 + wn * WN + 16 * j + c;
      if (gr < g.M) {
        T* dst = C + gr * g.ldc + gc;
        if (g.vec_c && gc + 8 <= g.N) {
          uint4 u;
          T* e = reinterpret_cast<T*>(&u);
#pragma unroll
          for (int x = 0; x < 8; ++x) e[x] = from_float<T>(g.alpha * sc[r * 16 + c + x]);
          *reinterpret_cast<uint4*>(dst) = u;
        } else {
#pragma unroll
          for (int x = 0; x < 8; ++x)
            if (gc + x < g.N) dst[x] = from_float<T>(g.alpha * sc[r * 16 + c + x]);
        }
      }
      __syncwarp();
    }
}

// ---- fp32: CUDA cores ------------------------------------------------------------

constexpr int kSimtBM = 64, kSimtBN = 64, kSimtBK = 16, kSimtThreads = 256;

// 16×16 threads, each a 4×4 micro-tile of C. A and B slices are stored k-major
// so a thread reads its 4 rows / 4 columns as one float4.
template <bool kBT>
__global__ void __launch_bounds__(kSimtThreads) gemm_simt_kernel(const float* __restrict__ A,
                                                                 const float* __restrict__ B, float* __restrict__ C,
                                                                 GemmArgs g, i64 head0) {
  constexpr int LD = kSimtBM + 4;  // padded: the transposed stores spread over banks
  __shared__ __align__(16) float As[kSimtBK][LD];  // (BK, BM): A slice, transposed
  __shared__ __align__(16) float Bs[kSimtBK][LD];  // (BK, BN): B slice
  const i64 head = head0 + blockIdx.z;
  A += head * g.stride_a;
  B += head * g.stride_b;
  C += head * g.stride_c;
  const i64 m0 = static_cast<i64>(blockIdx.y) * kSimtBM, n0 = static_cast<i64>(blockIdx.x) * kSimtBN;
  const int tx = threadIdx.x % 16, ty = threadIdx.x / 16;
  float acc[4][4] = {};
  for (i64 k0 = 0; k0 < g.K; k0 += kSimtBK) {
    for (int e = threadIdx.x; e < kSimtBM * kSimtBK; e += kSimtThreads) {
      const int r = e / kSimtBK, k = e % kSimtBK;  // consecutive threads: consecutive k of a row
      const i64 gr = m0 + r, gk = k0 + k;
      As[k][r] = (gr < g.M && gk < g.K) ? A[gr * g.lda + gk] : 0.f;
      if (kBT) {
        const i64 gn = n0 + r;
        Bs[k][r] = (gn < g.N && gk < g.K) ? B[gn * g.ldb + gk] : 0.f;
      } else {
        const int kb = e / kSimtBN, n = e % kSimtBN;  // consecutive threads: consecutive n of a row
        const i64 gkb = k0 + kb, gn = n0 + n;
        Bs[kb][n] = (gkb < g.K && gn < g.N) ? B[gkb * g.ldb + gn] : 0.f;
      }
    }
    __syncthreads();
#pragma unroll
    for (int k = 0; k < kSimtBK; ++k) {
      const float4 a = *reinterpret_cast<const float4*>(&As[k][ty * 4]);
      const float4 b = *reinterpret_cast<const float4*>(&Bs[k][tx * 4]);
      const float av[4] = {a.x, a.y, a.z, a.w}, bv[4] = {b.x, b.y, b.z, b.w};
#pragma unroll
      for (int i = 0; i < 4; ++i)
#pragma unroll
        for (int j = 0; j < 4; ++j) acc[i][j] = fmaf(av[i], bv[j], acc[i][j]);
    }
    __syncthreads();
  }
#pragma unroll
  for (int i = 0; i < 4; ++i) {
    const i64 gr = m0 + ty * 4 + i;
    if (gr >= g.M) continue;
#pragma unroll
    for (int j = 0; j < 4; ++j) {
      const i64 gc = n0 + tx * 4 + j;
      if (gc < g.N) C[gr * g.ldc + gc] = g.alpha * acc[i][j];
    }
  }
}

bool aligned16(const void* p, i64 ld, i64 stride, i64 element_bytes) {
  return reinterpret_cast<std::uintptr_t>(p) % 16 == 0 && (ld * element_bytes) % 16 == 0 &&
         (stride * element_bytes) % 16 == 0;
}

// C = alpha · A op(B) for `heads` heads; BN = 64 when N ≤ 64 (O = P V with a
// small d wastes no tensor-core work on a 128-wide tile).
template <class T, bool kBT>
void gemm(const T* A, const T* B, T* C, GemmArgs g, i64 heads, cudaStream_t stream) {
  if (g.M == 0 || g.N == 0) return;
  g.vec_a = aligned16(A, g.lda, g.stride_a, sizeof(T));
  g.vec_b = aligned16(B, g.ldb, g.stride_b, sizeof(T));
  g.vec_c = aligned16(C, g.ldc, g.stride_c, sizeof(T));
  if constexpr (std::is_same_v<T, float>) {
    const i64 gy = (g.M + kSimtBM - 1) / kSimtBM, gx = (g.N + kSimtBN - 1) / kSimtBN;
    if (gy > kMaxGridY) throw Unsupported("naive: " + std::to_string(g.M) + " rows exceed the GEMM grid's y limit");
    for_each_head_chunk(heads, [&](i64 head0, unsigned n) {
      gemm_simt_kernel<kBT><<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), n), kSimtThreads, 0, stream>>>(
          A, B, C, g, head0);
      FLASHLAB_LAUNCH_CHECK("gemm_simt_kernel");
    });
  } else {
    constexpr int BM = 128;
    auto launch = [&](auto bn) {
      constexpr int BN = decltype(bn)::value;
      const i64 gy = (g.M + BM - 1) / BM, gx = (g.N + BN - 1) / BN;
      if (gy > kMaxGridY) throw Unsupported("naive: " + std::to_string(g.M) + " rows exceed the GEMM grid's y limit");
      for_each_head_chunk(heads, [&](i64 head0, unsigned n) {
        gemm_wmma_kernel<T, kBT, BM, BN>
            <<<dim3(static_cast<unsigned>(gx), static_cast<unsigned>(gy), n), kWmmaThreads, 0, stream>>>(A, B, C, g,
                                                                                                       head0);
        FLASHLAB_LAUNCH_CHECK("gemm_wmma_kernel");
      });
    };
    if (g.N <= 64) launch(std::integral_constant<int, 64>{});
    else launch(std::integral_constant<int, 128>{});
  }
}

}  // namespace
}  // namespace detail

void naive_forward(const LaunchArgs& a) {
  detail::refuse_launch_extensions(a, "naive");
  using namespace detail;
  const sim::AttentionProblem& p = a.problem;
  const MaterializedSP sp = materialized_workspace(a, "naive");  // S, P: (B, H, N_q, N_kv) in the dtype
  const i64 nq = p.n_q(), nkv = p.n_kv(), d = p.head_dim, heads = p.head_count();
  // The query heads of a K/V head are adjacent ([B, H_kv, H/H_kv, N_q, d]): each
  // GEMM runs once per K/V head over the G·N_q query rows of its group.
  const i64 G = kv_group_of(a, "naive"), rows = G * nq, kv_heads = heads / G;
  char* const S = sp.S;
  char* const P = sp.P;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // S = τ Q Kᵀ
    GemmArgs qk{rows, nkv, d, d, d, nkv, rows * d, nkv * d, rows * nkv, a.softmax_scale, false, false, false};
    gemm<T, true>(static_cast<const T*>(a.q), static_cast<const T*>(a.k), reinterpret_cast<T*>(S), qk, kv_heads,
                  stream_of(a));
    // P = softmax(S), causal mask fused (τ already applied)
    row_softmax(p.dtype, S, P, heads * nq, nq, nkv, 1.f, p.causal, stream_of(a));
    // O = P V
    GemmArgs pv{rows, d, nkv, nkv, d, d, rows * nkv, nkv * d, rows * d, 1.f, false, false, false};
    gemm<T, false>(reinterpret_cast<const T*>(P), static_cast<const T*>(a.v), static_cast<T*>(a.o), pv, kv_heads,
                   stream_of(a));
  });
}

}  // namespace flashlab::kernels
