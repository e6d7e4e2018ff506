// Benchmark results for people: the table `flashlab bench` prints. CSV and
// JSON are analysis::bench_to_csv / bench_to_json (the GUI reads those).
#pragma once

#include <string>

#include "flashlab/analysis/bench_results.hpp"

namespace flashlab::kernels {

// Metadata lines, then one row per result: kernel, problem, tiles, status,
// median (min-max) ms, TFLOP/s (convention and exact), GB/s, peak and
// predicted memory, error, and the reason of skipped / OOM / failed rows.
std::string bench_table(const analysis::BenchResults& r);

// The list `flashlab bench --list` prints: every registry kernel, its dtypes,
// head dims, minimum SM and whether this build can run it.
std::string registry_table();

}  // namespace flashlab::kernels
