// A run as measured: the vocabulary shared by the code that measures
// (kernels/: the runner on one GPU, the ring over several; scripts/torch_compare.py)
// and the code that places a measurement beside the model (analysis/). Only
// what the GPUs did — times, memory, error, the tiles that ran, and over
// several GPUs each step's events — and which simulator algorithm has the
// kernel's HBM traffic. No rate, FLOP or byte count lives here: those are the
// model's, and analysis/ derives them (placement.hpp, ring_results.hpp).
// Plain values; no CUDA, no NCCL.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/hardware/gpu_topology.hpp"
#include "flashlab/sim/hardware/host_issue.hpp"
#include "flashlab/sim/hardware/link_curve.hpp"
#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/problem.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim {

enum class RunStatus { ok, oom, skipped, failed };
std::string_view to_string(RunStatus s);  // "ok", "OOM", "skipped", "failed"
std::optional<RunStatus> parse_run_status(std::string_view s);

// The wall time of a pass: the median, fastest and slowest of its timed runs.
struct PassTimes {
  double time_ms_median = 0, time_ms_min = 0, time_ms_max = 0;
  int repeats = 0;  // timed runs; 0: checked only
};

// ---- what only a run over several GPUs has -------------------------------------

// One GPU's step s of one pass, as the CUDA events of its median run saw it.
// Times are milliseconds from the pass's origin: an event every GPU recorded
// after a host barrier, so the GPUs' timelines line up to a few microseconds.
struct MeasuredStep {
  int gpu = 0;
  int step = 0;                 // 0 … P − 1 (the backward's homecoming transfer of dK, dV: step P)
  Pass pass = Pass::fwd;
  int kv_owner = 0;             // whose K, V chunks the GPU computed on
  // The compute stream: the visible chunk pairs of the step (rung launches and
  // the online-softmax merges). Start = end when every pair was skipped.
  double compute_start_ms = 0, compute_end_ms = 0;
  // Of that, the time inside the rung's launches (events around each): the
  // rest of the compute is the step's other kernels (expansions, merges,
  // accumulations, conversions) and the gaps between launches. -1: not recorded.
  double rung_ms = -1;
  // How long the compute stream waited, before this step, for the K, V (and
  // dK, dV) it needed to arrive: the exposed communication of the step.
  double wait_ms = 0;
  // The communication stream: this GPU's send and receive of the step (one
  // NCCL group); -1 when nothing travelled.
  double transfer_start_ms = -1, transfer_end_ms = -1;
  i64 bytes_received = 0;
  // The host thread issuing this GPU's step (its calls and launches, the
  // exchange not included), on the host's clock from the run's origins being
  // recorded; -1: not recorded (a file from before the runner timed its host).
  double host_start_ms = -1, host_end_ms = -1;
};

// One pass over P GPUs beyond its wall time: what the GPUs' streams saw.
struct PassTimeline {
  Pass pass = Pass::fwd;
  // Untimed runs before the timed ones, back to back with them (-1: not
  // recorded; the ring's bench has run 2 since it was written).
  int warmup = -1;
  // Of the median run: the busiest GPU's time on the communication stream,
  // the longest a GPU's compute waited for data, the busiest GPU's compute.
  double comm_ms = 0;
  double exposed_comm_ms = 0;
  double compute_ms = 0;
  // Of the busiest GPU's compute, the time inside the rung's launches (the
  // rest: the step's other kernels and the gaps between launches); -1: not recorded.
  double rung_ms = -1;
  std::vector<MeasuredStep> steps;  // the median run's, sorted by gpu, then step
};

// The backward of a training step over P GPUs: its wall times (the first GPU's
// start to the last GPU's end, CUDA events) and its timeline.
struct MeasuredBackward : PassTimes {
  MeasuredBackward() { timeline.pass = Pass::bwd; }
  PassTimeline timeline;
};

// A run over P GPUs (the ring: kernels/ring/ring.hpp): the parts of its
// measurement that one GPU has not. The run's own times are its forward's.
struct ParallelRun {
  std::string transport;                // "nccl" or "local" (P virtual GPUs on one device: tests only)
  // How each step launched its work: "fused" (the rungs read grouped K/V heads,
  // fold the partial outputs and add the gradients themselves) or "pairwise"
  // (expansion, merge and accumulation as separate kernels after each pair).
  std::string steps = "fused";
  // The exchange's stream: "priority" (the device's greatest: NCCL's CTAs
  // take the first SMs the rung frees) or "default" (files from before the
  // runner chose).
  std::string comm_stream = "priority";
  PassTimeline forward;
  std::string backward_kernel;          // the backward rung ("fa2_tc_bwd"); empty for a forward-only run
  std::optional<MeasuredBackward> backward;
  // Bytes each GPU allocated for the run (its chunks' tensors, the two K/V
  // buffers, the rung's workspace, ...) at their peak, and the device memory
  // in use at that moment (cudaMemGetInfo: NCCL's buffers and the context too).
  std::vector<i64> peak_allocated_bytes;
  std::vector<i64> peak_device_used_bytes;
  double rel_error_grads = -1;          // the worst of dQ, dK, dV against fp64; -1 = not checked
  std::string check_note;               // which heads and rows were checked
};

// ---- a run --------------------------------------------------------------------

struct MeasuredRun : PassTimes {
  std::string kernel;            // registry id, or "torch_eager", "sdpa_flash", "sdpa_cudnn"
  // The simulator algorithm with the kernel's HBM traffic, as its key
  // ("standard", "pytorch", "fa1", "fa2"): the registry's KernelInfo::model for
  // our kernels, torch_compare.py's for PyTorch's. Empty in files written
  // before rows carried it; such rows are not placed on a roofline.
  std::string model;
  std::string direction = "fwd"; // "fwd" or "bwd"
  AttentionProblem problem;      // over several GPUs: with its parallel part (P = problem.gpus())
  TileShape tiles;               // what ran (0×0: not tiled, or not reported)
  RunStatus status = RunStatus::ok;
  std::string reason;            // why skipped / failed / OOM (with the bytes asked for)
  // The host's wall time inside the launch call, the median over the timed
  // runs (argument checks, descriptors, the launch itself); 0: not measured.
  double launch_host_us = 0;
  i64 peak_memory_bytes = 0;     // measured on the device (over several GPUs: the largest GPU's allocations)
  // The allocation limit the case ran under (a smaller GPU emulated: flashlab
  // bench --mem-limit, a sweep's mem_limit); 0: the device's own memory.
  i64 mem_limit_bytes = 0;
  double rel_error = -1;         // relative Frobenius error of O (or the gradients) vs fp64, -1 = not checked

  // How the kernel ran, for the L2 model's launch: thread blocks resident per
  // SM (cudaOccupancyMaxActiveBlocksPerMultiprocessor; 0 = not reported, the
  // model's own), and whether each head's heaviest row block starts first.
  i64 ctas_per_sm = 0;
  bool heaviest_first = false;
  // Element types the kernel keeps in global memory where they differ from the
  // paper's algorithm (its O accumulated in fp32): the model counts them so.
  StorageTypes storage;

  // DRAM and L2 bytes the GPU's counters saw in a separate pass (L2 flushed by
  // reading before it); -1 = not measured, `counters_note` says why.
  i64 dram_read_bytes = -1, dram_write_bytes = -1;
  i64 l2_read_bytes = -1, l2_write_bytes = -1;
  std::string counters_note;
  bool has_counters() const { return dram_read_bytes >= 0 && dram_write_bytes >= 0; }

  // Set for a run over several GPUs (problem.parallel set).
  std::optional<ParallelRun> parallel;
  // The parallel part to set, made when absent.
  ParallelRun& parallel_part();
  // The parallel part to read; an empty one for a run on one GPU.
  const ParallelRun& parallel_part() const;
};

// The algorithm of `model`, nullopt when the run names none (or an unknown one).
std::optional<Algorithm> model_algorithm(const MeasuredRun& r);

// A pass of a run: the forward's times are the run's own (on one GPU: the
// pass of its direction), the backward's of a training step over several
// GPUs its parallel part's. Null when the run has no such pass.
const PassTimes* pass_times(const MeasuredRun& r, Pass p);
// ... and its timeline over several GPUs; null on one GPU or without that pass.
const PassTimeline* pass_timeline(const MeasuredRun& r, Pass p);
// Sets pass p of a run over several GPUs (its parallel part made when absent):
// the forward's times become the run's own, the backward's its parallel part's.
void set_pass(MeasuredRun& r, Pass p, const PassTimes& times, PassTimeline timeline);

// ---- where a set of runs was measured -----------------------------------------

// One process of a job that ran a process per GPU: who it was and where.
struct ProcessRank {
  int rank = 0;           // its GPU's place in the ring
  std::string host;       // the host's name
  int local_rank = 0;     // its rank on that host
  int device = 0;         // the CUDA ordinal it took
  std::string gpu;        // the GPU's name
  bool operator==(const ProcessRank& o) const {
    return rank == o.rank && host == o.host && local_rank == o.local_rank && device == o.device && gpu == o.gpu;
  }
};

// What only runs over several GPUs say of where they were measured.
struct ParallelMeta {
  int gpu_count = 0;                    // GPUs the machine (rank 0's host) showed
  std::vector<std::string> gpu_names;   // per GPU used
  // How the GPUs were driven: empty when one process drove them all; else the
  // launcher that started a process per GPU ("torchrun", "slurm", "mpirun"),
  // each process (rank) in `ranks`, and the GPUs per node it found (the most
  // ranks on one host).
  std::string launcher;
  std::vector<ProcessRank> ranks;
  int gpus_per_node = 0;
  std::string nccl_version;             // "2.28.9"; empty for the local transport
  std::string topology;                 // `nvidia-smi topo -m` when the run could read it
  GpuTopology gpu_topology;             // parsed from `topology` (parse_nvidia_smi_topo)
  std::vector<std::string> environment; // NCCL_* and the like, "NAME=value"
  // The host's issuing measured in the same call, after the runs, on the
  // largest ring's GPUs (flashlab links' host measurement); not measured in
  // older files, for a process per GPU, and on virtual GPUs.
  HostIssueCosts host;
  // The ring's exchange over the same GPUs, measured with it (every GPU sends
  // to the next and receives from the previous): message size → time.
  std::vector<LinkCurvePoint> ring_exchange;
};

// Where and how a set of runs was measured (over several GPUs: GPU 0's).
struct RunMeta {
  std::string gpu, driver, cuda_runtime, commit, flop_convention, date, host;
  // PyTorch's rows (scripts/torch_compare.py): its version, the CUDA it was
  // built with, cuDNN's version; empty in files that did not record them.
  std::string torch_version, torch_cuda, cudnn_version;
  // How the runs were taken and checked, in the words of the tool that took
  // them; empty where it did not say (the reader states what it knows).
  std::string method;
  int sm_count = 0;
  i64 l2_bytes = 0;  // the device's L2 (cudaDevAttrL2CacheSize), 0 when unknown
  double sm_clock_mhz = 0, mem_clock_mhz = 0;
  bool l2_flush = true;

  std::optional<ParallelMeta> parallel;  // set for runs over several GPUs
  ParallelMeta& parallel_part();              // made when absent
  const ParallelMeta& parallel_part() const;  // an empty one when absent
};

// A set of runs and where they were measured: what a benchmark run returns.
struct MeasuredRuns {
  RunMeta meta;
  std::vector<MeasuredRun> runs;
};

}  // namespace flashlab::sim
