#include "bench_ring.hpp"

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <iostream>
#include <sstream>

#include "common.hpp"
#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/ring/link_report.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/ring/ring_extrapolation.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/kernels/runner/bench_grid.hpp"
#include "flashlab/kernels/runner/device.hpp"
#include "flashlab/kernels/launch/launch_env.hpp"
#include "flashlab/kernels/links/link_bench.hpp"
#include "flashlab/kernels/ring/rendezvous.hpp"
#include "flashlab/kernels/ring/ring.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/problem/attention_models.hpp"

namespace flashlab::cli {
namespace {

kernels::BenchAxes axes_of(const RingBenchFlags& f, bool& quiet_sweep_note) {
  kernels::BenchAxes a;
  if (!f.sweep.empty()) {
    kernels::SweepFile s;
    try {
      s = kernels::load_sweep(f.sweep);
    } catch (const std::exception& e) {
      throw UsageError(std::string("--sweep: ") + e.what());
    }
    if (!s.ring)
      throw UsageError("--sweep: '" + f.sweep + "' is a one-GPU sweep; the ring runs ring sweeps (ring-llama2-7b, " +
                       "ring-llama3.2-3b, ring-llama3.2-1b, or a file of format flashlab-ring-sweep/1)");
    a = s.axes;
    if (!f.quiet && !quiet_sweep_note) std::cerr << "sweep " << s.name << ": " << s.title << "\n";
    quiet_sweep_note = true;
  }
  if (!f.model.empty()) {
    a.models = split(f.model);
    a.heads.clear();
    a.kv_heads.clear();
    a.head_dim.clear();
  }
  if (!f.heads.empty() || !f.kv_heads.empty() || !f.head_dim.empty()) {
    if (!f.model.empty()) throw UsageError("--model and --heads / --kv-heads / --head-dim are alternatives (give one)");
    a.models.clear();
    a.heads = f.heads.empty() ? std::vector<sim::i64>{} : size_list("--heads", f.heads);
    a.kv_heads = f.kv_heads.empty() ? std::vector<sim::i64>{} : size_list("--kv-heads", f.kv_heads);
    a.head_dim = f.head_dim.empty() ? std::vector<sim::i64>{} : size_list("--head-dim", f.head_dim);
  }
  if (!f.batch.empty()) a.batch = size_list("--batch", f.batch);
  if (!f.seq.empty()) a.seq = size_list("--seq", f.seq);
  if (!f.gpus.empty()) {
    a.gpus.clear();
    for (sim::i64 g : size_list("--gpus", f.gpus)) {
      if (g > sim::kMaxRingGpus)
        throw UsageError("--gpus: at most " + std::to_string(sim::kMaxRingGpus) + " (got " + std::to_string(g) + ")");
      a.gpus.push_back(static_cast<int>(g));
    }
  }
  if (!f.layout.empty()) {
    a.layouts.clear();
    for (const std::string& l : split(f.layout)) {
      sim::RingLayout layout{};
      if (!sim::parse_ring_layout(l, layout))
        throw UsageError("--layout: expected one of " + sim::ring_layout_names() + ", got '" + l + "'");
      a.layouts.push_back(layout);
    }
  }
  if (!f.causal.empty()) {
    if (f.causal == "no") a.causal = {false};
    else if (f.causal == "yes") a.causal = {true};
    else if (f.causal == "both") a.causal = {false, true};
    else throw UsageError("--causal: expected no, yes or both (got '" + f.causal + "')");
  }
  if (!f.dtype.empty()) {
    a.dtypes.clear();
    for (const std::string& t : split(f.dtype)) {
      const auto dt = sim::parse_dtype(t);
      if (!dt || *dt == sim::DType::fp32)
        throw UsageError("--dtype: the ring runs fp16 or bf16 (the tensor-core rungs), got '" + t + "'");
      a.dtypes.push_back(*dt);
    }
  }
  if (!f.pass.empty()) {
    const std::optional<sim::PassSelection> pass = sim::parse_pass_selection(f.pass);
    if (pass && *pass != sim::PassSelection::bwd) a.passes = *pass;
    else throw UsageError("--pass: the ring runs fwd or fwd+bwd (the backward needs the forward's O and logsumexp), "
                          "got '" + f.pass + "'");
  }
  return a;
}

// One rank of a job (--ranks): where it is, the group it joined, its GPU.
struct RankJob {
  kernels::RankEnvironment env;
  std::unique_ptr<kernels::RankGroup> group;
  int device = 0;
  int rank() const { return env.rank; }
};

// Reads the launcher's variables, picks the local GPU and joins the other
// ranks; every failure is one line (UsageError: exit 2) on the rank that met it.
std::unique_ptr<RankJob> join_job(const RingBenchFlags& f, int most) {
  if (!(f.rendezvous_timeout_s > 0 && f.rendezvous_timeout_s <= 3600))
    throw UsageError("--rendezvous-timeout: seconds from 1 to 3600 (got " + analysis::fixed(f.rendezvous_timeout_s, 1) +
                     ")");
  auto job = std::make_unique<RankJob>();
  try {
    job->env = kernels::rank_environment(kernels::process_environment());
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  const std::string me = "rank " + std::to_string(job->env.rank) + ": ";
  if (most > job->env.world)
    throw UsageError(me + "--gpus " + std::to_string(most) + " needs " + std::to_string(most) + " ranks; the job has " +
                     std::to_string(job->env.world) + " (" + job->env.launcher + ")");
  // The local GPU: the one this process sees when the launcher gave it one
  // (Slurm's --gpus-per-task, a CUDA_VISIBLE_DEVICES per rank), else the one of its local rank.
  const int visible = kernels::visible_gpu_count();
  job->device = visible == 1 ? 0 : job->env.local_rank;
  if (const std::string why = kernels::ring_unavailable_reason(1, kernels::RingTransport::nccl, {job->device});
      !why.empty())
    throw UsageError(me + why);
  try {
    const auto ms = std::chrono::milliseconds(static_cast<long long>(f.rendezvous_timeout_s * 1000));
    job->group = kernels::RankGroup::join(job->env, ms);
  } catch (const kernels::RendezvousError& e) {
    throw UsageError(me + e.what());
  }
  return job;
}

// The host's issuing on the largest ring's GPUs, and the SMs an exchange's
// kernel holds there, measured after the runs as `flashlab links` measures
// them: the model's host prices for this file, from this machine. A failure
// is a line on stderr, not the sweep's.
struct RingHostMeasurement {
  sim::HostIssueCosts host;
  std::vector<sim::LinkCurvePoint> ring_exchange;
};
RingHostMeasurement measure_ring_host(const kernels::RingOptions& o, int most, bool quiet) {
  kernels::LinkBenchOptions lo;
  lo.devices = o.devices;
  if (lo.devices.empty())
    for (int d = 0; d < most; ++d) lo.devices.push_back(d);
  lo.devices.resize(static_cast<std::size_t>(most));
  lo.host_only = true;
  lo.copy_engines = false;
  // The ring's exchange up to 256 MiB (a 128K-token step's K, V reach it);
  // the exchange the SMs' probe runs beside then lasts about a millisecond.
  lo.max_bytes = sim::i64{256} << 20;
  try {
    const sim::LinkMeasurements m = kernels::run_link_bench(lo);
    RingHostMeasurement out{analysis::measured_host(m), analysis::ring_exchange_curve(m)};
    const sim::HostIssueCosts& h = out.host;
    if (!quiet) {
      std::cerr << "the host's issuing, measured after the runs: "
                << analysis::host_prices_text(h, h.exchange_s, "an exchange over " + std::to_string(h.gpus) + " GPUs")
                << "\n";
      if (!out.ring_exchange.empty())
        std::cerr << "the ring's exchange, measured after the runs: " << out.ring_exchange.size() << " sizes, "
                  << sim::fixed(out.ring_exchange.back().bandwidth / 1e9, 1) << " GB/s per GPU and direction at "
                  << sim::bytes_iec(out.ring_exchange.back().bytes) << "\n";
    }
    return out;
  } catch (const std::exception& e) {
    std::cerr << "flashlab: the host's issuing was not measured (" << e.what()
              << "): the file's runs will be placed with a link preset's host\n";
    return {};
  }
}

}  // namespace

int run_ring_bench(const RingBenchFlags& f) {
  bool noted = false;
  const kernels::BenchAxes axes = axes_of(f, noted);
  std::vector<sim::AttentionProblem> grid;
  try {
    grid = kernels::expand_ring_axes(axes);
  } catch (const std::invalid_argument& e) {
    throw UsageError(e.what());
  }
  // Each problem's one-GPU run first (the scaling efficiency's baseline), then its rings.
  std::vector<sim::AttentionProblem> problems;
  for (const sim::AttentionProblem& p : grid) {
    const sim::AttentionProblem one = sim::on_one_gpu(p);
    if (std::none_of(problems.begin(), problems.end(), [&](const sim::AttentionProblem& q) { return q == one; }))
      problems.push_back(one);
    if (p.gpus() > 1 && std::none_of(problems.begin(), problems.end(),
                                   [&](const sim::AttentionProblem& q) { return q == p; }))
      problems.push_back(p);
  }

  kernels::RingOptions o;
  if (f.repeats < 3)
    throw UsageError("--repeats: at least 3 timed runs of each pass (got " + std::to_string(f.repeats) + ")");
  if (f.warmup < 0) throw UsageError("--warmup: must be 0 or more");
  // A ring pass at 128K tokens takes a second: 10 repeats are plenty for a median.
  o.repeats = f.check_only ? 0 : std::min(f.repeats, 10);
  o.warmup = std::min(f.warmup, 2);
  o.l2_flush = !f.no_flush;
  if (f.check == "sampled") o.check = kernels::CheckMode::sampled;
  else if (f.check == "full") o.check = kernels::CheckMode::full;
  else if (f.check == "off") o.check = kernels::CheckMode::off;
  else throw UsageError("--check: expected sampled, full or off (got '" + f.check + "')");
  o.seed = f.seed;
  if (!f.mem_limit.empty()) o.mem_limit_bytes = parse_positive("--mem-limit", f.mem_limit);
  o.devices = parse_device_list("--devices", f.devices);

  std::vector<kernels::RingSteps> step_modes;
  for (const std::string& m : split(f.steps)) {
    const std::optional<sim::RingSteps> v = sim::parse_ring_steps(m);
    if (!v) throw UsageError("--ring-steps: expected fused or pairwise, comma list (got '" + m + "')");
    if (std::find(step_modes.begin(), step_modes.end(), *v) == step_modes.end()) step_modes.push_back(*v);
  }
  if (step_modes.empty()) throw UsageError("--ring-steps: give fused, pairwise or both");
  if (f.comm_stream != "priority" && f.comm_stream != "default")
    throw UsageError("--comm-stream: expected priority or default (got '" + f.comm_stream + "')");
  o.comm_priority = f.comm_stream == "priority";

  if (f.virtual_gpus) {
    if (!o.devices.empty()) throw UsageError("--virtual-gpus runs every GPU of the ring on device 0: no --devices");
    if (f.ranks)
      throw UsageError("--virtual-gpus runs the ring's GPUs in one process on device 0, --ranks a process per real "
                       "GPU: give one");
    o.transport = kernels::RingTransport::local;
  }
  if (f.ranks && !o.devices.empty())
    throw UsageError("--ranks: each rank takes its local GPU (the launcher's local rank): no --devices");

  // Everything typed is valid; now the machine.
  int most = 1;
  for (const sim::AttentionProblem& p : problems) most = std::max(most, p.gpus());
  if (!o.devices.empty() && static_cast<int>(o.devices.size()) != most)
    throw UsageError("--devices: " + std::to_string(o.devices.size()) + " devices for a ring of " +
                     std::to_string(most) + " GPUs");
  std::unique_ptr<RankJob> job;
  if (f.ranks) {
    job = join_job(f, most);
    o.devices = {job->device};
  } else if (const std::string why = kernels::ring_unavailable_reason(most, o.transport, o.devices); !why.empty()) {
    throw UsageError("--gpus " + std::to_string(most) + ": " + why);
  }
  // With a process per GPU, rank 0 speaks for the job; the others stay quiet.
  const bool speaks = !job || job->rank() == 0;
  const bool quiet = f.quiet || !speaks;
  if (job && job->rank() >= most) return 0;  // the job has more ranks than the largest ring: nothing to run here
  if (job && speaks && !quiet && job->env.world > most)
    std::cerr << "ranks " << most << "-" << (job->env.world - 1) << " of the job stay idle (the largest ring has "
              << most << " GPUs)\n";

  sim::MeasuredRuns runs;
  try {
    kernels::RingOptions mo = o;
    mo.group = job ? job->group.get() : nullptr;
    runs.meta = kernels::ring_meta(mo, most, job ? &job->env : nullptr);
  } catch (const kernels::RendezvousError& e) {
    std::cerr << "flashlab: rank " << job->rank() << ": the job stopped: " << e.what() << "\n";
    return 1;
  } catch (const std::exception& e) {
    throw UsageError(e.what());
  }
  // Each multi-GPU problem once per step mode. The one-GPU baseline (one GPU
  // holding one chunk) runs once, fused: the rung alone at its best — pairwise
  // steps would copy grouped K/V heads to H heads even there, and a slower
  // baseline flatters every scaling figure measured against it.
  struct Job {
    sim::AttentionProblem problem;
    kernels::RingSteps steps;
  };
  std::vector<Job> jobs;
  for (const sim::AttentionProblem& p : problems) {
    if (p.gpus() == 1 && p.layout() == sim::RingLayout::contiguous) {
      jobs.push_back({p, kernels::RingSteps::fused});
      continue;
    }
    for (kernels::RingSteps m : step_modes) jobs.push_back({p, m});
  }
  for (std::size_t i = 0; i < jobs.size(); ++i) {
    const sim::AttentionProblem& p = jobs[i].problem;
    kernels::RingOptions po = o;
    po.steps = jobs[i].steps;
    if (job) {
      // Ranks 0 … P − 1 run a ring of P; a one-GPU run is rank 0's alone.
      if (job->rank() >= p.gpus()) continue;
      po.group = p.gpus() > 1 ? job->group.get() : nullptr;
    } else if (p.gpus() < most && !o.devices.empty()) {
      po.devices.resize(static_cast<std::size_t>(p.gpus()));
    }
    sim::MeasuredRun r;
    try {
      r = kernels::run_ring(p, po);
    } catch (const kernels::RendezvousError& e) {
      std::cerr << "flashlab: rank " << job->rank() << ": the job stopped at " << sim::describe(p) << ": " << e.what()
                << "\n";
      return 1;
    }
    if (!quiet) {
      std::cerr << "[" << (i + 1) << "/" << jobs.size() << "] " << sim::describe(p)
                << (step_modes.size() > 1 ? ", " + std::string(kernels::ring_steps_name(po.steps)) + " steps" : "")
                << ": " << sim::to_string(r.status);
      if (r.status == sim::RunStatus::ok && r.repeats > 0) {
        std::cerr << " fwd " << analysis::fixed(r.time_ms_median, 3) << " ms";
        if (const sim::PassTimes* b = sim::pass_times(r, sim::Pass::bwd))
          std::cerr << ", bwd " << analysis::fixed(b->time_ms_median, 3) << " ms";
      } else if (!r.reason.empty()) {
        std::cerr << " (" << r.reason << ")";
      }
      std::cerr << "\n";
    }
    runs.runs.push_back(r);
  }
  std::size_t failed = 0;
  for (const sim::MeasuredRun& r : runs.runs) failed += r.status == sim::RunStatus::failed ? 1 : 0;
  if (!speaks) return failed > 0 ? 1 : 0;
  // One process drove every GPU over NCCL: its host's prices go with the file.
  if (!job && !f.virtual_gpus && o.transport == kernels::RingTransport::nccl && most >= 2 && !runs.runs.empty()) {
    RingHostMeasurement h = measure_ring_host(o, most, quiet);
    runs.meta.parallel_part().host = h.host;
    runs.meta.parallel_part().ring_exchange = std::move(h.ring_exchange);
  }
  std::cout << analysis::ring_table(runs);
  write_output("--csv", f.csv, analysis::ring_results_csv(runs));
  write_output("--json", f.json, analysis::ring_results_to_json(runs));
  failed = 0;
  for (const sim::MeasuredRun& r : runs.runs) failed += r.status == sim::RunStatus::failed ? 1 : 0;
  if (failed > 0) {
    std::cerr << "flashlab: " << failed << " ring run(s) failed (see the table)\n";
    return 1;
  }
  return 0;
}

}  // namespace flashlab::cli
