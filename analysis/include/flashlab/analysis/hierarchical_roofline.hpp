// The hierarchical roofline: one bandwidth ceiling per memory level (HBM, L2,
// shared memory) and one compute ceiling per dtype and unit; every measured
// kernel run placed at its arithmetic intensity for each level — FLOPs and
// bytes from the simulator, time from the GPU — with the simulator's own
// prediction beside it. Points above a ceiling are flagged with the likely
// cause, never drawn silently. Plain C++ (docs/roofline.md explains the reading).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/bench_results.hpp"
#include "flashlab/analysis/chart.hpp"
#include "flashlab/analysis/measured_profile.hpp"
#include "flashlab/sim/simulate.hpp"

namespace flashlab::analysis {

// A point counts as above a ceiling beyond this margin: event timing of a
// median run is good to about 1%, so 2% is noise, not a finding.
inline constexpr double kAboveCeilingTolerance = 0.02;

struct MemoryCeiling {
  sim::Level level = sim::Level::HBM;
  double bandwidth = 0;  // bytes/s
  std::string label;     // "HBM 3,012 GB/s"
};

struct ComputeCeiling {
  sim::DType dtype = sim::DType::fp16;
  sim::ComputeUnit unit = sim::ComputeUnit::tensor_core;
  double peak = 0;       // FLOP/s
  std::string label;     // "fp16 tensor 989.4 TFLOP/s"
  // A measured figure drawn as an extra, lower ceiling (mma.sync under the
  // cuBLAS peak): what a kernel without wgmma can reach. Not a roof for the guards.
  bool secondary = false;
};

struct HierarchicalCeilings {
  std::string hardware;  // display name
  bool measured = false;
  std::vector<MemoryCeiling> memory;    // HBM, L2 (when known), SMEM, in that order
  std::vector<ComputeCeiling> compute;  // every positive peak, then the secondary ones
  double clock_mhz = 0;                 // the SM clock the compute ceilings assume
  std::vector<std::string> notes;       // e.g. "no L2 bandwidth in this hardware model"

  const MemoryCeiling* memory_of(sim::Level l) const;
  double peak(sim::DType d, sim::ComputeUnit u) const;  // primary ceilings only; 0 when absent
};

HierarchicalCeilings hierarchical_ceilings(const sim::HardwareModel& hw);
// Adds the mma.sync figures as secondary ceilings where they lie below the peak.
HierarchicalCeilings hierarchical_ceilings(const MeasuredProfile& p);

// Bytes through each level for a simulated run. L2 carries every HBM byte (on
// NVIDIA GPUs all DRAM traffic passes through L2) plus the re-reads the model
// sends to L2; SMEM is the model's tile-granular on-chip traffic.
struct LevelBytes {
  double hbm = 0, l2 = 0, smem = 0;
  double of(sim::Level l) const;
};
LevelBytes level_bytes(const sim::Counters& total);

struct LevelPoint {
  sim::Level level = sim::Level::HBM;
  double bytes = 0;
  double ai = 0;          // FLOPs / bytes at this level
  double roof = 0;        // min(peak, ai · bandwidth)
  double bandwidth = 0;   // the level's ceiling, bytes/s
  double achieved_bandwidth = 0;  // bytes / measured time
};

// A point above a ceiling and the likely cause, in one sentence.
struct CeilingFlag {
  std::string ceiling;    // "HBM", "L2", "SMEM" or "fp16 tensor"
  bool compute = false;   // a compute ceiling (FLOP/s), else a memory level (bytes/s)
  double achieved = 0, limit = 0;
  std::string reason;     // the likely cause in a few words (chart notes)
  std::string cause;      // the same, explained in a sentence (CLI, GUI tooltips)
};

struct PlacedRun {
  std::string kernel;       // registry id
  std::string label;        // "fa2 N=4096 d=64"
  sim::AttentionProblem problem;
  sim::Algorithm algorithm = sim::Algorithm::fa2;
  sim::ComputeUnit unit = sim::ComputeUnit::tensor_core;
  double flops = 0;         // exact FLOPs of the simulated run (matmul + softmax)
  double time_s = 0;        // measured median
  double achieved = 0;      // flops / time_s
  double peak = 0;          // the unit's compute ceiling
  double predicted_time_s = 0;  // the model's lower bound: the slowest level or compute
  double predicted = 0;         // flops / predicted_time_s
  std::string bound;            // what binds the prediction: "HBM", "L2", "SMEM" or "compute"
  std::vector<LevelPoint> levels;  // one per memory ceiling
  std::vector<CeilingFlag> flags;
  bool flagged() const { return !flags.empty(); }
};

// One run on the ceilings. run_clock_mhz: the SM clock the run reported
// (BenchMeta), 0 when unknown; used to name clocks as a cause.
PlacedRun place_run(const std::string& kernel, const sim::SimResult& r, double time_s, const HierarchicalCeilings& c,
                    double run_clock_mhz = 0);

struct Placement {
  std::vector<PlacedRun> runs;
  std::vector<std::string> skipped;  // one line per run left out, with the reason
};
// Every successful forward run of a result set, simulated on `hw` with the
// tiles it ran with (the simulator has no backward pass).
Placement place_runs(const BenchResults& results, const sim::HardwareModel& hw, const HierarchicalCeilings& c);

// ---- charts (roofline_hier_chart.cpp) ----------------------------------------------

// id "roofline-hier": a slope per memory level, a ceiling per compute peak
// (`dtype`'s tensor or CUDA-core peak drawn solid), each run as a row of points
// (one per level, same FLOP/s) with the model's prediction as crosses beside
// it; flagged points marked and explained in the notes.
ChartSpec hierarchical_roofline_chart(const HierarchicalCeilings& c, const Placement& placed,
                                      sim::DType dtype = sim::DType::fp16);
// id "bandwidth-sweep": bandwidth against working set for each kind of load,
// with the L1 (all SMs), L2 sizes and the measured ceilings marked. A profile
// without a sweep gives an empty chart whose note says so.
ChartSpec bandwidth_sweep_chart(const MeasuredProfile& p);

}  // namespace flashlab::analysis
