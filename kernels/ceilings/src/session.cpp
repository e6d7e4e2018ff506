// The host driver of the micro-benchmarks: device facts, buffers, CUDA-event
// timing (median of ≥ 10 runs after warm-up), one function per figure, the
// working-set sweep, and measure_all() turning it all into a profile.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>
#include <random>
#include <stdexcept>

#include "check.hpp"
#include "cublas_gemm.hpp"
#include "flashlab/ceilings/ceilings.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/device/nvml.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/median.hpp"
#include "micro_kernels.hpp"

namespace flashlab::ceilings {

using sim::CeilingFigure;
using sim::DeviceFacts;
using sim::SweepPoint;
using sim::SweepSeries;
using detail::i64;

// The session's own parts, named (not anonymous) because Session::Impl, which has
// external linkage, holds them.
namespace session_parts {

constexpr i64 KiB = 1024, MiB = 1024 * KiB, GiB = 1024 * MiB;
constexpr int kMinRepeats = 10;         // every figure is the median of at least 10 runs
constexpr int kProbeEntries = 1 << 16;  // blocks a clock probe can record
constexpr int kGemmN = 8192;            // the cuBLAS yardstick, 8192³
constexpr i64 kSweepMaxBytes = 4 * GiB;

// The device as the kernels' device query describes it, in the profile's terms.
DeviceFacts device_facts(const kernels::DeviceInfo& d) {
  DeviceFacts f;
  f.name = d.name;
  f.compute_capability = d.compute_capability;
  f.sm_count = d.sm_count;
  f.smem_per_sm_bytes = d.smem_per_sm_bytes;
  f.smem_optin_bytes = d.smem_optin_bytes;
  f.l2_bytes = d.l2_bytes;
  f.total_memory_bytes = d.total_memory_bytes;
  f.max_sm_clock_mhz = d.max_sm_clock_mhz;
  f.mem_clock_mhz = d.mem_clock_mhz;
  f.mem_bus_bits = d.mem_bus_bits;
  f.driver = d.nvidia_driver;
  f.cuda_driver = d.cuda_driver;
  f.cuda_runtime = d.runtime;
  return f;
}

// One device allocation, freed on scope exit.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  explicit DeviceBuffer(i64 bytes) : bytes_(bytes) { CEILINGS_CHECK(cudaMalloc(&ptr_, static_cast<size_t>(bytes))); }
  ~DeviceBuffer() {
    if (ptr_) (void)cudaFree(ptr_);
  }
  DeviceBuffer(DeviceBuffer&& o) noexcept : ptr_(o.ptr_), bytes_(o.bytes_) { o.ptr_ = nullptr; }
  DeviceBuffer& operator=(DeviceBuffer&& o) noexcept {
    std::swap(ptr_, o.ptr_);
    std::swap(bytes_, o.bytes_);
    return *this;
  }
  void* get() const { return ptr_; }
  i64 bytes() const { return bytes_; }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }

 private:
  void* ptr_ = nullptr;
  i64 bytes_ = 0;
};

struct Timing {
  double median_ms = 0, min_ms = 0, max_ms = 0;
  int repeats = 0;
};

Timing summarize(const std::vector<double>& ms) {
  const sim::Spread s = sim::spread(ms);
  Timing t;
  t.repeats = static_cast<int>(ms.size());
  t.median_ms = s.median;
  t.min_ms = s.min;
  t.max_ms = s.max;
  return t;
}

std::string iso_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

std::string size_text(i64 bytes) { return sim::bytes_iec(static_cast<double>(bytes)); }

detail::Op op_of(const std::string& id) {
  using detail::Op;
  if (id == "fp32_fma") return Op::fp32_fma;
  if (id == "fp16_hfma2") return Op::fp16_hfma2;
  if (id == "bf16_hfma2") return Op::bf16_hfma2;
  if (id == "fp16_mma") return Op::fp16_mma;
  if (id == "bf16_mma") return Op::bf16_mma;
  if (id == "fp16_wgmma") return Op::fp16_wgmma;
  if (id == "bf16_wgmma") return Op::bf16_wgmma;
  return Op::tf32_mma;
}

}  // namespace session_parts
using namespace session_parts;

// ---- availability --------------------------------------------------------------------

bool built_with_cuda() { return true; }

std::string unavailable_reason() {
  if (std::string why = kernels::cuda_unavailable_reason(); !why.empty()) return why;
  const cudaError_t k = detail::probe_kernel_image();
  if (k != cudaSuccess) {
    cudaDeviceProp p{};
    (void)cudaGetDeviceProperties(&p, 0);
    return std::string("this build has no kernels for ") + p.name + " (compute capability " + std::to_string(p.major) +
           "." + std::to_string(p.minor) + "): " + cudaGetErrorName(k) + "; rebuild with -DCMAKE_CUDA_ARCHITECTURES=" +
           std::to_string(p.major) + std::to_string(p.minor);
  }
  return {};
}

// ---- the session ------------------------------------------------------------------------

struct Session::Impl {
  Options opt;
  int repeats = 0;
  DeviceFacts facts;
  cudaStream_t stream = nullptr;
  detail::Grid stream_grid, smem_grid;
  DeviceBuffer out, cycles, ns, operands;
  DeviceBuffer src, dst;  // HBM buffers, allocated on first use
  i64 hbm_bytes = 0;
  std::unique_ptr<detail::CublasGemm> gemm;
  std::unique_ptr<kernels::Nvml> nvml;
  std::uint32_t sentinel = 0, seed = 0;
  bool warm = false;

  explicit Impl(const Options& o) : opt(o) {
    const std::string why = unavailable_reason();
    if (!why.empty()) throw Unavailable(why);
    repeats = o.repeats > 0 ? std::max(o.repeats, kMinRepeats) : (o.quick ? kMinRepeats : 2 * kMinRepeats);
    std::random_device rd;
    seed = rd();
    sentinel = rd() | 1u;  // never 0: an all-zero XOR would not match either

    const int dev = 0;
    CEILINGS_CHECK(cudaSetDevice(dev));
    try {
      const kernels::DeviceInfo info = kernels::query_device(dev);
      facts = device_facts(info);
      if (!info.pci_bus_id.empty()) nvml = std::make_unique<kernels::Nvml>(info.pci_bus_id);
    } catch (const kernels::CudaError& e) {
      throw MeasureError(e.what());
    }

    CEILINGS_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
    stream_grid = detail::stream_grid(static_cast<int>(facts.sm_count));
    smem_grid = detail::smem_grid(static_cast<int>(facts.sm_count));
    // One float per thread of the largest compute grid (16 blocks of 128 per SM, or 2048 threads per SM).
    out = DeviceBuffer(std::max<i64>(facts.sm_count * 4096 * 4, 64 * KiB));
    cycles = DeviceBuffer(kProbeEntries * static_cast<i64>(sizeof(long long)));
    ns = DeviceBuffer(kProbeEntries * static_cast<i64>(sizeof(unsigned long long)));
    operands = DeviceBuffer(detail::kOperandWords * 4);
    CEILINGS_CHECK(cudaMemsetAsync(out.get(), 0x5a, static_cast<size_t>(out.bytes()), stream));
  }

  ~Impl() {
    if (stream) (void)cudaStreamSynchronize(stream);
    gemm.reset();
    if (stream) (void)cudaStreamDestroy(stream);
  }

  // Times `n` launches (at most `repeats`), each between its own pair of
  // events, after `warmup` untimed ones; one synchronisation at the end — the
  // runner's timed loop (device_timing.hpp) without its L2 flush: these
  // figures are the caches'.
  template <class F>
  Timing time(F&& launch, int warmup, int n) {
    kernels::TimingOptions o;
    o.warmup = warmup;
    o.repeats = std::clamp(n, 1, repeats);
    o.target_ms = 0;
    o.l2_flush = false;
    try {
      return summarize(kernels::time_runs(stream, o, nullptr, {}, [&] { launch(); }));
    } catch (const kernels::CudaError& e) {
      throw MeasureError(e.what());
    }
  }
  template <class F>
  Timing time(F&& launch, int warmup) {
    return time(launch, warmup, repeats);
  }

  // Scales a work count so that one launch lasts about target_ms.
  template <class F>
  int calibrate(F&& launch_n, int n0, double target_ms) {
    int n = n0;
    for (int attempt = 0; attempt < 8; ++attempt) {
      const Timing t = time([&] { launch_n(n); }, attempt == 0 ? 1 : 0, 1);
      if (t.median_ms >= 0.2 || n >= (1 << 26)) {
        const double scaled = std::ceil(n * target_ms / std::max(t.median_ms, 1e-3));
        return static_cast<int>(std::clamp(scaled, 16.0, static_cast<double>(1 << 30)));
      }
      n *= 16;
    }
    return n;
  }

  double target_ms(double full) const { return opt.quick ? full / 4 : full; }

  // Clocks rise under load; the first figure should not pay for that.
  void ensure_warm() {
    if (warm) return;
    warm = true;
    const detail::ComputeConfig c = detail::fma_configs(detail::Op::fp32_fma).front();
    const int iters = calibrate([&](int n) { run_compute(detail::Op::fp32_fma, c, n); }, 256, 20);
    for (int k = 0; k < (opt.quick ? 3 : 10); ++k) run_compute(detail::Op::fp32_fma, c, iters);
    CEILINGS_CHECK(cudaStreamSynchronize(stream));
  }

  void ensure_hbm_buffers() {
    if (src.get()) return;
    // ≥ 8× L2 and ≥ 1 GiB: passes through L2 leave at most a few percent behind.
    hbm_bytes = std::max<i64>(8 * facts.l2_bytes, GiB);
    hbm_bytes = (hbm_bytes + MiB - 1) / MiB * MiB;
    src = DeviceBuffer(hbm_bytes);
    dst = DeviceBuffer(hbm_bytes);
    detail::fill_words(src.get(), hbm_bytes, seed, stream);
    detail::fill_words(dst.get(), hbm_bytes, ~seed, stream);
  }

  detail::ClockProbe probe() const { return {cycles.as<long long>(), ns.as<unsigned long long>()}; }

  void run_compute(detail::Op op, const detail::ComputeConfig& c, int iters) {
    const int sms = static_cast<int>(facts.sm_count);
    if (static_cast<i64>(sms) * c.blocks_per_sm > kProbeEntries)
      throw MeasureError("kernels/ceilings: grid larger than the clock probe (" + std::to_string(kProbeEntries) + ")");
    if (detail::is_wgmma(op))
      detail::run_wgmma(op, c, sms, iters, seed, out.get(), probe(), stream);
    else if (detail::is_mma(op))
      detail::run_mma(op, c, sms, iters, operands.as<std::uint32_t>(), out.get(), probe(), stream);
    else
      detail::run_fma(op, c, sms, iters, out.get(), probe(), stream);
  }

  // The SM clock of the last compute launch: median over blocks of cycles / ns.
  double probed_clock_mhz(int blocks) {
    std::vector<long long> cyc(static_cast<size_t>(blocks));
    std::vector<unsigned long long> t(static_cast<size_t>(blocks));
    CEILINGS_CHECK(cudaMemcpy(cyc.data(), cycles.get(), cyc.size() * sizeof(long long), cudaMemcpyDeviceToHost));
    CEILINGS_CHECK(cudaMemcpy(t.data(), ns.get(), t.size() * sizeof(unsigned long long), cudaMemcpyDeviceToHost));
    std::vector<double> mhz;
    for (size_t k = 0; k < cyc.size(); ++k)
      if (t[k] > 0 && cyc[k] > 0) mhz.push_back(1e3 * static_cast<double>(cyc[k]) / static_cast<double>(t[k]));
    if (mhz.empty()) return 0;
    std::sort(mhz.begin(), mhz.end());
    return mhz[mhz.size() / 2];
  }

  CeilingFigure figure(const std::string& id, const Timing& t, double work, const std::string& method) const {
    CeilingFigure f;
    f.id = id;
    f.median_ms = t.median_ms;
    f.min_ms = t.min_ms;
    f.max_ms = t.max_ms;
    f.repeats = t.repeats;
    f.work = work;
    f.value = t.median_ms > 0 ? work / (t.median_ms / 1e3) : 0;
    f.method = method;
    return f;
  }

  std::string stream_method(const char* kernel, i64 bytes) const {
    return std::string(kernel) + ": " + std::to_string(stream_grid.blocks) + " blocks x " +
           std::to_string(stream_grid.threads) + " threads (every SM full), 16-byte accesses, " + size_text(bytes) +
           " per buffer (" + sim::fixed(static_cast<double>(bytes) / static_cast<double>(facts.l2_bytes), 0) +
           "x L2)";
  }

  // ---- the figures ----

  CeilingFigure hbm(const std::string& id) {
    ensure_hbm_buffers();
    const i64 b = hbm_bytes;
    if (id == "hbm_read") {
      const Timing t = time(
          [&] {
            detail::read_buffer(detail::Loads::cached, src.get(), b, 1, stream_grid, sentinel, out.as<std::uint32_t>(),
                                stream);
          },
          2);
      return figure(id, t, static_cast<double>(detail::read_bytes(b, 1, stream_grid)),
                    stream_method("read_kernel<ld.global.v4>, one pass", b));
    }
    if (id == "hbm_write") {
      const Timing t = time([&] { detail::write_buffer(dst.get(), b, seed, stream_grid, stream); }, 2);
      return figure(id, t, static_cast<double>(b), stream_method("write_kernel", b));
    }
    if (id == "hbm_copy") {
      const Timing t = time([&] { detail::copy_buffer(dst.get(), src.get(), b, stream_grid, stream); }, 2);
      return figure(id, t, 2.0 * static_cast<double>(b),
                    stream_method("copy_kernel, read + write bytes counted", b));
    }
    const Timing t = time(
        [&] {
          CEILINGS_CHECK(cudaMemcpyAsync(dst.get(), src.get(), static_cast<size_t>(b), cudaMemcpyDeviceToDevice, stream));
        },
        2);
    return figure(id, t, 2.0 * static_cast<double>(b),
                  "cudaMemcpyAsync device to device, " + size_text(b) + ", read + write bytes counted");
  }

  CeilingFigure l2() {
    ensure_hbm_buffers();
    // Half of L2: it stays resident (H100's L2 is two partitions; half is what one side holds).
    i64 w = facts.l2_bytes / 2 / (64 * KiB) * (64 * KiB);
    w = std::max<i64>(w, 64 * KiB);
    const i64 target = opt.quick ? GiB : 4 * GiB;
    const int passes = static_cast<int>(std::max<i64>(1, target / w));
    const Timing t = time(
        [&] {
          detail::read_buffer(detail::Loads::l2_only, src.get(), w, passes, stream_grid, sentinel,
                              out.as<std::uint32_t>(), stream);
        },
        2);
    return figure("l2_read", t, static_cast<double>(detail::read_bytes(w, passes, stream_grid)),
                  "read_kernel<ld.global.cg.v4> (L2 only): " + std::to_string(stream_grid.blocks) + " blocks x " +
                      std::to_string(stream_grid.threads) + " threads, working set " + size_text(w) + " (L2/2), " +
                      std::to_string(passes) + " passes per launch, warm");
  }

  CeilingFigure smem() {
    const std::uint32_t s = seed;
    const int reps = calibrate(
        [&](int n) { detail::smem_read(n, smem_grid, s, sentinel, out.as<std::uint32_t>(), stream); }, 64,
        target_ms(10));
    const Timing t =
        time([&] { detail::smem_read(reps, smem_grid, s, sentinel, out.as<std::uint32_t>(), stream); }, 1);
    return figure("smem_read", t, static_cast<double>(detail::smem_bytes_per_rep(smem_grid)) * reps,
                  detail::smem_method(smem_grid) + ", " + std::to_string(reps) + " repetitions");
  }

  // Why a figure cannot be measured here (wgmma off Hopper or without sm_90a code); empty when it can.
  std::string reason_not_measured(const std::string& id) const {
    if (detail::is_wgmma(op_of(id))) return detail::wgmma_unavailable_reason(facts.compute_capability);
    return {};
  }

  CeilingFigure compute(const std::string& id) {
    const detail::Op op = op_of(id);
    const int sms = static_cast<int>(facts.sm_count);
    const bool wgmma = detail::is_wgmma(op), mma = detail::is_mma(op);
    if (mma) detail::init_operands(op, operands.as<std::uint32_t>(), seed, stream);
    const std::vector<detail::ComputeConfig> configs =
        wgmma ? detail::wgmma_configs(op) : mma ? detail::mma_configs(op) : detail::fma_configs(op);
    auto flops = [&](const detail::ComputeConfig& c, int iters) {
      return wgmma ? detail::wgmma_flops(op, c, sms, iters)
             : mma ? detail::mma_flops(op, c, sms, iters)
                   : detail::fma_flops(op, c, sms, iters);
    };
    // Try each launch shape briefly; keep the fastest.
    detail::ComputeConfig best = configs.front();
    int best_iters = 0;
    double best_rate = -1;
    for (const detail::ComputeConfig& c : configs) {
      const int iters = calibrate([&](int n) { run_compute(op, c, n); }, 256, target_ms(20));
      if (configs.size() == 1) {
        best = c;
        best_iters = iters;
        break;
      }
      const Timing t = time([&] { run_compute(op, c, iters); }, 0, 3);
      const double rate = flops(c, iters) / t.median_ms;
      if (rate > best_rate) {
        best_rate = rate;
        best = c;
        best_iters = iters;
      }
    }
    const Timing t = time([&] { run_compute(op, best, best_iters); }, 1);
    CeilingFigure f = figure(id, t, flops(best, best_iters), "");
    f.sm_clock_mhz = probed_clock_mhz(sms * best.blocks_per_sm);
    const double nv = nvml ? nvml->sm_clock_mhz() : 0;
    const std::string shape = wgmma ? detail::wgmma_shape(best)
                              : std::to_string(best.chains) + (mma ? " accumulators per warp" : " chains per thread");
    f.method = std::string(wgmma ? "wgmma_kernel" : mma ? "mma_kernel" : "fma_kernel") + ": " + std::to_string(sms) +
               " SMs x " + std::to_string(best.blocks_per_sm) + " blocks x " + std::to_string(best.threads) +
               " threads, " + shape + ", " + std::to_string(best_iters) + " iterations" +
               (configs.size() > 1 ? " (fastest of " + std::to_string(configs.size()) + " launch shapes)" : "") +
               "; SM clock " + sim::fixed(f.sm_clock_mhz, 0) + " MHz from clock64/%globaltimer" +
               (nv > 0 ? ", NVML " + sim::fixed(nv, 0) + " MHz after the run" : "");
    return f;
  }

  CeilingFigure cublas(const std::string& id) {
    if (!gemm) gemm = std::make_unique<detail::CublasGemm>(stream, kGemmN);
    gemm->prepare(id == "fp16_cublas" ? detail::Element::fp16 : detail::Element::bf16, seed);
    const Timing t = time([&] { gemm->run(); }, 2);
    CeilingFigure f = figure(id, t, gemm->flops(), gemm->method());
    f.sm_clock_mhz = nvml ? nvml->sm_clock_mhz() : 0;  // no probe inside cuBLAS: NVML right after
    if (f.sm_clock_mhz > 0) f.method += "; SM clock " + sim::fixed(f.sm_clock_mhz, 0) + " MHz (NVML after the run)";
    return f;
  }

  SweepSeries sweep(const std::string& loads_name) {
    if (loads_name != "ld.global" && loads_name != "ld.global.cg")
      throw std::invalid_argument("unknown kind of load '" + loads_name + "' (expected ld.global or ld.global.cg)");
    ensure_warm();
    const detail::Loads loads = loads_name == "ld.global.cg" ? detail::Loads::l2_only : detail::Loads::cached;
    size_t free_b = 0, total_b = 0;
    CEILINGS_CHECK(cudaMemGetInfo(&free_b, &total_b));
    i64 top = opt.quick ? GiB : kSweepMaxBytes;
    while (top > 64 * MiB && top > static_cast<i64>(free_b) / 2) top /= 2;  // leave room for everything else
    DeviceBuffer buf(top);
    detail::fill_words(buf.get(), top, seed ^ 0x2545f491u, stream);
    const i64 target = opt.quick ? GiB : 4 * GiB;
    SweepSeries s;
    s.loads = loads_name;
    const int step = opt.quick ? 4 : 1;  // quick: every fourth power of two
    for (int p = 10; (i64{1} << p) <= top; p += step) {
      const i64 w = i64{1} << p;
      const i64 per_pass = std::max(w, stream_grid.total_threads() * 16);
      const int passes = static_cast<int>(std::max<i64>(1, target / per_pass));
      const Timing t = time(
          [&] { detail::read_buffer(loads, buf.get(), w, passes, stream_grid, sentinel, out.as<std::uint32_t>(), stream); },
          1);
      SweepPoint pt;
      pt.working_set_bytes = w;
      pt.median_ms = t.median_ms;
      pt.bandwidth = static_cast<double>(detail::read_bytes(w, passes, stream_grid)) / (t.median_ms / 1e3);
      s.points.push_back(pt);
    }
    return s;
  }
};

Session::Session(const Options& o) : impl_(std::make_unique<Impl>(o)) {}
Session::~Session() = default;

const DeviceFacts& Session::device() const { return impl_->facts; }
int Session::repeats() const { return impl_->repeats; }
double Session::nvml_sm_clock_mhz() { return impl_->nvml ? impl_->nvml->sm_clock_mhz() : 0; }

CeilingFigure Session::measure(const std::string& id) {
  const sim::FigureSpec* spec = sim::find_figure_spec(id);
  if (!spec) throw std::invalid_argument("unknown ceiling figure '" + id + "'");
  impl_->ensure_warm();
  switch (spec->quantity) {
    case sim::Quantity::hbm_bandwidth: return impl_->hbm(id);
    case sim::Quantity::l2_bandwidth: return impl_->l2();
    case sim::Quantity::smem_bandwidth: return impl_->smem();
    case sim::Quantity::flops: break;
  }
  if (id == "fp16_cublas" || id == "bf16_cublas") return impl_->cublas(id);
  if (const std::string why = impl_->reason_not_measured(id); !why.empty()) throw NotMeasured(why);
  return impl_->compute(id);
}

std::string Session::reason_not_measured(const std::string& id) const {
  if (!sim::find_figure_spec(id)) throw std::invalid_argument("unknown ceiling figure '" + id + "'");
  return impl_->reason_not_measured(id);
}

SweepSeries Session::sweep(const std::string& loads) { return impl_->sweep(loads); }

// ---- everything ------------------------------------------------------------------------------

sim::MeasuredProfile measure_all(const Options& o, const Progress& progress) {
  const auto t0 = std::chrono::steady_clock::now();
  auto say = [&](const std::string& line) {
    if (progress) progress(line);
  };
  Session s(o);
  sim::MeasuredProfile p;
  p.device = s.device();
  p.mode = o.quick ? "quick" : "full";
  p.date = iso_now();
  if (const char* c = std::getenv("FLASHLAB_COMMIT")) p.commit = c;
  say("measuring " + p.device.name + " (" + std::to_string(p.device.sm_count) + " SMs), " + p.mode + ", median of " +
      std::to_string(s.repeats()) + " runs per figure");
  for (const sim::FigureSpec& spec : sim::figure_specs()) {
    const std::string id(spec.id);
    try {
      const CeilingFigure f = s.measure(id);
      p.figures.push_back(f);
      say(id + ": " + sim::fixed(f.value / sim::unit_scale(spec.quantity), 1) + " " +
          std::string(sim::unit_of(spec.quantity)) + " (median " + sim::fixed(f.median_ms, 3) + " ms of " +
          std::to_string(f.repeats) + ")");
    } catch (const NotMeasured& e) {
      // Not this GPU's instruction (wgmma off Hopper): a note, and the other figures stand.
      p.notes.push_back(id + " not measured: " + e.what());
      say(id + ": not measured: " + e.what());
    } catch (const MeasureError& e) {
      // One figure failing (say cuBLAS without its library) leaves the others standing.
      p.notes.push_back(id + " not measured: " + e.what());
      say(id + ": FAILED: " + e.what());
      if (cudaGetLastError() != cudaSuccess && cudaDeviceSynchronize() != cudaSuccess)
        throw MeasureError(std::string("the device is in an error state after ") + id + ": " + e.what());
    }
  }
  for (const char* loads : {"ld.global", "ld.global.cg"}) {
    try {
      p.sweep.push_back(s.sweep(loads));
      say(std::string("sweep ") + loads + ": " + std::to_string(p.sweep.back().points.size()) + " working sets up to " +
          size_text(p.sweep.back().points.empty() ? 0 : p.sweep.back().points.back().working_set_bytes));
    } catch (const MeasureError& e) {
      p.notes.push_back(std::string("sweep ") + loads + " not measured: " + e.what());
      say(std::string("sweep ") + loads + ": FAILED: " + e.what());
    }
  }
  p.hw = sim::hardware_from_measurements(p.device, p.figures, p.date, p.mode);
  p.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return p;
}

}  // namespace flashlab::ceilings
