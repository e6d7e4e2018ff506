// Ring attention over P GPUs as measured: the vocabulary shared by the code
// that measures (kernels/ring: the GPUs' CUDA events around every step's
// compute and transfer) and the code that places a measurement beside the
// ring's simulation (analysis/results/ring_results.hpp). Only what the GPUs did —
// times, bytes received, memory, errors; rates, FLOPs and the scaling
// efficiency are derived in analysis/. Plain values; no CUDA, no NCCL.
#pragma once

#include "flashlab/sim/calibration/host_issue.hpp"
#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/ring/gpu_topology.hpp"
#include "flashlab/sim/measurement/measurement.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::sim {

// One GPU's step s of one pass, as the CUDA events of its median run saw it.
// Times are milliseconds from the pass's origin: an event every GPU recorded
// after a host barrier, so the GPUs' timelines line up to a few microseconds.
struct RingMeasuredStep {
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

// One pass (forward, or the backward of a training step) over P GPUs.
struct RingMeasuredPass {
  Pass pass = Pass::fwd;
  // Wall time of the pass on the GPUs (first GPU's start to last GPU's end),
  // CUDA events, median / min / max over the timed repeats.
  double time_ms_median = 0, time_ms_min = 0, time_ms_max = 0;
  int repeats = 0;
  // Untimed runs before them, back to back with them (-1: not recorded; the
  // ring's bench has run 2 since it was written).
  int warmup = -1;
  // Of the median run: the busiest GPU's time on the communication stream,
  // the longest a GPU's compute waited for data, the busiest GPU's compute.
  double comm_ms = 0;
  double exposed_comm_ms = 0;
  double compute_ms = 0;
  // Of the busiest GPU's compute, the time inside the rung's launches (the
  // rest: the step's other kernels and the gaps between launches); -1: not recorded.
  double rung_ms = -1;
  std::vector<RingMeasuredStep> steps;  // the median run's, sorted by gpu, then step
};

struct RingMeasuredRun {
  AttentionProblem problem = default_ring_problem();  // the whole problem with its parallel part (P = problem.gpus())
  std::string kernel;                   // forward rung id ("fa3_hopper", "fa2_tc")
  std::string backward_kernel;          // backward rung id ("fa2_tc_bwd"); empty for a forward-only run
  std::string transport;                // "nccl" or "local" (P virtual GPUs on one device: tests only)
  // How each step launched its work: "fused" (the rungs read grouped K/V heads,
  // fold the partial outputs and add the gradients themselves) or "pairwise"
  // (expansion, merge and accumulation as separate kernels after each pair).
  std::string steps = "fused";
  // The exchange's stream: "priority" (the device's greatest: NCCL's CTAs
  // take the first SMs the rung frees) or "default" (files from before the
  // runner chose).
  std::string comm_stream = "priority";
  RunStatus status = RunStatus::ok;
  std::string reason;                   // why skipped / failed / OOM
  RingMeasuredPass forward;
  std::optional<RingMeasuredPass> backward;
  // Bytes each GPU allocated for the ring (its chunks' tensors, the two K/V
  // buffers, the rung's workspace, ...) at their peak, and the device memory
  // in use at that moment (cudaMemGetInfo: NCCL's buffers and the context too).
  std::vector<i64> peak_allocated_bytes;
  std::vector<i64> peak_device_used_bytes;
  // Relative Frobenius error against fp64 (O; the worst of dQ, dK, dV), -1 = not checked.
  double rel_error = -1;
  double rel_error_grads = -1;
  std::string check_note;               // which heads and rows were checked
};

// Where a set of ring runs was measured: the single-GPU meta (GPU 0's name,
// driver, commit, ...) and what only several GPUs have.
// One process of a job that ran a process per GPU: who it was and where.
struct RingRank {
  int rank = 0;           // its GPU's place in the ring
  std::string host;       // the host's name
  int local_rank = 0;     // its rank on that host
  int device = 0;         // the CUDA ordinal it took
  std::string gpu;        // the GPU's name
  bool operator==(const RingRank& o) const {
    return rank == o.rank && host == o.host && local_rank == o.local_rank && device == o.device && gpu == o.gpu;
  }
};

struct RingRunMeta {
  RunMeta device;                       // as MeasuredRuns::meta, for GPU 0
  int gpu_count = 0;                    // GPUs the machine (rank 0's host) showed
  std::vector<std::string> gpu_names;   // per GPU used
  // How the GPUs were driven: empty when one process drove them all; else the
  // launcher that started a process per GPU ("torchrun", "slurm", "mpirun"),
  // each process (rank) in `ranks`, and the GPUs per node it found (the most
  // ranks on one host).
  std::string launcher;
  std::vector<RingRank> ranks;
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

struct RingMeasuredRuns {
  RingRunMeta meta;
  std::vector<RingMeasuredRun> runs;
};

}  // namespace flashlab::sim
