// A run of the ring in time: its start (the outputs poisoned, the L2 flushed,
// the GPUs lined up behind a barrier, the origins recorded), each step's entry,
// the events read back into each GPU's steps, and a pass timed by the one
// timing loop (flashlab/kernels/device/timing.hpp), reporting its median run.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <vector>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/device/timing.hpp"
#include "ring_run.hpp"

namespace flashlab::kernels::ring {

void RingRun::begin_run(bool backward) {
  // Poison the pass's outputs, flush the L2, line the GPUs up, set the origins.
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      if (!backward) {
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.o.data, 0xff, static_cast<std::size_t>(c.o.bytes()), g.compute));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.lse.data, 0xff, static_cast<std::size_t>(c.lse.bytes()), g.compute));
        c.merged = 0;
      } else {
        for (const DtypeBuffer* t : {&c.dq, &c.dk, &c.dv})
          FLASHLAB_CUDA_CHECK(cudaMemsetAsync(t->data, 0xff, static_cast<std::size_t>(t->bytes()), g.compute));
        if (c.dq_acc)
          FLASHLAB_CUDA_CHECK(cudaMemsetAsync(c.dq_acc.data, 0, static_cast<std::size_t>(c.dq_acc.bytes()), g.compute));
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
  int started = 0;
  const std::vector<RunTimes> runs = timed_loop(
      o_, o_.warmup,
      [&](int) {
        if (started++ == o_.warmup) note_device_used();  // the warm-ups' memory, before the timed runs
        if (backward) run_backward(true);
        else run_forward(true);
        return read_times(pass, backward);
      },
      [](const RunTimes& t) { return t.time_ms; });
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

}  // namespace flashlab::kernels::ring
