// The ring over P GPUs, step by step (kernels/include/flashlab/kernels/ring/ring.hpp
// says what it computes; sim/problem/ring_partition.hpp defines the layout).
//
// Per GPU r (a "rank"): its own chunks' Q, O, the logsumexp L (and dO, dQ, dK,
// dV); a K/V package of its own chunks ("home") and two package buffers that
// take turns: at step s it computes on the package of GPU (r − s) mod P (home
// at s = 0, else buffer (s − 1) mod 2) while exchange e_s sends that package to
// r + 1 and receives the next into buffer s mod 2 (which step s − 1 read, so
// the exchange waits for that step).
//
// The backward's dK, dV travel in fp32 packages: GPU r computes step s's
// contribution for the package it holds into a scratch buffer; exchange e_s
// has meanwhile brought the running sum for that package from GPU r − 1 (its
// step s − 1), the scratch is added to it, and exchange e_{s+1} passes it on.
// Exchange e_P brings each GPU its own chunks' complete dK, dV: the homecoming.
//
// Every step is bracketed by CUDA events on both streams of every GPU, timed
// from an origin each GPU records after a host barrier.
//
// One process drives every GPU, or (RingOptions::group) each process drives
// one: then `ranks_` holds this process's rank alone, and the places where one
// process used to see every GPU — NCCL's communicators, the barrier before a
// run, the event times, the rows the check reads, the memory — meet the other
// ranks through the group, so that every rank ends with the same row.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <memory>
#include <sstream>

#include <unistd.h>

#include "device/cuda_check.hpp"
#include "device/device_utils.hpp"
#include "ring_merge.hpp"
#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/device/memory.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/sim/core/format.hpp"
#include "device/cuda_allocator.hpp"
#include "nccl_api.hpp"
#include "ring_transport.hpp"

namespace flashlab::kernels {
namespace {

using sim::ChunkVisibility;
using sim::RingChunk;
using sim::Pass;

// The single-GPU runner's seeds of Q, K, V, dO (cuda_backend.cpp), so that a
// ring run and a single-GPU case of the same seed see the same inputs.
constexpr std::uint64_t kSeedQ = 0x1111111111111111ull, kSeedK = 0x2222222222222222ull,
                        kSeedV = 0x3333333333333333ull, kSeedDO = 0x4444444444444444ull;

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
  void* q = nullptr;
  void* o = nullptr;
  float* lse = nullptr;      // the final logsumexp; also the running one of the merge
  float* o_acc = nullptr;    // running O in fp32 (null when direct)
  void* d_o = nullptr;
  void* dq = nullptr;
  float* dq_acc = nullptr;   // (null when direct)
  void* dk = nullptr;        // this chunk's final dK, dV [B, H_kv, n, d]
  void* dv = nullptr;
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
  void* kv_home = nullptr;
  std::array<void*, 2> kv_buf{};
  std::array<float*, 2> dkv_buf{};
  float* dkv_scratch = nullptr;
  void* dkv_home = nullptr;  // fused steps: the finished dK, dV rounded to the dtype for the homecoming
  void* k_exp = nullptr;     // grouped-query attention, a rung without kv_heads: K_j, V_j expanded to H heads
  void* v_exp = nullptr;
  void* o_part = nullptr;    // a rung that does not fold: its partial O and logsumexp
  float* lse_part = nullptr;
  void* dq_part = nullptr;   // a rung that does not accumulate: its partial dQ, dK, dV
  void* dk_part = nullptr;
  void* dv_part = nullptr;
  void* fwd_ws = nullptr;
  i64 fwd_ws_bytes = 0;
  void* bwd_ws = nullptr;
  i64 bwd_ws_bytes = 0;
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

  template <class T = char>
  static T* at(void* base, i64 elems, i64 elem_bytes) {
    return reinterpret_cast<T*>(static_cast<char*>(base) + elems * elem_bytes);
  }

  // ---- one process per GPU ---------------------------------------------------------
  bool ranked() const { return o_.group != nullptr && P() > 1; }
  std::vector<int> local_ranks() const;
  void agree(std::exception_ptr mine);
  void share_rows(char* whole, i64 row_bytes);
  RunTimes share_times(const RunTimes& mine);
  i64 sum_over_ranks(i64 mine);

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
  void for_each_pair(Rank& g, int s, void* package, const KernelInfo& rung, bool kv_native, Each each);
  void launch_rung(Rank& g, int s, const KernelInfo& rung, const LaunchArgs& a);
  void compute_forward_step(Rank& g, int s, void* package);
  void compute_backward_step(Rank& g, int s, void* package, float* dkv_target);
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

// A failure every rank finds alike (from figures they shared): the ranks go on.
struct AgreedFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// Tensors a rank holds, by number, for gather(): per own chunk.
enum Tensor { kQ, kK, kV, kO, kDO, kDQ, kDK, kDV };

void RingRun::choose_rungs() {
  const DeviceInfo d0 = query_device(o_.devices.empty() ? 0 : o_.devices.front());
  fwd_ = o_.forward != nullptr ? o_.forward : default_ring_forward(d0.compute_capability, p_.head_dim);
  if (fwd_ == nullptr) throw Unsupported("no forward rung that writes the logsumexp runs on " + d0.name);
  if (!fwd_->writes_lse)
    throw Unsupported(fwd_->id + " does not write the logsumexp, which the ring's merge needs");
  if (fwd_->pass() != sim::Pass::fwd) throw Unsupported(fwd_->id + " is not a forward rung");
  if (p_.backward()) {
    bwd_ = o_.backward != nullptr ? o_.backward : default_ring_backward(d0.compute_capability, p_.head_dim);
    if (bwd_ == nullptr) throw Unsupported("no backward rung is built");
    if (bwd_->pass() != sim::Pass::bwd) throw Unsupported(bwd_->id + " is not a backward rung");
  }
  // The largest pair each rung will see: the longest chunk against itself.
  i64 longest = 0;
  for (const RingChunk& c : part_.chunks) longest = std::max(longest, c.size());
  sim::AttentionProblem pr{p_.batch, p_.heads, longest, longest, p_.head_dim, false, p_.dtype};
  for (const KernelInfo* k : {fwd_, bwd_}) {
    if (k == nullptr) continue;
    if (!k->built()) throw Unsupported(k->id + " is not built (this build has no CUDA)");
    const sim::TileShape tiles = k->default_tiles ? k->default_tiles(pr) : sim::TileShape{};
    if (auto why = unsupported_reason(*k, pr, tiles, d0.limits())) throw Unsupported(*why);
  }
  // The most rung launches one GPU's step makes: the events that bracket them.
  max_pairs_ = 0;
  for (int r = 0; r < P(); ++r)
    for (int s = 0; s < P(); ++s) {
      std::size_t n = 0;
      for (int kv : held(sim::ring_kv_source(r, s, P())))
        for (int q : held(r))
          n += sim::chunk_visibility(chunk(q), chunk(kv), p_.causal) != ChunkVisibility::none ? 1 : 0;
      max_pairs_ = std::max(max_pairs_, n);
    }
  const bool fused = o_.steps == RingSteps::fused;
  fwd_kv_native_ = fused && grouped();
  fwd_folds_ = fused && fwd_->folds_running_output;
  dtype_homecoming_ = fused && p_.backward() && P() > 1;
  if (bwd_ != nullptr) {
    bwd_kv_native_ = fused && grouped();
    bwd_adds_ = fused && bwd_->accumulates_gradients;
  }
}

std::vector<int> RingRun::local_ranks() const {
  if (ranked()) return {o_.group->rank()};
  std::vector<int> all(static_cast<std::size_t>(P()));
  for (int r = 0; r < P(); ++r) all[static_cast<std::size_t>(r)] = r;
  return all;
}

void RingRun::open_ranks() {
  const std::vector<int> mine = local_ranks();
  ranks_.resize(mine.size());
  for (std::size_t k = 0; k < mine.size(); ++k) {
    Rank& g = ranks_[k];
    const int r = mine[k];
    g.index = r;
    g.device = o_.transport == RingTransport::local || ranked()
                   ? (o_.devices.empty() ? 0 : o_.devices.front())
                   : (o_.devices.empty() ? r : o_.devices[static_cast<std::size_t>(r)]);
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    g.smem_optin = static_cast<int>(query_device(g.device).smem_optin_bytes);
    FLASHLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&g.compute, cudaStreamNonBlocking));
    if (o_.comm_priority) {
      // Numerically lowest is greatest.
      int least = 0, greatest = 0;
      FLASHLAB_CUDA_CHECK(cudaDeviceGetStreamPriorityRange(&least, &greatest));
      FLASHLAB_CUDA_CHECK(cudaStreamCreateWithPriority(&g.comm, cudaStreamNonBlocking, greatest));
    } else {
      FLASHLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&g.comm, cudaStreamNonBlocking));
    }
    FLASHLAB_CUDA_CHECK(cudaEventCreate(&g.origin));
    FLASHLAB_CUDA_CHECK(cudaEventCreate(&g.end));
    g.steps.resize(static_cast<std::size_t>(P() + 1));
    for (StepEvents& e : g.steps) {
      for (cudaEvent_t* ev : {&e.x_start, &e.x_end, &e.wait, &e.start, &e.fold_wait, &e.fold_go, &e.done})
        FLASHLAB_CUDA_CHECK(cudaEventCreate(ev));
      e.launches.resize(max_pairs_);
      for (auto& pair : e.launches)
        for (cudaEvent_t& ev : pair) FLASHLAB_CUDA_CHECK(cudaEventCreate(&ev));
    }
    g.allocator = std::make_unique<CudaAllocator>(g.device);
    g.arena = std::make_unique<DeviceArena>(*g.allocator, o_.mem_limit_bytes);
  }
}

// NCCL's communicators (or the local copies), once every rank has its memory:
// making them is collective, so a rank that could not allocate must not leave
// the others waiting in it.
void RingRun::open_transport() {
  if (ranked()) {
    transport_ = ring::open_nccl_rank_transport(ranks_.front().device, P(), *o_.group);
  } else if (o_.transport == RingTransport::nccl) {
    std::vector<int> devs;
    for (const Rank& g : ranks_) devs.push_back(g.device);
    transport_ = ring::open_nccl_transport(devs);
  } else {
    transport_ = ring::open_local_transport(P(), ranks_.front().device);
  }
}

void RingRun::allocate() {
  // Visible pairs per chunk over the ring: a query chunk with one pair is
  // written by the rung directly; a key chunk's count says nothing more.
  for (Rank& g : ranks_) {
    for (int c : held(g.index)) {
      OwnChunk oc;
      oc.chunk = chunk(c);
      for (const RingChunk& kv : part_.chunks)
        oc.pairs_total += sim::chunk_visibility(oc.chunk, kv, p_.causal) != ChunkVisibility::none ? 1 : 0;
      g.own.push_back(oc);
    }
  }
  i64 n_max = 0, pkg_max = 0;
  for (const RingChunk& c : part_.chunks) n_max = std::max(n_max, c.size());
  for (int r = 0; r < P(); ++r) pkg_max = std::max(pkg_max, package_elems(r));
  sim::AttentionProblem biggest{p_.batch, p_.heads, n_max, n_max, p_.head_dim, false, p_.dtype};
  const sim::TileShape fwd_tiles = fwd_->default_tiles ? fwd_->default_tiles(biggest) : sim::TileShape{};

  for (Rank& g : ranks_) {
    DeviceArena& a = *g.arena;
    const std::string on = " on GPU " + std::to_string(g.index);
    for (OwnChunk& c : g.own) {
      const i64 n = c.chunk.size();
      const std::string of = " of chunk " + std::to_string(c.chunk.index) + on;
      c.q = a.allocate(q_elems(n) * es(), "Q" + of);
      c.o = a.allocate(q_elems(n) * es(), "O" + of);
      c.lse = static_cast<float*>(a.allocate(p_.batch * p_.heads * n * 4, "the logsumexp" + of));
      if (!c.direct()) c.o_acc = static_cast<float*>(a.allocate(q_elems(n) * 4, "the running O (fp32)" + of));
      if (p_.backward()) {
        c.d_o = a.allocate(q_elems(n) * es(), "dO" + of);
        c.dq = a.allocate(q_elems(n) * es(), "dQ" + of);
        if (!c.direct()) c.dq_acc = static_cast<float*>(a.allocate(q_elems(n) * 4, "the running dQ (fp32)" + of));
        c.dk = a.allocate(kv_elems(n) * es(), "dK" + of);
        c.dv = a.allocate(kv_elems(n) * es(), "dV" + of);
      }
    }
    g.kv_home = a.allocate(package_elems(g.index) * es(), "K, V of its own chunks" + on);
    if (P() > 1)
      for (int b = 0; b < 2; ++b) g.kv_buf[static_cast<std::size_t>(b)] = a.allocate(pkg_max * es(), "a K/V buffer" + on);
    if (grouped() && (!fwd_kv_native_ || (p_.backward() && !bwd_kv_native_))) {
      g.k_exp = a.allocate(q_elems(n_max) * es(), "K_j expanded to H heads" + on);
      g.v_exp = a.allocate(q_elems(n_max) * es(), "V_j expanded to H heads" + on);
    }
    if (!fwd_folds_) {
      g.o_part = a.allocate(q_elems(n_max) * es(), "a partial O" + on);
      g.lse_part = static_cast<float*>(a.allocate(p_.batch * p_.heads * n_max * 4, "a partial logsumexp" + on));
    }
    if (fwd_->workspace_bytes) {
      g.fwd_ws_bytes = fwd_->workspace_bytes(biggest, fwd_tiles);
      g.fwd_ws = a.allocate(g.fwd_ws_bytes, fwd_->id + "'s workspace" + on);
    }
    if (p_.backward()) {
      for (int b = 0; b < 2; ++b)
        g.dkv_buf[static_cast<std::size_t>(b)] =
            static_cast<float*>(a.allocate(pkg_max * 4, "a dK/dV buffer (fp32)" + on));
      if (P() > 1) g.dkv_scratch = static_cast<float*>(a.allocate(pkg_max * 4, "a step's dK/dV (fp32)" + on));
      if (dtype_homecoming_) g.dkv_home = a.allocate(pkg_max * es(), "the finished dK/dV going home" + on);
      if (!bwd_adds_) {
        g.dq_part = a.allocate(q_elems(n_max) * es(), "a partial dQ" + on);
        g.dk_part = a.allocate(q_elems(n_max) * es(), "a partial dK" + on);
        g.dv_part = a.allocate(q_elems(n_max) * es(), "a partial dV" + on);
      }
      if (bwd_->workspace_bytes) {
        const sim::TileShape t = bwd_->default_tiles ? bwd_->default_tiles(biggest) : sim::TileShape{};
        g.bwd_ws_bytes = bwd_->workspace_bytes(biggest, t);
        g.bwd_ws = a.allocate(g.bwd_ws_bytes, bwd_->id + "'s workspace" + on);
      }
    }
    g.counter = static_cast<unsigned long long*>(a.allocate(sizeof(unsigned long long), "a counter" + on));
  }
  // The L2 flush buffers are the runner's, not the ring's: outside the arenas.
  for (Rank& g : ranks_) {
    if (!o_.l2_flush) continue;
    g.flush = std::make_unique<L2Flush>(g.device, query_device(g.device).l2_bytes);
  }
  note_device_used();
}

void RingRun::note_device_used() {
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    std::size_t free_b = 0, total_b = 0;
    FLASHLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    g.peak_device_used = std::max(g.peak_device_used, static_cast<i64>(total_b - free_b));
  }
}

void RingRun::fill_inputs() {
  const float scale = 1.0f;
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (std::size_t j = 0; j < g.own.size(); ++j) {
      OwnChunk& c = g.own[j];
      const i64 n = c.chunk.size(), begin = c.chunk.begin;
      ring::fill_chunk_normal(c.q, p_.dtype, p_.batch, p_.heads, n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedQ,
                              scale, g.compute);
      void* k = at(g.kv_home, k_offset(g.index, j), es());
      void* v = at(g.kv_home, k_offset(g.index, j) + kv_elems(n), es());
      ring::fill_chunk_normal(k, p_.dtype, p_.batch, p_.h_kv(), n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedK,
                              scale, g.compute);
      ring::fill_chunk_normal(v, p_.dtype, p_.batch, p_.h_kv(), n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedV,
                              scale, g.compute);
      if (p_.backward())
        ring::fill_chunk_normal(c.d_o, p_.dtype, p_.batch, p_.heads, n, p_.head_dim, p_.seq_q, begin,
                                o_.seed ^ kSeedDO, 1.0f, g.compute);
    }
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.compute));
  }
}

void RingRun::release() noexcept {
  for (Rank& g : ranks_) {
    (void)cudaSetDevice(g.device);
    if (g.compute) (void)cudaStreamSynchronize(g.compute);
    if (g.comm) (void)cudaStreamSynchronize(g.comm);
  }
  transport_.reset();
  for (Rank& g : ranks_) {
    (void)cudaSetDevice(g.device);
    if (g.arena) g.arena->release_all();
    g.flush.reset();
    for (StepEvents& e : g.steps) {
      for (cudaEvent_t ev : {e.x_start, e.x_end, e.wait, e.start, e.fold_wait, e.fold_go, e.done})
        if (ev) (void)cudaEventDestroy(ev);
      for (auto& pair : e.launches)
        for (cudaEvent_t ev : pair)
          if (ev) (void)cudaEventDestroy(ev);
    }
    if (g.origin) (void)cudaEventDestroy(g.origin);
    if (g.end) (void)cudaEventDestroy(g.end);
    if (g.compute) (void)cudaStreamDestroy(g.compute);
    if (g.comm) (void)cudaStreamDestroy(g.comm);
  }
  ranks_.clear();
}

// ---- one process per GPU -------------------------------------------------------

// Plain values to bytes and back, for what the ranks hand each other (the
// same program on the same kind of host: native layout).
struct Bytes {
  std::string data;
  std::size_t at = 0;
  template <class T>
  void put(const T& v) {
    data.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  T take() {
    if (at + sizeof(T) > data.size()) throw std::runtime_error("a rank's message to the ring is cut short");
    T v;
    std::memcpy(&v, data.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
};

// Every rank's outcome of a phase: the same error thrown on every rank when
// any failed (the first failing rank's, named when the ranks disagree), so
// that no rank goes on into a collective the others never reach.
void RingRun::agree(std::exception_ptr mine) {
  if (!ranked()) {
    if (mine) std::rethrow_exception(mine);
    return;
  }
  char kind = 'k';
  std::string what;
  i64 asked = 0, in_use = 0;
  if (mine) {
    try {
      std::rethrow_exception(mine);
    } catch (const OutOfMemory& e) {
      kind = 'o', what = e.what(), asked = e.bytes_asked, in_use = e.bytes_in_use;
    } catch (const Unsupported& e) {
      kind = 's', what = e.what();
    } catch (const std::invalid_argument& e) {
      kind = 's', what = e.what();
    } catch (const std::exception& e) {
      kind = 'f', what = e.what();
    }
  }
  Bytes b;
  b.put(kind);
  b.put(asked);
  b.put(in_use);
  b.data += what;
  const std::vector<std::string> all = o_.group->allgather(b.data, P());
  int first = -1;
  bool same = true;
  for (int r = 0; r < P(); ++r) {
    const std::string& m = all[static_cast<std::size_t>(r)];
    if (m.empty() || m[0] == 'k') continue;
    if (first < 0) first = r;
    same = same && m == all[static_cast<std::size_t>(first)];
  }
  for (int r = 0; r < P() && same && first >= 0; ++r) same = all[static_cast<std::size_t>(r)][0] != 'k';
  if (first < 0) return;
  Bytes f{all[static_cast<std::size_t>(first)]};
  const char k = f.take<char>();
  const i64 a = f.take<i64>(), u = f.take<i64>();
  const std::string message = (same ? std::string() : "rank " + std::to_string(first) + ": ") + f.data.substr(f.at);
  if (k == 'o') throw OutOfMemory(message, a, u);
  if (k == 's') throw Unsupported(message);
  throw AgreedFailure(message);
}

// `whole` is an [N, row] tensor of which this rank filled its own chunks'
// rows: the other ranks' rows come from them.
void RingRun::share_rows(char* whole, i64 row_bytes) {
  if (!ranked()) return;
  const Rank& me = ranks_.front();
  std::string mine;
  for (const OwnChunk& c : me.own)
    mine.append(whole + c.chunk.begin * row_bytes, static_cast<std::size_t>(c.chunk.size() * row_bytes));
  const std::vector<std::string> all = o_.group->allgather(mine, P());
  for (int q = 0; q < P(); ++q) {
    if (q == me.index) continue;
    const std::string& got = all[static_cast<std::size_t>(q)];
    std::size_t at = 0;
    for (int c : held(q)) {
      const auto n = static_cast<std::size_t>(chunk(c).size() * row_bytes);
      if (at + n > got.size()) throw std::runtime_error("rank " + std::to_string(q) + " sent fewer rows than it holds");
      std::memcpy(whole + chunk(c).begin * row_bytes, got.data() + at, n);
      at += n;
    }
  }
}

// One run's times from every rank: the pass ends when the last GPU does;
// each GPU's steps and busy time are its own rank's.
RunTimes RingRun::share_times(const RunTimes& mine) {
  const int me = ranks_.front().index;
  Bytes b;
  b.put(mine.time_ms);
  b.put(mine.busy_ms[static_cast<std::size_t>(me)]);
  b.put(static_cast<i64>(mine.steps.size()));
  for (const sim::MeasuredStep& m : mine.steps) {
    b.put(m.gpu), b.put(m.step), b.put(m.pass), b.put(m.kv_owner);
    b.put(m.compute_start_ms), b.put(m.compute_end_ms), b.put(m.rung_ms), b.put(m.wait_ms);
    b.put(m.transfer_start_ms), b.put(m.transfer_end_ms), b.put(m.bytes_received);
  }
  RunTimes t;
  t.busy_ms.assign(static_cast<std::size_t>(P()), 0.0);
  const std::vector<std::string> all = o_.group->allgather(b.data, P());
  for (int q = 0; q < P(); ++q) {
    Bytes r{all[static_cast<std::size_t>(q)]};
    t.time_ms = std::max(t.time_ms, r.take<double>());
    t.busy_ms[static_cast<std::size_t>(q)] = r.take<double>();
    const i64 n = r.take<i64>();
    for (i64 k = 0; k < n; ++k) {
      sim::MeasuredStep m;
      m.gpu = r.take<int>(), m.step = r.take<int>(), m.pass = r.take<Pass>(), m.kv_owner = r.take<int>();
      m.compute_start_ms = r.take<double>(), m.compute_end_ms = r.take<double>();
      m.rung_ms = r.take<double>(), m.wait_ms = r.take<double>();
      m.transfer_start_ms = r.take<double>(), m.transfer_end_ms = r.take<double>();
      m.bytes_received = r.take<i64>();
      t.steps.push_back(m);
    }
  }
  return t;
}

i64 RingRun::sum_over_ranks(i64 mine) {
  if (!ranked()) return mine;
  Bytes b;
  b.put(mine);
  i64 sum = 0;
  for (const std::string& one : o_.group->allgather(b.data, P())) sum += Bytes{one}.take<i64>();
  return sum;
}

// ---- the forward ring ----------------------------------------------------------

// Every visible (own query chunk, held key chunk) pair of GPU g's step s, as
// the rung's launch arguments (problem, tiles, Q, K, V); for grouped-query
// attention K_j and V_j keep their H_kv heads when the rung reads them so
// (kv_native), else they are expanded to H heads once per key chunk; `each`
// fills in the rest and launches. Key chunks that no own query chunk sees are
// never loaded.
template <class Each>
void RingRun::for_each_pair(Rank& g, int s, void* package, const KernelInfo& rung, bool kv_native, Each each) {
  const int owner = sim::ring_kv_source(g.index, s, P());
  const std::vector<int>& kv_chunks = held(owner);
  for (std::size_t j = 0; j < kv_chunks.size(); ++j) {
    const RingChunk& kv = chunk(kv_chunks[j]);
    bool any = false;
    for (const OwnChunk& c : g.own) any |= sim::chunk_visibility(c.chunk, kv, p_.causal) != ChunkVisibility::none;
    if (!any) continue;
    const void* k = at(package, k_offset(owner, j), es());
    const void* v = at(package, k_offset(owner, j) + kv_elems(kv.size()), es());
    if (grouped() && !kv_native) {
      ring::expand_heads(g.k_exp, k, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim, g.compute);
      ring::expand_heads(g.v_exp, v, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim, g.compute);
      k = g.k_exp;
      v = g.v_exp;
    }
    for (OwnChunk& c : g.own) {
      const ChunkVisibility vis = sim::chunk_visibility(c.chunk, kv, p_.causal);
      if (vis == ChunkVisibility::none) continue;
      LaunchArgs a;
      a.problem = {p_.batch, p_.heads, c.chunk.size(), kv.size(), p_.head_dim, vis == ChunkVisibility::diagonal,
                   p_.dtype};
      a.tiles = rung.default_tiles ? rung.default_tiles(a.problem) : sim::TileShape{};
      a.softmax_scale = scale_;
      a.q = c.q;
      a.k = k;
      a.v = v;
      a.stream = g.compute;
      a.device_smem_optin = g.smem_optin;
      if (kv_native) a.problem.kv_heads = p_.h_kv();
      each(c, kv, k_offset(owner, j), a);
    }
  }
}

// One rung launch of GPU g's step s, bracketed by events (the step's rung time).
void RingRun::launch_rung(Rank& g, int s, const KernelInfo& rung, const LaunchArgs& a) {
  StepEvents& e = g.steps[static_cast<std::size_t>(s)];
  if (e.launched >= e.launches.size()) throw std::logic_error("the ring's step has more launches than it counted");
  const auto& ev = e.launches[e.launched++];
  FLASHLAB_CUDA_CHECK(cudaEventRecord(ev[0], g.compute));
  rung.launch(a);
  FLASHLAB_CUDA_CHECK(cudaEventRecord(ev[1], g.compute));
}

void RingRun::compute_forward_step(Rank& g, int s, void* package) {
  for_each_pair(g, s, package, *fwd_, fwd_kv_native_, [&](OwnChunk& c, const RingChunk&, i64, LaunchArgs& a) {
    a.workspace = g.fwd_ws;
    a.workspace_bytes = static_cast<std::size_t>(g.fwd_ws_bytes);
    if (c.direct()) {  // the chunk's only pair: the rung writes O and L itself
      a.o = c.o;
      a.lse = c.lse;
      launch_rung(g, s, *fwd_, a);
    } else if (fwd_folds_) {  // the rung folds its part into O_run, L (and writes O with the last)
      a.o = c.o;
      a.lse = c.lse;
      a.running.o = c.o_acc;
      a.running.step = c.merged == 0 ? Fold::start : c.merged + 1 == c.pairs_total ? Fold::finish : Fold::fold;
      launch_rung(g, s, *fwd_, a);
      ++c.merged;
    } else {
      a.o = g.o_part;
      a.lse = g.lse_part;
      launch_rung(g, s, *fwd_, a);
      ring::merge_partial(c.o_acc, c.lse, g.o_part, g.lse_part, p_.dtype, p_.batch * p_.heads * c.chunk.size(),
                          p_.head_dim, c.merged == 0, g.compute);
      ++c.merged;
    }
  });
  if (s == P() - 1 && !fwd_folds_)
    for (OwnChunk& c : g.own)
      if (!c.direct()) ring::convert_from_f32(c.o, c.o_acc, p_.dtype, q_elems(c.chunk.size()), g.compute);
}

// The package GPU g computes on at step s, and the buffer it receives into.
void* package_at(Rank& g, int s) { return s == 0 ? g.kv_home : g.kv_buf[static_cast<std::size_t>((s - 1) % 2)]; }

void RingRun::exchange(int s, bool backward) {
  // Forward: e_s (s ≤ P − 2) moves the K/V package of step s on. Backward:
  // also, for 1 ≤ s ≤ P, the running dK, dV of step s − 1; e_P is the homecoming.
  const bool kv = s <= P() - 2;
  const bool dkv = backward && s >= 1 && s <= P();
  if (!kv && !dkv) return;
  std::vector<ring::RankLink> links(ranks_.size());
  for (std::size_t k = 0; k < ranks_.size(); ++k) {
    Rank& g = ranks_[k];
    ring::RankLink& l = links[k];
    l.rank = g.index;
    l.device = g.device;
    l.stream = g.comm;
    const int owner_now = sim::ring_kv_source(g.index, s, P());
    const int owner_next = sim::ring_kv_source(g.index, s + 1, P());
    if (kv) {
      l.send.push_back({package_at(g, s), package_elems(owner_now) * es()});
      l.recv.push_back({g.kv_buf[static_cast<std::size_t>(s % 2)], package_elems(owner_next) * es()});
    }
    if (dkv && s == P() && dtype_homecoming_) {
      // The homecoming, rounded: chunk by chunk of the package (K then V of
      // each), straight into the owner's dK, dV.
      const int owner_prev = sim::ring_kv_source(g.index, s - 1, P());
      i64 at_elem = 0;
      for (int c : held(owner_prev)) {
        const i64 one = kv_elems(chunk(c).size());  // dK (or dV) of the chunk
        l.send.push_back({at(g.dkv_home, at_elem, es()), one * es()});
        l.send.push_back({at(g.dkv_home, at_elem + one, es()), one * es()});
        at_elem += 2 * one;
      }
      for (OwnChunk& c : g.own) {
        l.recv.push_back({c.dk, kv_elems(c.chunk.size()) * es()});
        l.recv.push_back({c.dv, kv_elems(c.chunk.size()) * es()});
      }
    } else if (dkv) {
      const int owner_prev = sim::ring_kv_source(g.index, s - 1, P());
      l.send.push_back({g.dkv_buf[static_cast<std::size_t>((s - 1) % 2)], package_elems(owner_prev) * 4});
      l.recv.push_back({g.dkv_buf[static_cast<std::size_t>(s % 2)], package_elems(owner_now) * 4});
    }
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    if (s >= 1) FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.comm, g.steps[static_cast<std::size_t>(s - 1)].done, 0));
    FLASHLAB_CUDA_CHECK(cudaEventRecord(g.steps[static_cast<std::size_t>(s)].x_start, g.comm));
  }
  transport_->exchange(links, P());
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaEventRecord(g.steps[static_cast<std::size_t>(s)].x_end, g.comm));
  }
}

void RingRun::begin_run(bool backward) {
  // Poison the pass's outputs, flush the L2, line the GPUs up, set the origins.
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      const i64 n = c.chunk.size();
      if (!backward) {
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.o, 0xff, static_cast<std::size_t>(q_elems(n) * es()), g.compute));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.lse, 0xff, static_cast<std::size_t>(p_.batch * p_.heads * n * 4), g.compute));
        c.merged = 0;
      } else {
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.dq, 0xff, static_cast<std::size_t>(q_elems(n) * es()), g.compute));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.dk, 0xff, static_cast<std::size_t>(kv_elems(n) * es()), g.compute));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.dv, 0xff, static_cast<std::size_t>(kv_elems(n) * es()), g.compute));
        if (c.dq_acc) FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.dq_acc, 0, static_cast<std::size_t>(q_elems(n) * 4), g.compute));
      }
    }
    if (g.flush) g.flush->write(g.compute);
  }
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.compute));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.comm));
  }
  if (ranked()) o_.group->barrier(P());  // the other processes' GPUs are idle too
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaEventRecord(g.origin, g.compute));
    FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.comm, g.origin, 0));
  }
  host_origin_ = std::chrono::steady_clock::now();
}

// GPU g's compute stream enters step s: it waits for the exchange that
// brought the step's K, V (e_{s−1}); the events around the wait time it.
StepEvents& RingRun::begin_step(Rank& g, int s) {
  StepEvents& e = g.steps[static_cast<std::size_t>(s)];
  e.host_start_ms = host_ms();
  FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
  e.launched = 0;
  FLASHLAB_CUDA_CHECK(cudaEventRecord(e.wait, g.compute));
  if (s >= 1) FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.compute, g.steps[static_cast<std::size_t>(s - 1)].x_end, 0));
  FLASHLAB_CUDA_CHECK(cudaEventRecord(e.start, g.compute));
  return e;
}

void RingRun::run_forward(bool) {
  begin_run(false);
  for (int s = 0; s < P(); ++s) {
    exchange(s, false);
    for (Rank& g : ranks_) {
      StepEvents& e = begin_step(g, s);
      compute_forward_step(g, s, package_at(g, s));
      FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_wait, g.compute));
      FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
      FLASHLAB_CUDA_CHECK(cudaEventRecord(e.done, g.compute));
      e.host_end_ms = host_ms();
    }
  }
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaEventRecord(g.end, g.compute));
  }
}

// ---- the backward ring ---------------------------------------------------------

void RingRun::compute_backward_step(Rank& g, int s, void* package, float* dkv_target) {
  for_each_pair(g, s, package, *bwd_, bwd_kv_native_, [&](OwnChunk& c, const RingChunk& kv, i64 k_at, LaunchArgs& a) {
    a.o = c.o;
    a.lse = c.lse;
    a.workspace = g.bwd_ws;
    a.workspace_bytes = static_cast<std::size_t>(g.bwd_ws_bytes);
    a.bwd.d_o = c.d_o;
    OwnChunk* home = nullptr;  // the key chunk's own entry, when the rung writes its dK, dV directly
    if (direct_kv())
      for (OwnChunk& h : g.own)
        if (h.chunk.index == kv.index) home = &h;
    float* dk_acc = home ? nullptr : at<float>(dkv_target, k_at, 4);
    float* dv_acc = home ? nullptr : at<float>(dkv_target, k_at + kv_elems(kv.size()), 4);
    if (bwd_adds_) {
      // The rung adds dQ into the chunk's running dQ and dK, dV into the
      // travelling fp32 package itself: nothing written to add afterwards.
      if (c.direct()) a.bwd.dq = c.dq;
      else a.bwd.dq_accum = c.dq_acc;
      if (home != nullptr) {
        a.bwd.dk = home->dk;
        a.bwd.dv = home->dv;
      } else {
        a.bwd.dk_accum = dk_acc;
        a.bwd.dv_accum = dv_acc;
      }
      launch_rung(g, s, *bwd_, a);
      return;
    }
    a.bwd.dq = c.direct() ? c.dq : g.dq_part;
    a.bwd.dk = home ? home->dk : g.dk_part;
    a.bwd.dv = home ? home->dv : g.dv_part;
    launch_rung(g, s, *bwd_, a);
    if (!c.direct()) ring::accumulate(c.dq_acc, g.dq_part, p_.dtype, q_elems(c.chunk.size()), g.compute);
    if (home != nullptr) return;
    if (grouped() && !bwd_kv_native_) {  // the rung wrote dK, dV of H heads: each group summed here
      ring::accumulate_grouped(dk_acc, g.dk_part, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim,
                               g.compute);
      ring::accumulate_grouped(dv_acc, g.dv_part, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim,
                               g.compute);
    } else {
      ring::accumulate(dk_acc, g.dk_part, p_.dtype, kv_elems(kv.size()), g.compute);
      ring::accumulate(dv_acc, g.dv_part, p_.dtype, kv_elems(kv.size()), g.compute);
    }
  });
}

void RingRun::run_backward(bool) {
  begin_run(true);
  for (int s = 0; s <= P(); ++s) {
    if (s == P() && P() == 1) break;  // one GPU: nothing comes home
    exchange(s, true);
    for (Rank& g : ranks_) {
      StepEvents& e = begin_step(g, s);
      if (s < P()) {
        const int owner = sim::ring_kv_source(g.index, s, P());
        const i64 pkg = package_elems(owner);
        // Step 0 sums straight into the first running buffer (nothing arrives
        // for it); later steps into the scratch, folded in once e_s is done.
        float* target = s == 0 ? g.dkv_buf[0] : g.dkv_scratch;
        if (!direct_kv()) FLASHLAB_CUDA_CHECK(cudaMemsetAsync(target, 0, static_cast<std::size_t>(pkg * 4), g.compute));
        compute_backward_step(g, s, package_at(g, s), target);
        FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_wait, g.compute));
        if (s >= 1) {
          FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.compute, e.x_end, 0));
          FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
          ring::add_f32(g.dkv_buf[static_cast<std::size_t>(s % 2)], g.dkv_scratch, pkg, g.compute);
        } else {
          FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
        }
        if (s == P() - 1 && dtype_homecoming_) {
          // The package's sum is finished: rounded once, it goes home with e_P;
          // dQ is finished too and need not wait for the homecoming.
          ring::convert_from_f32(g.dkv_home, g.dkv_buf[static_cast<std::size_t>(s % 2)], p_.dtype, pkg, g.compute);
          for (OwnChunk& c : g.own)
            if (!c.direct()) ring::convert_from_f32(c.dq, c.dq_acc, p_.dtype, q_elems(c.chunk.size()), g.compute);
        }
      } else {
        // The homecoming: this GPU's own dK, dV arrive with e_P.
        FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_wait, g.compute));
        FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.compute, e.x_end, 0));
        FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
      }
      // The last step: this GPU's own dK, dV (home at e_P, or kept at P = 1),
      // and dQ — unless the homecoming brought dK, dV rounded and dQ was done.
      if ((s == P() && !dtype_homecoming_) || (P() == 1 && s == 0)) {
        // One GPU summed into buffer 0; otherwise e_P brought them into buffer P mod 2.
        const float* mine = g.dkv_buf[static_cast<std::size_t>(P() == 1 ? 0 : P() % 2)];
        for (std::size_t j = 0; j < g.own.size(); ++j) {
          OwnChunk& c = g.own[j];
          const i64 n = c.chunk.size();
          if (!direct_kv()) {
            ring::convert_from_f32(c.dk, mine + k_offset(g.index, j), p_.dtype, kv_elems(n), g.compute);
            ring::convert_from_f32(c.dv, mine + k_offset(g.index, j) + kv_elems(n), p_.dtype, kv_elems(n), g.compute);
          }
          if (!c.direct()) ring::convert_from_f32(c.dq, c.dq_acc, p_.dtype, q_elems(n), g.compute);
        }
      }
      FLASHLAB_CUDA_CHECK(cudaEventRecord(e.done, g.compute));
      e.host_end_ms = host_ms();
    }
  }
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaEventRecord(g.end, g.compute));
  }
}

// ---- times -------------------------------------------------------------------------

float elapsed(cudaEvent_t from, cudaEvent_t to) {
  float ms = 0;
  FLASHLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, from, to));
  return ms;
}

RunTimes RingRun::read_times(Pass pass, bool backward) {
  RunTimes t;
  const int last = backward ? (P() == 1 ? 0 : P()) : P() - 1;
  t.busy_ms.assign(static_cast<std::size_t>(P()), 0.0);
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.compute));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.comm));
    t.time_ms = std::max<double>(t.time_ms, elapsed(g.origin, g.end));
    for (int s = 0; s <= last; ++s) {
      StepEvents& e = g.steps[static_cast<std::size_t>(s)];
      sim::MeasuredStep m;
      m.gpu = g.index;
      m.step = s;
      m.pass = pass;
      m.kv_owner = sim::ring_kv_source(g.index, std::min(s, P() - 1), P());
      if (s == P()) m.kv_owner = g.index;  // the homecoming brings the GPU's own dK, dV
      m.compute_start_ms = elapsed(g.origin, e.start);
      m.compute_end_ms = elapsed(g.origin, e.done);
      m.host_start_ms = e.host_start_ms;
      m.host_end_ms = e.host_end_ms;
      m.rung_ms = 0;
      for (std::size_t k = 0; k < e.launched; ++k) m.rung_ms += elapsed(e.launches[k][0], e.launches[k][1]);
      const double fold_wait = elapsed(e.fold_wait, e.fold_go);
      m.wait_ms = elapsed(e.wait, e.start) + fold_wait;
      t.busy_ms[static_cast<std::size_t>(g.index)] += m.compute_end_ms - m.compute_start_ms - fold_wait;
      const bool kv = s <= P() - 2;
      const bool dkv = backward && s >= 1 && s <= P();
      if (kv || dkv) {
        m.transfer_start_ms = elapsed(g.origin, e.x_start);
        m.transfer_end_ms = elapsed(g.origin, e.x_end);
        const int next = sim::ring_kv_source(g.index, s + 1, P());
        if (kv) m.bytes_received += package_elems(next) * es();
        if (dkv)
          m.bytes_received +=
              package_elems(sim::ring_kv_source(g.index, s, P())) * (s == P() && dtype_homecoming_ ? es() : 4);
      }
      t.steps.push_back(m);
    }
  }
  return ranked() ? share_times(t) : t;
}

void RingRun::time_pass(Pass pass, sim::PassTimes& times_out, sim::PassTimeline& m) {
  const bool backward = pass == Pass::bwd;
  auto run_once = [&] {
    if (backward) run_backward(true);
    else run_forward(true);
    return read_times(pass, backward);
  };
  double warm_ms = 0;
  for (int w = 0; w < o_.warmup; ++w) warm_ms = run_once().time_ms;
  note_device_used();
  std::vector<RunTimes> runs;
  const int repeats = std::max(1, sized_repeats(o_, warm_ms));
  for (int r = 0; r < repeats; ++r) runs.push_back(run_once());
  std::vector<double> times;
  for (const RunTimes& r : runs) times.push_back(r.time_ms);
  // The steps reported are one run's: the one in the middle (timing.hpp).
  const RunTimes& med = runs[median_run(times)];
  times_out.time_ms_median = med.time_ms;
  times_out.time_ms_min = *std::min_element(times.begin(), times.end());
  times_out.time_ms_max = *std::max_element(times.begin(), times.end());
  times_out.repeats = o_.repeats > 0 ? static_cast<int>(runs.size()) : 0;
  m.pass = pass;
  m.warmup = o_.warmup;
  m.steps = med.steps;
  std::vector<double> comm(static_cast<std::size_t>(P())), waited(comm);
  for (const sim::MeasuredStep& s : med.steps) {
    const auto g = static_cast<std::size_t>(s.gpu);
    if (s.transfer_end_ms >= 0) comm[g] += s.transfer_end_ms - s.transfer_start_ms;
    waited[g] += s.wait_ms;
  }
  std::vector<double> rung(comm.size(), 0.0);
  for (const sim::MeasuredStep& s : med.steps) rung[static_cast<std::size_t>(s.gpu)] += std::max(0.0, s.rung_ms);
  m.comm_ms = *std::max_element(comm.begin(), comm.end());
  m.exposed_comm_ms = *std::max_element(waited.begin(), waited.end());
  const auto busiest = std::max_element(med.busy_ms.begin(), med.busy_ms.end());
  m.compute_ms = *busiest;
  m.rung_ms = rung[static_cast<std::size_t>(busiest - med.busy_ms.begin())];
}

// ---- checks -----------------------------------------------------------------------

i64 RingRun::count_unwritten(bool backward) {
  i64 bad = 0;
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      const i64 n = c.chunk.size();
      if (!backward) {
        bad += detail::count_not_finite(c.o, q_elems(n), p_.dtype, g.counter, g.compute);
      } else {
        bad += detail::count_not_finite(c.dq, q_elems(n), p_.dtype, g.counter, g.compute);
        bad += detail::count_not_finite(c.dk, kv_elems(n), p_.dtype, g.counter, g.compute);
        bad += detail::count_not_finite(c.dv, kv_elems(n), p_.dtype, g.counter, g.compute);
      }
    }
  }
  return sum_over_ranks(bad);
}

std::vector<std::uint16_t> RingRun::gather(int tensor, i64 b, i64 h) {
  const bool kv_shaped = tensor == kK || tensor == kV || tensor == kDK || tensor == kDV;
  const i64 heads = kv_shaped ? p_.h_kv() : p_.heads;
  const i64 d = p_.head_dim;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(p_.seq_q * d));
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.compute));
    for (std::size_t j = 0; j < g.own.size(); ++j) {
      OwnChunk& c = g.own[j];
      const i64 n = c.chunk.size();
      const void* base = nullptr;
      switch (tensor) {
        case kQ: base = c.q; break;
        case kO: base = c.o; break;
        case kDO: base = c.d_o; break;
        case kDQ: base = c.dq; break;
        case kDK: base = c.dk; break;
        case kDV: base = c.dv; break;
        case kK: base = at(g.kv_home, k_offset(g.index, j), es()); break;
        case kV: base = at(g.kv_home, k_offset(g.index, j) + kv_elems(n), es()); break;
        default: break;
      }
      const char* src = static_cast<const char*>(base) + ((b * heads + h) * n) * d * es();
      FLASHLAB_CUDA_CHECK(cudaMemcpy(out.data() + c.chunk.begin * d, src, static_cast<std::size_t>(n * d * es()),
                                     cudaMemcpyDeviceToHost));
    }
  }
  share_rows(reinterpret_cast<char*>(out.data()), d * es());
  return out;
}

std::vector<float> RingRun::gather_lse(i64 b, i64 h) {
  std::vector<float> out(static_cast<std::size_t>(p_.seq_q));
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      const i64 n = c.chunk.size();
      FLASHLAB_CUDA_CHECK(cudaMemcpy(out.data() + c.chunk.begin, c.lse + (b * p_.heads + h) * n,
                                     static_cast<std::size_t>(n * 4), cudaMemcpyDeviceToHost));
    }
  }
  share_rows(reinterpret_cast<char*>(out.data()), 4);
  return out;
}

std::vector<double> as_doubles(const std::vector<std::uint16_t>& bits, sim::DType t) {
  return to_doubles(bits.data(), static_cast<i64>(bits.size()), t);
}

void RingRun::check_forward(sim::MeasuredRun& out) {
  const CheckPlan plan = plan_check(sim::whole_problem(p_), o_.check_flop_budget, o_.check == CheckMode::full);
  const i64 d = p_.head_dim, group = p_.heads / p_.h_kv();
  ErrorSums err;
  for (i64 flat : plan.heads) {
    const i64 b = flat / p_.heads, h = flat % p_.heads, hk = h / group;
    const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
    const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
    const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
    const std::vector<double> o = as_doubles(gather(kO, b, h), p_.dtype);
    const HeadReference ref(k.data(), v.data(), p_.seq_q, d);
    std::vector<double> got, want;
    std::vector<double> row(static_cast<std::size_t>(d));
    for (i64 r : plan.rows) {
      ref.row(q.data() + r * d, r, scale_, p_.causal, row.data());
      want.insert(want.end(), row.begin(), row.end());
      got.insert(got.end(), o.begin() + r * d, o.begin() + (r + 1) * d);
    }
    err += error_sums(got, want);
  }
  out.rel_error = err.relative();
  std::ostringstream note;
  note << (plan.all() ? "O of every row of every head" : "O of " + std::to_string(plan.rows.size()) + " rows in " +
                                                             std::to_string(plan.heads.size()) + " of " +
                                                             std::to_string(plan.n_heads_total) + " heads");
  out.parallel_part().check_note = note.str();
}

void RingRun::check_backward(sim::MeasuredRun& out) {
  sim::ParallelRun& pr = out.parallel_part();
  const BackwardCheckPlan plan =
      plan_check_backward(sim::whole_problem(p_), o_.check_flop_budget, o_.check == CheckMode::full);
  const i64 d = p_.head_dim, N = p_.seq_q, group = p_.heads / p_.h_kv();
  ErrorSums dq_err, dk_err, dv_err;
  if (plan.keys) {
    // Whole K/V heads: every query head of each checked head's group.
    std::vector<i64> kv_heads;
    for (i64 flat : plan.rows.heads) {
      const i64 kvh = (flat / p_.heads) * p_.h_kv() + (flat % p_.heads) / group;
      if (std::find(kv_heads.begin(), kv_heads.end(), kvh) == kv_heads.end()) kv_heads.push_back(kvh);
    }
    for (i64 kvflat : kv_heads) {
      const i64 b = kvflat / p_.h_kv(), hk = kvflat % p_.h_kv();
      const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
      const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
      std::vector<double> dk(static_cast<std::size_t>(N * d), 0.0), dv(dk);
      for (i64 h = hk * group; h < (hk + 1) * group; ++h) {
        const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
        const std::vector<double> dO = as_doubles(gather(kDO, b, h), p_.dtype);
        const HeadGradients g = head_gradients(q.data(), k.data(), v.data(), dO.data(), N, N, d, scale_, p_.causal);
        dq_err += error_sums(as_doubles(gather(kDQ, b, h), p_.dtype), g.dq);
        for (std::size_t i = 0; i < dk.size(); ++i) {
          dk[i] += g.dk[i];
          dv[i] += g.dv[i];
        }
      }
      dk_err += error_sums(as_doubles(gather(kDK, b, hk), p_.dtype), dk);
      dv_err += error_sums(as_doubles(gather(kDV, b, hk), p_.dtype), dv);
    }
    pr.rel_error_grads = backward_error(dq_err, dk_err, dv_err);
    pr.check_note += "; dQ, dK, dV of " + std::to_string(kv_heads.size()) + " K/V head(s) whole";
    return;
  }
  for (i64 flat : plan.rows.heads) {
    const i64 b = flat / p_.heads, h = flat % p_.heads, hk = h / group;
    const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
    const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
    const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
    const std::vector<double> dO = as_doubles(gather(kDO, b, h), p_.dtype);
    const std::vector<double> dq = as_doubles(gather(kDQ, b, h), p_.dtype);
    const HeadReference ref(k.data(), v.data(), N, d);
    std::vector<double> row(static_cast<std::size_t>(d)), got, want;
    for (i64 r : plan.rows.rows) {
      ref.backward_row(q.data() + r * d, dO.data() + r * d, r, scale_, p_.causal, row.data(), nullptr, nullptr);
      want.insert(want.end(), row.begin(), row.end());
      got.insert(got.end(), dq.begin() + r * d, dq.begin() + (r + 1) * d);
    }
    dq_err += error_sums(got, want);
  }
  pr.rel_error_grads = dq_err.relative();
  pr.check_note += "; dQ of " + std::to_string(plan.rows.rows.size()) + " rows in " +
                    std::to_string(plan.rows.heads.size()) + " heads (dK, dV of a head this long: not checked)";
}

void RingRun::gather_all(RingTensors& t) {
  auto whole = [&](int tensor, i64 heads) {
    std::vector<std::uint16_t> all;
    for (i64 b = 0; b < p_.batch; ++b)
      for (i64 h = 0; h < heads; ++h) {
        const std::vector<std::uint16_t> one = gather(tensor, b, h);
        all.insert(all.end(), one.begin(), one.end());
      }
    return all;
  };
  t.q = whole(kQ, p_.heads);
  t.k = whole(kK, p_.h_kv());
  t.v = whole(kV, p_.h_kv());
  t.o = whole(kO, p_.heads);
  t.lse.clear();
  for (i64 b = 0; b < p_.batch; ++b)
    for (i64 h = 0; h < p_.heads; ++h) {
      const std::vector<float> one = gather_lse(b, h);
      t.lse.insert(t.lse.end(), one.begin(), one.end());
    }
  if (p_.backward()) {
    t.d_o = whole(kDO, p_.heads);
    t.dq = whole(kDQ, p_.heads);
    t.dk = whole(kDK, p_.h_kv());
    t.dv = whole(kDV, p_.h_kv());
  }
}

sim::MeasuredRun RingRun::run(RingTensors* gathered) {
  sim::MeasuredRun out;
  sim::ParallelRun& pr = out.parallel_part();
  out.problem = p_;
  pr.transport = std::string(ring_transport_name(o_.transport));
  pr.steps = std::string(ring_steps_name(o_.steps));
  pr.comm_stream = o_.comm_priority ? "priority" : "default";
  bool agreed = false;  // a failure every rank reached alike (nothing left waiting)
  try {
    // Each rank's own setup; with a process per GPU all of them agree on its
    // outcome before NCCL's collective start, so none is left waiting there.
    std::exception_ptr setup;
    try {
      if (const auto why = sim::validate(p_); !why.empty()) throw Unsupported(why.front().message);
      if (p_.dtype == sim::DType::fp32) throw Unsupported("the ring runs fp16 and bf16 (the tensor-core rungs)");
      part_ = sim::ring_partition(p_.seq_q, p_.gpus(), p_.layout());
      scale_ = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p_.head_dim)));
      choose_rungs();
      out.kernel = fwd_->id;
      pr.backward_kernel = bwd_ ? bwd_->id : std::string();
      if (const std::string why = ranked() ? ring_unavailable_reason(1, o_.transport, o_.devices)
                                           : ring_unavailable_reason(P(), o_.transport, o_.devices);
          !why.empty())
        throw Unsupported(why);
      if (ranked() && o_.devices.size() != 1)
        throw std::invalid_argument("a rank of the ring runs on one device (" + std::to_string(o_.devices.size()) +
                                    " given)");
      open_ranks();
      allocate();
      fill_inputs();
    } catch (const RendezvousError&) {
      throw;
    } catch (...) {
      setup = std::current_exception();
    }
    agree(setup);
    open_transport();

    // Forward: a checked run, then the timed ones.
    run_forward(false);
    if (const i64 bad = count_unwritten(false); bad > 0)
      throw AgreedFailure(std::to_string(bad) + " elements of O were not written (or not finite)");
    if (o_.check != CheckMode::off) check_forward(out);
    if (o_.repeats > 0) time_pass(Pass::fwd, out, pr.forward);
    if (const i64 bad = count_unwritten(false); bad > 0)
      throw AgreedFailure(std::to_string(bad) + " elements of O were not written in the timed runs");
    if (p_.backward()) {
      run_backward(false);
      if (const i64 bad = count_unwritten(true); bad > 0)
        throw AgreedFailure(std::to_string(bad) + " elements of dQ, dK, dV were not written (or not finite)");
      if (o_.check != CheckMode::off) check_backward(out);
      sim::MeasuredBackward& b = pr.backward.emplace();
      if (o_.repeats > 0) time_pass(Pass::bwd, b, b.timeline);
      if (const i64 bad = count_unwritten(true); bad > 0)
        throw AgreedFailure(std::to_string(bad) + " elements of dQ, dK, dV were not written in the timed runs");
    }
    note_device_used();
    for (Rank& g : ranks_) {
      pr.peak_allocated_bytes.push_back(g.arena->peak_bytes());
      pr.peak_device_used_bytes.push_back(g.peak_device_used);
    }
    if (ranked()) {
      std::vector<i64> allocated, used;
      Bytes b;
      b.put(pr.peak_allocated_bytes.front());
      b.put(pr.peak_device_used_bytes.front());
      for (const std::string& one : o_.group->allgather(b.data, P())) {
        Bytes r{one};
        allocated.push_back(r.take<i64>());
        used.push_back(r.take<i64>());
      }
      pr.peak_allocated_bytes = allocated;
      pr.peak_device_used_bytes = used;
    }
    if (gathered) gather_all(*gathered);
  } catch (const RendezvousError&) {
    release();
    throw;  // the job's ranks can no longer meet: the caller stops
  } catch (const OutOfMemory& e) {
    out.status = sim::RunStatus::oom;
    out.reason = e.what();
  } catch (const Unsupported& e) {
    out.status = sim::RunStatus::skipped;
    out.reason = e.what();
  } catch (const std::invalid_argument& e) {
    out.status = sim::RunStatus::skipped;
    out.reason = e.what();
  } catch (const AgreedFailure& e) {
    out.status = sim::RunStatus::failed;
    out.reason = e.what();
    agreed = true;
  } catch (const std::exception& e) {
    out.status = sim::RunStatus::failed;
    out.reason = e.what();
  }
  // A rank that failed on its own, in a pass, has left the others waiting at
  // the next exchange: they hear why and stop there.
  if (ranked() && out.status == sim::RunStatus::failed && !agreed) o_.group->abort(out.reason);
  if (pr.peak_allocated_bytes.empty())  // a run that stopped early: what it had allocated
    for (Rank& g : ranks_) pr.peak_allocated_bytes.push_back(g.arena ? g.arena->peak_bytes() : 0);
  for (i64 b : pr.peak_allocated_bytes) out.peak_memory_bytes = std::max(out.peak_memory_bytes, b);
  release();
  return out;
}

}  // namespace

sim::RunMeta ring_meta(const RingOptions& options, int gpus, const RankEnvironment* ranks);

namespace {

std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

// A process per GPU: rank 0's machine meta, every rank's host, device and GPU.
sim::RunMeta ranked_ring_meta(const RingOptions& options, int gpus, const RankEnvironment* env) {
  RankGroup& group = *options.group;
  RingOptions one = options;
  one.group = nullptr;
  sim::RunMeta meta = ring_meta(one, 1, nullptr);
  sim::ParallelMeta& m = meta.parallel_part();
  const int device = options.devices.empty() ? 0 : options.devices.front();
  const std::string mine = std::to_string(env ? env->local_rank : 0) + "\n" + std::to_string(device) + "\n" +
                           host_name() + "\n" + query_device(device).name;
  const std::vector<std::string> all = group.allgather(mine, gpus);
  m.launcher = env ? env->launcher : std::string("ranks");
  m.gpu_names.clear();
  std::vector<std::pair<std::string, int>> per_host;
  for (int r = 0; r < gpus; ++r) {
    std::istringstream in(all[static_cast<std::size_t>(r)]);
    sim::ProcessRank k;
    k.rank = r;
    std::string line;
    std::getline(in, line);
    k.local_rank = std::atoi(line.c_str());
    std::getline(in, line);
    k.device = std::atoi(line.c_str());
    std::getline(in, k.host);
    std::getline(in, k.gpu);
    m.gpu_names.push_back(k.gpu);
    auto h = std::find_if(per_host.begin(), per_host.end(), [&](const auto& p) { return p.first == k.host; });
    if (h == per_host.end()) per_host.push_back({k.host, 1});
    else ++h->second;
    m.ranks.push_back(k);
  }
  for (const auto& h : per_host) m.gpus_per_node = std::max(m.gpus_per_node, h.second);
  m.nccl_version = ring::nccl_version();
  return meta;
}

}  // namespace

std::string ring_unavailable_reason(int gpus, RingTransport transport, const std::vector<int>& devices) {
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) return why;
  if (gpus < 1) return "the ring needs at least 1 GPU, not " + std::to_string(gpus);
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  if (transport == RingTransport::local) return {};
  if (!devices.empty() && static_cast<int>(devices.size()) != gpus)
    return "the ring on " + std::to_string(gpus) + " GPUs was given " + std::to_string(devices.size()) + " devices";
  for (std::size_t i = 0; i < devices.size(); ++i) {
    if (devices[i] < 0 || devices[i] >= count)
      return "device " + std::to_string(devices[i]) + " does not exist (this machine shows " + std::to_string(count) +
             " GPU" + (count == 1 ? "" : "s") + ")";
    for (std::size_t j = 0; j < i; ++j)
      if (devices[j] == devices[i])
        return "device " + std::to_string(devices[i]) + " is named twice: NCCL runs one rank per GPU";
  }
  if (devices.empty() && gpus > count)
    return "the ring asks for " + std::to_string(gpus) + " GPUs and this machine shows " + std::to_string(count);
  return ring::nccl_unavailable_reason();
}

sim::MeasuredRun run_ring(const sim::AttentionProblem& problem, const RingOptions& options, RingTensors* gathered) {
  RingRun run(problem, options);
  return run.run(gathered);
}

sim::RunMeta ring_meta(const RingOptions& options, int gpus, const RankEnvironment* ranks) {
  if (options.group != nullptr && gpus > 1) return ranked_ring_meta(options, gpus, ranks);
  // The meta of the ring's first GPU (its device, clocks, driver).
  const int first = options.transport == RingTransport::local || options.devices.empty() ? 0 : options.devices.front();
  std::unique_ptr<Backend> b = open_cuda_backend(first);
  sim::RunMeta meta = bench_meta(*b, options);  // the runner's metadata: the ring's options are its options
  sim::ParallelMeta& m = meta.parallel_part();
  int count = 0;
  if (cudaGetDeviceCount(&count) == cudaSuccess) m.gpu_count = count;
  for (int r = 0; r < gpus; ++r) {
    const int dev = options.transport == RingTransport::local
                        ? 0
                        : (options.devices.empty() ? r : options.devices[static_cast<std::size_t>(r)]);
    if (dev >= count) continue;
    std::string name = query_device(dev).name;
    if (options.transport == RingTransport::local) name += " (virtual GPU " + std::to_string(r) + " on device 0)";
    m.gpu_names.push_back(name);
  }
  if (options.transport == RingTransport::nccl) m.nccl_version = ring::nccl_version();
  m.environment = detail::nccl_environment();
  m.topology = nvidia_smi_topology();
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  return meta;
}

}  // namespace flashlab::kernels
