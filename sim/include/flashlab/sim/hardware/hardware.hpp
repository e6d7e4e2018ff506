// The machine the model runs on: capacities, bandwidths and peak rates, as read
// from a preset or a measured profile (assets/hardware/*.json).
#pragma once

#include <array>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

enum class ComputeUnit : std::uint8_t { tensor_core, cuda_core };
inline constexpr int kUnitCount = 2;
std::string_view to_string(ComputeUnit u);  // "tensor", "cuda"

struct HardwareModel {
  std::string name;           // preset id, e.g. "A100-PCIe-80GB"
  std::string display_name;   // e.g. "NVIDIA A100 80GB PCIe"
  std::string kind = "datasheet";  // "datasheet" or "measured"
  i64 sram_bytes_per_sm = 0;  // M in bytes: on-chip SRAM (L1 + shared) of one SM
  i64 max_smem_per_block_bytes = 0;  // what one thread block may allocate (kernels)
  i64 sm_count = 0;
  i64 l2_bytes = 0;
  // Halves of the L2 that each cache what the SMs wired to them read (A100,
  // H100, H200: 2). A line read by SMs of both halves is held in both.
  i64 l2_partitions = 1;
  i64 hbm_bytes = 0;          // device memory capacity
  double hbm_bandwidth = 0;   // bytes/s
  double l2_bandwidth = 0;    // bytes/s, 0 when unknown
  double sram_bandwidth = 0;  // bytes/s, all SMs together
  double clock_mhz = 0;       // boost clock the peaks assume
  // Peak FLOP/s by [dtype][unit]; 0 means the unit does not run that dtype.
  // fp32 on tensor cores means TF32.
  std::array<std::array<double, kUnitCount>, kDTypeCount> peak_flops{};
  std::vector<std::string> sources;
  std::string provenance;     // free text: GPU, clocks, driver, date for measured profiles

  double peak(DType t, ComputeUnit u) const {
    return peak_flops[static_cast<int>(t)][static_cast<int>(u)];
  }
  // The unit attention would use for this dtype: tensor cores for fp16/bf16,
  // CUDA cores for fp32.
  static ComputeUnit default_unit(DType t) {
    return t == DType::fp32 ? ComputeUnit::cuda_core : ComputeUnit::tensor_core;
  }
};

// The register file of one SM: 65,536 32-bit registers on every NVIDIA SM the
// presets name (Volta to Hopper), an assumption rather than a preset's field.
inline constexpr i64 kRegisterFileBytesPerSm = 65536 * 4;
// What a kernel may hold on chip in one SM: its SRAM (M) and its registers. A
// compiled rung's tiles are counted against it (SimOptions::kernel_tiles):
// the tensor-core kernels keep dK_j, dV_j, S_ij and P_ij in registers, which
// the algorithms' SRAM accounting places in M.
inline i64 on_chip_bytes_per_sm(const HardwareModel& hw) { return hw.sram_bytes_per_sm + kRegisterFileBytesPerSm; }

class HardwareError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// JSON (format "flashlab-hardware/1"). Throws HardwareError naming the file and
// the missing or malformed field.
HardwareModel parse_hardware_json(const std::string& text, const std::string& origin);
std::string to_hardware_json(const HardwareModel& hw);

// The L2 a working set read by every SM sees: the L2 divided by its
// partitions, since each partition keeps its own copy of such lines (docs/model.md).
i64 shared_l2_bytes(const HardwareModel& hw);
// The L2 partitions of a GPU of this compute capability (×10), which the CUDA
// runtime does not report: 2 on the A100 (80) and Hopper (90), else 1.
i64 l2_partitions_of(int compute_capability);

std::vector<std::string> list_presets();  // preset ids, sorted (assets.hpp: the folder)
// A preset id (case-insensitive) or a path to a JSON file.
HardwareModel load_hardware(const std::string& preset_or_path);

}  // namespace flashlab::sim
