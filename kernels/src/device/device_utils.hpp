// Device helpers of the runner (device_utils.cu): inputs, poison, checks,
// clock. Plain declarations so that host C++ (the CUDA backend) calls them.
#pragma once

#include <cstdint>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels::detail {

// n elements of N(0, scale²) in dtype t, from a counter-based generator: the
// same (seed, index) gives the same value on any GPU and launch shape.
// What a run's seed is mixed with for each input (seed ^ kSeedQ, ...): one set,
// so that a ring run and a one-GPU case of the same seed see the same inputs.
constexpr std::uint64_t kSeedQ = 0x1111111111111111ull, kSeedK = 0x2222222222222222ull,
                        kSeedV = 0x3333333333333333ull, kSeedDO = 0x4444444444444444ull;
void fill_normal(void* data, sim::i64 n, sim::DType t, std::uint64_t seed, float scale, void* stream);

// How many of n elements are NaN or ±inf. `counter` is one device
// unsigned long long the call may overwrite.
sim::i64 count_not_finite(const void* data, sim::i64 n, sim::DType t, unsigned long long* counter, void* stream);

// Reads `bytes` of `data` (a buffer of at least 2× the L2) and leaves the sum
// in `sink`: the L2 then holds clean lines of this buffer only, so nothing
// dirty is written back during a counter pass that follows.
void read_flush(const void* data, sim::i64 bytes, unsigned long long* sink, void* stream);

// Spins one block for `cycles` SM clocks (clock64) and returns the cycles it
// counted; timed with events by the caller.
void spin_cycles(long long cycles, long long* out_device, void* stream);

}  // namespace flashlab::kernels::detail
