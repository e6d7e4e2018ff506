// What one host thread spends issuing the ring's work, as measured on a
// machine (`flashlab links`: the stream calls, a small kernel's launch, one
// NCCL exchange over the machine's GPUs; `flashlab ceilings rungs`: each
// rung's launch on the host). One process drives every GPU of the ring
// (kernels/src/ring/ring_runner.cpp): for each step it issues the exchange, then
// each GPU's launches and events in turn. When a step's GPU work is shorter
// than the host's issuing of it, the GPUs wait for the host — the short steps'
// time that no compute model explains. Plain values; no CUDA.
#pragma once

#include <string>

namespace flashlab::sim {

struct HostIssueCosts {
  double call_s = 0;      // one stream call: cudaEventRecord, cudaStreamWaitEvent, cudaSetDevice, a memset
  double launch_s = 0;    // one launch of a small kernel (the ring's merges, sums, conversions)
  double exchange_s = 0;  // one exchange: an NCCL group of every GPU's send and receive over `gpus` GPUs
  int gpus = 0;           // the GPUs of the measured exchange
  // The SMs the exchange's kernel held on a GPU while in flight (NCCL's send
  // and receive run as CTAs on the SMs; the most over the measured GPUs):
  // meanwhile a rung whose CTA fills an SM runs on the others. 0: not measured.
  int exchange_sms = 0;
  std::string source;     // "measured on 2× NVIDIA H200, 2026-11-27"
  // A process per GPU (flashlab bench --ranks): each GPU's host issues its
  // own turn and its own part of the exchange, beside the others.
  bool host_per_gpu = false;
  bool measured() const { return call_s > 0 || launch_s > 0 || exchange_s > 0; }
  // Whether a ring of `ring_gpus` with `gpus_per_node` a node has a host per
  // GPU: asked for, or a ring over nodes (one process cannot drive another
  // node's GPUs).
  bool per_gpu(int ring_gpus, int gpus_per_node) const { return host_per_gpu || ring_gpus > gpus_per_node; }
  // What one host issues of an exchange over `ring_gpus`: all of it, or with a
  // host per GPU its own part.
  double exchange_share(int ring_gpus, int gpus_per_node) const {
    return exchange_over(per_gpu(ring_gpus, gpus_per_node) ? 1 : ring_gpus);
  }
  // One exchange over `p` GPUs: the measured group scaled by p / gpus (each
  // GPU adds its send and receive to the group).
  double exchange_over(int p) const { return gpus > 0 ? exchange_s * static_cast<double>(p) / gpus : exchange_s; }
};

}  // namespace flashlab::sim
