#include "bench_kernel_files.hpp"

#include <algorithm>
#include <iostream>

#include "common.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/placement/bench_table.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/student/kernel_grade.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/student/student_bench.hpp"

namespace flashlab::cli {

namespace student = kernels::student;

kernels::Progress bench_progress(const sim::HardwareModel& device) {
  return [device](std::size_t done, std::size_t total, const sim::MeasuredRun& run) {
    const analysis::BenchRow r = analysis::bench_row(run, device);
    std::cerr << "[" << done << "/" << total << "] " << r.kernel << " " << sim::describe(r.problem) << ": "
              << analysis::to_string(r.status);
    if (r.status == analysis::RunStatus::ok && r.repeats > 0)
      std::cerr << " " << analysis::fixed(r.time_ms_median, 4) << " ms, " << analysis::fixed(r.tflops, 1)
                << " TFLOP/s";
    else if (!r.reason.empty())
      std::cerr << " (" << r.reason << ")";
    std::cerr << "\n";
  };
}

namespace {

void write(const std::string& path, const std::string& flag, const std::string& contents) {
  if (path.empty()) return;
  try {
    analysis::write_file_atomic(path, contents);
  } catch (const std::exception& e) {
    throw UsageError(flag + ": " + e.what());
  }
}

// What a student reads before anything runs: each file's compile log, or
// what it compiled to.
void print_prepared(const std::vector<student::PreparedKernel>& files, std::ostream& ok_out) {
  for (const student::PreparedKernel& k : files) {
    if (!k.ok()) {
      std::cerr << (k.message.empty() ? k.error : k.message) << std::endl;
      continue;
    }
    if (!k.message.empty()) std::cerr << k.message << std::endl;
    // "sm_90: fp16 d = 64, 128; fp32 d = 64" in the order compiled.
    std::vector<std::pair<std::string, std::string>> by_dtype;
    std::string target;
    for (const student::CompiledVersion& v : k.versions) {
      const std::string t(sim::to_string(v.dtype));
      auto it = std::find_if(by_dtype.begin(), by_dtype.end(), [&](const auto& x) { return x.first == t; });
      if (it == by_dtype.end()) it = by_dtype.insert(by_dtype.end(), {t, "d = "});
      else it->second += ", ";
      it->second += std::to_string(v.head_dim);
      if (target.find(v.target) == std::string::npos) target += (target.empty() ? "" : ", ") + v.target;
    }
    std::string versions;
    for (const auto& [t, ds] : by_dtype) versions += (versions.empty() ? "" : "; ") + t + " " + ds;
    const student::KernelDeclaration& d = k.file->declaration;
    ok_out << k.path << ": " << k.id() << " (" << sim::to_string(d.algorithm);
    if (d.tiles.Br > 0) ok_out << ", " << d.tiles.Br << " x " << d.tiles.Bc << " tiles";
    ok_out << ") ";
    if (versions.empty()) ok_out << "declares none of this grid's dtypes and head dims: nothing compiled";
    else ok_out << "compiled for " << target << ": " << versions;
    ok_out << std::endl;
  }
}

}  // namespace

int run_kernel_file_bench(const KernelFileBench& b) {
  if (const std::string why = student::nvrtc_unavailable_reason(); !why.empty())
    throw UsageError("--kernel-file: " + why);

  if (b.compile_only) {
    // The device's compute capability when there is one; else the GPU of
    // the course's machine (sm_90): NVRTC needs no GPU.
    int cc = 90;
    std::string target = "no CUDA device here: compiled for compute capability 9.0";
    if (kernels::cuda_unavailable_reason().empty()) {
      try {
        const kernels::DeviceInfo d = kernels::query_device(0);
        cc = d.compute_capability;
        target = "compiled for " + d.name;
      } catch (const std::exception&) {
      }
    }
    std::cout << student::nvrtc_description() << "; " << target << std::endl;
    const auto files = student::prepare_kernel_files(b.paths, b.problems, cc);
    print_prepared(files, std::cout);
    for (const student::PreparedKernel& k : files)
      if (!k.ok()) return 1;
    return 0;
  }

  std::unique_ptr<kernels::Backend> backend;
  try {
    backend = kernels::open_cuda_backend();
  } catch (const kernels::NoDevice& e) {
    throw UsageError(std::string(e.what()) + " (--compile-only checks that a kernel file compiles without a GPU)");
  }
  const sim::HardwareModel device = kernels::simulator_hardware(backend->device());
  const auto files = student::prepare_kernel_files(b.paths, b.problems, backend->device().compute_capability);
  print_prepared(files, std::cerr);

  std::vector<std::string> ids = b.rungs ? *b.rungs : student::comparison_rungs(files);
  std::vector<const kernels::KernelInfo*> rungs;
  if (!ids.empty()) {
    try {
      rungs = kernels::select_kernels(ids, sim::PassSelection::fwd);
    } catch (const std::invalid_argument& e) {
      throw UsageError(e.what());
    }
  }
  for (const kernels::KernelInfo* k : rungs)
    if (k->pass() != sim::Pass::fwd)
      throw UsageError("--kernels: " + k->id + " is a backward rung; a kernel file is a forward kernel, so its run "
                       "takes forward rungs only");

  student::KernelFileOptions kf;
  kf.isolation.case_timeout_s = b.timeout_s;
  kf.in_process = b.in_process;
  const sim::MeasuredRuns runs = student::run_bench_with_kernel_files(
      *backend, rungs, files, b.problems, b.options, kf, b.quiet ? kernels::Progress{} : bench_progress(device));
  const analysis::BenchResults results = analysis::bench_results(runs, device);
  const std::vector<analysis::KernelGrade> grades = analysis::grade_kernels(results, device);
  std::cout << analysis::bench_table(results);
  std::cout << analysis::grades_text(grades);
  write(b.csv, "--csv", analysis::bench_to_csv(results));
  write(b.json, "--json", analysis::bench_json_with_grades(results, grades));

  std::size_t failed = 0;
  for (const analysis::BenchRow& r : results.rows) failed += r.status == analysis::RunStatus::failed ? 1 : 0;
  if (failed > 0) {
    std::cerr << "flashlab: " << failed << " case(s) failed (see the table)\n";
    return 1;
  }
  return 0;
}

}  // namespace flashlab::cli
