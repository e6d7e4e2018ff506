// Benchmark results for people: the table `flashlab bench` prints. CSV and
// JSON are bench_to_csv / bench_to_json (bench_results.hpp; the GUI reads those).
#pragma once

#include <string>

#include "flashlab/analysis/results/bench_results.hpp"

namespace flashlab::analysis {

// Metadata lines, then one row per result: kernel, problem, tiles, status,
// median (min-max) ms, TFLOP/s (convention and exact), GB/s, peak and
// predicted memory, error, and the reason of skipped / OOM / failed rows.
std::string bench_table(const BenchResults& r);

}  // namespace flashlab::analysis
