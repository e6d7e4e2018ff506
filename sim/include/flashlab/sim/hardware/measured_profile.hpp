// A measured hardware profile: what `flashlab ceilings` wrote about the GPU at
// hand. It is a hardware preset (format "flashlab-hardware/1", kind
// "measured") whose ceilings were measured, plus the figures behind them, the
// device it ran on and the working-set sweep. load_hardware() reads it like
// any preset (the extra fields are ignored there); profile_from_json() reads
// all of it. The vocabulary of the hardware model, beside HardwareModel: the
// measuring lives in kernels/ceilings, the reading against datasheets in
// analysis (datasheet.hpp, profile_targets.hpp, profile_report.hpp).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::sim {

// What a figure measures, and so the field of a HardwareModel it stands for.
enum class Quantity { hbm_bandwidth, l2_bandwidth, smem_bandwidth, flops };

// One micro-benchmark, defined once: its id (the key in profiles, tests and
// the CLI), what it is, and the ceiling it measures. `reference` marks the
// vendor-library yardsticks (cudaMemcpy, cuBLAS) measured beside our kernels.
struct FigureSpec {
  std::string_view id;
  std::string_view label;
  Quantity quantity;
  DType dtype = DType::fp32;                  // flops only
  ComputeUnit unit = ComputeUnit::cuda_core;  // flops only
  bool reference = false;
};
const std::vector<FigureSpec>& figure_specs();  // in the order `flashlab ceilings` runs them
const FigureSpec* find_figure_spec(std::string_view id);
bool is_bandwidth(Quantity q);
std::string_view unit_of(Quantity q);  // "GB/s" or "TFLOP/s": the unit a profile stores
double unit_scale(Quantity q);         // 1e9 or 1e12: stored value × scale = base unit

struct CeilingFigure {
  std::string id;          // a FigureSpec id
  double value = 0;        // bytes/s or FLOP/s
  double median_ms = 0, min_ms = 0, max_ms = 0;  // of one timed run
  int repeats = 0;
  double work = 0;         // bytes or FLOPs of one timed run
  double sm_clock_mhz = 0; // SM clock during the run (clock64 over %globaltimer); 0 = not read
  std::string method;      // kernel, grid, working set: enough to reproduce the figure
};

// The ERT-style sweep: bandwidth of one kind of load against the working set.
struct SweepPoint {
  i64 working_set_bytes = 0;
  double bandwidth = 0;  // bytes/s delivered to the SMs
  double median_ms = 0;
};
struct SweepSeries {
  std::string loads;  // "ld.global" (L1 and L2) or "ld.global.cg" (L2 only)
  std::vector<SweepPoint> points;
};

// The device as the CUDA runtime (and NVML, when present) describe it.
struct DeviceFacts {
  std::string name;              // "NVIDIA H100 80GB HBM3"
  int compute_capability = 0;    // 90
  i64 sm_count = 0;
  i64 smem_per_sm_bytes = 0;     // what the blocks of one SM may allocate together
  i64 smem_optin_bytes = 0;      // what one block may allocate
  i64 l2_bytes = 0;
  i64 total_memory_bytes = 0;
  double max_sm_clock_mhz = 0;   // cudaDevAttrClockRate
  double mem_clock_mhz = 0;      // cudaDevAttrMemoryClockRate
  int mem_bus_bits = 0;
  std::string driver;            // NVML driver version, e.g. "580.65.06"; empty without NVML
  std::string cuda_driver;       // "13.0" (cudaDriverGetVersion)
  std::string cuda_runtime;      // "13.0"
  double theoretical_hbm_bandwidth() const;  // 2 (DDR) × memory clock × bus width / 8; 0 if unknown
  std::string compute_capability_text() const;  // "9.0"
};

struct MeasuredProfile {
  HardwareModel hw;       // the ceilings as a preset (kind "measured")
  DeviceFacts device;
  std::vector<CeilingFigure> figures;
  std::vector<SweepSeries> sweep;
  std::string mode;       // "full" or "quick"
  std::string date;       // ISO 8601 UTC
  double wall_s = 0;      // how long the measuring took
  std::string commit;     // of the binary, when known
  std::vector<std::string> notes;  // what could not be measured, and why

  const CeilingFigure* figure(std::string_view id) const;
};

// The ceilings a set of figures gives, as a HardwareModel: HBM = the best of
// read, write, copy and cudaMemcpy (a ceiling is the highest rate attained);
// L2 and SRAM from their read figures; each peak = the best figure measuring
// it (mma.sync, wgmma or cuBLAS for the tensor cores). Capacities come from the
// device. Throws HardwareError when a ceiling the simulator needs (HBM,
// SRAM, one compute peak) has no figure.
HardwareModel hardware_from_measurements(const DeviceFacts& d, const std::vector<CeilingFigure>& figures,
                                         const std::string& date, const std::string& mode);
// "NVIDIA H100 80GB HBM3" -> "measured-NVIDIA-H100-80GB-HBM3": a file name and preset id.
std::string measured_profile_name(const std::string& gpu_name);

// JSON: the preset's fields, then "device", "measurements", "bandwidth_sweep"
// and "run". Reading throws HardwareError naming the origin and the
// malformed or missing field (a datasheet preset is refused: it measured nothing).
std::string profile_to_json(const MeasuredProfile& p);
MeasuredProfile profile_from_json(const std::string& text, const std::string& origin);
MeasuredProfile load_profile(const std::string& path);
// True when the text is a hardware JSON of kind "measured" (cheap check; no validation).
bool looks_measured(const std::string& text);

}  // namespace flashlab::sim
