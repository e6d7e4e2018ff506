// A student's own measurements of attention — the table of PyTorch or
// flash-attn runs a lab report is made of — read and checked against the
// project's FLOP convention and the GPU's roofline: a TFLOP/s its own time
// does not give, a point above the roof, a peak memory below the tensors the
// pass cannot do without. Plain data and its printers; `flashlab check` runs it.
#pragma once

#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::analysis {

// A row or column that cannot be read: one line naming it.
class StudentTableError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What every row of a file shares, given beside it instead of as a column;
// unset: not given. Messages name each as the command's flag (--batch, --seq,
// --heads, --head-dim, --emb-dim, --causal, --dtype, --pass).
struct StudentDefaults {
  std::optional<std::string> batch, seq, heads, head_dim, emb_dim, causal, dtype, pass;
};

// One measured run as the file gives it.
struct StudentRow {
  int line = 0;      // line of the file (the header is line 1)
  std::string impl;  // the implementation column; empty without one
  sim::AttentionProblem problem;
  sim::Pass pass = sim::Pass::fwd;
  double time_s = 0;
  std::optional<double> reported_tflops;  // as the file says, read as TFLOP/s
  std::optional<double> memory_bytes;     // peak memory, by the unit its column names
};

struct StudentTable {
  std::vector<StudentRow> rows;
  // Rows whose time says OOM: their shape only (time 0, nothing measured).
  std::vector<StudentRow> oom_rows;
  // Rows with no time (an empty, '-' or n/a cell: a run that failed or was
  // skipped): their shape only, not checked.
  std::vector<StudentRow> untimed_rows;
  // How the measured columns were read ("'Peak Memory (MB)' read as MiB …"),
  // the columns not read, the rows left out (OOM, no time).
  std::vector<std::string> notes;
  int left_out = 0;  // rows whose time says OOM
  int untimed = 0;   // rows with no time
};

// The names each column may have, one line per quantity: for --help and errors.
std::vector<std::string> student_column_names();

// Reads a comma-separated (RFC 4180) or tab-separated table, its header
// first. Columns are matched by name, case-insensitively; a quantity no
// column holds comes from `defaults` (the batch, N, H and d — or the
// embedding dimension, d = emb_dim / H — are required, causal defaults to
// false, the dtype to fp16, the pass to the one the time column names, else
// forward). A forward and a backward time column ("Forward Pass (s)",
// "Backward Pass (s)") give each line a row per pass; a time of something
// else ("Communication Time (s)") is not read. A time's unit is its column
// name's or, where the name gives none, its cell's ("18.77s"). Throws
// StudentTableError naming the line and column, or saying what the file is
// instead: columns split by ';', only OOM or empty times, a header only.
StudentTable read_student_table(const std::string& text, const StudentDefaults& defaults = {});

// ---- the check ------------------------------------------------------------------

struct StudentCheckOptions {
  double tolerance = 0.10;  // reported / recomputed TFLOP/s may differ from 1 by this much
  double spread = kRepeatSpread;  // one configuration timed again: (max − min) / min of its times at most this
};

struct CheckedStudentRow {
  StudentRow row;
  double flops = 0;              // convention_flops(problem, pass)
  double recomputed_tflops = 0;  // flops / time
  double ratio = 0;              // reported / recomputed TFLOP/s; 0 when none is reported
  double peak_tflops = 0;        // highest_peak of the row's dtype
  double roof_tflops = 0;        // the roof at the row's intensity: min(peak, AI·bandwidth)
  double compulsory_bytes = 0;   // sim::pass_tensor_bytes: the pass's arguments and results, once
  double ai = 0;                 // flops / compulsory bytes (FLOP/byte)
  double bound_s = 0;            // time_lower_bound_s(flops, compulsory bytes, peak, bandwidth)
  bool memory_bound = false;     // the bandwidth's term is the larger one
  bool rate_mismatch = false;    // reported TFLOP/s off its own time by more than the tolerance
  bool above_roof = false;       // faster than the bound (above_ceiling's margin)
  bool memory_below_inputs = false;  // peak memory below the compulsory tensors' size
  bool spread_over = false;          // its configuration timed again, the times further apart than the spread
  std::vector<std::string> flags;    // one phrase per flag, with its numbers
  bool consistent() const { return flags.empty(); }
};

// One configuration (implementation, shape, pass) that the file times more
// than once: its lines and the spread of their times, (max − min) / min.
struct RepeatedConfiguration {
  std::string impl;
  sim::AttentionProblem problem;
  sim::Pass pass = sim::Pass::fwd;
  std::vector<int> lines;
  double min_s = 0, max_s = 0;
  double spread() const { return min_s > 0 ? (max_s - min_s) / min_s : 0; }
};

struct StudentCheck {
  std::string hardware;       // the preset's name
  std::string hardware_name;  // its display name
  double bandwidth = 0;       // HBM bytes/s
  i64 l2_bytes = 0;
  double tolerance = 0.10;
  double spread = kRepeatSpread;
  std::vector<CheckedStudentRow> rows;
  std::vector<StudentRow> oom_rows;  // written to the CSV with status OOM, nothing measured
  std::vector<StudentRow> untimed_rows;  // written with status skipped: no time, nothing checked
  std::vector<RepeatedConfiguration> repeats;  // every configuration timed more than once
  std::vector<std::string> notes;  // the table's, then the check's
  int left_out = 0;
  int untimed = 0;

  int flagged() const;
  int rate_mismatches() const;
  int above_roof() const;
  int memory_below_inputs() const;
  int spread_over() const;  // rows whose configuration's times spread over the threshold
};

StudentCheck check_student_table(const StudentTable& t, const sim::HardwareModel& hw,
                                 const StudentCheckOptions& options = {});

// ---- printers -------------------------------------------------------------------

// What was checked against what, the convention, how the columns were read,
// one table line per row (line, shape, pass, time, reported and recomputed
// TFLOP/s, their ratio, the roof, memory against the compulsory tensors, the
// verdict), then student_check_summary. `origin` names the file.
std::string student_check_text(const StudentCheck& c, const std::string& origin);
// "14 rows: 10 consistent, 4 flagged (4 TFLOP/s off its own time by more than 10 %, …)".
std::string student_check_summary(const StudentCheck& c);
// One row per data row of the file in its order, the header first, no comment
// lines (pandas reads it): a status column (ok, OOM, skipped: no time), and
// an OOM or skipped row's measured cells empty.
std::string student_check_csv(const StudentCheck& c);
// The rows on the GPU's roofline (roofline_chart without model points) at
// convention FLOPs / compulsory bytes and the recomputed FLOP/s, consistent
// and flagged rows apart; with `flashlab_runs`, FlashLab's own measured runs
// beside them, placed as the roofline chart places them.
ChartSpec student_roofline_chart(const StudentCheck& c, const sim::HardwareModel& hw,
                                 const BenchResults* flashlab_runs = nullptr);

}  // namespace flashlab::analysis
