// The ceilings of a hierarchical roofline: one bandwidth per memory level
// (HBM, L2, shared memory) and one peak per dtype and unit, from a hardware
// model (datasheet or measured) or from a measured profile, which adds its
// mma.sync figures as lower, secondary ceilings. Plain C++ (docs/roofline.md).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::analysis {

// A measurement counts as above a ceiling beyond this margin: event timing of
// a median run is good to about 1%, so 2% is noise, not a finding. The one
// rule for every roofline (placement.hpp), and for the secondary ceilings below.
inline constexpr double kAboveCeilingTolerance = 0.02;
bool above_ceiling(double achieved, double limit);  // limit > 0 and achieved > limit·(1 + tolerance)

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
  // wgmma or cuBLAS peak): what a kernel without wgmma can reach. Not a roof for the guards.
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
// Names the figure behind each tensor-core roof ("bf16 tensor 870.0 TFLOP/s (wgmma)")
// and adds the mma.sync figures as secondary ceilings where they lie below it
// ("bf16 mma.sync 632.0 TFLOP/s (Ampere path)").
HierarchicalCeilings hierarchical_ceilings(const sim::MeasuredProfile& p);
// The measured profile behind `hw` when it was read from a profile's file
// (kind "measured", `name_or_path` a path): its figures name each roof's source
// and add the Ampere path. Null for a preset name or a file that is no profile.
std::shared_ptr<const sim::MeasuredProfile> measured_profile_of(const sim::HardwareModel& hw,
                                                                const std::string& name_or_path);

// "SMEM" for shared memory, "HBM", "L2": the names the roofline charts print.
std::string level_name(sim::Level l);
// "fp16 tensor", "tf32 tensor" (fp32 on tensor cores), "fp32 cuda".
std::string unit_label(sim::DType d, sim::ComputeUnit u);

}  // namespace flashlab::analysis
