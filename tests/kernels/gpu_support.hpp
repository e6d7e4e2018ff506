// What the GPU tests share: one backend for the process, fresh seeds, the
// tolerance rule of the kernel ladder, and the checks that hold every rung to it.
#pragma once

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include <catch2/catch.hpp>

#include "flashlab/kernels/rungs/registry.hpp"
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

// Correctness runs: no timing, the fp64 check on sampled rows up to
// `flop_budget` (every row while the reference is cheap), and no bound of the
// runner's: the tests apply the ladder's rule (tolerance) themselves.
inline RunOptions check_options(std::uint64_t seed, double flop_budget, ReferenceCache* cache = nullptr) {
  RunOptions o;
  o.repeats = 0;
  o.check = CheckMode::sampled;
  o.check_flop_budget = flop_budget;
  o.seed = seed;
  o.cache = cache;
  o.max_rel_error = 1.0;
  return o;
}

// The rungs of one pass held to the ladder's rule: `baseline` (naive,
// naive_bwd: the dtype's rounding with fp32 accumulation) first, then the
// others on the same inputs, each with the baseline's error as the yardstick;
// the fp64 check on sampled rows up to `flop_budget`.
struct LadderCheck {
  sim::Pass pass;
  std::string baseline;
  double flop_budget;

  // Correctness options with a fresh seed, the references kept in `cache`.
  RunOptions options(ReferenceCache& cache) const { return check_options(fresh_seed(), flop_budget, &cache); }

  // Every built rung of the pass that supports the problem, its row naming the pass it ran.
  void every_rung(const sim::AttentionProblem& p, const RunOptions& o) const {
    INFO(sim::describe(p) << ", " << describe_options(o));
    const std::string direction(sim::to_string(pass));
    const sim::MeasuredRun base = run_case(gpu(), *find_kernel(baseline), p, o);
    INFO(baseline << ": " << sim::to_string(base.status) << " " << base.reason);
    REQUIRE(base.status == sim::RunStatus::ok);
    REQUIRE(base.rel_error >= 0);
    CHECK(base.direction == direction);
    CHECK(base.rel_error <= tolerance(p.dtype, 1.0));  // the baseline itself: ≤ 2e-2, fp32 ≤ 1e-5
    const double tol = tolerance(p.dtype, base.rel_error);
    for (const KernelInfo* k : kernels_of(sim::selection_of(pass))) {
      if (k->id == baseline || !k->built() || !k->supports(p.dtype) || !k->supports_head_dim(p.head_dim)) continue;
      const sim::MeasuredRun row = run_case(gpu(), *k, p, o);
      INFO(k->id << " tiles " << row.tiles.Br << "x" << row.tiles.Bc << ": " << sim::to_string(row.status) << " "
                 << row.reason << "; error " << row.rel_error << ", " << baseline << " " << base.rel_error
                 << ", bound " << tol);
      REQUIRE(row.status == sim::RunStatus::ok);
      REQUIRE(row.rel_error >= 0);
      CHECK(row.direction == direction);
      CHECK(row.rel_error <= tol);
    }
  }

  // The rungs `ids` with the tiles the GUI may ask for. Only a limit of the
  // device or of the compiled kernel may refuse tiles.
  void explicit_tiles(const sim::AttentionProblem& p, RunOptions o, const sim::TileShape& tiles,
                      const std::vector<std::string>& ids) const {
    INFO(sim::describe(p) << " tiles " << tiles.Br << "x" << tiles.Bc << ", " << describe_options(o));
    const sim::MeasuredRun base = run_case(gpu(), *find_kernel(baseline), p, o);
    REQUIRE(base.status == sim::RunStatus::ok);
    o.tiles = {TileRule::explicit_tiles, tiles};
    for (const std::string& id : ids) {
      const sim::MeasuredRun row = run_case(gpu(), *find_kernel(id), p, o);
      INFO(id << ": " << sim::to_string(row.status) << " " << row.reason << " error " << row.rel_error);
      if (row.status == sim::RunStatus::skipped) {
        CHECK_THAT(row.reason, Catch::Contains("threads per block") || Catch::Contains("shared memory"));
        continue;
      }
      REQUIRE(row.status == sim::RunStatus::ok);
      CHECK(row.tiles == tiles);
      CHECK(row.rel_error <= tolerance(p.dtype, base.rel_error));
    }
  }
};

}  // namespace flashlab::kernels::test
