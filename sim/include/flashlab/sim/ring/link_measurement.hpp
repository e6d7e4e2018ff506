// The links between the GPUs of one host as measured (`flashlab links`): the
// vocabulary shared by the code that measures (kernels/link_bench: CUDA events
// around back-to-back messages between every GPU pair) and the code that
// turns it into tables and a measured link (analysis/ring/link_report.hpp). Only
// what the GPUs did — message sizes and times; bandwidths are derived in
// analysis/. Plain values; no CUDA, no NCCL.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/hardware/gpu_topology.hpp"
#include "flashlab/sim/hardware/host_issue.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

// How the bytes travel: NCCL's send/recv (kernels on the SMs, what the ring
// uses), or the copy engines (cudaMemcpyPeerAsync with peer access).
enum class LinkTransport { nccl, copy_engine };
std::string_view link_transport_name(LinkTransport t);  // "nccl", "copy-engine"

// CUDA events around `messages` back-to-back messages, for each of
// `iterations` timed iterations after the warm-ups: per message, the median,
// fastest and slowest iteration's time over its messages.
struct LinkTiming {
  int messages = 0;
  int iterations = 0;
  double time_us_median = 0, time_us_min = 0, time_us_max = 0;
};

// One message size on one pair with one transport.
struct LinkSample {
  i64 bytes = 0;       // one message, one direction
  LinkTiming one_way;  // GPU a sends, GPU b receives, nothing the other way
  LinkTiming both;     // a → b and b → a at once (one NCCL group; one copy on each GPU's stream)
  bool checked = false;  // the received bytes equalled the sent ones (both directions), after the timed iterations
};

struct LinkSeries {
  LinkTransport transport = LinkTransport::nccl;
  // Copy engines: peer access was enabled both ways; without it the driver
  // stages the copies through host memory (the note says so).
  bool peer_access = false;
  std::string note;                // what to know when reading the series; empty when nothing
  std::vector<LinkSample> samples;  // ascending bytes
};

struct LinkPairMeasurement {
  int gpu_a = 0, gpu_b = 0;        // CUDA ordinals
  std::vector<LinkSeries> series;  // NCCL first, then the copy engines (when measured)
  const LinkSeries* find(LinkTransport t) const;  // nullptr when not measured
};

// The ring's exchange at one message size: every GPU sends one message to
// the next and receives one from the previous, in one NCCL group.
struct RingExchangeSample {
  i64 bytes = 0;  // one message
  LinkTiming timing;
};

struct LinkMeasurements {
  std::vector<int> devices;             // CUDA ordinals measured
  std::vector<std::string> gpu_names;   // per device, in that order
  std::string nccl_version;             // "2.28.9"
  std::string topology;                 // `nvidia-smi topo -m`, escapes removed; empty when it could not run
  GpuTopology gpu_topology;             // parsed from `topology`
  std::string date;                     // "2026-11-26T10:00:00Z" (UTC)
  std::string host;
  std::string commit;                   // the binary's
  std::vector<std::string> environment; // NCCL_* and the like, "NAME=value"
  int warmup = 0;                       // untimed iterations before the timed ones, per size
  std::vector<LinkPairMeasurement> pairs;  // every unordered pair (a < b)
  // What one host thread spent issuing work to these GPUs (the medians of the
  // rounds): a stream call, a small kernel's launch, one exchange of every
  // GPU's send and receive in one NCCL group. Not measured: all zero.
  HostIssueCosts issue;
  int issue_rounds = 0;  // rounds the medians are over
  // The ring's exchange over all the GPUs, ascending bytes; empty: not measured.
  std::vector<RingExchangeSample> ring_exchange;
};

}  // namespace flashlab::sim
