// A student's own kernel (`flashlab bench --kernel-file`) graded from the rows
// of one run: for every shape, whether it is right, its time and TFLOP/s, its
// speed against the fa2 rung measured on the same problem in the same run,
// and its bytes beside what the simulator says the loop nest it declares
// moves with the tiles it declares. The bytes are two questions: the requests
// the GPU's L2 counted (what the kernel asked of global memory: its loop order
// and tiles) against the model's requests, and the DRAM bytes against the L2
// model's prediction. A kernel whose requests are off by more than the stated
// tolerance is said to run another loop nest, or other tiles, than it
// declares. Plain data, a text summary and the JSON an autograder reads.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::analysis {

// Measured bytes against the model's, reads and writes apart (a loop order
// that re-reads one tensor and writes another once shows in one of them).
struct BytesCheck {
  bool measured = false;            // both sides known: the counters ran (bench --counters) and the model counted
  i64 measured_read = -1, measured_write = -1;
  i64 model_read = -1, model_write = -1;
  double tolerance = 0;             // each ratio may be off by this factor: within [1/(1+t), 1+t]
  double read_ratio() const;        // measured / model; 0 when either is missing or zero
  double write_ratio() const;
  bool within() const;              // both ratios within the tolerance
};

// How far a kernel's requests may be from its declared algorithm's with its
// declared tiles: 25% for fa1 and fa2 (their requests follow the loop nest and
// the tiles), 100% for standard attention (the model's GEMM tiles are not the
// kernel's; S and P, which dominate, are the same).
double requests_tolerance(sim::Algorithm a);

struct ShapeGrade {
  sim::AttentionProblem problem;
  sim::RunStatus status = sim::RunStatus::ok;
  std::string reason;
  bool correct = false;      // ran, wrote every element, and its error against fp64 is within the bound
  double rel_error = -1;     // -1: not checked
  double time_ms = 0;        // median; 0: not timed
  double tflops = 0;         // the convention's FLOPs / time; 0: not timed
  double fa2_time_ms = 0;    // the fa2 rung's median on this problem in this run; 0: none
  double speed_vs_fa2 = 0;   // fa2's time / this time (above 1: faster than fa2); 0 when either is missing
  BytesCheck requests;       // L2 requests (counters) against the model's requests to global memory
  BytesCheck dram;           // DRAM (counters) against the L2 model's prediction
  std::string verdict;       // one sentence when the requests disagree; "" otherwise
};

struct KernelGrade {
  std::string id;            // "user:my_fa1"
  std::string name;          // "my_fa1"
  std::string model;         // the algorithm it declares: "fa1"
  sim::TileShape tiles;      // as declared (0×0: none)
  std::vector<ShapeGrade> shapes;
  int correct = 0, wrong = 0, not_run = 0;  // not_run: skipped, OOM
  std::optional<double> median_speed_vs_fa2;
  std::vector<std::string> notes;  // each distinct verdict once
};

// Every user kernel of the results, in the order its rows first appear; `hw`
// is the device the rows ran on (the model's requests and DRAM).
std::vector<KernelGrade> grade_kernels(const BenchResults& results, const sim::HardwareModel& hw);

// The summary `flashlab bench --kernel-file` prints after the table.
std::string grades_text(const std::vector<KernelGrade>& grades);

// `flashlab bench --json` with kernel files: the results file (every row, as
// bench_from_file reads it) with "kernel_files" beside them: per kernel, per
// shape, correct or not, the time, TFLOP/s, the ratio to fa2 and the bytes
// against the model.
std::string bench_json_with_grades(const BenchResults& results, const std::vector<KernelGrade>& grades);

}  // namespace flashlab::analysis
