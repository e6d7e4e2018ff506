// The benchmark runner: one case is one kernel on one problem. It checks the
// case can run (a skipped row names the limit otherwise), allocates every
// buffer through an arena (an out-of-memory row names the bytes, nothing
// leaks), and asks a Backend to fill the inputs, run, check against fp64 and
// time. A row is what was measured (sim::MeasuredRun: times, memory, error,
// the tiles that ran, the registry's model); the rates that compare it with
// the model (TFLOP/s, GB/s) are the analysis library's (placement.hpp).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/device/memory.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/kernels/device/timing.hpp"
#include "flashlab/sim/measurement/measurement.hpp"

namespace flashlab::kernels {

enum class CheckMode { off, sampled, full };

// How a case runs: timed as every run is (timing.hpp: warm-up, repeats, the
// L2 flush), checked against fp64, inside a memory limit, from a seed.
struct RunOptions : TimingOptions {
  CheckMode check = CheckMode::sampled;
  double check_flop_budget = 2e9;  // fp64 FLOPs of reference per case (sampled)
  i64 mem_limit_bytes = 0;   // per case; 0: the device's memory
  std::uint64_t seed = 0x5eed;  // inputs are N(0, input_scale²) from this seed
  double input_scale = 1.0;
  TileRequest tiles;
  ReferenceCache* cache = nullptr;  // reuse fp64 references across kernels
  // A checked error above this marks the row failed (0: the dtype's bound,
  // error_bound()).
  double max_rel_error = 0;
  // A counter pass after the timed runs: DRAM and L2 bytes of one launch from
  // CUPTI's range profiler, the L2 flushed by reading before it.
  bool counters = false;
};

// The sanity bound of a benchmark row: fp32 1e-4, fp16/bf16 2e-2 (the tests
// hold the rungs to tighter, per-case bounds; see tests/kernels).
double error_bound(sim::DType t);

// Device buffers of one case; the backend reads q, k, v and writes o (and lse).
// A backward case also has dO (read), dQ, dK, dV (written) and the forward
// rung's workspace (o, lse and it are then written by the untimed forward).
struct CaseBuffers {
  void* q = nullptr;
  void* k = nullptr;
  void* v = nullptr;
  void* o = nullptr;
  float* lse = nullptr;
  void* workspace = nullptr;
  i64 workspace_bytes = 0;
  void* d_o = nullptr;
  void* dq = nullptr;
  void* dk = nullptr;
  void* dv = nullptr;
  void* forward_workspace = nullptr;
  i64 forward_workspace_bytes = 0;
};

// What a case allocates, in the order it allocates it: the one list the
// runner allocates from and the tests hold against the model's memory of the
// run (sim::run_memory_bytes). Q, K, V, O (and the logsumexp of a rung that
// writes one) as sim::tensor_bytes sizes them; a backward case also the
// forward rung's workspace, dO, dQ, dK, dV; then the rung's own workspace
// (its layout: alignment and padding included). Buffers of zero bytes are left out.
struct CaseBuffer {
  enum class Slot { q, k, v, o, lse, forward_workspace, d_o, dq, dk, dv, workspace };
  Slot slot = Slot::q;
  std::string what;  // named in an out-of-memory row
  i64 bytes = 0;
};
// `forward`: the forward rung of a backward case (nullptr for a forward one).
std::vector<CaseBuffer> case_buffers(const KernelInfo& k, const sim::AttentionProblem& p, sim::TileShape tiles,
                                     const KernelInfo* forward, sim::TileShape forward_tiles);

struct Measurement {
  std::vector<double> times_ms;  // one per timed run
  double launch_host_us = 0;     // the host's time in the launch call, median of the timed runs; 0: not timed
  double rel_error = -1;         // -1: not checked; a backward case: the worst of dQ, dK, dV
  i64 not_written = 0;           // output elements still NaN (or not finite) after a run
  i64 output_elements = 0;
  std::string check_note;        // "all 2 heads", "rows 64 of 16,384 in 2 of 512 heads"
  int ctas_per_sm = 0;           // as the rung reported it; 0: not reported
  // The counter pass (RunOptions::counters): -1 when not measured, the note says why.
  double dram_read_bytes = -1, dram_write_bytes = -1, l2_read_bytes = -1, l2_write_bytes = -1;
  std::string counters_note;
};

struct Case {
  const KernelInfo* kernel = nullptr;
  sim::AttentionProblem problem;
  sim::TileShape tiles;
  std::uint64_t seed = 0;
  // A backward case: the forward rung run (untimed) before it, with its tiles.
  const KernelInfo* forward = nullptr;
  sim::TileShape forward_tiles;
};

// What runs the cases: the CUDA device, or a fake in CPU tests.
class Backend {
 public:
  virtual ~Backend() = default;
  virtual const DeviceInfo& device() const = 0;
  virtual DeviceAllocator& allocator() = 0;
  // Bytes of device memory in use now (all processes: total − free).
  virtual i64 device_used_bytes() = 0;
  // Makes what only the measurement needs before a case's memory is taken as
  // its baseline (the counter pass's flush buffer and CUPTI's session), so that
  // a case's peak is its own buffers whichever case comes first.
  virtual void prepare(const RunOptions&) {}
  // Fill q, k, v from the case's seed, poison o, run, count unwritten output,
  // check against fp64, time. A backward case also fills dO, runs its forward
  // rung once (untimed), and poisons, counts and checks dQ, dK, dV; only the
  // backward launch is timed. Throws Unsupported, CudaError or OutOfMemory.
  virtual Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) = 0;
  // The SM clock observed now (a timed clock64() spin), 0 when unknown.
  virtual double observe_sm_clock_mhz() { return 0; }
  // Non-empty when an error has left the device unusable (an illegal address
  // poisons the CUDA context): the runner marks the remaining cases instead of
  // failing each on its own.
  virtual std::string sticky_error() { return {}; }
};

// The CUDA backend of one device (CUDA ordinal `device`). Throws NoDevice with
// one line (no CUDA in this build, cudaGetDeviceCount's error, no such device)
// when there is none.
class NoDevice : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};
std::unique_ptr<Backend> open_cuda_backend(int device = 0);

// One case, start to end. Never throws for a case-level problem: the row says
// skipped (with the reason), OOM (with the bytes) or failed (with the error).
// A backward rung's row has direction "bwd", and it is skipped (naming why)
// when its forward rung cannot run the problem.
// `forward`: the rung run before a backward one (default: forward_rung(kernel)).
sim::MeasuredRun run_case(Backend& backend, const KernelInfo& kernel, const sim::AttentionProblem& p,
                          const RunOptions& options, const KernelInfo* forward = nullptr);

// After an error that leaves the CUDA context unusable (Backend::sticky_error,
// `sticky`), no later case can run: why each of them failed.
std::string unusable_context_reason(const std::string& sticky);

// run_case, unless an earlier case left the CUDA context unusable (`sticky`
// not empty): then a failed row with unusable_context_reason. A failed case
// sets `sticky` to the backend's sticky error (empty when the context survived).
sim::MeasuredRun run_case_in_context(Backend& backend, const KernelInfo& kernel, const sim::AttentionProblem& p,
                                     const RunOptions& options, std::string& sticky);

using Progress = std::function<void(std::size_t done, std::size_t total, const sim::MeasuredRun& row)>;

// Every kernel on every problem (problems outer), seeds derived from
// options.seed so each case has fresh inputs, shared by the kernels of one
// problem (their errors compare on the same inputs).
sim::MeasuredRuns run_bench(Backend& backend, const std::vector<const KernelInfo*>& kernels,
                            const std::vector<sim::AttentionProblem>& problems, const RunOptions& options,
                            const Progress& progress = {});

// GPU, SM count, clocks, driver, runtime, commit, FLOP convention, date, host.
sim::RunMeta bench_meta(Backend& backend, const RunOptions& options);

// The commit this binary was built from (configure time; "-dirty" when the
// tree had changes), overridden by $FLASHLAB_COMMIT; "unknown" otherwise.
std::string build_commit();

// The seed of problem number `index` of a run seeded with `seed`.
std::uint64_t case_seed(std::uint64_t seed, std::uint64_t index);

}  // namespace flashlab::kernels
