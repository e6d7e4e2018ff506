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
#include <cmath>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>

#include "device/cuda_check.hpp"
#include "device/device_utils.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "ring_merge.hpp"
#include "ring_run.hpp"
#include "ring_transport.hpp"
#include "nccl_api.hpp"

namespace flashlab::kernels {
namespace ring {

using detail::kSeedDO;
using detail::kSeedK;
using detail::kSeedQ;
using detail::kSeedV;

void RingRun::choose_rungs() {
  const DeviceInfo d0 = query_device(o_.devices.empty() ? 0 : o_.devices.front());
  fwd_ = o_.forward != nullptr ? o_.forward : default_ring_forward(d0.compute_capability, p_.head_dim);
  if (fwd_ == nullptr) throw Unsupported("no forward rung that writes the logsumexp runs on " + d0.name);
  if (!fwd_->writes_lse)
    throw Unsupported(fwd_->id + " does not write the logsumexp, which the ring's merge needs");
  if (fwd_->pass() != sim::Pass::fwd) throw Unsupported(fwd_->id + " is not a forward rung");
  if (p_.backward()) {
    bwd_ = o_.backward != nullptr ? o_.backward : default_ring_backward(d0.compute_capability, p_.head_dim, p_.causal);
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
      const sim::DType t = p_.dtype;
      c.q = allocate_dtype(a, q_elems(n), t, "Q" + of);
      c.o = allocate_dtype(a, q_elems(n), t, "O" + of);
      c.lse = allocate_f32(a, p_.batch * p_.heads * n, "the logsumexp" + of);
      if (!c.direct()) c.o_acc = allocate_f32(a, q_elems(n), "the running O (fp32)" + of);
      if (p_.backward()) {
        c.d_o = allocate_dtype(a, q_elems(n), t, "dO" + of);
        c.dq = allocate_dtype(a, q_elems(n), t, "dQ" + of);
        if (!c.direct()) c.dq_acc = allocate_f32(a, q_elems(n), "the running dQ (fp32)" + of);
        c.dk = allocate_dtype(a, kv_elems(n), t, "dK" + of);
        c.dv = allocate_dtype(a, kv_elems(n), t, "dV" + of);
      }
    }
    const sim::DType t = p_.dtype;
    g.kv_home = allocate_dtype(a, package_elems(g.index), t, "K, V of its own chunks" + on);
    if (P() > 1)
      for (DtypeBuffer& b : g.kv_buf) b = allocate_dtype(a, pkg_max, t, "a K/V buffer" + on);
    if (grouped() && (!fwd_kv_native_ || (p_.backward() && !bwd_kv_native_))) {
      g.k_exp = allocate_dtype(a, q_elems(n_max), t, "K_j expanded to H heads" + on);
      g.v_exp = allocate_dtype(a, q_elems(n_max), t, "V_j expanded to H heads" + on);
    }
    if (!fwd_folds_) {
      g.o_part = allocate_dtype(a, q_elems(n_max), t, "a partial O" + on);
      g.lse_part = allocate_f32(a, p_.batch * p_.heads * n_max, "a partial logsumexp" + on);
    }
    if (fwd_->workspace_bytes)
      g.fwd_ws = allocate_workspace(a, fwd_->workspace_bytes(biggest, fwd_tiles), fwd_->id + "'s workspace" + on);
    if (p_.backward()) {
      for (F32Buffer& b : g.dkv_buf) b = allocate_f32(a, pkg_max, "a dK/dV buffer (fp32)" + on);
      if (P() > 1) g.dkv_scratch = allocate_f32(a, pkg_max, "a step's dK/dV (fp32)" + on);
      if (dtype_homecoming_) g.dkv_home = allocate_dtype(a, pkg_max, t, "the finished dK/dV going home" + on);
      if (!bwd_adds_) {
        g.dq_part = allocate_dtype(a, q_elems(n_max), t, "a partial dQ" + on);
        g.dk_part = allocate_dtype(a, q_elems(n_max), t, "a partial dK" + on);
        g.dv_part = allocate_dtype(a, q_elems(n_max), t, "a partial dV" + on);
      }
      if (bwd_->workspace_bytes) {
        const sim::TileShape bt = bwd_->default_tiles ? bwd_->default_tiles(biggest) : sim::TileShape{};
        g.bwd_ws = allocate_workspace(a, bwd_->workspace_bytes(biggest, bt), bwd_->id + "'s workspace" + on);
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
      ring::fill_chunk_normal(c.q.data, p_.dtype, p_.batch, p_.heads, n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedQ,
                              scale, g.compute);
      void* k = g.kv_home.at(k_offset(g.index, j));
      void* v = g.kv_home.at(k_offset(g.index, j) + kv_elems(n));
      ring::fill_chunk_normal(k, p_.dtype, p_.batch, p_.h_kv(), n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedK,
                              scale, g.compute);
      ring::fill_chunk_normal(v, p_.dtype, p_.batch, p_.h_kv(), n, p_.head_dim, p_.seq_q, begin, o_.seed ^ kSeedV,
                              scale, g.compute);
      if (p_.backward())
        ring::fill_chunk_normal(c.d_o.data, p_.dtype, p_.batch, p_.heads, n, p_.head_dim, p_.seq_q, begin,
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

// ---- the forward ring ----------------------------------------------------------

// Every visible (own query chunk, held key chunk) pair of GPU g's step s, as
// the rung's launch arguments (problem, tiles, Q, K, V); for grouped-query
// attention K_j and V_j keep their H_kv heads when the rung reads them so
// (kv_native), else they are expanded to H heads once per key chunk; `each`
// fills in the rest and launches. Key chunks that no own query chunk sees are
// never loaded.
template <class Each>
void RingRun::for_each_pair(Rank& g, int s, const DtypeBuffer& package, const KernelInfo& rung, bool kv_native,
                            Each each) {
  const int owner = sim::ring_kv_source(g.index, s, P());
  const std::vector<int>& kv_chunks = held(owner);
  for (std::size_t j = 0; j < kv_chunks.size(); ++j) {
    const RingChunk& kv = chunk(kv_chunks[j]);
    bool any = false;
    for (const OwnChunk& c : g.own) any |= sim::chunk_visibility(c.chunk, kv, p_.causal) != ChunkVisibility::none;
    if (!any) continue;
    const void* k = package.at(k_offset(owner, j));
    const void* v = package.at(k_offset(owner, j) + kv_elems(kv.size()));
    if (grouped() && !kv_native) {
      ring::expand_heads(g.k_exp.data, k, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim, g.compute);
      ring::expand_heads(g.v_exp.data, v, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim, g.compute);
      k = g.k_exp.data;
      v = g.v_exp.data;
    }
    for (OwnChunk& c : g.own) {
      const ChunkVisibility vis = sim::chunk_visibility(c.chunk, kv, p_.causal);
      if (vis == ChunkVisibility::none) continue;
      LaunchArgs a;
      a.problem = {p_.batch, p_.heads, c.chunk.size(), kv.size(), p_.head_dim, vis == ChunkVisibility::diagonal,
                   p_.dtype};
      a.tiles = rung.default_tiles ? rung.default_tiles(a.problem) : sim::TileShape{};
      a.softmax_scale = scale_;
      a.q = c.q.data;
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

void RingRun::compute_forward_step(Rank& g, int s, const DtypeBuffer& package) {
  for_each_pair(g, s, package, *fwd_, fwd_kv_native_, [&](OwnChunk& c, const RingChunk&, i64, LaunchArgs& a) {
    a.workspace = g.fwd_ws.data;
    a.workspace_bytes = static_cast<std::size_t>(g.fwd_ws.bytes);
    if (c.direct()) {  // the chunk's only pair: the rung writes O and L itself
      a.o = c.o.data;
      a.lse = c.lse.data;
      launch_rung(g, s, *fwd_, a);
    } else if (fwd_folds_) {  // the rung folds its part into O_run, L (and writes O with the last)
      a.o = c.o.data;
      a.lse = c.lse.data;
      a.running.o = c.o_acc.data;
      a.running.step = c.merged == 0 ? Fold::start : c.merged + 1 == c.pairs_total ? Fold::finish : Fold::fold;
      launch_rung(g, s, *fwd_, a);
      ++c.merged;
    } else {
      a.o = g.o_part.data;
      a.lse = g.lse_part.data;
      launch_rung(g, s, *fwd_, a);
      ring::merge_partial(c.o_acc.data, c.lse.data, g.o_part.data, g.lse_part.data, p_.dtype, p_.batch * p_.heads * c.chunk.size(),
                          p_.head_dim, c.merged == 0, g.compute);
      ++c.merged;
    }
  });
  if (s == P() - 1 && !fwd_folds_)
    for (OwnChunk& c : g.own)
      if (!c.direct()) ring::convert_from_f32(c.o.data, c.o_acc.data, p_.dtype, c.o.elems, g.compute);
}

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
      l.send.push_back({package_at(g, s).data, package_elems(owner_now) * es()});
      l.recv.push_back({g.kv_buf[static_cast<std::size_t>(s % 2)].data, package_elems(owner_next) * es()});
    }
    if (dkv && s == P() && dtype_homecoming_) {
      // The homecoming, rounded: chunk by chunk of the package (K then V of
      // each), straight into the owner's dK, dV.
      const int owner_prev = sim::ring_kv_source(g.index, s - 1, P());
      i64 at_elem = 0;
      for (int c : held(owner_prev)) {
        const i64 one = kv_elems(chunk(c).size());  // dK (or dV) of the chunk
        l.send.push_back({g.dkv_home.at(at_elem), one * es()});
        l.send.push_back({g.dkv_home.at(at_elem + one), one * es()});
        at_elem += 2 * one;
      }
      for (OwnChunk& c : g.own) {
        l.recv.push_back({c.dk.data, c.dk.bytes()});
        l.recv.push_back({c.dv.data, c.dv.bytes()});
      }
    } else if (dkv) {
      const int owner_prev = sim::ring_kv_source(g.index, s - 1, P());
      l.send.push_back({g.dkv_buf[static_cast<std::size_t>((s - 1) % 2)].data, package_elems(owner_prev) * 4});
      l.recv.push_back({g.dkv_buf[static_cast<std::size_t>(s % 2)].data, package_elems(owner_now) * 4});
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

void RingRun::compute_backward_step(Rank& g, int s, const DtypeBuffer& package, const F32Buffer& dkv_target) {
  for_each_pair(g, s, package, *bwd_, bwd_kv_native_, [&](OwnChunk& c, const RingChunk& kv, i64 k_at, LaunchArgs& a) {
    a.o = c.o.data;
    a.lse = c.lse.data;
    a.workspace = g.bwd_ws.data;
    a.workspace_bytes = static_cast<std::size_t>(g.bwd_ws.bytes);
    a.bwd.d_o = c.d_o.data;
    OwnChunk* home = nullptr;  // the key chunk's own entry, when the rung writes its dK, dV directly
    if (direct_kv())
      for (OwnChunk& h : g.own)
        if (h.chunk.index == kv.index) home = &h;
    float* dk_acc = home ? nullptr : dkv_target.at(k_at);
    float* dv_acc = home ? nullptr : dkv_target.at(k_at + kv_elems(kv.size()));
    if (bwd_adds_) {
      // The rung adds dQ into the chunk's running dQ and dK, dV into the
      // travelling fp32 package itself: nothing written to add afterwards.
      if (c.direct()) a.bwd.dq = c.dq.data;
      else a.bwd.dq_accum = c.dq_acc.data;
      if (home != nullptr) {
        a.bwd.dk = home->dk.data;
        a.bwd.dv = home->dv.data;
      } else {
        a.bwd.dk_accum = dk_acc;
        a.bwd.dv_accum = dv_acc;
      }
      launch_rung(g, s, *bwd_, a);
      return;
    }
    a.bwd.dq = c.direct() ? c.dq.data : g.dq_part.data;
    a.bwd.dk = home ? home->dk.data : g.dk_part.data;
    a.bwd.dv = home ? home->dv.data : g.dv_part.data;
    launch_rung(g, s, *bwd_, a);
    if (!c.direct()) ring::accumulate(c.dq_acc.data, g.dq_part.data, p_.dtype, q_elems(c.chunk.size()), g.compute);
    if (home != nullptr) return;
    if (grouped() && !bwd_kv_native_) {  // the rung wrote dK, dV of H heads: each group summed here
      ring::accumulate_grouped(dk_acc, g.dk_part.data, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim,
                               g.compute);
      ring::accumulate_grouped(dv_acc, g.dv_part.data, p_.dtype, p_.batch, p_.heads, p_.h_kv(), kv.size(), p_.head_dim,
                               g.compute);
    } else {
      ring::accumulate(dk_acc, g.dk_part.data, p_.dtype, kv_elems(kv.size()), g.compute);
      ring::accumulate(dv_acc, g.dv_part.data, p_.dtype, kv_elems(kv.size()), g.compute);
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
        const F32Buffer& target = s == 0 ? g.dkv_buf[0] : g.dkv_scratch;
        if (!direct_kv())
          FLASHLAB_CUDA_CHECK(cudaMemsetAsync(target.data, 0, static_cast<std::size_t>(pkg * 4), g.compute));
        compute_backward_step(g, s, package_at(g, s), target);
        FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_wait, g.compute));
        if (s >= 1) {
          FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.compute, e.x_end, 0));
          FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
          ring::add_f32(g.dkv_buf[static_cast<std::size_t>(s % 2)].data, g.dkv_scratch.data, pkg, g.compute);
        } else {
          FLASHLAB_CUDA_CHECK(cudaEventRecord(e.fold_go, g.compute));
        }
        if (s == P() - 1 && dtype_homecoming_) {
          // The package's sum is finished: rounded once, it goes home with e_P;
          // dQ is finished too and need not wait for the homecoming.
          ring::convert_from_f32(g.dkv_home.data, g.dkv_buf[static_cast<std::size_t>(s % 2)].data, p_.dtype, pkg,
                                 g.compute);
          for (OwnChunk& c : g.own)
            if (!c.direct()) ring::convert_from_f32(c.dq.data, c.dq_acc.data, p_.dtype, c.dq.elems, g.compute);
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
        const F32Buffer& mine = g.dkv_buf[static_cast<std::size_t>(P() == 1 ? 0 : P() % 2)];
        for (std::size_t j = 0; j < g.own.size(); ++j) {
          OwnChunk& c = g.own[j];
          const i64 n = c.chunk.size();
          if (!direct_kv()) {
            ring::convert_from_f32(c.dk.data, mine.at(k_offset(g.index, j)), p_.dtype, kv_elems(n), g.compute);
            ring::convert_from_f32(c.dv.data, mine.at(k_offset(g.index, j) + kv_elems(n)), p_.dtype, kv_elems(n),
                                   g.compute);
          }
          if (!c.direct()) ring::convert_from_f32(c.dq.data, c.dq_acc.data, p_.dtype, q_elems(n), g.compute);
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
    note_peaks(pr);
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

}  // namespace ring

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
  ring::RingRun run(problem, options);
  return run.run(gathered);
}

}  // namespace flashlab::kernels
