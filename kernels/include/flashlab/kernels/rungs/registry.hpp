// The kernel ladder as one list that tests, the runner, the CLI and the GUI all
// iterate: {id, name, launch, dtypes, head dims, min SM, ...}. The list is the
// same with or without CUDA; without it, `launch` is null.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "flashlab/sim/problem/algorithm.hpp"

namespace flashlab::kernels {

using sim::i64;

// What the host knows of the device when it decides whether a case can run.
struct DeviceLimits {
  int compute_capability = 0;   // 90 for sm_90
  i64 smem_optin_bytes = 0;     // cudaDevAttrMaxSharedMemoryPerBlockOptin
  i64 smem_per_sm_bytes = 0;    // cudaDevAttrMaxSharedMemoryPerMultiprocessor
  int max_threads_per_block = 1024;
};

// Where a rung's tile shape comes from.
enum class TileSource {
  none,      // not tiled in the simulator's sense (the materialising rungs)
  runtime,   // any (B_r, B_c): LaunchArgs::tiles
  compiled,  // fixed per head dim when compiled; reported by default_tiles
};

// A function, not a function pointer: a rung compiled at run time (a student's
// kernel file, kernels/student/) carries its loaded module with its launch.
using LaunchFn = std::function<void(const LaunchArgs&)>;
using ShapeFn = std::function<i64(const sim::AttentionProblem&, sim::TileShape)>;

struct KernelInfo {
  std::string id;        // "fa2"
  std::string name;      // "FlashAttention-2 (CUDA cores)"
  std::string summary;   // what changed from the rung before
  sim::Algorithm model;  // the simulator's algorithm with the same HBM traffic
  // A backward rung: the forward rung whose outputs it reads (O, the
  // logsumexp, naive_bwd's P in its workspace). The runner runs that forward,
  // untimed, before the backward. Empty for a forward rung.
  std::string forward;
  std::vector<sim::DType> dtypes;
  std::vector<int> head_dims;  // empty: any d ≥ 1
  int min_sm = 0;              // compute capability × 10
  TileSource tile_source = TileSource::none;
  bool writes_lse = false;     // LaunchArgs::lse is filled when set
  // What the rung does beyond a plain launch, for the ring (LaunchArgs): the
  // partial output folded into a running one in its epilogue (running,
  // forward); dQ, dK, dV added into fp32 accumulators (bwd.dq_accum, dk_accum,
  // dv_accum, backward). The others refuse such a launch. Every rung reads
  // grouped K/V heads (H_kv < H, the problem's kv_heads) in place.
  bool folds_running_output = false;
  bool accumulates_gradients = false;
  bool heaviest_first = false; // each head's heaviest causal row block is dispatched first (the L2 model's launch)
  sim::StorageTypes storage;   // what it keeps in global memory in another type than the paper (fa1: O in fp32)
  LaunchFn launch;             // empty when this build has no CUDA
  std::function<sim::TileShape(const sim::AttentionProblem&)> default_tiles;  // runtime / compiled rungs
  ShapeFn smem_bytes;          // dynamic shared memory per block, checked before launch
  ShapeFn threads_per_block;   // 0 when not checked on the host
  std::function<i64(const sim::AttentionProblem&)> max_threads_per_block;  // null: the device's limit
  ShapeFn workspace_bytes;     // device memory beyond Q, K, V, O, LSE (and dO, dQ, dK, dV)
  std::string workspace_holds; // what the workspace holds, for messages: "S and P"

  // The pass it computes: its model's (sim::AlgorithmInfo::pass), the one definition.
  sim::Pass pass() const;
  bool supports(sim::DType t) const;
  bool supports_head_dim(i64 d) const;
  bool built() const { return static_cast<bool>(launch); }
};

const std::vector<KernelInfo>& registry();
const KernelInfo* find_kernel(std::string_view id);
std::string kernel_ids();  // "naive, naive_cublas, fa1, fa2, fa2_tc, naive_bwd, ..."
// The rungs that compute a pass of the selection, in registry order.
std::vector<const KernelInfo*> kernels_of(sim::PassSelection s);
// The forward rung a backward rung reads from (null for a forward rung, or
// when the registry has no such id).
const KernelInfo* forward_rung(const KernelInfo& k);

// The tiles a case runs with. Compiled rungs always run their own; the others
// take the request: the rung's default, the paper's rule (B_c = ⌈M/4d⌉,
// B_r = min(B_c, d) with M the device's shared memory per SM), or explicit.
enum class TileRule { rung_default, paper, explicit_tiles };
struct TileRequest {
  TileRule rule = TileRule::rung_default;
  sim::TileShape tiles;  // for explicit_tiles
};
sim::TileShape resolve_tiles(const KernelInfo& k, const sim::AttentionProblem& p, const TileRequest& req,
                             const DeviceLimits& dev);

// Why the kernel cannot run this case on this device (nullopt when it can):
// the dtype, the head dim, the compute capability, the threads or the shared
// memory, each sentence naming the limit.
std::optional<std::string> unsupported_reason(const KernelInfo& k, const sim::AttentionProblem& p,
                                              sim::TileShape tiles, const DeviceLimits& dev);

// "fp16, bf16, fp32" and "32, 64, 128" (or "any") for tables and messages.
std::string dtype_list(const KernelInfo& k);
std::string head_dim_list(const KernelInfo& k);

}  // namespace flashlab::kernels
