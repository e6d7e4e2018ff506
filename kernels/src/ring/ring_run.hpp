// The ring's run over P GPUs (ring_runner.cpp says how a run goes): what each
// GPU holds and the run itself, whose rooms are ring_runner.cpp (setup and the
// passes), ring_agreement.cpp (a process per GPU: what the ranks share),
// ring_timing.cpp (a run's start, its events, the timed runs), ring_check.cpp
// (the check against fp64, the tensors gathered) and ring_meta.cpp.
#pragma once

#include <cuda_runtime_api.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <stdexcept>
#include <vector>

#include "device/cuda_allocator.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/device/memory.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "ring_buffers.hpp"
#include "ring_transport.hpp"

namespace flashlab::kernels::ring {

using sim::ChunkVisibility;
using sim::Pass;
using sim::RingChunk;

// The events of one rank in one run of a pass: exchange e_s on the
// communication stream, step s on the compute stream (the wait for its data
// before it, and in the backward the wait for the running dK, dV before the
// fold), and a pair around each of the step's rung launches.
struct StepEvents {
  cudaEvent_t x_start = nullptr, x_end = nullptr;       // exchange e_s
  cudaEvent_t wait = nullptr, start = nullptr;          // compute: before / after waiting for e_{s−1}
  cudaEvent_t fold_wait = nullptr, fold_go = nullptr;   // backward: before / after waiting for e_s
  cudaEvent_t done = nullptr;                           // compute of step s finished
  std::vector<std::array<cudaEvent_t, 2>> launches;     // before / after each rung launch
  std::size_t launched = 0;                             // launches bracketed in this run
  double host_start_ms = -1, host_end_ms = -1;          // the host issuing the step, from the run's host origin
};

// One of the GPU's own chunks and what lives with it.
struct OwnChunk {
  RingChunk chunk;
  int pairs_total = 0;  // visible chunk pairs of its queries over the whole ring
  bool direct() const { return pairs_total == 1; }  // the rung writes O, L (dQ) itself
  DtypeBuffer q, o;          // [B, H, n, d]
  F32Buffer lse;             // [B, H, n]: the final logsumexp; also the running one of the merge
  F32Buffer o_acc;           // running O in fp32 (none when direct)
  DtypeBuffer d_o, dq;       // [B, H, n, d]
  F32Buffer dq_acc;          // (none when direct)
  DtypeBuffer dk, dv;        // this chunk's final dK, dV [B, H_kv, n, d]
  int merged = 0;            // partial outputs merged in this pass
};

struct Rank {
  int index = 0;
  int device = 0;
  int smem_optin = 0;  // cudaDevAttrMaxSharedMemoryPerBlockOptin of this rank's device
  cudaStream_t compute = nullptr, comm = nullptr;
  std::unique_ptr<CudaAllocator> allocator;
  std::unique_ptr<DeviceArena> arena;
  std::vector<OwnChunk> own;
  DtypeBuffer kv_home;                // K, V of its own chunks (a package)
  std::array<DtypeBuffer, 2> kv_buf;  // the packages arriving, in turns
  std::array<F32Buffer, 2> dkv_buf;   // the running dK, dV packages, in turns
  F32Buffer dkv_scratch;              // a step's dK, dV before they are added
  DtypeBuffer dkv_home;  // fused steps: the finished dK, dV rounded to the dtype for the homecoming
  DtypeBuffer k_exp;     // grouped-query attention, a rung without kv_heads: K_j, V_j expanded to H heads
  DtypeBuffer v_exp;
  DtypeBuffer o_part;    // a rung that does not fold: its partial O and logsumexp
  F32Buffer lse_part;
  DtypeBuffer dq_part;   // a rung that does not accumulate: its partial dQ, dK, dV
  DtypeBuffer dk_part;
  DtypeBuffer dv_part;
  Workspace fwd_ws, bwd_ws;
  std::unique_ptr<L2Flush> flush;  // this GPU's (device_timing.hpp); none without the flush
  unsigned long long* counter = nullptr;
  cudaEvent_t origin = nullptr, end = nullptr;
  std::vector<StepEvents> steps;
  i64 peak_device_used = 0;
};

struct RunTimes {
  double time_ms = 0;
  std::vector<sim::MeasuredStep> steps;
  std::vector<double> busy_ms;  // per GPU: its compute stream's work, waits left out
};

class RingRun {
 public:
  RingRun(const sim::AttentionProblem& p, const RingOptions& o) : p_(p), o_(o) {}
  ~RingRun() { release(); }

  sim::MeasuredRun run(RingTensors* gathered);

 private:
  // ---- sizes -----------------------------------------------------------------
  i64 es() const { return sim::dtype_bytes(p_.dtype); }
  i64 q_elems(i64 n) const { return p_.batch * p_.heads * n * p_.head_dim; }
  i64 kv_elems(i64 n) const { return p_.batch * p_.h_kv() * n * p_.head_dim; }
  const RingChunk& chunk(int c) const { return part_.chunks[static_cast<std::size_t>(c)]; }
  const std::vector<int>& held(int r) const { return part_.held[static_cast<std::size_t>(r)]; }
  // A package holds, for each chunk of its owner in order, K then V [B, H_kv, n, d].
  i64 package_elems(int owner) const {
    i64 e = 0;
    for (int c : held(owner)) e += 2 * kv_elems(chunk(c).size());
    return e;
  }
  i64 k_offset(int owner, std::size_t j) const {  // elements from the package's start to K of its j-th chunk
    i64 e = 0;
    for (std::size_t i = 0; i < j; ++i) e += 2 * kv_elems(chunk(held(owner)[i]).size());
    return e;
  }
  bool grouped() const { return p_.h_kv() != p_.heads; }
  int P() const { return p_.gpus(); }
  // One GPU holding one chunk, as many K/V heads as query heads: the backward
  // rung writes dK, dV itself (nothing to sum, nothing travels).
  bool direct_kv() const { return P() == 1 && !grouped() && held(0).size() == 1; }

  // ---- one process per GPU ---------------------------------------------------------
  bool ranked() const { return o_.group != nullptr && P() > 1; }
  std::vector<int> local_ranks() const;
  void agree(std::exception_ptr mine);
  void share_rows(char* whole, i64 row_bytes);
  RunTimes share_times(const RunTimes& mine);
  i64 sum_over_ranks(i64 mine);
  void note_peaks(sim::ParallelRun& out);  // every GPU's peak memory

  // ---- setup -------------------------------------------------------------------
  void choose_rungs();
  void open_ranks();
  void open_transport();
  void allocate();
  void fill_inputs();
  void release() noexcept;

  // ---- passes ------------------------------------------------------------------
  StepEvents& begin_step(Rank& g, int s);
  void run_forward(bool record);
  void run_backward(bool record);
  template <class Each>
  void for_each_pair(Rank& g, int s, const DtypeBuffer& package, const KernelInfo& rung, bool kv_native, Each each);
  void launch_rung(Rank& g, int s, const KernelInfo& rung, const LaunchArgs& a);
  void compute_forward_step(Rank& g, int s, const DtypeBuffer& package);
  void compute_backward_step(Rank& g, int s, const DtypeBuffer& package, const F32Buffer& dkv_target);
  void exchange(int s, bool backward);
  RunTimes read_times(Pass pass, bool backward);
  void begin_run(bool backward);
  void time_pass(Pass pass, sim::PassTimes& times, sim::PassTimeline& m);

  // ---- checks -----------------------------------------------------------------
  i64 count_unwritten(bool backward);
  std::vector<std::uint16_t> gather(int tensor, i64 b, i64 h);  // one head of a whole tensor, [N, d]
  std::vector<float> gather_lse(i64 b, i64 h);
  void check_forward(sim::MeasuredRun& out);
  void check_backward(sim::MeasuredRun& out);
  void gather_all(RingTensors& t);
  void note_device_used();

  sim::AttentionProblem p_;
  RingOptions o_;
  sim::RingPartition part_;
  const KernelInfo* fwd_ = nullptr;
  const KernelInfo* bwd_ = nullptr;
  std::vector<Rank> ranks_;
  std::chrono::steady_clock::time_point host_origin_;  // the host's clock when the run's origins were recorded
  double host_ms() const {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - host_origin_).count();
  }
  std::unique_ptr<ring::Transport> transport_;
  float scale_ = 0;
  // What the steps fuse (RingSteps::fused and the rung can; else separate kernels).
  bool fwd_kv_native_ = false;  // the forward rung reads K, V with H_kv heads (fused; pairwise expands them)
  bool fwd_folds_ = false;      // ... and folds its partial output into the running one
  bool bwd_kv_native_ = false;  // the backward rung reads K, V with H_kv heads
  bool bwd_adds_ = false;       // ... and adds dQ, dK, dV into the fp32 accumulators
  // The homecoming carries the finished dK, dV rounded to the dtype (the
  // rounding the owner would apply on arrival): half the bytes of the tail.
  bool dtype_homecoming_ = false;
  std::size_t max_pairs_ = 0;   // the most rung launches of one GPU's step
  std::vector<std::vector<int>> kv_pairs_;  // [chunk]: visible pairs of its keys over the ring
};

struct AgreedFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Tensors a rank holds, by number, for gather(): per own chunk.
enum Tensor { kQ, kK, kV, kO, kDO, kDQ, kDK, kDV };

// The package GPU g computes on at step s (its own at s = 0, else the buffer
// the exchange before brought).
inline DtypeBuffer& package_at(Rank& g, int s) {
  return s == 0 ? g.kv_home : g.kv_buf[static_cast<std::size_t>((s - 1) % 2)];
}

}  // namespace flashlab::kernels::ring
