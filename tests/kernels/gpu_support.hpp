// What the GPU tests share: one backend for the process, fresh seeds, and the
// tolerance rule of the kernel ladder.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>

#include "flashlab/kernels/runner/runner.hpp"

namespace flashlab::kernels::test {

inline Backend& gpu() {
  static std::unique_ptr<Backend> b = open_cuda_backend();
  return *b;
}

// Fresh inputs in every test: a new seed each call, printed by the callers;
// FLASHLAB_TEST_SEED replays one.
inline std::uint64_t fresh_seed() {
  static std::mt19937_64 g = [] {
    if (const char* s = std::getenv("FLASHLAB_TEST_SEED")) return std::mt19937_64(std::strtoull(s, nullptr, 0));
    return std::mt19937_64(std::random_device{}());
  }();
  return g();
}

// Relative Frobenius error allowed against fp64:
//   fp32: 1e-5 — the CUDA-core rungs keep fp32 end to end;
//   fp16/bf16: at most 2× the error of `naive` (which rounds S, P and O to the
//   dtype with fp32 accumulation) on the same inputs, never above 2e-2. Below
//   one unit roundoff of the dtype (2⁻¹¹, 2⁻⁸) the rounding of O itself
//   dominates — naive can even be exact (N = 1: O = V) — so that is the floor.
inline double tolerance(sim::DType t, double naive_error) {
  if (t == sim::DType::fp32) return 1e-5;
  const double unit_roundoff = t == sim::DType::fp16 ? 0x1p-11 : 0x1p-8;
  return std::min(2e-2, std::max(2 * naive_error, unit_roundoff));
}

inline std::string describe_options(const RunOptions& o) {
  return "seed " + std::to_string(o.seed) + " (FLASHLAB_TEST_SEED replays the run), input scale " +
         std::to_string(o.input_scale);
}

}  // namespace flashlab::kernels::test
