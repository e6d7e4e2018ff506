// Shared pieces of the `flashlab` command line: the problem/hardware flags every
// subcommand takes, and the error type that becomes exit code 2.
#pragma once

#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>
#include <utility>

#include <CLI/CLI.hpp>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/sim.hpp"
#include "flashlab/sim/hardware/default_hardware.hpp"

namespace flashlab::cli {

// Bad input: one line on stderr, exit code 2.
class UsageError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// f()'s value; an exception of one of `Errors` (a file that does not read, a
// measurement that cannot run) becomes a UsageError "WHAT: its message", WHAT
// naming the flag or the step. Other exceptions pass through as they are.
template <class F>
decltype(auto) usage_errors_of(const std::string&, F&& f) {
  return f();
}
template <class E, class... Errors, class F>
decltype(auto) usage_errors_of(const std::string& what, F&& f) {
  try {
    return usage_errors_of<Errors...>(what, std::forward<F>(f));
  } catch (const E& e) {
    throw UsageError(what + ": " + e.what());
  }
}

// The lecture's standard setting: GPT-2 medium in the FlashAttention paper.
struct ProblemFlags {
  std::string batch = "64", heads = "16", seq = "1024", seq_kv, head_dim = "64", dtype = "fp16";
  std::string br, bc, sram;
  std::string hw = sim::kDefaultHardware;
  bool causal = false;
};

void add_problem_flags(CLI::App& app, ProblemFlags& f, bool with_tiles = true);

struct Resolved {
  sim::AttentionProblem problem;
  sim::HardwareModel hw;
  // The measured profile behind --hw when it names a profile's file (its Ampere path, its roofs' sources).
  std::shared_ptr<const sim::MeasuredProfile> profile;
  sim::SimOptions options;
};

// Parses and checks every flag; throws UsageError naming the flag.
Resolved resolve(const ProblemFlags& f);

sim::i64 parse_positive(const std::string& flag, const std::string& value);
// A comma list's items in order; a trailing comma gives an empty last item, which
// what reads the items refuses by name.
std::vector<std::string> split(const std::string& list);
// A comma list of positive sizes for `flag` ("1,4,16K"); an empty list is refused.
std::vector<sim::i64> size_list(const std::string& flag, const std::string& list);
// CUDA device numbers, a comma list ("0,1"); empty for an empty list.
std::vector<int> parse_device_list(const std::string& flag, const std::string& list);

// `contents` into `path` whole (analysis::write_file_atomic); a failure is a
// UsageError naming the flag. Nothing when `path` is empty.
void write_output(const std::string& flag, const std::string& path, const std::string& contents);
// The folder `path` would be written in exists and takes a file (checked
// before a table is printed or a long run starts, not after); a UsageError
// naming the flag otherwise. Nothing when `path` is empty.
void require_output_folder(const std::string& flag, const std::string& path);
// The folder `dir` exists or is created, and takes a file; a UsageError naming
// the flag otherwise.
void require_output_dir(const std::string& flag, const std::string& dir);
sim::HardwareModel load_hw(const std::string& name);

// --width/--height of a chart: 64 to 16384 pixels, else a UsageError naming them.
void check_chart_size(int width, int height);

// A command that writes one chart: --out (the extension picks SVG, PNG, PDF
// or CSV), --width, --height, --dark.
struct ChartOutput {
  std::string out;
  int width = 1200, height = 800;
  bool dark = false;
};
void add_chart_output_flags(CLI::App& app, ChartOutput& o, const std::string& out_help);
// Checks the flags before any work: the extension of --out, cairo for PNG and
// PDF, the size. A UsageError naming the flag otherwise.
void check_chart_output(const ChartOutput& o);
// Writes the chart atomically and says so ("wrote ID (png, 1200×800) to OUT",
// then the chart's notes); a failure is a UsageError naming --out.
void write_chart_output(const analysis::ChartSpec& c, const ChartOutput& o);

// The results files of a --results flag, merged by the one stated rule
// (analysis::merge_results: a run held twice kept from the first file, two
// GPUs refused). A file that cannot be read is a UsageError naming the flag;
// a note says how many repeated rows were left out.
analysis::BenchResults read_results_files(const std::string& flag, const std::vector<std::string>& files,
                                          std::vector<std::string>& notes);

// The exit code of a bench run: 1, with a line on stderr counting them, when a
// case failed (the table says which); 0 otherwise.
int bench_exit_code(const analysis::BenchResults& results);

// The algorithms of a comma list ("standard,fa1,fa2" or "all": every
// forward algorithm; a family's pass is chosen with --pass).
std::vector<sim::Algorithm> parse_algorithms(const std::string& list);

// --pass fwd | bwd | fwd+bwd: which pass of training to show.
void add_pass_flag(CLI::App& app, std::string& pass);
// The selection; nullopt when the flag was not given.
std::optional<sim::PassSelection> parse_pass(const std::string& value);
// The pass of `a`, unless --pass says otherwise.
sim::PassSelection pass_or_own(const std::optional<sim::PassSelection>& pass, sim::Algorithm a);
// What the --algos flags take: "comma list of standard, pytorch, fa1, fa2".
std::string algorithms_help();
// What --layout takes: "zigzag (balanced under the causal mask, default) | contiguous (...)".
std::string layout_help();

}  // namespace flashlab::cli
