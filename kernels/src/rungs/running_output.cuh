// The ring's running output, folded inside a forward rung's epilogue
// (LaunchArgs::running): one row's weights of the running and the partial
// output and its new logsumexp, by the online-softmax rule. The same rule as
// the separate merge kernel (ring_merge.cu), written once for every rung's
// epilogue and for the CPU emulation of the tensor-core rungs (plain C++ when
// FA2_TC_EMULATE is set).
#pragma once

#include <cmath>
#include <cstdint>
#include <stdexcept>
#include <string>

#include "flashlab/kernels/launch/launch.hpp"

#if defined(__CUDACC__)
#define FLASHLAB_HOST_DEVICE __host__ __device__ __forceinline__
#else
#define FLASHLAB_HOST_DEVICE inline
#endif

namespace flashlab::kernels::detail {

// Fold as an int in kernel parameters: Fold's values.
constexpr int kFoldNone = static_cast<int>(Fold::none);
constexpr int kFoldStart = static_cast<int>(Fold::start);
constexpr int kFoldFold = static_cast<int>(Fold::fold);
constexpr int kFoldFinish = static_cast<int>(Fold::finish);

// out = w_run·O_run + w_part·acc, where acc is the launch's unnormalised O
// (w_part carries its 1/ℓ); lse is the row's logsumexp after the fold.
struct FoldedRow {
  float w_run;
  float w_part;
  float lse;
};

// step: kFoldStart (nothing to fold with: the partial alone), kFoldFold or
// kFoldFinish. A side with no visible key has L = −inf and weight 0.
FLASHLAB_HOST_DEVICE FoldedRow fold_row(int step, float lse_run, float lse_part, float inv_l) {
  if (step == kFoldStart) return {0.f, inv_l, lse_part};
  const float m = fmaxf(lse_run, lse_part);
  if (m == -INFINITY) return {0.f, 0.f, -INFINITY};
  const float a = expf(lse_run - m), b = expf(lse_part - m), s = a + b;
  return {a / s, b / s * inv_l, m + logf(s)};
}

// A thread's share of one row of O_run, columns 8n + 2t and 8n + 2t + 1 for
// n < kN (the mma accumulator's layout), into registers (zeros when the fold
// starts). An epilogue loads all its rows' shares before it stores any: a load
// placed after a store the compiler cannot prove apart waits for it, and the
// fold becomes one memory round trip per column pair instead of one in all.
template <int kN>
FLASHLAB_HOST_DEVICE void load_running_row(const float* run, int t, bool first, float (&prev)[2 * kN]) {
#pragma unroll
  for (int n = 0; n < kN; ++n) {
    const int col = 8 * n + 2 * t;
    prev[2 * n] = first ? 0.f : run[col];
    prev[2 * n + 1] = first ? 0.f : run[col + 1];
  }
}

}  // namespace flashlab::kernels::detail

#if !defined(FA2_TC_EMULATE)
namespace flashlab::kernels {
// The host's checks of a launch's running output, naming the rung.
inline void check_running_output(const LaunchArgs& a, const std::string& who) {
  if (a.running.step == Fold::none) return;
  if (a.running.o == nullptr || a.lse == nullptr)
    throw std::invalid_argument(who + ": folding into a running output needs O_run and the running logsumexp (got null)");
  if (reinterpret_cast<std::uintptr_t>(a.running.o) % 16 != 0)
    throw Unsupported(who + " needs O_run 16-byte aligned");
}
}  // namespace flashlab::kernels
#endif
