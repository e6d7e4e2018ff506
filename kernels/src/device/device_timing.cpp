#include "flashlab/kernels/device/device_timing.hpp"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstddef>

#include "cuda_check.hpp"

namespace flashlab::kernels {

namespace {
cudaStream_t as_stream(void* s) { return static_cast<cudaStream_t>(s); }
cudaEvent_t as_event(void* e) { return static_cast<cudaEvent_t>(e); }
}  // namespace

EventPair::EventPair() {
  cudaEvent_t a = nullptr, b = nullptr;
  FLASHLAB_CUDA_CHECK(cudaEventCreate(&a));
  start_ = a;
  FLASHLAB_CUDA_CHECK(cudaEventCreate(&b));
  stop_ = b;
}

EventPair::~EventPair() {
  if (start_) (void)cudaEventDestroy(as_event(start_));
  if (stop_) (void)cudaEventDestroy(as_event(stop_));
}

EventPair::EventPair(EventPair&& o) noexcept : start_(o.start_), stop_(o.stop_) { o.start_ = o.stop_ = nullptr; }

void EventPair::start(void* stream) { FLASHLAB_CUDA_CHECK(cudaEventRecord(as_event(start_), as_stream(stream))); }
void EventPair::stop(void* stream) { FLASHLAB_CUDA_CHECK(cudaEventRecord(as_event(stop_), as_stream(stream))); }

void EventPair::wait() const { FLASHLAB_CUDA_CHECK(cudaEventSynchronize(as_event(stop_))); }

double EventPair::elapsed_ms() const {
  wait();
  float ms = 0;
  FLASHLAB_CUDA_CHECK(cudaEventElapsedTime(&ms, as_event(start_), as_event(stop_)));
  return ms;
}

L2Flush::L2Flush(int device, sim::i64 l2_bytes) : device_(device), bytes_(std::max<sim::i64>(2 * l2_bytes, 8 << 20)) {
  FLASHLAB_CUDA_CHECK(cudaSetDevice(device));
  FLASHLAB_CUDA_CHECK(cudaMalloc(&buffer_, static_cast<std::size_t>(bytes_)));
}

L2Flush::~L2Flush() {
  if (buffer_ == nullptr) return;
  (void)cudaSetDevice(device_);
  (void)cudaFree(buffer_);
}

L2Flush::L2Flush(L2Flush&& o) noexcept : device_(o.device_), buffer_(o.buffer_), bytes_(o.bytes_) { o.buffer_ = nullptr; }

void L2Flush::write(void* stream, int run) const {
  FLASHLAB_CUDA_CHECK(
      cudaMemsetAsync(buffer_, (run & 1) ? 0x5a : 0xa5, static_cast<std::size_t>(bytes_), as_stream(stream)));
}

std::vector<double> time_runs(void* stream, const TimingOptions& o, const L2Flush* flush, const TimedRun& r) {
  std::vector<double> times;
  if (o.repeats <= 0) return times;
  // One warm-up at least when the repeats are sized from it.
  const int warmups = o.target_ms > 0 ? std::max(1, o.warmup) : std::max(0, o.warmup);
  const std::vector<EventPair> events = timed_loop(
      o, warmups,
      [&](int k) {
        if (o.l2_flush && flush != nullptr) flush->write(stream, k);
        if (r.before) r.before(k);
        EventPair ev;
        ev.start(stream);
        r.run(ev);
        ev.stop(stream);
        if (r.after) r.after(ev);
        return ev;
      },
      [](const EventPair& ev) { return ev.elapsed_ms(); });
  FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(as_stream(stream)));
  times.reserve(events.size());
  for (const EventPair& e : events) times.push_back(e.elapsed_ms());
  return times;
}

std::vector<double> time_runs(void* stream, const TimingOptions& o, const L2Flush* flush,
                              const std::function<void(int)>& before, const std::function<void()>& run) {
  return time_runs(stream, o, flush, TimedRun{before, [&](const EventPair&) { run(); }, {}});
}

}  // namespace flashlab::kernels
