// The runner's bookkeeping, independent of CUDA: which cases run, what they
// allocate, and how a measurement becomes a row. The CPU tests drive it with a
// fake backend; `flashlab bench` with the CUDA one.
#include "flashlab/kernels/runner/runner.hpp"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <ctime>

#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/median.hpp"
#include "flashlab/sim/memory/footprint.hpp"

namespace flashlab::kernels {

using sim::AttentionProblem;
using sim::MeasuredRun;
using sim::RunStatus;

double error_bound(sim::DType t) { return t == sim::DType::fp32 ? 1e-4 : 2e-2; }

std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index) {
  // splitmix64 of (seed, index): neighbouring problems get unrelated inputs.
  std::uint64_t z = seed + 0x9e3779b97f4a7c15ull * (index + 1);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

std::string build_commit() {
  if (const char* env = std::getenv("FLASHLAB_COMMIT"); env != nullptr && *env != '\0') return env;
#ifdef FLASHLAB_GIT_COMMIT
  if (std::string(FLASHLAB_GIT_COMMIT).size() > 0) return FLASHLAB_GIT_COMMIT;
#endif
  return "unknown";
}

namespace {

std::string sci(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", v);
  return buf;
}

// A case's row before anything runs: the rung, its model and pass, the problem, the memory limit.
MeasuredRun row_of(const KernelInfo& k, const AttentionProblem& p, const RunOptions& o) {
  MeasuredRun row;
  row.kernel = k.id;
  row.model = std::string(sim::to_string(k.model));
  row.direction = std::string(sim::to_string(k.pass()));
  row.problem = p;
  row.mem_limit_bytes = o.mem_limit_bytes;
  return row;
}

}  // namespace

std::vector<CaseBuffer> case_buffers(const KernelInfo& k, const AttentionProblem& p, sim::TileShape tiles,
                                     const KernelInfo* fwd, sim::TileShape fwd_tiles) {
  using Slot = CaseBuffer::Slot;
  using sim::Tensor;
  std::vector<CaseBuffer> out;
  auto add = [&](Slot slot, std::string what, i64 bytes) {
    if (bytes > 0) out.push_back({slot, std::move(what), bytes});
  };
  const KernelInfo& producer = fwd != nullptr ? *fwd : k;  // who writes O and the logsumexp
  add(Slot::q, "Q", sim::tensor_bytes(Tensor::Q, p));
  add(Slot::k, "K", sim::tensor_bytes(Tensor::K, p));
  add(Slot::v, "V", sim::tensor_bytes(Tensor::V, p));
  add(Slot::o, "O", sim::tensor_bytes(Tensor::O, p));
  if (producer.writes_lse) add(Slot::lse, "the logsumexp", sim::tensor_bytes(Tensor::LSE, p));
  if (fwd != nullptr) {
    add(Slot::forward_workspace, "the workspace of " + fwd->id + " (" + fwd->workspace_holds + ")",
        fwd->workspace_bytes ? fwd->workspace_bytes(p, fwd_tiles) : 0);
    add(Slot::d_o, "dO", sim::tensor_bytes(Tensor::dO, p));
    add(Slot::dq, "dQ", sim::tensor_bytes(Tensor::dQ, p));
    add(Slot::dk, "dK", sim::tensor_bytes(Tensor::dK, p));
    add(Slot::dv, "dV", sim::tensor_bytes(Tensor::dV, p));
  }
  add(Slot::workspace, "the workspace (" + k.workspace_holds + ")", k.workspace_bytes ? k.workspace_bytes(p, tiles) : 0);
  return out;
}

MeasuredRun run_case(Backend& backend, const KernelInfo& k, const AttentionProblem& p, const RunOptions& o,
                     const KernelInfo* forward) {
  MeasuredRun row = row_of(k, p, o);
  auto finish = [&](RunStatus s, std::string reason) {
    row.status = s;
    row.reason = std::move(reason);
    return row;
  };
  for (const sim::ProblemError& e : sim::validate(p)) return finish(RunStatus::skipped, e.message);
  if (p.gpus() > 1) return finish(RunStatus::skipped, "a problem spread over " + std::to_string(p.gpus()) + " GPUs runs in the ring (bench --gpus)");
  if (!k.built())
    return finish(RunStatus::skipped, "this build has no CUDA support (configure with nvcc installed)");

  const DeviceLimits limits = backend.device().limits();
  const bool backward = k.pass() == sim::Pass::bwd;
  const KernelInfo* fwd = backward ? (forward != nullptr ? forward : forward_rung(k)) : nullptr;
  sim::TileShape tiles, fwd_tiles;
  try {
    // Dtype and head dim first: a compiled rung has no tiles for a head dim it lacks.
    if (auto why = unsupported_reason(k, p, k.tile_source == TileSource::runtime ? sim::TileShape{1, 1} : tiles,
                                      limits))
      return finish(RunStatus::skipped, *why);
    tiles = resolve_tiles(k, p, o.tiles, limits);
    row.tiles = tiles;
    if (auto why = unsupported_reason(k, p, tiles, limits)) return finish(RunStatus::skipped, *why);
    if (backward) {
      if (fwd == nullptr || !fwd->built())
        return finish(RunStatus::skipped, k.id + " reads what the forward rung '" + k.forward +
                                              "' writes, and this build has no such rung");
      // The forward runs with its own default tiles: what it leaves (O, L, P) does not depend on them.
      if (auto why = unsupported_reason(*fwd, p, fwd->tile_source == TileSource::runtime ? sim::TileShape{1, 1}
                                                                                          : sim::TileShape{},
                                        limits))
        return finish(RunStatus::skipped, k.id + " reads the output of " + fwd->id + ", which cannot run here: " + *why);
      fwd_tiles = resolve_tiles(*fwd, p, {}, limits);
      if (auto why = unsupported_reason(*fwd, p, fwd_tiles, limits))
        return finish(RunStatus::skipped, k.id + " reads the output of " + fwd->id + ", which cannot run here: " + *why);
    }
  } catch (const Unsupported& e) {
    return finish(RunStatus::skipped, e.what());
  }

  try {
    const std::vector<CaseBuffer> buffers = case_buffers(k, p, tiles, backward ? fwd : nullptr, fwd_tiles);
    i64 all_bytes = 0;
    for (const CaseBuffer& x : buffers) all_bytes = sim::checked_add(all_bytes, x.bytes, "bytes");

    Measurement m;
    i64 measured_peak = 0;
    try {
      backend.prepare(o);
      const i64 used_before = backend.device_used_bytes();
      DeviceArena arena(backend.allocator(), o.mem_limit_bytes);
      CaseBuffers b;
      for (const CaseBuffer& x : buffers) {
        void* const at = arena.allocate(x.bytes, x.what);
        switch (x.slot) {
          case CaseBuffer::Slot::q: b.q = at; break;
          case CaseBuffer::Slot::k: b.k = at; break;
          case CaseBuffer::Slot::v: b.v = at; break;
          case CaseBuffer::Slot::o: b.o = at; break;
          case CaseBuffer::Slot::lse: b.lse = static_cast<float*>(at); break;
          case CaseBuffer::Slot::forward_workspace:
            b.forward_workspace = at;
            b.forward_workspace_bytes = x.bytes;
            break;
          case CaseBuffer::Slot::d_o: b.d_o = at; break;
          case CaseBuffer::Slot::dq: b.dq = at; break;
          case CaseBuffer::Slot::dk: b.dk = at; break;
          case CaseBuffer::Slot::dv: b.dv = at; break;
          case CaseBuffer::Slot::workspace:
            b.workspace = at;
            b.workspace_bytes = x.bytes;
            break;
        }
      }
      Case c{&k, p, tiles, o.seed, fwd, fwd_tiles};
      m = backend.measure(c, b, o);
      // Kernels allocate nothing, so the memory in use after the runs is the
      // case's peak: its buffers as the driver rounds them, and anything a
      // library allocated on the way.
      measured_peak = std::max(backend.device_used_bytes() - used_before, arena.peak_bytes());
    } catch (const OutOfMemory& e) {
      return finish(RunStatus::oom, std::string(e.what()) + "; the case asks for " + sim::group_digits(all_bytes) +
                                        " B (" + sim::bytes_iec(static_cast<double>(all_bytes)) + ") in all");
    }
    row.peak_memory_bytes = measured_peak;
    row.ctas_per_sm = m.ctas_per_sm;
    row.launch_host_us = m.launch_host_us;
    row.heaviest_first = k.heaviest_first;
    row.storage = k.storage;
    if (m.dram_read_bytes >= 0 && m.dram_write_bytes >= 0) {
      row.dram_read_bytes = std::llround(m.dram_read_bytes);
      row.dram_write_bytes = std::llround(m.dram_write_bytes);
      row.l2_read_bytes = m.l2_read_bytes >= 0 ? std::llround(m.l2_read_bytes) : -1;
      row.l2_write_bytes = m.l2_write_bytes >= 0 ? std::llround(m.l2_write_bytes) : -1;
    }
    row.counters_note = m.counters_note;
    row.rel_error = m.rel_error;
    row.repeats = static_cast<int>(m.times_ms.size());
    if (!m.times_ms.empty()) {
      const sim::Spread ms = sim::spread(m.times_ms);
      row.time_ms_median = ms.median;
      row.time_ms_min = ms.min;
      row.time_ms_max = ms.max;
    }
    if (m.not_written > 0)
      return finish(RunStatus::failed, sim::group_digits(m.not_written) + " of " + sim::group_digits(m.output_elements) +
                                           (backward ? " elements of dQ, dK, dV" : " output elements") +
                                           " were not written (still NaN after the run) or are not finite" +
                                           (m.check_note.empty() ? "" : " (" + m.check_note + ")"));
    const double bound = o.max_rel_error > 0 ? o.max_rel_error : error_bound(p.dtype);
    if (m.rel_error >= 0 && !(m.rel_error <= bound))
      return finish(RunStatus::failed, "wrong result: relative error " + sci(m.rel_error) + " vs fp64 is above " +
                                           sci(bound) + " (" + m.check_note + ")");
    return finish(RunStatus::ok, "");
  } catch (const OutOfMemory& e) {
    return finish(RunStatus::oom, e.what());
  } catch (const Unsupported& e) {
    return finish(RunStatus::skipped, e.what());
  } catch (const CudaError& e) {
    return finish(RunStatus::failed, e.what());
  } catch (const sim::OverflowError& e) {
    return finish(RunStatus::skipped, std::string("problem too large: ") + e.what());
  } catch (const std::bad_alloc&) {
    return finish(RunStatus::failed, "host out of memory (the fp64 reference or a download)");
  } catch (const std::exception& e) {
    return finish(RunStatus::failed, e.what());
  }
}

std::string unusable_context_reason(const std::string& sticky) {
  return "not run: the CUDA context is unusable after an earlier error (" + sticky + ")";
}

sim::MeasuredRun run_case_in_context(Backend& backend, const KernelInfo& kernel, const AttentionProblem& p,
                                     const RunOptions& options, std::string& sticky) {
  if (sticky.empty()) {
    MeasuredRun row = run_case(backend, kernel, p, options);
    if (row.status == RunStatus::failed) sticky = backend.sticky_error();
    return row;
  }
  MeasuredRun row = row_of(kernel, p, options);
  row.status = RunStatus::failed;
  row.reason = unusable_context_reason(sticky);
  return row;
}

sim::MeasuredRuns run_bench(Backend& backend, const std::vector<const KernelInfo*>& kernels,
                            const std::vector<AttentionProblem>& problems, const RunOptions& options,
                            const Progress& progress) {
  sim::MeasuredRuns r;
  const std::size_t total = kernels.size() * problems.size();
  std::string sticky;
  for (std::size_t pi = 0; pi < problems.size(); ++pi) {
    RunOptions o = options;
    o.seed = case_seed(options.seed, pi);
    for (const KernelInfo* k : kernels) {
      r.runs.push_back(run_case_in_context(backend, *k, problems[pi], o, sticky));
      if (progress) progress(r.runs.size(), total, r.runs.back());
    }
  }
  r.meta = bench_meta(backend, options);
  return r;
}

sim::RunMeta bench_meta(Backend& backend, const RunOptions& options) {
  sim::RunMeta m;
  const DeviceInfo& d = backend.device();
  m.gpu = d.name;
  m.driver = d.driver;
  m.cuda_runtime = d.runtime;
  m.sm_count = d.sm_count;
  m.l2_bytes = d.l2_bytes;
  m.sm_clock_mhz = backend.observe_sm_clock_mhz();
  m.mem_clock_mhz = d.mem_clock_mhz;
  m.commit = build_commit();
  m.flop_convention =
      "tflops: 4·B·H·N_q·N_kv·d per forward pass, halved when causal (FlashAttention benchmark convention); "
      "tflops_exact: the FLOPs the simulator counts for the blocks the kernel computes";
  m.l2_flush = options.l2_flush;
  const std::time_t now = std::chrono::system_clock::to_time_t(std::chrono::system_clock::now());
  char date[32];
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  m.date = date;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) == 0) m.host = host;
  return m;
}

}  // namespace flashlab::kernels
