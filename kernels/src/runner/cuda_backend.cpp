// The runner's CUDA backend: cudaMalloc'd buffers, seeded normal inputs, the
// output poisoned with NaN before every run, the fp64 reference, CUDA-event
// timing with an L2 flush between runs (device_timing.hpp, the one timed loop).
#include <cuda_profiler_api.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <functional>
#include <memory>
#include <iomanip>
#include <sstream>

#include "device/cuda_check.hpp"
#include "device/device_utils.hpp"
#include "device/cuda_allocator.hpp"
#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/device_timing.hpp"
#include "flashlab/kernels/device/memory_counters.hpp"
#include "flashlab/kernels/rungs/rungs.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/median.hpp"

namespace flashlab::kernels {

namespace {

// Every entry point makes the backend's device current first: a process may
// drive several GPUs (the ring's tests beside the runner's), and the CUDA
// current device is the calling thread's, not the backend's.
class CudaBackend final : public Backend {
 public:
  explicit CudaBackend(int dev) : dev_(dev), allocator_(dev) {
    const std::string why = cuda_unavailable_reason();
    if (!why.empty()) throw NoDevice(why);
    int count = 0;
    FLASHLAB_CUDA_CHECK(cudaGetDeviceCount(&count));
    if (dev < 0 || dev >= count)
      throw NoDevice("device " + std::to_string(dev) + " does not exist (this machine shows " + std::to_string(count) +
                     " GPU" + (count == 1 ? "" : "s") + ")");
    FLASHLAB_CUDA_CHECK(cudaSetDevice(dev));
    info_ = query_device(dev);

    FLASHLAB_CUDA_CHECK(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    flush_ = std::make_unique<L2Flush>(dev, info_.l2_bytes);
    FLASHLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&counter_), sizeof *counter_));
    FLASHLAB_CUDA_CHECK(cudaMalloc(reinterpret_cast<void**>(&cycles_), sizeof *cycles_));
    // The cuBLAS handle and workspace exist before any case, as PyTorch's do.
    naive_cublas_prepare();
  }

  ~CudaBackend() override {
    (void)cudaSetDevice(dev_);
    (void)cudaStreamSynchronize(stream_);
    naive_cublas_release();
    flush_.reset();
    (void)cudaFree(clean_flush_);
    (void)cudaFree(counter_);
    (void)cudaFree(cycles_);
    (void)cudaStreamDestroy(stream_);
  }

  const DeviceInfo& device() const override { return info_; }
  DeviceAllocator& allocator() override { return allocator_; }

  i64 device_used_bytes() override {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(dev_));
    std::size_t free_b = 0, total_b = 0;
    FLASHLAB_CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    return static_cast<i64>(total_b - free_b);
  }

  // The counter pass's flush buffer (2 × the L2) and CUPTI's session are the
  // measurement's, made once per process: made here, before the first case
  // takes its baseline, they are never counted in a case's peak.
  void prepare(const RunOptions& o) override {
    if (!o.counters) return;
    FLASHLAB_CUDA_CHECK(cudaSetDevice(dev_));
    prepare_clean_flush();
    if (!profiler_range()) open_counters();
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
  }

  std::string sticky_error() override {
    (void)cudaSetDevice(dev_);
    const cudaError_t e = cudaDeviceSynchronize();
    if (e == cudaSuccess) return {};
    return std::string(cudaGetErrorName(e)) + ": " + cudaGetErrorString(e);
  }

  double observe_sm_clock_mhz() override {
    try {
      FLASHLAB_CUDA_CHECK(cudaSetDevice(dev_));
      EventPair ev;
      constexpr long long kCycles = 20'000'000;  // ~10 ms at 2 GHz
      detail::spin_cycles(kCycles / 10, cycles_, stream_);  // wake the clock up first
      ev.start(stream_);
      detail::spin_cycles(kCycles, cycles_, stream_);
      ev.stop(stream_);
      const double ms = ev.elapsed_ms();
      long long counted = 0;
      FLASHLAB_CUDA_CHECK(cudaMemcpy(&counted, cycles_, sizeof counted, cudaMemcpyDeviceToHost));
      return ms > 0 ? static_cast<double>(counted) / (ms * 1e3) : 0.0;
    } catch (const CudaError&) {
      return 0;
    }
  }

  Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(dev_));
    const sim::AttentionProblem& p = c.problem;
    const bool backward = c.forward != nullptr;
    LaunchArgs a;
    a.problem = p;
    a.tiles = c.tiles;
    a.softmax_scale = static_cast<float>(1.0 / std::sqrt(static_cast<double>(p.head_dim)));
    a.q = b.q;
    a.k = b.k;
    a.v = b.v;
    a.o = b.o;
    a.lse = b.lse;
    a.workspace = b.workspace;
    a.workspace_bytes = static_cast<std::size_t>(b.workspace_bytes);
    a.stream = stream_;
    a.device_smem_optin = static_cast<int>(info_.smem_optin_bytes);

    const i64 bh = p.head_count();
    const i64 q_elems = bh * p.n_q() * p.head_dim, kv_elems = p.kv_head_count() * p.n_kv() * p.head_dim;
    const float scale = static_cast<float>(o.input_scale);
    // Three unrelated streams of N(0, scale²) from the case's seed.
    detail::fill_normal(b.q, q_elems, p.dtype, c.seed ^ detail::kSeedQ, scale, stream_);
    detail::fill_normal(b.k, kv_elems, p.dtype, c.seed ^ detail::kSeedK, scale, stream_);
    detail::fill_normal(b.v, kv_elems, p.dtype, c.seed ^ detail::kSeedV, scale, stream_);
    const i64 es = sim::dtype_bytes(p.dtype);
    const std::size_t o_bytes = static_cast<std::size_t>(q_elems * es);
    const std::size_t kv_bytes = static_cast<std::size_t>(kv_elems * es);
    const std::size_t lse_bytes = static_cast<std::size_t>(bh * p.n_q()) * sizeof(float);

    Measurement m;
    // The outputs of the launch that is checked and timed, poisoned before every
    // run: O (and the logsumexp) of a forward rung; dQ, dK, dV of a backward one.
    std::function<void()> poison;
    std::function<i64()> count_unwritten;
    if (!backward) {
      m.output_elements = q_elems;
      poison = [&] {
        // NaN in every dtype: an element the kernel forgets stays NaN.
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.o, 0xff, o_bytes, stream_));
        if (b.lse != nullptr) FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.lse, 0xff, lse_bytes, stream_));
      };
      count_unwritten = [&] { return detail::count_not_finite(b.o, q_elems, p.dtype, counter_, stream_); };
    } else {
      // dO is N(0, 1) whatever the input scale: the scale stresses the softmax,
      // and dP = dO Vᵀ stays within fp16 at ×30.
      detail::fill_normal(b.d_o, q_elems, p.dtype, c.seed ^ detail::kSeedDO, 1.f, stream_);
      a.bwd.d_o = b.d_o;
      a.bwd.dq = b.dq;
      a.bwd.dk = b.dk;
      a.bwd.dv = b.dv;
      a.bwd.forward_workspace = b.forward_workspace;
      a.bwd.forward_workspace_bytes = static_cast<std::size_t>(b.forward_workspace_bytes);
      // The forward rung once, untimed: O, the logsumexp, its workspace (P).
      LaunchArgs f = a;
      f.tiles = c.forward_tiles;
      f.workspace = b.forward_workspace;
      f.workspace_bytes = static_cast<std::size_t>(b.forward_workspace_bytes);
      f.bwd = BackwardTensors{};
      FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.o, 0xff, o_bytes, stream_));
      c.forward->launch(f);
      FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
      if (const i64 bad = detail::count_not_finite(b.o, q_elems, p.dtype, counter_, stream_); bad > 0) {
        m.output_elements = q_elems;
        m.not_written = bad;
        m.check_note = "the forward rung " + c.forward->id + " left O unwritten or not finite";
        return m;
      }
      m.output_elements = q_elems + 2 * kv_elems;  // dQ, dK, dV
      poison = [&] {
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.dq, 0xff, o_bytes, stream_));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.dk, 0xff, kv_bytes, stream_));
        FLASHLAB_CUDA_CHECK(cudaMemsetAsync(b.dv, 0xff, kv_bytes, stream_));
      };
      count_unwritten = [&] {
        return detail::count_not_finite(b.dq, q_elems, p.dtype, counter_, stream_) +
               detail::count_not_finite(b.dk, kv_elems, p.dtype, counter_, stream_) +
               detail::count_not_finite(b.dv, kv_elems, p.dtype, counter_, stream_);
      };
    }

    // The correctness run; it reports the rung's occupancy.
    a.ctas_per_sm = &m.ctas_per_sm;
    poison();
    c.kernel->launch(a);
    a.ctas_per_sm = nullptr;
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
    m.not_written = count_unwritten();
    if (m.not_written == 0 && o.check != CheckMode::off) {
      if (backward) check_backward(c, b, o, m);
      else check(c, b, o, m);
    }

    if (o.repeats > 0 && m.not_written == 0) {
      std::vector<double> host_us;  // the host's time in each timed launch call
      m.times_ms = time_runs(stream_, o, flush_.get(), [&](int) { poison(); }, [&] {
        const auto t0 = std::chrono::steady_clock::now();
        c.kernel->launch(a);
        host_us.push_back(std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
      });
      m.launch_host_us = sim::median(host_us);
      // The timed runs must have written everything too.
      m.not_written = count_unwritten();
    }
    if (o.counters && m.not_written == 0) count_memory(c, a, poison, m);
    return m;
  }

  // The counter pass: before each of CUPTI's passes the output is poisoned and
  // the L2 flushed by reading a buffer that is only ever read, so every line it
  // leaves in the L2 is clean (a written flush, or a read of the timed runs'
  // flush buffer whose lines may still be dirty, would leave lines that the
  // pass counts as the kernel's writes); the launch alone is in the range.
  void count_memory(const Case& c, const LaunchArgs& a, const std::function<void()>& poison, Measurement& m) {
    // $FLASHLAB_PROFILER_RANGE (set, not "0"): no CUPTI session; the same
    // preparation as a pass, then the launch alone between cudaProfilerStart
    // and cudaProfilerStop, so that an outside profiler counts the range this
    // pass counts (ncu --replay-mode app-range: one result for all the launch's
    // kernels, no flush between them).
    if (profiler_range()) {
      prepare_clean_flush();
      poison();
      detail::read_flush(clean_flush_, flush_->bytes(), counter_, stream_);
      FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
      FLASHLAB_CUDA_CHECK(cudaProfilerStart());
      try {
        c.kernel->launch(a);
        FLASHLAB_CUDA_CHECK(cudaDeviceSynchronize());
      } catch (...) {
        (void)cudaProfilerStop();
        throw;
      }
      FLASHLAB_CUDA_CHECK(cudaProfilerStop());
      m.counters_note = "FLASHLAB_PROFILER_RANGE: the launch ran between cudaProfilerStart and cudaProfilerStop, "
                        "counted by the outside profiler (not by CUPTI here)";
      return;
    }
    open_counters();
    if (!counters_) {
      m.counters_note = counters_why_not_;
      return;
    }
    prepare_clean_flush();
    try {
      const MemoryCounters mc = counters_->measure(
          [&] {
            poison();
            detail::read_flush(clean_flush_, flush_->bytes(), counter_, stream_);
            FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(stream_));
          },
          [&] { c.kernel->launch(a); });
      m.dram_read_bytes = mc.dram_read_bytes;
      m.dram_write_bytes = mc.dram_write_bytes;
      m.l2_read_bytes = mc.l2_read_bytes;
      m.l2_write_bytes = mc.l2_write_bytes;
      m.counters_note = counters_->description() + ", " + std::to_string(mc.passes) + " pass(es)";
    } catch (const CounterError& e) {
      m.counters_note = std::string("counters: ") + e.what();
    }
  }

 private:
  static bool profiler_range() {
    const char* env = std::getenv("FLASHLAB_PROFILER_RANGE");
    return env != nullptr && *env != '\0' && std::string(env) != "0";
  }

  // CUPTI's session, opened once (or the reason it cannot be, kept).
  void open_counters() {
    if (counters_ || !counters_why_not_.empty()) return;
    counters_ = CounterSession::open(dev_, &counters_why_not_);
    if (!counters_ && counters_why_not_.empty()) counters_why_not_ = "CUPTI's counters are not available";
  }

  // The counter pass's flush buffer, made once: filled, then its own writes
  // pushed out of the L2 by reading the other buffer through.
  void prepare_clean_flush() {
    if (clean_flush_ != nullptr) return;
    FLASHLAB_CUDA_CHECK(cudaMalloc(&clean_flush_, static_cast<std::size_t>(flush_->bytes())));
    FLASHLAB_CUDA_CHECK(cudaMemsetAsync(clean_flush_, 0x3c, static_cast<std::size_t>(flush_->bytes()), stream_));
    detail::read_flush(flush_->data(), flush_->bytes(), counter_, stream_);
    detail::read_flush(clean_flush_, flush_->bytes(), counter_, stream_);
  }

  // Copies head h (rows × d elements from `base`) to the host as doubles.
  std::vector<double> download(const void* base, i64 head, i64 rows, i64 d, sim::DType t) {
    const i64 elems = rows * d, bytes = elems * sim::dtype_bytes(t);
    std::vector<unsigned char> host(static_cast<std::size_t>(bytes));
    const auto* src = static_cast<const unsigned char*>(base) + head * bytes;
    FLASHLAB_CUDA_CHECK(cudaMemcpy(host.data(), src, static_cast<std::size_t>(bytes), cudaMemcpyDeviceToHost));
    return to_doubles(host.data(), elems, t);
  }

  // The fp64 check of the rows and heads plan_check picks.
  void check(const Case& c, const CaseBuffers& b, const RunOptions& o, Measurement& m) {
    const sim::AttentionProblem& p = c.problem;
    const CheckPlan plan = plan_check(p, o.check_flop_budget, o.check == CheckMode::full);
    const double tau = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
    const i64 d = p.head_dim, group = p.heads / p.h_kv();  // query head h reads K/V head h / group
    ErrorSums total;
    double input_norm2 = 0;
    for (i64 h : plan.heads) {
      std::ostringstream key;
      key << c.seed << '/' << o.input_scale << '/' << p.batch << 'x' << p.heads << '/' << p.h_kv() << 'x' << p.n_q()
          << 'x' << p.n_kv()
          << 'x' << d << '/' << p.causal << '/' << static_cast<int>(p.dtype) << "/h" << h << "/r" << plan.rows.size()
          << ':' << plan.rows.front() << '-' << plan.rows.back();
      std::vector<double> ref;
      const std::vector<double>* cached = o.cache != nullptr ? o.cache->find(key.str()) : nullptr;
      if (cached != nullptr) {
        ref = *cached;
        input_norm2 = std::max(input_norm2, 1.0);  // inputs were checked when the reference was made
      } else {
        HeadInputs in;
        in.n_q = p.n_q();
        in.n_kv = p.n_kv();
        in.d = d;
        in.q = download(b.q, h, p.n_q(), d, p.dtype);
        in.k = download(b.k, h / group, p.n_kv(), d, p.dtype);
        in.v = download(b.v, h / group, p.n_kv(), d, p.dtype);
        for (double x : in.q) input_norm2 += x * x;
        ref = reference_rows(in, plan.rows, tau, p.causal);
        if (o.cache != nullptr) o.cache->put(key.str(), ref);
      }
      const std::vector<double> out = download(b.o, h, p.n_q(), d, p.dtype);
      std::vector<double> got;
      got.reserve(plan.rows.size() * static_cast<std::size_t>(d));
      for (i64 r : plan.rows)
        got.insert(got.end(), out.begin() + r * d, out.begin() + (r + 1) * d);
      total += error_sums(got, ref);
    }
    // Never check (or time) on zeros: a broken generator would make any kernel "exact".
    if (input_norm2 == 0) throw std::runtime_error("the generated inputs are all zero (input generator broken)");
    m.rel_error = total.relative();
    std::ostringstream note;
    if (plan.all()) note << "all " << plan.n_heads_total << " heads";
    else
      note << "rows " << sim::group_digits(static_cast<i64>(plan.rows.size())) << " of "
           << sim::group_digits(plan.n_rows_total) << " in " << plan.heads.size() << " of "
           << sim::group_digits(plan.n_heads_total) << " heads";
    m.check_note = note.str();
  }

  // The fp64 check of a backward case (plan_check_backward): dQ on the rows of
  // the plan, dK and dV when whole heads are checked; the worst of the three.
  // With grouped K/V heads each query head's share of dK, dV is summed over
  // its group (the plan holds whole groups) before the K/V head is compared.
  void check_backward(const Case& c, const CaseBuffers& b, const RunOptions& o, Measurement& m) {
    const sim::AttentionProblem& p = c.problem;
    const BackwardCheckPlan plan = plan_check_backward(p, o.check_flop_budget, o.check == CheckMode::full);
    const double tau = 1.0 / std::sqrt(static_cast<double>(p.head_dim));
    const i64 d = p.head_dim, nq = p.n_q(), nkv = p.n_kv(), group = p.heads / p.h_kv();
    ErrorSums eq, ek, ev;
    double input_norm2 = 0;
    std::vector<double> dk_sum, dv_sum;  // the group's dK, dV so far
    i64 summing = -1, members = 0;       // the K/V head summed, its query heads in the sums
    for (i64 h : plan.rows.heads) {
      const i64 kh = h / group;
      std::ostringstream key;
      key << "bwd/" << c.seed << '/' << o.input_scale << '/' << p.batch << 'x' << p.heads << '/' << p.h_kv() << 'x'
          << nq << 'x' << nkv
          << 'x' << d << '/' << p.causal << '/' << static_cast<int>(p.dtype) << "/h" << h << "/r"
          << plan.rows.rows.size() << ':' << plan.rows.rows.front() << '-' << plan.rows.rows.back() << '/'
          << plan.keys;
      const std::size_t nrows = plan.rows.rows.size();
      std::vector<double> ref;  // dQ rows, then dK and dV when checked
      const std::vector<double>* cached = o.cache != nullptr ? o.cache->find(key.str()) : nullptr;
      if (cached != nullptr) {
        ref = *cached;
        input_norm2 = std::max(input_norm2, 1.0);
      } else {
        const std::vector<double> q = download(b.q, h, nq, d, p.dtype), k = download(b.k, kh, nkv, d, p.dtype),
                                  v = download(b.v, kh, nkv, d, p.dtype), g = download(b.d_o, h, nq, d, p.dtype);
        for (double x : q) input_norm2 += x * x;
        const HeadReference head(k.data(), v.data(), nkv, d);
        ref.assign(nrows * static_cast<std::size_t>(d) + (plan.keys ? 2 * static_cast<std::size_t>(nkv * d) : 0), 0.0);
        double* dk = plan.keys ? ref.data() + nrows * d : nullptr;
        double* dv = plan.keys ? dk + nkv * d : nullptr;
        for (std::size_t i = 0; i < nrows; ++i) {
          const i64 r = plan.rows.rows[i];
          head.backward_row(q.data() + r * d, g.data() + r * d, r, tau, p.causal, ref.data() + i * d, dk, dv);
        }
        if (o.cache != nullptr) o.cache->put(key.str(), ref);
      }
      const std::vector<double> dq_got = download(b.dq, h, nq, d, p.dtype);
      std::vector<double> got;
      got.reserve(nrows * static_cast<std::size_t>(d));
      for (i64 r : plan.rows.rows) got.insert(got.end(), dq_got.begin() + r * d, dq_got.begin() + (r + 1) * d);
      eq += error_sums(got, std::vector<double>(ref.begin(), ref.begin() + static_cast<std::ptrdiff_t>(nrows * d)));
      if (plan.keys) {
        if (kh != summing) {
          if (summing >= 0 && members != group)
            throw std::logic_error("the backward check's plan holds part of a group of query heads");
          dk_sum.assign(static_cast<std::size_t>(nkv * d), 0.0);
          dv_sum.assign(static_cast<std::size_t>(nkv * d), 0.0);
          summing = kh;
          members = 0;
        }
        const double* share = ref.data() + nrows * d;  // this query head's dK, then dV
        for (std::size_t e = 0; e < dk_sum.size(); ++e) {
          dk_sum[e] += share[e];
          dv_sum[e] += share[dk_sum.size() + e];
        }
        if (++members == group) {
          ek += error_sums(download(b.dk, kh, nkv, d, p.dtype), dk_sum);
          ev += error_sums(download(b.dv, kh, nkv, d, p.dtype), dv_sum);
        }
      }
    }
    if (plan.keys && summing >= 0 && members != group)
      throw std::logic_error("the backward check's plan holds part of a group of query heads");
    if (input_norm2 == 0) throw std::runtime_error("the generated inputs are all zero (input generator broken)");
    // dQ alone when dK, dV are not checked: a zero dQ reference is then
    // measured as absolute (relative() gives +inf, flagging it).
    m.rel_error = plan.keys ? backward_error(eq, ek, ev) : eq.relative();
    std::ostringstream note;
    note << "dQ " << std::scientific << std::setprecision(2) << eq.relative();
    if (plan.keys) note << ", dK " << ek.relative() << ", dV " << ev.relative();
    if (plan.rows.all()) note << "; all " << plan.rows.n_heads_total << " heads";
    else
      note << "; rows " << sim::group_digits(static_cast<i64>(plan.rows.rows.size())) << " of "
           << sim::group_digits(plan.rows.n_rows_total) << " in " << plan.rows.heads.size() << " of "
           << sim::group_digits(plan.rows.n_heads_total) << " heads";
    if (!plan.keys) note << " (dK, dV not checked: whole heads are over the check's budget)";
    m.check_note = note.str();
  }

  int dev_;
  CudaAllocator allocator_;
  DeviceInfo info_;
  cudaStream_t stream_ = nullptr;
  std::unique_ptr<L2Flush> flush_;  // the timed runs'
  void* clean_flush_ = nullptr;     // the counter pass's: read only, after one fill, flush_->bytes() long
  unsigned long long* counter_ = nullptr;
  long long* cycles_ = nullptr;
  std::unique_ptr<CounterSession> counters_;  // opened at the first counter pass
  std::string counters_why_not_;
};

}  // namespace

std::unique_ptr<Backend> open_cuda_backend(int device) {
  try {
    return std::make_unique<CudaBackend>(device);
  } catch (const CudaError& e) {
    throw NoDevice("cannot use CUDA device " + std::to_string(device) + ": " + e.what());
  }
}

}  // namespace flashlab::kernels
