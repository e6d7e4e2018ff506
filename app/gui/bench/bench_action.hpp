// A scenario's "bench" (a setting or a script step: run kernels as the
// Benchmarks tab does) and "wait_bench" (a step: hold the script until the
// run has finished). scenario.hpp describes both.
#pragma once

#include <vector>

#include <nlohmann/json.hpp>

#include "state/bench_backend.hpp"
#include "state/scenario_values.hpp"

namespace flashlab::gui {

// A checked "bench" value: the request, and whether its problem is the current one.
struct BenchAction {
  BenchRunRequest request;
  bool on_current_problem = true;
};

struct BenchKeyRow {
  KeyDoc doc;
  void (*apply)(BenchAction& a, const nlohmann::json& v);
};

const std::vector<BenchKeyRow>& bench_key_rows();

// Throw std::runtime_error with a one-line reason on a bad value.
BenchAction parse_bench_action(const nlohmann::json& v);
inline constexpr double kDefaultBenchWaitS = 600;
double parse_wait_bench(const nlohmann::json& v);  // seconds

}  // namespace flashlab::gui
