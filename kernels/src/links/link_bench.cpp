// The links between this host's GPUs, measured (link_bench.hpp says how):
// host code over the CUDA runtime and NCCL.
#include "flashlab/kernels/links/link_bench.hpp"

#include <cuda_runtime_api.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <set>
#include <thread>

#include "device/cuda_check.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/sim/core/median.hpp"
#include "ring/ring_merge.hpp"
#include "device/sm_probe.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/core/format.hpp"
#include "ring/nccl_api.hpp"
#include "ring/ring_transport.hpp"

namespace flashlab::kernels {

namespace {

using sim::LinkTransport;
using Clock = std::chrono::steady_clock;

constexpr std::chrono::seconds kHoldLimit{10};
constexpr i64 kStagingBytes = i64{256} << 20;  // host side of the pattern's fill and of the checks

enum class Mode { one_way, both };

std::string bytes_text(i64 b) { return sim::bytes_iec(static_cast<double>(b)); }

std::string hex_byte(unsigned v) {
  char buf[8];
  std::snprintf(buf, sizeof buf, "0x%02x", v & 0xffu);
  return buf;
}

std::string utc_now() {
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  return date;
}

// A host function at the head of GPU a's stream: it spins until the host has
// enqueued the iteration, so that the GPUs run the messages back to back
// rather than at the host's launch rate; it gives up after kHoldLimit.
struct Hold {
  std::atomic<bool> released{true};
  std::atomic<bool> expired{false};
};

void CUDART_CB hold_until_released(void* arg) {
  auto* h = static_cast<Hold*>(arg);
  const auto until = Clock::now() + kHoldLimit;
  while (!h->released.load(std::memory_order_acquire)) {
    if (Clock::now() > until) {
      h->expired.store(true);
      return;
    }
    std::this_thread::yield();
  }
}

// What one GPU holds for the benchmark.
struct Gpu {
  int device = 0;  // CUDA ordinal
  int rank = 0;    // its NCCL rank (its place in the device list)
  cudaStream_t stream = nullptr;
  void* send = nullptr;  // its pattern, max_bytes
  void* recv = nullptr;  // what arrives, max_bytes
  cudaEvent_t start = nullptr, stop = nullptr;  // what the host's issue test records and waits for
  cudaEvent_t done = nullptr;                   // its last work of an iteration, when another GPU times it
};

#ifdef FLASHLAB_HAVE_NCCL

class LinkBench {
 public:
  LinkBench(const LinkBenchOptions& o, const LinkProgress& progress) : o_(o), progress_(progress) {}
  LinkBench(const LinkBench&) = delete;
  LinkBench& operator=(const LinkBench&) = delete;

  ~LinkBench() {
    hold_.released.store(true);
    for (Gpu& g : gpus_) {
      (void)cudaSetDevice(g.device);
      if (g.stream) (void)cudaStreamSynchronize(g.stream);
    }
    for (ncclComm_t c : comms_)
      if (c != nullptr) (void)api_->ncclCommDestroy(c);
    for (Gpu& g : gpus_) {
      (void)cudaSetDevice(g.device);
      for (void* p : {g.send, g.recv})
        if (p) (void)cudaFree(p);
      for (cudaEvent_t e : {g.start, g.stop, g.done})
        if (e) (void)cudaEventDestroy(e);
      if (g.stream) (void)cudaStreamDestroy(g.stream);
    }
    if (staging_) (void)cudaFreeHost(staging_);
  }

  sim::LinkMeasurements run() {
    open();
    sim::LinkMeasurements m;
    for (const Gpu& g : gpus_) {
      m.devices.push_back(g.device);
      m.gpu_names.push_back(query_device(g.device).name);
    }
    m.nccl_version = detail::nccl_version_string(api_->version);
    m.topology = nvidia_smi_topology();
    m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
    m.date = utc_now();
    char host[256] = {};
    if (::gethostname(host, sizeof host - 1) == 0) m.host = host;
    m.commit = build_commit();
    m.environment = detail::nccl_environment();
    m.warmup = o_.warmup;
    for (std::size_t i = 0; i < gpus_.size() && !o_.host_only; ++i)
      for (std::size_t j = i + 1; j < gpus_.size(); ++j) {
        sim::LinkPairMeasurement pair;
        pair.gpu_a = gpus_[i].device;
        pair.gpu_b = gpus_[j].device;
        pair.series.push_back(measure_series(gpus_[i], gpus_[j], LinkTransport::nccl));
        if (o_.copy_engines) pair.series.push_back(measure_series(gpus_[i], gpus_[j], LinkTransport::copy_engine));
        m.pairs.push_back(std::move(pair));
      }
    measure_host(m);
    measure_exchange_sms(m);
    measure_ring_exchange(m);
    return m;
  }

 private:
  void say(const std::string& line) const {
    if (progress_) progress_(line);
  }

  void open() {
    std::string why;
    api_ = detail::nccl_api(&why);
    if (api_ == nullptr) throw Unsupported(why);
    std::vector<int> devices = o_.devices;
    if (devices.empty()) {
      int count = 0;
      FLASHLAB_CUDA_CHECK(cudaGetDeviceCount(&count));
      for (int d = 0; d < count; ++d) devices.push_back(d);
    }
    buffer_bytes_ = (o_.max_bytes + 7) / 8 * 8;
    // Pinned for every GPU's context: each GPU's buffers pass through it.
    FLASHLAB_CUDA_CHECK(cudaHostAlloc(&staging_, static_cast<std::size_t>(std::min(buffer_bytes_, kStagingBytes)),
                                      cudaHostAllocPortable));
    gpus_.resize(devices.size());
    for (std::size_t r = 0; r < devices.size(); ++r) {
      Gpu& g = gpus_[r];
      g.device = devices[r];
      g.rank = static_cast<int>(r);
      FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
      FLASHLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&g.stream, cudaStreamNonBlocking));
      FLASHLAB_CUDA_CHECK(cudaMalloc(&g.send, static_cast<std::size_t>(buffer_bytes_)));
      FLASHLAB_CUDA_CHECK(cudaMalloc(&g.recv, static_cast<std::size_t>(buffer_bytes_)));
      FLASHLAB_CUDA_CHECK(cudaEventCreate(&g.start));
      FLASHLAB_CUDA_CHECK(cudaEventCreate(&g.stop));
      FLASHLAB_CUDA_CHECK(cudaEventCreateWithFlags(&g.done, cudaEventDisableTiming));
      fill_pattern(g);
    }
    say("filled " + bytes_text(buffer_bytes_) + " send and receive buffers on " + std::to_string(gpus_.size()) +
        " GPUs; opening NCCL " + detail::nccl_version_string(api_->version));
    comms_.assign(devices.size(), nullptr);
    FLASHLAB_NCCL_CHECK(*api_, ncclCommInitAll(comms_.data(), static_cast<int>(devices.size()), devices.data()));
  }

  // The send buffer gets its GPU's pattern through the host staging buffer.
  void fill_pattern(const Gpu& g) {
    auto* host = static_cast<std::uint64_t*>(staging_);
    const i64 chunk = std::min(buffer_bytes_, kStagingBytes);
    for (i64 off = 0; off < buffer_bytes_; off += chunk) {
      const i64 n = std::min(chunk, buffer_bytes_ - off);
      parallel_for(n / 8, [&](i64 lo, i64 hi) {
        for (i64 w = lo; w < hi; ++w) host[w] = link_pattern_word(g.device, static_cast<std::uint64_t>(off / 8 + w));
      });
      FLASHLAB_CUDA_CHECK(cudaMemcpy(static_cast<char*>(g.send) + off, host, static_cast<std::size_t>(n),
                                     cudaMemcpyHostToDevice));
    }
  }

  // f(lo, hi) over [0, n) on the host's cores.
  template <class F>
  static void parallel_for(i64 n, F f) {
    const i64 threads = std::max<i64>(1, std::min<i64>(16, std::thread::hardware_concurrency()));
    const i64 per = (n + threads - 1) / threads;
    std::vector<std::thread> pool;
    for (i64 t = 0; t < threads && t * per < n; ++t)
      pool.emplace_back([&, t] { f(t * per, std::min(n, (t + 1) * per)); });
    for (std::thread& th : pool) th.join();
  }

  // The first `bytes` of GPU `to`'s receive buffer against GPU `from`'s pattern.
  void check(const Gpu& from, const Gpu& to, i64 bytes, LinkTransport t) {
    const i64 chunk = std::min(buffer_bytes_, kStagingBytes) / 8 * 8;
    FLASHLAB_CUDA_CHECK(cudaSetDevice(to.device));
    for (i64 off = 0; off < bytes; off += chunk) {
      const i64 n = std::min(chunk, bytes - off);
      FLASHLAB_CUDA_CHECK(cudaMemcpy(staging_, static_cast<const char*>(to.recv) + off, static_cast<std::size_t>(n),
                                     cudaMemcpyDeviceToHost));
      std::atomic<i64> first{-1};
      parallel_for((n + 7) / 8, [&](i64 lo, i64 hi) {
        const i64 b0 = lo * 8, b1 = std::min(n, hi * 8);
        const i64 bad = first_pattern_mismatch(static_cast<const char*>(staging_) + b0, b1 - b0, from.device, off + b0);
        if (bad < 0) return;
        i64 seen = first.load();
        while ((seen < 0 || b0 + bad < seen) && !first.compare_exchange_weak(seen, b0 + bad)) {
        }
      });
      if (const i64 bad = first.load(); bad >= 0) {
        const i64 at = off + bad;
        const std::uint64_t word = link_pattern_word(from.device, static_cast<std::uint64_t>(at / 8));
        throw LinkCheckError("GPU " + std::to_string(from.device) + " -> GPU " + std::to_string(to.device) + ", " +
                             std::string(sim::link_transport_name(t)) + ", " + bytes_text(bytes) + " messages: byte " +
                             std::to_string(at) + " received is " +
                             hex_byte(static_cast<const unsigned char*>(staging_)[bad]) + ", " +
                             hex_byte(static_cast<unsigned>(word >> (8 * (at % 8)))) +
                             " was sent (the copy is wrong; no figure is reported)");
      }
    }
  }

  // `messages` messages of `bytes` from a to b (and b to a), on the GPUs' streams.
  void enqueue(const Gpu& a, const Gpu& b, LinkTransport t, Mode m, i64 bytes, int messages) {
    const auto n = static_cast<std::size_t>(bytes);
    for (int k = 0; k < messages; ++k) {
      if (t == LinkTransport::nccl) {
        // One thread drives both GPUs: each message's sends and receives in one group.
        const ncclComm_t ca = comms_[static_cast<std::size_t>(a.rank)], cb = comms_[static_cast<std::size_t>(b.rank)];
        FLASHLAB_NCCL_CHECK(*api_, ncclGroupStart());
        FLASHLAB_NCCL_CHECK(*api_, ncclSend(a.send, n, ncclUint8, b.rank, ca, a.stream));
        FLASHLAB_NCCL_CHECK(*api_, ncclRecv(b.recv, n, ncclUint8, a.rank, cb, b.stream));
        if (m == Mode::both) {
          FLASHLAB_NCCL_CHECK(*api_, ncclSend(b.send, n, ncclUint8, a.rank, cb, b.stream));
          FLASHLAB_NCCL_CHECK(*api_, ncclRecv(a.recv, n, ncclUint8, b.rank, ca, a.stream));
        }
        FLASHLAB_NCCL_CHECK(*api_, ncclGroupEnd());
      } else {
        // Each copy on its source GPU's stream: the two directions run at once.
        FLASHLAB_CUDA_CHECK(cudaSetDevice(a.device));
        FLASHLAB_CUDA_CHECK(cudaMemcpyPeerAsync(b.recv, b.device, a.send, a.device, n, a.stream));
        if (m == Mode::both) {
          FLASHLAB_CUDA_CHECK(cudaSetDevice(b.device));
          FLASHLAB_CUDA_CHECK(cudaMemcpyPeerAsync(a.recv, a.device, b.send, b.device, n, b.stream));
        }
      }
    }
  }

  // The iterations of one figure, timed on `first`'s stream (time_runs,
  // device_timing.hpp): o_.warmup untimed, then o_.iterations timed, each
  // between events on `first` — the other GPUs' streams wait for the start
  // one, `enqueue_messages` queues the messages, `first`'s stream waits for
  // the others' last work — and complete before the next (then `settle`,
  // when given). A stream held past kHoldLimit while the host enqueued
  // `what` throws. Each timed iteration's ms, in order.
  std::vector<double> time_iterations(const Gpu& first, const std::vector<const Gpu*>& others,
                                      const std::function<void()>& enqueue_messages, const std::string& what,
                                      const std::string& no_hold_note, const std::function<void()>& settle) {
    TimingOptions timing;
    timing.warmup = o_.warmup;
    timing.repeats = o_.iterations;
    timing.target_ms = 0;
    timing.l2_flush = false;
    TimedRun r;
    r.before = [&](int) {
      FLASHLAB_CUDA_CHECK(cudaSetDevice(first.device));
      if (o_.hold_streams) {
        hold_.released.store(false);
        hold_.expired.store(false);
        FLASHLAB_CUDA_CHECK(cudaLaunchHostFunc(first.stream, hold_until_released, &hold_));
      }
    };
    r.run = [&](const EventPair& events) {
      for (const Gpu* g : others) {
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g->device));
        FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g->stream, static_cast<cudaEvent_t>(events.start_event()), 0));
      }
      enqueue_messages();
      for (const Gpu* g : others) {
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g->device));
        FLASHLAB_CUDA_CHECK(cudaEventRecord(g->done, g->stream));
        FLASHLAB_CUDA_CHECK(cudaSetDevice(first.device));
        FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(first.stream, g->done, 0));
      }
      FLASHLAB_CUDA_CHECK(cudaSetDevice(first.device));
    };
    r.after = [&](const EventPair& events) {
      hold_.released.store(true, std::memory_order_release);
      events.wait();
      if (hold_.expired.load())
        throw CudaError("GPU " + std::to_string(first.device) + "'s stream was held " +
                        std::to_string(kHoldLimit.count()) + " s while the host enqueued " + what +
                        ": the enqueue waited for the GPU; run again without holding the streams (flashlab links "
                        "--no-hold" + no_hold_note + ")");
      if (settle) settle();
    };
    return time_runs(first.stream, timing, nullptr, r);
  }

  // Zeroed receive buffers, the warm-ups, the timed iterations, the check.
  sim::LinkTiming time_mode(Gpu& a, Gpu& b, LinkTransport t, Mode m, i64 bytes) {
    sim::LinkTiming timing;
    timing.messages = link_bench_messages(bytes);
    timing.iterations = o_.iterations;
    for (const Gpu* g : {&a, &b}) {
      FLASHLAB_CUDA_CHECK(cudaSetDevice(g->device));
      FLASHLAB_CUDA_CHECK(cudaMemsetAsync(g->recv, 0, static_cast<std::size_t>(bytes), g->stream));
    }
    std::vector<double> per_message_us;
    for (const double ms : time_iterations(
             a, {&b}, [&] { enqueue(a, b, t, m, bytes, timing.messages); },
             std::string(sim::link_transport_name(t)) + " messages of " + bytes_text(bytes),
             ": small messages' times then include the host's launch time", {}))
      per_message_us.push_back(1e3 * ms / timing.messages);
    const sim::Spread us = sim::spread(per_message_us);
    timing.time_us_median = us.median;
    timing.time_us_min = us.min;
    timing.time_us_max = us.max;
    check(a, b, bytes, t);
    if (m == Mode::both) check(b, a, bytes, t);
    return timing;
  }

  // The ring's exchange of `n` bytes on the GPUs' streams: every GPU sends
  // to the next and receives from the previous, one NCCL group, as the ring's
  // steps do.
  void enqueue_ring_exchange(std::size_t n) {
    const int P = static_cast<int>(gpus_.size());
    FLASHLAB_NCCL_CHECK(*api_, ncclGroupStart());
    for (const Gpu& g : gpus_) {
      const ncclComm_t c = comms_[static_cast<std::size_t>(g.rank)];
      FLASHLAB_NCCL_CHECK(*api_, ncclSend(g.send, n, ncclUint8, (g.rank + 1) % P, c, g.stream));
      FLASHLAB_NCCL_CHECK(*api_, ncclRecv(g.recv, n, ncclUint8, (g.rank + P - 1) % P, c, g.stream));
    }
    FLASHLAB_NCCL_CHECK(*api_, ncclGroupEnd());
  }

  // What one host thread spends issuing the ring's kind of work (the ring's
  // runner drives every GPU from one thread): host wall time around the calls
  // only, never around a wait for the GPUs, which are synchronised between
  // the timed blocks. Medians over the rounds.
  void measure_host(sim::LinkMeasurements& m) {
    constexpr int kRounds = 15, kCalls = 300, kLaunches = 100, kExchanges = 10;
    const i64 exchange_bytes = std::min<i64>(buffer_bytes_, i64{1} << 20);
    const i64 add_floats = std::min<i64>(buffer_bytes_ / 4, 1024);
    auto us_since = [](Clock::time_point t0) {
      return std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    };
    auto sync_all = [&] {
      for (const Gpu& g : gpus_) {
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
        FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.stream));
      }
    };
    const i64 busy_floats = std::min<i64>(buffer_bytes_ / 4, i64{16} << 20);
    std::vector<double> call_us, launch_us, exchange_us;
    for (int round = 0; round < kRounds; ++round) {
      // Stream calls as the ring's runner makes them: set the GPU, record a
      // timing event (the runner times every step with them) on a stream with
      // work queued, make the stream wait for another event, GPU after GPU.
      for (const Gpu& g : gpus_) {
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
        FLASHLAB_CUDA_CHECK(cudaEventRecord(g.stop, g.stream));
        for (int k = 0; k < 4; ++k)
          ring::add_f32(static_cast<float*>(g.recv), static_cast<const float*>(g.send), busy_floats, g.stream);
      }
      auto t0 = Clock::now();
      // The runner's mix: a step sets its GPU once, waits once and records
      // several events (before and after each rung launch, its opening and
      // closing ones).
      constexpr int kRecords = 4;
      for (int k = 0; k < kCalls; ++k) {
        const Gpu& g = gpus_[static_cast<std::size_t>(k) % gpus_.size()];
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
        FLASHLAB_CUDA_CHECK(cudaStreamWaitEvent(g.stream, g.stop, 0));
        for (int r = 0; r < kRecords; ++r) FLASHLAB_CUDA_CHECK(cudaEventRecord(g.start, g.stream));
      }
      call_us.push_back(us_since(t0) / ((2.0 + kRecords) * kCalls));
      sync_all();
      // A small kernel's launch: the ring's fp32 sum over a few floats.
      t0 = Clock::now();
      for (const Gpu& g : gpus_) {
        FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
        for (int k = 0; k < kLaunches; ++k)
          ring::add_f32(static_cast<float*>(g.recv), static_cast<const float*>(g.send), add_floats, g.stream);
      }
      launch_us.push_back(us_since(t0) / (static_cast<double>(kLaunches) * static_cast<double>(gpus_.size())));
      sync_all();
      // One exchange: every GPU sends to the next and receives from the
      // previous one, one NCCL group, as the ring's steps do.
      const auto n = static_cast<std::size_t>(exchange_bytes);
      for (int k = 0; k < kExchanges; ++k) {
        t0 = Clock::now();
        enqueue_ring_exchange(n);
        exchange_us.push_back(us_since(t0));
        sync_all();
      }
    }
    m.issue.call_s = sim::median(call_us) * 1e-6;
    m.issue.launch_s = sim::median(launch_us) * 1e-6;
    m.issue.exchange_s = sim::median(exchange_us) * 1e-6;
    m.issue.gpus = static_cast<int>(gpus_.size());
    m.issue_rounds = kRounds;
    say("host: " + sim::fixed(m.issue.call_s * 1e6, 2) + " µs a stream call, " + sim::fixed(m.issue.launch_s * 1e6, 2) +
        " µs a small launch, " + sim::fixed(m.issue.exchange_s * 1e6, 1) + " µs an exchange over " +
        std::to_string(gpus_.size()) + " GPUs");
  }

  // The SMs an exchange's kernel holds on each GPU: during one long exchange
  // of every GPU's send and receive (the ring's), a launch of one SM-filling
  // CTA per SM (sm_probe.hpp) on another stream; the CTAs that start half a
  // hold or more after the first waited for an SM NCCL's CTAs held. Per GPU
  // the median over the rounds; the figure is the most over the GPUs.
  void measure_exchange_sms(sim::LinkMeasurements& m) {
    constexpr int kRounds = 5;
    constexpr long long kHoldNs = 50000;  // 50 µs: a fraction of the exchange (64 MiB and more)
    const i64 bytes = std::min<i64>(buffer_bytes_, i64{256} << 20);
    if (bytes < (i64{64} << 20)) return;  // too short an exchange to watch
    const int P = static_cast<int>(gpus_.size());
    struct Probe {
      cudaStream_t stream = nullptr;
      unsigned* smid = nullptr;
      long long* start = nullptr;
      int sms = 0, smem = 0;
      std::vector<int> held;
    };
    std::vector<Probe> probes(gpus_.size());
    auto release = [&] {
      for (std::size_t k = 0; k < gpus_.size(); ++k) {
        (void)cudaSetDevice(gpus_[k].device);
        if (probes[k].stream) (void)cudaStreamSynchronize(probes[k].stream);
        if (probes[k].smid) (void)cudaFree(probes[k].smid);
        if (probes[k].start) (void)cudaFree(probes[k].start);
        if (probes[k].stream) (void)cudaStreamDestroy(probes[k].stream);
      }
    };
    try {
      for (std::size_t k = 0; k < gpus_.size(); ++k) {
        Probe& p = probes[k];
        const DeviceInfo info = query_device(gpus_[k].device);
        p.sms = info.sm_count;
        p.smem = static_cast<int>(info.smem_optin_bytes);
        FLASHLAB_CUDA_CHECK(cudaSetDevice(gpus_[k].device));
        FLASHLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&p.stream, cudaStreamNonBlocking));
        FLASHLAB_CUDA_CHECK(cudaMalloc(&p.smid, sizeof(unsigned) * static_cast<std::size_t>(p.sms)));
        FLASHLAB_CUDA_CHECK(cudaMalloc(&p.start, sizeof(long long) * static_cast<std::size_t>(p.sms)));
      }
      const auto n = static_cast<std::size_t>(bytes);
      for (int round = 0; round < kRounds; ++round) {
        enqueue_ring_exchange(n);
        for (std::size_t k = 0; k < gpus_.size(); ++k) {
          FLASHLAB_CUDA_CHECK(cudaSetDevice(gpus_[k].device));
          detail::launch_sm_probe(probes[k].sms, probes[k].smem, kHoldNs, probes[k].smid, probes[k].start,
                                  probes[k].stream);
        }
        for (std::size_t k = 0; k < gpus_.size(); ++k) {
          Probe& p = probes[k];
          FLASHLAB_CUDA_CHECK(cudaSetDevice(gpus_[k].device));
          FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(gpus_[k].stream));
          FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(p.stream));
          std::vector<unsigned> smid(static_cast<std::size_t>(p.sms));
          std::vector<long long> start(static_cast<std::size_t>(p.sms));
          FLASHLAB_CUDA_CHECK(cudaMemcpy(smid.data(), p.smid, sizeof(unsigned) * smid.size(), cudaMemcpyDeviceToHost));
          FLASHLAB_CUDA_CHECK(
              cudaMemcpy(start.data(), p.start, sizeof(long long) * start.size(), cudaMemcpyDeviceToHost));
          const long long first = *std::min_element(start.begin(), start.end());
          std::set<unsigned> free_sms;
          for (std::size_t c = 0; c < start.size(); ++c)
            if (start[c] < first + kHoldNs / 2) free_sms.insert(smid[c]);
          p.held.push_back(p.sms - static_cast<int>(free_sms.size()));
        }
      }
    } catch (...) {
      release();
      throw;
    }
    release();
    std::string per_gpu;
    int most = 0;
    for (std::size_t k = 0; k < probes.size(); ++k) {
      std::vector<double> h(probes[k].held.begin(), probes[k].held.end());
      const int median = static_cast<int>(std::lround(sim::median(h)));
      most = std::max(most, median);
      per_gpu += (k == 0 ? "" : ", ") + std::to_string(median);
    }
    m.issue.exchange_sms = most;
    say("exchange: NCCL's kernel holds " + per_gpu + " SMs (GPU 0 … " + std::to_string(P - 1) + ", medians of " +
        std::to_string(kRounds) + " rounds of " + bytes_text(bytes) + ")");
  }

  // The ring's exchange as a curve: every GPU sends a message to the next and
  // receives one from the previous, one NCCL group, from 64 KiB to the
  // buffer's size (256 MiB at most), each size the median of o_.iterations
  // iterations after o_.warmup; an iteration from GPU 0's start (the others
  // wait for it) to the last GPU's end, on GPU 0's clock.
  void measure_ring_exchange(sim::LinkMeasurements& m) {
    const auto t_begin = Clock::now();
    const int P = static_cast<int>(gpus_.size());
    Gpu& first = gpus_.front();
    const i64 largest = std::min<i64>(buffer_bytes_, i64{256} << 20);
    for (i64 bytes = i64{64} << 10; bytes <= largest; bytes *= 2) {
      const auto n = static_cast<std::size_t>(bytes);
      std::vector<const Gpu*> others;
      for (const Gpu& g : gpus_)
        if (&g != &first) others.push_back(&g);
      std::vector<double> us;
      for (const double ms : time_iterations(
               first, others, [&] { enqueue_ring_exchange(n); }, "the ring's exchange of " + bytes_text(bytes), "",
               [&] {
                 for (const Gpu& g : gpus_) {
                   FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
                   FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.stream));
                 }
               }))
        us.push_back(1e3 * ms);
      const sim::Spread spread = sim::spread(us);
      sim::RingExchangeSample x;
      x.bytes = bytes;
      x.timing.messages = 1;
      x.timing.iterations = o_.iterations;
      x.timing.time_us_median = spread.median;
      x.timing.time_us_min = spread.min;
      x.timing.time_us_max = spread.max;
      m.ring_exchange.push_back(x);
    }
    for (int r = 0; r < P && !m.ring_exchange.empty(); ++r)
      check(gpus_[static_cast<std::size_t>((r + P - 1) % P)], gpus_[static_cast<std::size_t>(r)],
            m.ring_exchange.back().bytes, LinkTransport::nccl);
    say("the ring's exchange over " + std::to_string(P) + " GPUs: " + std::to_string(m.ring_exchange.size()) +
        " sizes in " + sim::fixed(std::chrono::duration<double>(Clock::now() - t_begin).count(), 1) + " s");
  }

  // Copy engines: peer access both ways when the GPUs allow it.
  bool enable_peer_access(const Gpu& a, const Gpu& b) {
    int ab = 0, ba = 0;
    FLASHLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&ab, a.device, b.device));
    FLASHLAB_CUDA_CHECK(cudaDeviceCanAccessPeer(&ba, b.device, a.device));
    if (!ab || !ba) return false;
    for (const auto& [from, to] : {std::pair<const Gpu*, const Gpu*>{&a, &b}, {&b, &a}}) {
      FLASHLAB_CUDA_CHECK(cudaSetDevice(from->device));
      const cudaError_t e = cudaDeviceEnablePeerAccess(to->device, 0);
      if (e == cudaErrorPeerAccessAlreadyEnabled) {
        (void)cudaGetLastError();  // not an error here: NCCL may have enabled it
        continue;
      }
      FLASHLAB_CUDA_CHECK(e);
    }
    return true;
  }

  sim::LinkSeries measure_series(Gpu& a, Gpu& b, LinkTransport t) {
    const auto t0 = Clock::now();
    sim::LinkSeries s;
    s.transport = t;
    if (t == LinkTransport::copy_engine) {
      s.peer_access = enable_peer_access(a, b);
      if (!s.peer_access)
        s.note = "no peer access between GPU " + std::to_string(a.device) + " and GPU " + std::to_string(b.device) +
                 ": the driver stages these copies through host memory";
    }
    // Untimed and not held: NCCL connects the pair on its first messages (host work that may wait for the GPU).
    enqueue(a, b, t, Mode::both, o_.max_bytes, 1);
    for (const Gpu* g : {&a, &b}) {
      FLASHLAB_CUDA_CHECK(cudaSetDevice(g->device));
      FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g->stream));
    }
    for (const i64 bytes : link_bench_sizes(o_)) {
      sim::LinkSample x;
      x.bytes = bytes;
      x.one_way = time_mode(a, b, t, Mode::one_way, bytes);
      x.both = time_mode(a, b, t, Mode::both, bytes);
      x.checked = true;
      s.samples.push_back(x);
    }
    say("GPU " + std::to_string(a.device) + " <-> GPU " + std::to_string(b.device) + ", " +
        std::string(sim::link_transport_name(t)) + ": " + std::to_string(s.samples.size()) + " sizes in " +
        sim::fixed(std::chrono::duration<double>(Clock::now() - t0).count(), 1) + " s");
    return s;
  }

  LinkBenchOptions o_;
  LinkProgress progress_;
  const detail::NcclApi* api_ = nullptr;
  std::vector<Gpu> gpus_;
  std::vector<ncclComm_t> comms_;
  i64 buffer_bytes_ = 0;
  void* staging_ = nullptr;
  Hold hold_;
};

#endif

}  // namespace

std::string link_bench_unavailable_reason(const LinkBenchOptions& o) {
  if (const std::string why = cuda_unavailable_reason(); !why.empty()) return why;
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess) count = 0;
  const int gpus = o.devices.empty() ? count : static_cast<int>(o.devices.size());
  if (gpus < 2)
    return "a link needs 2 GPUs and " +
           (o.devices.empty() ? "this machine shows " + std::to_string(count)
                              : std::to_string(gpus) + " device" + (gpus == 1 ? " was" : "s were") + " named");
  // The devices exist and differ, and NCCL opens: the ring's own conditions.
  return ring_unavailable_reason(gpus, RingTransport::nccl, o.devices);
}

sim::LinkMeasurements run_link_bench(const LinkBenchOptions& o, const LinkProgress& progress) {
  if (const std::vector<std::string> bad = validate(o); !bad.empty()) throw Unsupported(bad.front());
  if (const std::string why = link_bench_unavailable_reason(o); !why.empty()) throw Unsupported(why);
#ifdef FLASHLAB_HAVE_NCCL
  detail::keep_nvlink_multicast_off();
  LinkBench bench(o, progress);
  return bench.run();
#else
  (void)progress;
  throw Unsupported(ring::nccl_unavailable_reason());
#endif
}

}  // namespace flashlab::kernels
