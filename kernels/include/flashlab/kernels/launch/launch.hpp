// The contract between the kernel rungs (kernels/*.cu) and the host code that
// runs them (registry, runner, tests). Plain C++: no CUDA headers, so that the
// CLI, GUI and tests compile without CUDA.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::kernels {

// A failed CUDA call or launch; the message names file:line and the call.
class CudaError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The kernel cannot run this problem as asked (a head dim it was not compiled
// for, tiles larger than the device's shared memory, ...). The message names
// the limit that was hit. The runner reports it as a skipped row.
class Unsupported : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The ring's running output: a forward launch whose partial O and logsumexp
// (one K/V chunk's share) fold into a running result by the online-softmax
// rule, inside the rung's epilogue, instead of being written alone.
// L = log(e^{L_run} + e^{L_part}); O_run = e^{L_run − L}·O_run + e^{L_part − L}·O_part.
// LaunchArgs::lse is the running logsumexp [B, H, N_q] in every step.
enum class Fold {
  none,    // a plain launch: O (dtype) and the logsumexp written
  start,   // the first part: O_run (fp32) = O_part, lse = L_part
  fold,    // a middle part: lse and O_run read, folded, written back
  finish,  // the last part: folded as `fold`, the result written to O (dtype); O_run not written
};
struct RunningOutput {
  Fold step = Fold::none;
  float* o = nullptr;  // O_run [B, H, N_q, d] fp32, normalised (start, fold, finish)
};

// The backward pass's own tensors. A backward rung reads Q, K, V and, as its
// forward rung left them, O, the logsumexp and (naive_bwd) the forward's
// workspace; it reads dO and writes dQ, dK, dV. Same layout and dtype as Q, K, V.
struct BackwardTensors {
  const void* d_o = nullptr;  // dO [B, H, N_q, d]
  void* dq = nullptr;         // dQ [B, H, N_q, d]
  void* dk = nullptr;         // dK [B, H, N_kv, d]
  void* dv = nullptr;         // dV [B, H, N_kv, d]
  // The forward rung's workspace as its launch left it (naive_bwd reads P there).
  const void* forward_workspace = nullptr;
  std::size_t forward_workspace_bytes = 0;
  // Adding instead of writing (the ring, rungs with accumulates_gradients):
  // when set, the rung adds its contribution in fp32 and leaves the matching
  // dq / dk / dv alone. dk_accum and dv_accum have the K/V heads
  // (the problem's kv_heads): the query heads of a group all add into theirs.
  float* dq_accum = nullptr;  // [B, H, N_q, d] += dQ (τ applied)
  float* dk_accum = nullptr;  // [B, H_kv, N_kv, d] += dK (τ applied)
  float* dv_accum = nullptr;  // [B, H_kv, N_kv, d] += dV
};

// Tensors are [B, H, N, d] row-major in the problem's dtype (fp32 as float,
// fp16 as __half, bf16 as __nv_bfloat16); lse is [B, H, N_q] fp32 (the natural
// logarithm of each row's softmax denominator, its maximum included).
// A forward rung reads q, k, v and writes o (and lse); a backward rung also
// reads o and lse and works on `bwd`.
struct LaunchArgs {
  // Grouped-query attention (problem.kv_heads): K and V have H_kv heads,
  // [B, H_kv, N_kv, d], and query head h of batch b reads K/V head
  // b·H_kv + h / (H / H_kv) — in flat head indices (b·H + h) / (H / H_kv).
  sim::AttentionProblem problem;
  sim::TileShape tiles;      // runtime-tiled rungs use these; compiled-tile rungs ignore them
  float softmax_scale = 0;   // τ, normally 1/√d
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;      // may be null; written by rungs that produce it
  void* workspace = nullptr; // workspace_bytes() of the rung, device memory
  std::size_t workspace_bytes = 0;
  void* stream = nullptr;    // cudaStream_t
  int device_smem_optin = 0; // cudaDevAttrMaxSharedMemoryPerBlockOptin of the device
  // When set, a rung that launches one kernel shape writes its thread blocks
  // resident per SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor) here: the
  // L2 model's launch.
  int* ctas_per_sm = nullptr;
  BackwardTensors bwd;       // backward rungs only
  RunningOutput running;     // forward rungs with folds_running_output only
};

// H / H_kv of a launch (1 without grouped heads); throws Unsupported naming
// `rung` when H_kv does not divide the query heads.
inline sim::i64 kv_group_of(const LaunchArgs& a, const std::string& rung) {
  const sim::i64 h = a.problem.heads, hk = a.problem.h_kv();
  if (hk < 1 || hk > h || h % hk != 0)
    throw Unsupported(rung + ": " + std::to_string(hk) + " K/V heads do not divide " + std::to_string(h) +
                      " query heads");
  return h / hk;
}

}  // namespace flashlab::kernels
