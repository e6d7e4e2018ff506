#include "flashlab/kernels/student/student_bench.hpp"

#include <algorithm>
#include <filesystem>
#include <future>
#include <thread>
#include <set>

#include "driver.hpp"
#include "flashlab/kernels/student/student_rung.hpp"

namespace flashlab::kernels::student {

std::string PreparedKernel::id() const {
  if (file) return file->id();
  return std::string(kUserIdPrefix) + std::filesystem::path(path).stem().string();
}

std::vector<PreparedKernel> prepare_kernel_files(const std::vector<std::string>& paths,
                                                 const std::vector<sim::AttentionProblem>& problems, int cc) {
  std::vector<PreparedKernel> out;
  std::set<std::string> ids;
  for (const std::string& path : paths) {
    PreparedKernel k;
    k.path = path;
    try {
      k.file = load_kernel_file(path);
    } catch (const DeclarationError& e) {
      k.error = e.what();
      k.message = k.error;
      out.push_back(std::move(k));
      continue;
    }
    if (!ids.insert(k.id()).second) {
      k.error = path + ": another kernel file of this run is named " + k.file->declaration.name +
                " too: give one a different name (name: in its declaration)";
      k.message = k.error;
      out.push_back(std::move(k));
      continue;
    }
    // Every (dtype, head dim) a case needs and the file declares, once.
    std::vector<std::pair<sim::DType, i64>> needed;
    for (const sim::AttentionProblem& p : problems) {
      const auto v = std::make_pair(p.dtype, p.head_dim);
      if (k.file->declaration.supports(p.dtype) && k.file->declaration.supports_head_dim(p.head_dim) &&
          std::find(needed.begin(), needed.end(), v) == needed.end())
        needed.push_back(v);
    }
    // The versions compile side by side (NVRTC compiles separate programs on
    // separate threads), a few at a time; their messages come in order.
    struct Outcome {
      std::optional<CompiledVersion> version;
      std::string error, message;
    };
    auto compile = [&](sim::DType dtype, i64 d) {
      Outcome o;
      try {
        o.version = compile_version(*k.file, dtype, d, cc);
      } catch (const CompileError& e) {
        o.error = "does not compile: " + e.first_error();
        o.message = e.what();
      } catch (const std::exception& e) {
        o.error = std::string("cannot compile: ") + e.what();
        o.message = o.error;
      }
      return o;
    };
    const std::size_t width = std::max(1u, std::min(8u, std::thread::hardware_concurrency()));
    std::vector<Outcome> outcomes;
    for (std::size_t first = 0; first < needed.size(); first += width) {
      std::vector<std::future<Outcome>> running;
      for (std::size_t i = first; i < std::min(needed.size(), first + width); ++i)
        running.push_back(std::async(std::launch::async, compile, needed[i].first, needed[i].second));
      for (auto& f : running) outcomes.push_back(f.get());
    }
    for (Outcome& o : outcomes) {
      if (!o.error.empty()) {
        k.error = o.error;
        k.message = o.message;
        k.versions.clear();
        break;
      }
      const CompiledVersion& v = *o.version;
      if (!v.warnings.empty() && k.message.find(v.warnings) == std::string::npos)
        k.message += (k.message.empty() ? "" : "\n") + path + " compiles with warnings (" +
                     std::string(sim::to_string(v.dtype)) + ", d = " + std::to_string(v.head_dim) + "):\n" + v.warnings;
      k.versions.push_back(std::move(*o.version));
    }
    out.push_back(std::move(k));
  }
  return out;
}

std::vector<std::string> comparison_rungs(const std::vector<PreparedKernel>& files) {
  std::set<std::string> wanted{"fa2"};
  for (const PreparedKernel& k : files) {
    if (!k.file) continue;
    switch (k.file->declaration.algorithm) {
      case sim::Algorithm::standard: wanted.insert("naive"); break;
      case sim::Algorithm::fa1: wanted.insert("fa1"); break;
      default: break;
    }
  }
  std::vector<std::string> out;
  for (const KernelInfo& k : registry())
    if (wanted.count(k.id)) out.push_back(k.id);
  return out;
}

namespace {

sim::MeasuredRun refused_row(const PreparedKernel& k, const sim::AttentionProblem& p, const RunOptions& o,
                             sim::RunStatus status, std::string reason) {
  sim::MeasuredRun r;
  r.kernel = k.id();
  if (k.file) {
    r.model = std::string(sim::to_string(k.file->declaration.algorithm));
    r.tiles = model_tiles(k.file->declaration);
    r.storage.o_accumulator = k.file->declaration.o_accumulator;
  }
  r.problem = p;
  r.mem_limit_bytes = o.mem_limit_bytes;
  r.status = status;
  r.reason = std::move(reason);
  return r;
}

// Why a case of the file cannot run at all (its dtype, head dim, the problem
// itself), as run_case would say it; nullopt when it can.
std::optional<std::string> skip_reason(const KernelInfo& rung, const sim::AttentionProblem& p, const DeviceLimits& l) {
  for (const sim::ProblemError& e : sim::validate(p)) return e.message;
  if (p.gpus() > 1) return "a problem spread over " + std::to_string(p.gpus()) + " GPUs runs in the ring (bench --gpus)";
  return unsupported_reason(rung, p, rung.default_tiles(p), l);
}

}  // namespace

sim::MeasuredRuns run_bench_with_kernel_files(Backend& backend, const std::vector<const KernelInfo*>& rungs,
                                              const std::vector<PreparedKernel>& files,
                                              const std::vector<sim::AttentionProblem>& problems,
                                              const RunOptions& options, const KernelFileOptions& kf,
                                              const Progress& progress, const std::function<bool()>& cancelled) {
  const std::size_t per_problem = rungs.size() + files.size();
  const std::size_t total = per_problem * problems.size();
  // rows[problem][slot]: slot < rungs.size() a rung's, then the files'.
  std::vector<std::vector<std::optional<sim::MeasuredRun>>> rows(problems.size(),
                                                                 std::vector<std::optional<sim::MeasuredRun>>(per_problem));
  std::size_t done = 0;
  auto finished = [&](std::size_t pi, std::size_t slot, sim::MeasuredRun row) {
    rows[pi][slot] = std::move(row);
    ++done;
    if (progress) progress(done, total, *rows[pi][slot]);
  };
  auto stop = [&] { return cancelled && cancelled(); };
  const DeviceLimits limits = backend.device().limits();
  std::string sticky;  // this process's CUDA context, unusable after an error (the rungs', or a file's in process)

  for (std::size_t fi = 0; fi < files.size() && !stop(); ++fi) {
    const PreparedKernel& k = files[fi];
    const std::size_t slot = rungs.size() + fi;
    const KernelInfo checks = k.file ? student_rung(*k.file, {}) : KernelInfo{};
    std::unique_ptr<KernelProcess> child;
    KernelInfo in_process_rung;
    std::unique_ptr<Backend> diagnosing;
    for (std::size_t pi = 0; pi < problems.size() && !stop(); ++pi) {
      const sim::AttentionProblem& p = problems[pi];
      RunOptions o = options;
      o.seed = case_seed(options.seed, pi);
      if (!k.ok()) {
        finished(pi, slot, refused_row(k, p, o, sim::RunStatus::failed, k.error));
        continue;
      }
      if (const auto why = skip_reason(checks, p, limits)) {
        finished(pi, slot, refused_row(k, p, o, sim::RunStatus::skipped, *why));
        continue;
      }
      if (!kf.in_process) {
        if (!child)
          child = std::make_unique<KernelProcess>(*k.file, k.versions, problems, options, backend.device().ordinal,
                                                  kf.isolation);
        finished(pi, slot, child->run(pi, o.seed));
        continue;
      }
      if (!sticky.empty()) {
        finished(pi, slot, refused_row(k, p, o, sim::RunStatus::failed, unusable_context_reason(sticky)));
        continue;
      }
      if (!in_process_rung.built()) {
        in_process_rung = student_rung(*k.file, k.versions);
        diagnosing = detail::diagnosing_backend(backend, std::make_shared<const KernelFile>(*k.file));
      }
      sim::MeasuredRun row = run_case(*diagnosing, in_process_rung, p, o);
      if (row.status == sim::RunStatus::failed) {
        row.reason = explain_failure(row.reason, rerun_command(k.file->path, p));
        sticky = backend.sticky_error();
      }
      finished(pi, slot, std::move(row));
    }
    child.reset();  // the child ends before the next one starts (one process at a time on the counters)
  }

  for (std::size_t pi = 0; pi < problems.size() && !stop(); ++pi) {
    RunOptions o = options;
    o.seed = case_seed(options.seed, pi);
    for (std::size_t ri = 0; ri < rungs.size() && !stop(); ++ri)
      finished(pi, ri, run_case_in_context(backend, *rungs[ri], problems[pi], o, sticky));
  }

  sim::MeasuredRuns out;
  for (auto& per : rows)
    for (auto& row : per)
      if (row) out.runs.push_back(std::move(*row));
  out.meta = bench_meta(backend, options);
  return out;
}

}  // namespace flashlab::kernels::student
