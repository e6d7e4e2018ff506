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

// Bytes of one buffer of the case: rows × cols elements of each of `heads`
// heads (B·H for Q, O, dO, dQ and the logsumexp; B·H_kv for K, V, dK, dV).
i64 tensor_bytes(i64 heads, i64 rows, i64 cols, i64 element_bytes) {
  using sim::checked_mul;
  return checked_mul(checked_mul(checked_mul(heads, rows, "bytes"), cols, "bytes"), element_bytes, "bytes");
}

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
    const i64 s = sim::dtype_bytes(p.dtype);
    const i64 q_bytes = tensor_bytes(p.head_count(), p.n_q(), p.head_dim, s);
    const i64 kv_bytes = tensor_bytes(p.kv_head_count(), p.n_kv(), p.head_dim, s);
    const KernelInfo& producer = backward ? *fwd : k;  // who writes O and the logsumexp
    const i64 lse_bytes = producer.writes_lse ? tensor_bytes(p.head_count(), p.n_q(), 1, 4) : 0;
    const i64 ws_bytes = k.workspace_bytes ? k.workspace_bytes(p, tiles) : 0;
    const i64 fwd_ws_bytes = backward && fwd->workspace_bytes ? fwd->workspace_bytes(p, fwd_tiles) : 0;
    // Backward: dO and dQ like Q, dK and dV like K.
    const i64 grad_bytes = backward ? q_bytes * 2 + kv_bytes * 2 : 0;
    const i64 all_bytes = q_bytes * 2 + kv_bytes * 2 + lse_bytes + ws_bytes + fwd_ws_bytes + grad_bytes;

    Measurement m;
    i64 measured_peak = 0;
    try {
      const i64 used_before = backend.device_used_bytes();
      DeviceArena arena(backend.allocator(), o.mem_limit_bytes);
      CaseBuffers b;
      b.q = arena.allocate(q_bytes, "Q");
      b.k = arena.allocate(kv_bytes, "K");
      b.v = arena.allocate(kv_bytes, "V");
      b.o = arena.allocate(q_bytes, "O");
      b.lse = static_cast<float*>(arena.allocate(lse_bytes, "the logsumexp"));
      if (backward) {
        b.forward_workspace =
            arena.allocate(fwd_ws_bytes, "the workspace of " + fwd->id + " (" + fwd->workspace_holds + ")");
        b.forward_workspace_bytes = fwd_ws_bytes;
        b.d_o = arena.allocate(q_bytes, "dO");
        b.dq = arena.allocate(q_bytes, "dQ");
        b.dk = arena.allocate(kv_bytes, "dK");
        b.dv = arena.allocate(kv_bytes, "dV");
      }
      b.workspace = arena.allocate(ws_bytes, "the workspace (" + k.workspace_holds + ")");
      b.workspace_bytes = ws_bytes;
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
