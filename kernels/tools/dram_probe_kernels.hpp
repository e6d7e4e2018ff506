// Kernels whose DRAM traffic is known to the byte, to check the CUPTI counters
// against (flashlab_dram_probe, tests/kernels): 16-byte accesses, grid-stride,
// every byte touched once. Plain declarations; sizes are multiples of 16 bytes.
#pragma once

#include <cstddef>

namespace flashlab::kernels::probe {

// A non-zero pattern of the index and `seed` (so no compression or zero page
// can shorten the traffic).
void fill(void* dst, std::size_t bytes, unsigned seed);

// Reads every byte of src once. `sink` is 16 bytes of device memory, written
// only when the sum of all words hits an impossible value: it keeps the loads.
void read_once(const void* src, std::size_t bytes, void* sink);

void copy(const void* src, void* dst, std::size_t bytes);

// Writes every byte of dst once and reads nothing.
void write_only(void* dst, std::size_t bytes, unsigned seed);

// Evicts what the L2 holds: reads `bytes` (≥ 2× the L2) of `scratch`. Reading,
// not writing: lines evicted dirty are written back now, and the L2 is left
// clean, so the next range pays for no write-back that is not its own.
void flush_l2(const void* scratch, std::size_t bytes, void* sink);

// The kernels' names as ncu's --kernel-name sees them.
inline constexpr const char* kReadKernel = "dram_probe_read";
inline constexpr const char* kCopyKernel = "dram_probe_copy";
inline constexpr const char* kWriteKernel = "dram_probe_write";

}  // namespace flashlab::kernels::probe
