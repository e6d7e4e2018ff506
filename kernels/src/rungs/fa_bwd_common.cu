// The pre-pass and the convert kernel of the FlashAttention backward rungs
// (fa_bwd_common.cuh). Both are memory-bound passes over N_q·d elements:
// read O and dO once (write D, L and zero dQaccum), then read dQaccum once
// (write dQ).
#include <cmath>
#include <stdexcept>
#include <string>

#include "fa_bwd_common.cuh"
#include "launch_checks.hpp"

namespace flashlab::kernels::detail {
namespace {

constexpr int kWarpsPerBlock = 8;

// kVec consecutive elements of a row as floats: one 16-byte load (or, kVec = 4
// of a 16-bit type, one 8-byte load).
template <int kVec, class T>
__device__ __forceinline__ void load_row_chunk(const T* p, float (&v)[kVec]) {
  if constexpr (kVec == 4) {
    const float4 a = load4(p);
    v[0] = a.x, v[1] = a.y, v[2] = a.z, v[3] = a.w;
  } else {
    static_assert(kVec == 8 && kIs16BitFloat<T>, "8 elements a chunk: 16 bytes of a 16-bit type");
    const uint4 u = *reinterpret_cast<const uint4*>(p);
    const uint32_t w[4] = {u.x, u.y, u.z, u.w};
#pragma unroll
    for (int i = 0; i < 4; ++i) {
      const float2 f = unpack2<T>(w[i]);
      v[2 * i] = f.x, v[2 * i + 1] = f.y;
    }
  }
}

// A group of `lanes` lanes (a power of two dividing 32) per padded statistics
// row r of a head, kVec elements a lane a step, so that a warp keeps 32 loads
// of each tensor in flight whatever d is. r < N_q: D_r = Σ_x dO_rx·O_rx in fp32,
// L_r·log2 e, and dQaccum row r = 0; r ≥ N_q: D = 0, L = +inf (so P = 2^(S − L)
// = 0 there); the head's counter = 0 with its row 0. dq_accum null: not zeroed.
template <class T, int kVec>
__global__ void __launch_bounds__(kWarpsPerBlock * 32)
    fa_bwd_preprocess_kernel(const T* __restrict__ O, const T* __restrict__ dO, const float* __restrict__ lse,
                             float* __restrict__ l_log2, float* __restrict__ d_row, float* __restrict__ dq_accum,
                             unsigned* __restrict__ head_done, i64 n_q, int d, i64 stat_rows, i64 total_rows,
                             int lanes) {
  let_next_grid_launch();  // the main kernel's blocks may start loading K_j, V_j
  const int lane = threadIdx.x % 32;
  const i64 gr = (static_cast<i64>(blockIdx.x) * kWarpsPerBlock + threadIdx.x / 32) * (32 / lanes) +
                 lane / lanes;  // padded row of all heads
  const int sub = lane % lanes;
  const bool live = gr < total_rows;
  const i64 head = live ? gr / stat_rows : 0, r = live ? gr % stat_rows : 0;
  const bool real = live && r < n_q;
  float sum = 0.f;
  if (real) {
    const i64 row = head * n_q + r;
    const T* o = O + row * d;   // (d) O_r
    const T* g = dO + row * d;  // (d) dO_r
    float* acc = dq_accum != nullptr ? dq_accum + row * d : nullptr;
    for (int x = sub * kVec; x < d; x += lanes * kVec) {
      float a[kVec], b[kVec];
      load_row_chunk<kVec>(o + x, a);
      load_row_chunk<kVec>(g + x, b);
#pragma unroll
      for (int i = 0; i < kVec; ++i) sum = fmaf(a[i], b[i], sum);
      if (acc != nullptr)
#pragma unroll
        for (int i = 0; i < kVec; i += 4) *reinterpret_cast<float4*>(acc + x + i) = make_float4(0.f, 0.f, 0.f, 0.f);
    }
  }
  // Every lane of the warp takes part in the shuffles: a group sums its row.
  for (int off = lanes / 2; off > 0; off >>= 1) sum += __shfl_xor_sync(0xffffffffu, sum, off);
  if (live && sub == 0) {
    d_row[gr] = real ? sum : 0.f;
    l_log2[gr] = real ? lse[head * n_q + r] * kLog2e : INFINITY;
    if (r == 0) head_done[head] = 0u;
  }
}

// dQ = τ·dQaccum, four elements per thread per step.
template <class T>
__global__ void fa_bwd_convert_kernel(const float* __restrict__ acc, T* __restrict__ dq, i64 count4, float scale) {
  wait_for_previous_grid();  // launched early (programmatic): the sums are complete from here on
  for (i64 w = static_cast<i64>(blockIdx.x) * blockDim.x + threadIdx.x; w < count4;
       w += static_cast<i64>(gridDim.x) * blockDim.x) {
    const float4 v = *reinterpret_cast<const float4*>(acc + 4 * w);
    store4(dq + 4 * w, make_float4(v.x * scale, v.y * scale, v.z * scale, v.w * scale));
  }
}

// dQ = τ·dQaccum, head by head as the main kernel completes them: block b
// converts slice b mod `slices` of head b / `slices` (kSliceFloats floats) once
// `blocks_per_head` blocks of that head have counted themselves done. Launched
// early (programmatic) without waiting for the main kernel: its blocks take the
// SMs the main kernel's last wave leaves, and read the sums from L2.
constexpr int kConvertThreads = 256;
constexpr int kConvertUnroll = 4;
constexpr i64 kSliceFloats = 4 * kConvertThreads * kConvertUnroll;
template <class T>
__global__ void __launch_bounds__(kConvertThreads)
    fa_bwd_convert_heads_kernel(const float* __restrict__ acc, T* __restrict__ dq, const unsigned* head_done,
                                unsigned blocks_per_head, i64 per_head, i64 slices, float scale) {
  const i64 head = blockIdx.x / slices;
  const i64 slice = blockIdx.x % slices;
  if (threadIdx.x == 0) {
    unsigned done = 0;
    for (;;) {
      asm volatile("ld.acquire.gpu.global.u32 %0, [%1];\n" : "=r"(done) : "l"(head_done + head) : "memory");
      if (done >= blocks_per_head) break;
      __nanosleep(256);
    }
  }
  __syncthreads();  // the acquire above, then the CTA's reads: the head's sums are complete
  const i64 begin = head * per_head + slice * kSliceFloats;
  const i64 end = begin + kSliceFloats < (head + 1) * per_head ? begin + kSliceFloats : (head + 1) * per_head;
  float4 v[kConvertUnroll];
#pragma unroll
  for (int u = 0; u < kConvertUnroll; ++u) {
    const i64 x = begin + 4 * (threadIdx.x + static_cast<i64>(u) * kConvertThreads);
    if (x < end) v[u] = __ldcg(reinterpret_cast<const float4*>(acc + x));
  }
#pragma unroll
  for (int u = 0; u < kConvertUnroll; ++u) {
    const i64 x = begin + 4 * (threadIdx.x + static_cast<i64>(u) * kConvertThreads);
    if (x < end) store4(dq + x, make_float4(v[u].x * scale, v[u].y * scale, v[u].z * scale, v[u].w * scale));
  }
}

}  // namespace

FaBwdWorkspace check_fa_bwd_args(const LaunchArgs& a, const char* rung) {
  const sim::AttentionProblem& p = a.problem;
  const std::string who(rung);
  if (a.q == nullptr || a.k == nullptr || a.v == nullptr || a.o == nullptr || a.lse == nullptr)
    throw Unsupported(who + ": Q, K, V, O and the logsumexp of the forward must be device pointers (got null)");
  const BackwardTensors& b = a.bwd;
  if (b.d_o == nullptr || (b.dq == nullptr && b.dq_accum == nullptr) || (b.dk == nullptr && b.dk_accum == nullptr) ||
      (b.dv == nullptr && b.dv_accum == nullptr))
    throw Unsupported(who + ": dO, dQ, dK and dV (or their accumulators) must be device pointers (got null)");
  if (p.causal && p.n_kv() != p.n_q()) throw Unsupported(who + ": causal attention needs seq_kv = seq_q");
  if (!(a.softmax_scale > 0.f) || !std::isfinite(a.softmax_scale))
    throw Unsupported(who + ": the softmax scale τ must be positive and finite");
  if (p.head_dim % 4 != 0) throw Unsupported(who + ": d must be a multiple of 4 (vector loads)");
  char* base = checked_workspace(a, layout::fa_bwd_workspace_bytes(p), rung, "dQaccum, L and D");
  FaBwdWorkspace w;
  w.dq_accum = reinterpret_cast<float*>(base);
  w.l_log2 = reinterpret_cast<float*>(base + layout::fa_bwd_dq_accum_bytes(p));
  w.d_row = reinterpret_cast<float*>(base + layout::fa_bwd_dq_accum_bytes(p) + layout::fa_bwd_stat_bytes(p));
  w.head_done = reinterpret_cast<unsigned*>(base + layout::fa_bwd_dq_accum_bytes(p) + 2 * layout::fa_bwd_stat_bytes(p));
  w.stat_rows = layout::fa_bwd_stat_rows(p);
  return w;
}

void fa_bwd_preprocess(const LaunchArgs& a, const FaBwdWorkspace& w, bool zero_dq_accum) {
  const sim::AttentionProblem& p = a.problem;
  const int d = static_cast<int>(p.head_dim);
  const i64 total = p.head_count() * w.stat_rows;
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // 16-byte chunks where rows are whole chunks and the tensors 16-byte aligned.
    const bool wide = kIs16BitFloat<T> && d % 8 == 0 && aligned16(a.o) && aligned16(a.bwd.d_o);
    const int vec = wide ? 8 : 4;
    int lanes = 1;  // the smallest power of two covering a row in one step, at most a warp
    while (lanes < 32 && lanes * vec < d) lanes *= 2;
    const i64 rows_per_block = static_cast<i64>(kWarpsPerBlock) * (32 / lanes);
    const i64 blocks = (total + rows_per_block - 1) / rows_per_block;
    if (blocks > 0x7fffffff) throw Unsupported("backward pre-pass: B·H·N_q rows exceed the grid's x limit");
    auto launch = [&](auto kernel) {
      kernel<<<static_cast<unsigned>(blocks), kWarpsPerBlock * 32, 0, stream_of(a)>>>(
          static_cast<const T*>(a.o), static_cast<const T*>(a.bwd.d_o), a.lse, w.l_log2, w.d_row,
          zero_dq_accum ? w.dq_accum : nullptr, w.head_done, p.n_q(), d, w.stat_rows, total, lanes);
      FLASHLAB_LAUNCH_CHECK("fa_bwd_preprocess_kernel");
    };
    if constexpr (kIs16BitFloat<T>) {
      if (wide) return launch(&fa_bwd_preprocess_kernel<T, 8>);
    }
    launch(&fa_bwd_preprocess_kernel<T, 4>);
  });
}

void fa_bwd_convert(const LaunchArgs& a, const float* acc, void* out, i64 count, float scale, bool programmatic) {
  const i64 count4 = count / 4;
  const i64 blocks = std::min<i64>((count4 + 255) / 256, 132 * 16);  // grid-stride beyond a few waves
  dispatch_dtype(a.problem.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_kernel("fa_bwd_convert_kernel", &fa_bwd_convert_kernel<T>, dim3(static_cast<unsigned>(std::max<i64>(blocks, 1))),
                  dim3(256), 0, stream_of(a), programmatic, acc, static_cast<T*>(out), count4, scale);
  });
}

void fa_bwd_convert_dq(const LaunchArgs& a, const FaBwdWorkspace& w, bool programmatic) {
  const sim::AttentionProblem& p = a.problem;
  fa_bwd_convert(a, w.dq_accum, a.bwd.dq, p.head_count() * p.n_q() * p.head_dim, a.softmax_scale, programmatic);
}

FaBwdTargets begin_fa_bwd(const LaunchArgs& a, const FaBwdWorkspace& w, const std::string& who, const char* rung) {
  const sim::AttentionProblem& pr = a.problem;
  if (a.running.step != Fold::none) throw Unsupported(who + " is a backward rung: it folds no running output");
  FaBwdTargets t;
  t.kv_group = kv_group_of(a, who);
  const bool add_dkv = a.bwd.dk_accum != nullptr;
  if (add_dkv != (a.bwd.dv_accum != nullptr))
    throw std::invalid_argument(who + ": dK and dV accumulators come together (got one of them)");
  t.own_dkv = t.kv_group > 1 && !add_dkv;
  t.dk_accum = a.bwd.dk_accum;
  t.dv_accum = a.bwd.dv_accum;
  if (t.own_dkv) {
    char* base = checked_workspace(a, layout::fa2_tc_bwd_workspace_bytes(pr), rung,
                                   "dQaccum, L, D, dKaccum and dVaccum");
    t.dk_accum = reinterpret_cast<float*>(base + layout::fa_bwd_workspace_bytes(pr));
    t.dv_accum = reinterpret_cast<float*>(reinterpret_cast<char*>(t.dk_accum) + layout::fa_bwd_kv_accum_bytes(pr) / 2);
    FLASHLAB_CUDA_CHECK(cudaMemsetAsync(t.dk_accum, 0, static_cast<std::size_t>(layout::fa_bwd_kv_accum_bytes(pr)),
                                        stream_of(a)));
  }
  const bool caller_dq = a.bwd.dq_accum != nullptr;
  t.dq_accum = caller_dq ? a.bwd.dq_accum : w.dq_accum;
  t.dq_scaled = caller_dq;
  fa_bwd_preprocess(a, w, /*zero_dq_accum=*/!caller_dq);
  return t;
}

// dQ's convert head by head as the kernel before it counts its heads done (end_fa_bwd).
void fa_bwd_convert_dq_by_head(const LaunchArgs& a, const FaBwdWorkspace& w, i64 blocks_per_head) {
  const sim::AttentionProblem& p = a.problem;
  const i64 per_head = p.n_q() * p.head_dim;  // a multiple of 4 (check_fa_bwd_args)
  const i64 slices = (per_head + kSliceFloats - 1) / kSliceFloats;
  const i64 blocks = p.head_count() * slices;
  if (blocks > 0x7fffffff) throw Unsupported("backward convert: B·H·N_q·d floats exceed the grid's x limit");
  dispatch_dtype(p.dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    launch_kernel("fa_bwd_convert_heads_kernel", &fa_bwd_convert_heads_kernel<T>, dim3(static_cast<unsigned>(blocks)),
                  dim3(kConvertThreads), 0, stream_of(a), /*programmatic=*/true,
                  static_cast<const float*>(w.dq_accum), static_cast<T*>(a.bwd.dq),
                  static_cast<const unsigned*>(w.head_done), static_cast<unsigned>(blocks_per_head), per_head, slices,
                  a.softmax_scale);
  });
}

void end_fa_bwd(const LaunchArgs& a, const FaBwdWorkspace& w, const FaBwdTargets& t, bool programmatic,
                i64 blocks_per_head) {
  if (!t.dq_scaled) {
    if (blocks_per_head > 0)
      fa_bwd_convert_dq_by_head(a, w, blocks_per_head);
    else
      fa_bwd_convert_dq(a, w, programmatic);
  }
  if (t.own_dkv) {  // τ is already in dKaccum
    const sim::AttentionProblem& pr = a.problem;
    const i64 kv_elems = pr.batch * pr.h_kv() * pr.n_kv() * pr.head_dim;
    fa_bwd_convert(a, t.dk_accum, a.bwd.dk, kv_elems, 1.f, programmatic && t.dq_scaled);
    fa_bwd_convert(a, t.dv_accum, a.bwd.dv, kv_elems, 1.f);
  }
}

}  // namespace flashlab::kernels::detail
