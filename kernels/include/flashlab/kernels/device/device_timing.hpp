// The CUDA side of timing.hpp: an event pair, the L2 flush of one device and
// the timed loop of one stream. Streams are passed as void* (cudaStream_t), so
// that host code includes no CUDA header. Builds with CUDA only.
#pragma once

#include <functional>
#include <vector>

#include "flashlab/kernels/device/timing.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels {

// Two CUDA events on the device current when it is made; the time between
// them in ms once `stop` has completed.
class EventPair {
 public:
  EventPair();
  ~EventPair();
  EventPair(const EventPair&) = delete;
  EventPair& operator=(const EventPair&) = delete;
  EventPair(EventPair&& o) noexcept;
  EventPair& operator=(EventPair&&) = delete;
  void start(void* stream);
  void stop(void* stream);
  void wait() const;          // until `stop` has completed
  double elapsed_ms() const;  // waits for `stop`
  void* start_event() const { return start_; }  // cudaEvent_t: another stream may wait for it

 private:
  void* start_ = nullptr;
  void* stop_ = nullptr;
};

// A buffer of max(2 × L2, 8 MiB) on one device: writing it before a timed run
// evicts everything a previous run left in that device's L2. Keyed by the
// device it was made on (each GPU of a ring has its own).
class L2Flush {
 public:
  L2Flush(int device, sim::i64 l2_bytes);
  ~L2Flush();
  L2Flush(const L2Flush&) = delete;
  L2Flush& operator=(const L2Flush&) = delete;
  L2Flush(L2Flush&& o) noexcept;
  L2Flush& operator=(L2Flush&&) = delete;
  // Writes the whole buffer on `stream` (device `device()` must be current);
  // run k writes a pattern different from run k − 1's.
  void write(void* stream, int run = 0) const;
  int device() const { return device_; }
  const void* data() const { return buffer_; }
  sim::i64 bytes() const { return bytes_; }

 private:
  int device_ = 0;
  void* buffer_ = nullptr;
  sim::i64 bytes_ = 0;
};

// What the timed loop on one stream does around its events, run after run
// (k counts the warm-ups from 0, then the timed runs from 0).
struct TimedRun {
  std::function<void(int k)> before;            // before the start event: poison the outputs, hold a stream
  std::function<void(const EventPair&)> run;     // between the events; other streams may wait for the start one
  std::function<void(const EventPair&)> after;   // after the stop event: release a held stream, check it
};

// timed_loop (timing.hpp) on one stream: `warmup` untimed runs (at least one
// when target_ms sizes the repeats from the last of them), then the repeats,
// each between a pair of events made on the device current before its run.
// Before every run, when o.l2_flush, `flush->write`, then `r.before`. Returns
// each repeat's ms, in order, read once all are queued; none when o.repeats
// is 0.
std::vector<double> time_runs(void* stream, const TimingOptions& o, const L2Flush* flush, const TimedRun& r);

// The same for a run on `stream` alone: `before(k)` (poison the outputs),
// then `run()` between the events.
std::vector<double> time_runs(void* stream, const TimingOptions& o, const L2Flush* flush,
                              const std::function<void(int)>& before, const std::function<void()>& run);

}  // namespace flashlab::kernels
