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

namespace flashlab::gui {

namespace {

std::string unavailable() { return kernels::cuda_unavailable_reason(); }

std::vector<BenchKernelEntry> list_kernels() {
  std::vector<BenchKernelEntry> out;
  for (const kernels::KernelInfo& k : kernels::registry())
    out.push_back({k.id, k.name, k.summary, kernels::dtype_list(k), kernels::head_dim_list(k), k.built()});
  return out;
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
    ks = kernels::select_kernels(req.kernels.empty() ? sweep.axes.kernels : req.kernels, req.pass);
    if (sweep.mem_limit_bytes) options.mem_limit_bytes = *sweep.mem_limit_bytes;
  } else {
    problems = {req.problem};
    ks = kernels::select_kernels(req.kernels, req.pass);
  }
  analysis::BenchResults out;
  out.meta = kernels::bench_meta(*backend, options);
  const sim::HardwareModel device = kernels::simulator_hardware(backend->device());
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
