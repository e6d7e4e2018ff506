// The links between this host's GPUs, measured as nccl-tests' sendrecv_perf
// measures them: for every unordered GPU pair (a, b) and every message size,
// NCCL send/recv one way (a sends, b receives) and both ways at once (one
// group), then the same with the copy engines (cudaMemcpyPeerAsync, peer
// access enabled): one process drives every GPU, so both are real transports.
//
// How: each GPU holds a send and a receive buffer of the largest size; the
// send buffers hold a non-zero pattern of their own GPU (link_pattern_word).
// Per size and mode, the receive buffers are zeroed, `warmup` iterations run
// untimed, then `iterations` timed ones; an iteration is `messages`
// back-to-back messages (enough for tiny messages to be measurable) between
// CUDA events on GPU a (GPU b's stream waits for the first and GPU a's for
// b's last work), with both streams held on the host until every message is
// enqueued, so the times are the GPUs' and not the host's launch rate. Then
// the received bytes are compared with the sent ones: a wrong copy throws,
// it never becomes a figure. Measure here, derive elsewhere: the result is
// times (sim/ring/link_measurement.hpp); analysis/ring/link_report.hpp makes the
// bandwidths, tables and the measured link. Plain C++: no CUDA or NCCL headers.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashlab/sim/ring/link_measurement.hpp"

namespace flashlab::kernels {

using sim::i64;

struct LinkBenchOptions {
  std::vector<int> devices;               // CUDA ordinals, at least 2; empty: every GPU
  i64 min_bytes = 8;
  i64 max_bytes = i64{1} << 30;           // 1 GiB
  int step = 2;                           // sizes min, min·step, min·step², … and max
  int warmup = 5;                         // untimed iterations per size and mode
  int iterations = 20;                    // timed; the figure is their median
  bool copy_engines = true;               // the cudaMemcpyPeerAsync series too
  // Hold both streams until every message of an iteration is enqueued (a
  // host function spinning on a flag, released after 10 s at the latest).
  // Off: the GPUs start as the host enqueues, and small messages' times
  // include the host's launch rate.
  bool hold_streams = true;
  // Only the host's issuing (the stream calls, a small launch, one exchange of
  // every GPU): no message series. What a ring sweep measures beside its runs.
  bool host_only = false;
};

// Reasons `o` is malformed (sizes, step, counts, devices named twice), one
// sentence each; empty when it is well formed. Needs no GPU.
std::vector<std::string> validate(const LinkBenchOptions& o);

// Empty when `o` can run here; else one sentence: no CUDA in this build, no
// device, fewer than 2 GPUs, a device that does not exist, NCCL not found.
std::string link_bench_unavailable_reason(const LinkBenchOptions& o);

// The message sizes of `o`: min_bytes times powers of step up to max_bytes,
// and max_bytes itself when the steps miss it.
std::vector<i64> link_bench_sizes(const LinkBenchOptions& o);

// Back-to-back messages per timed iteration: enough that an iteration moves
// about 64 MiB, at least 1 and at most 100.
int link_bench_messages(i64 bytes);

// Word `index` of GPU `gpu`'s send buffer: every byte odd (never zero, so a
// zeroed receive buffer never passes the check), different for every GPU.
std::uint64_t link_pattern_word(int gpu, std::uint64_t index);
// The first byte of `received` (its first `bytes`) that is not GPU `from`'s
// pattern; -1 when all are.
i64 first_pattern_mismatch(const void* received, i64 bytes, int from, i64 offset_bytes = 0);

// The received bytes differ from the sent ones: the message names the pair,
// the transport, the size and the first wrong byte. No figure is reported.
class LinkCheckError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

using LinkProgress = std::function<void(const std::string& line)>;

// Every unordered pair of the devices (a < b), NCCL first, then the copy
// engines. Throws Unsupported (link_bench_unavailable_reason, or options that
// fail validate), CudaError (a failed CUDA or NCCL call, named) or
// LinkCheckError.
sim::LinkMeasurements run_link_bench(const LinkBenchOptions& o, const LinkProgress& progress = {});

}  // namespace flashlab::kernels
