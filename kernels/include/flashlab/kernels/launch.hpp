// The contract between the kernel rungs (kernels/*.cu) and the host code that
// runs them (registry, runner, tests). Plain C++: no CUDA headers, so that the
// CLI, GUI and tests compile without CUDA.
#pragma once

#include <cstddef>
#include <stdexcept>
#include <string>

#include "flashlab/sim/problem.hpp"
#include "flashlab/sim/tiles.hpp"

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
};

// Tensors are [B, H, N, d] row-major in the problem's dtype (fp32 as float,
// fp16 as __half, bf16 as __nv_bfloat16); lse is [B, H, N_q] fp32 (the natural
// logarithm of each row's softmax denominator, its maximum included).
// A forward rung reads q, k, v and writes o (and lse); a backward rung also
// reads o and lse and works on `bwd`.
struct LaunchArgs {
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
};

}  // namespace flashlab::kernels
