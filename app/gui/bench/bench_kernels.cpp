// The kernels library as the GUI's benchmark backend (compiled only when the
// build has flashlab_kernels). Runs case by case so that Cancel takes effect
// between cases; rows are the runner's own (OOM and skipped rows included),
// each placed beside the model as it finishes (analysis/placement: rates and
// the model's memory), as `flashlab bench` prints them.
#include <algorithm>

#include "state/bench_backend.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/kernels/student/student_bench.hpp"

namespace flashlab::gui {

namespace {

std::string unavailable() { return kernels::cuda_unavailable_reason(); }

std::vector<BenchKernelEntry> list_kernels() {
  std::vector<BenchKernelEntry> out;
  for (const kernels::KernelInfo& k : kernels::registry())
    out.push_back({k.id, k.name, k.summary, kernels::dtype_list(k), kernels::head_dim_list(k), k.built()});
  return out;
}

// Kernel files: what `flashlab bench --kernel-file` runs, the same function;
// the rows placed as they finish, the whole set placed again at the end.
analysis::BenchResults run_kernel_files(const BenchRunRequest& req, kernels::Backend& backend,
                                        const std::vector<sim::AttentionProblem>& problems,
                                        const kernels::RunOptions& options, const sim::HardwareModel& device,
                                        const BenchProgressFn& progress, const std::atomic<bool>& cancel) {
  namespace student = kernels::student;
  if (const std::string why = student::nvrtc_unavailable_reason(); !why.empty()) throw std::runtime_error(why);
  const auto files = student::prepare_kernel_files(req.kernel_files, problems, backend.device().compute_capability);
  const std::vector<std::string> ids = req.kernels.empty() ? student::comparison_rungs(files) : req.kernels;
  const std::vector<const kernels::KernelInfo*> rungs = kernels::select_kernels(ids, sim::PassSelection::fwd);
  student::KernelFileOptions kf;
  kf.isolation.case_timeout_s = req.kernel_timeout_s;
  const sim::MeasuredRuns runs = student::run_bench_with_kernel_files(
      backend, rungs, files, problems, options, kf,
      [&](std::size_t done, std::size_t total, const sim::MeasuredRun& row) {
        if (progress) progress(done, total, analysis::bench_row(row, device));
      },
      [&] { return cancel.load(); });
  return analysis::bench_results(runs, device);
}

analysis::BenchResults run(const BenchRunRequest& req, const BenchProgressFn& progress, const std::atomic<bool>& cancel) {
  std::unique_ptr<kernels::Backend> backend = kernels::open_cuda_backend();  // throws NoDevice with the reason
  kernels::RunOptions options;
  options.repeats = std::max(1, req.repeats);
  options.counters = req.counters;
  std::vector<sim::AttentionProblem> problems;
  std::vector<const kernels::KernelInfo*> ks;
  if (!req.sweep.empty()) {
    const kernels::SweepFile sweep = kernels::load_sweep(req.sweep);
    problems = kernels::expand_axes(sweep.axes);
    if (req.kernel_files.empty())
      ks = kernels::select_kernels(req.kernels.empty() ? sweep.axes.kernels : req.kernels, req.pass);
    if (sweep.mem_limit_bytes) options.mem_limit_bytes = *sweep.mem_limit_bytes;
  } else {
    problems = {req.problem};
    if (req.kernel_files.empty()) ks = kernels::select_kernels(req.kernels, req.pass);
  }
  const sim::HardwareModel device = kernels::simulator_hardware(backend->device());
  if (!req.kernel_files.empty()) return run_kernel_files(req, *backend, problems, options, device, progress, cancel);
  analysis::BenchResults out;
  out.meta = kernels::bench_meta(*backend, options);
  const std::uint64_t base_seed = options.seed;
  const size_t total = problems.size() * ks.size();
  size_t done = 0;
  for (size_t p = 0; p < problems.size(); ++p) {
    options.seed = kernels::case_seed(base_seed, p);  // the kernels of one problem share its inputs
    for (const kernels::KernelInfo* k : ks) {
      if (cancel) return out;
      out.rows.push_back(analysis::bench_row(kernels::run_case(*backend, *k, problems[p], options), device));
      if (progress) progress(++done, total, out.rows.back());
    }
  }
  return out;
}

const BenchBackend kBackend{"kernels library (CUDA)", unavailable, list_kernels, run};

}  // namespace

void register_builtin_bench_backends() { register_bench_backend(&kBackend); }

}  // namespace flashlab::gui
