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

// One line per row: the run (kernel, pass, problem), then its DRAM bytes,
// read + write, predicted beside measured with the error, CTAs per SM and
// tiles ("-" when the rung does not report them); a row not run, or without
// counters or a prediction, says so. A row with two states (dram_states) adds
// the slots apart and names the state its measurement is nearer. What
// `flashlab bench --results FILE --per-point` prints (validate-bytes.txt).
std::string dram_points(const BenchResults& r);

// What the reader of a row's DRAM bytes should know: why the run has no
// counters, or an assumption the model made for a field the file does not
// record (a flash backward's dQ accumulator, absent from files written before
// rows carried it). Empty when there is nothing to say.
std::string dram_note(const BenchRow& row);

}  // namespace flashlab::analysis
