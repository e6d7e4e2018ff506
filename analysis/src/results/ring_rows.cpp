// Ring runs as rows: what each run's passes took per GPU, its TFLOP/s by the
// convention and its scaling against the file's one-GPU run; the CSV and the
// table `flashlab bench --gpus` prints.
#include <algorithm>
#include <cmath>
#include <limits>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/problem/attention_models.hpp"
#include "flashlab/sim/core/format.hpp"
#include "text/missing.hpp"
#include "text/ring_text.hpp"

namespace flashlab::analysis {

namespace {
using ring_text::ms;
using ring_text::pct;}  // namespace

// ---- rows ----------------------------------------------------------------------------

std::string ring_model_id(const sim::AttentionProblem& p) {
  for (const sim::AttentionModel& m : sim::attention_models())
    if (m.heads == p.heads && m.kv_heads == p.h_kv() && m.head_dim == p.head_dim) return std::string(m.id);
  return {};
}

i64 ring_total_pairs(const sim::AttentionProblem& p) { return p.causal ? p.seq_q * (p.seq_q + 1) / 2 : p.seq_q * p.seq_q; }

double ring_pass_flops(const sim::AttentionProblem& p, sim::Pass pass) {
  return sim::ring_convention_flops(p, ring_total_pairs(p), pass);
}

const sim::MeasuredRun* ring_single_gpu_run(const sim::MeasuredRuns& runs, const sim::AttentionProblem& p,
                                            sim::Pass pass) {
  // The one-GPU baseline is the rung at its best: a fused run (grouped K/V
  // heads read in place; pairwise steps copy them to H heads even on one GPU)
  // before a pairwise one, then the same layout; the first in the file on a tie.
  const sim::MeasuredRun* found = nullptr;
  int best = -1;
  for (const sim::MeasuredRun& r : runs.runs) {
    if (r.problem.gpus() != 1 || r.status != sim::RunStatus::ok || !sim::same_attention(r.problem, p)) continue;
    const sim::PassTimes* t = sim::pass_times(r, pass);
    if (t == nullptr || !(t->time_ms_median > 0)) continue;
    const int score = (r.parallel_part().steps == "fused" ? 2 : 0) + (r.problem.layout() == p.layout() ? 1 : 0);
    if (score > best) {
      best = score;
      found = &r;
    }
  }
  return found;
}

std::vector<RingRow> ring_rows(const sim::MeasuredRuns& r) {
  std::vector<RingRow> rows;
  for (std::size_t k = 0; k < r.runs.size(); ++k) {
    const sim::MeasuredRun& run = r.runs[k];
    const sim::ParallelRun& pr = run.parallel_part();
    const sim::AttentionProblem& p = run.problem;
    for (sim::Pass pass : {sim::Pass::fwd, sim::Pass::bwd}) {
      if (pass == sim::Pass::bwd && !pr.backward && !p.backward()) continue;
      RingRow row;
      row.run = k;
      row.pass = pass;
      row.model = ring_model_id(p);
      for (i64 b : pr.peak_allocated_bytes) row.peak_allocated_bytes = std::max(row.peak_allocated_bytes, b);
      for (i64 b : pr.peak_device_used_bytes) row.peak_device_used_bytes = std::max(row.peak_device_used_bytes, b);
      row.rel_error = pass == sim::Pass::fwd ? run.rel_error : pr.rel_error_grads;
      const sim::PassTimes* t = sim::pass_times(run, pass);
      const sim::PassTimeline* m = sim::pass_timeline(run, pass);
      row.measured = run.status == sim::RunStatus::ok && t != nullptr && m != nullptr && t->time_ms_median > 0;
      if (row.measured) {
        row.time_ms = t->time_ms_median;
        row.time_ms_min = t->time_ms_min;
        row.time_ms_max = t->time_ms_max;
        row.repeats = t->repeats;
        row.compute_ms = m->compute_ms;
        row.rung_ms = m->rung_ms;
        row.comm_ms = m->comm_ms;
        row.exposed_comm_ms = m->exposed_comm_ms;
        row.overlap = m->comm_ms > 0 ? std::clamp(1.0 - m->exposed_comm_ms / m->comm_ms, 0.0, 1.0) : 1.0;
        row.tflops_per_gpu = ring_pass_flops(p, pass) / (row.time_ms * 1e-3) / p.gpus() * 1e-12;
        if (const sim::MeasuredRun* one = ring_single_gpu_run(r, p, pass)) {
          const double t1 = sim::pass_times(*one, pass)->time_ms_median;
          row.scaling_efficiency = t1 / (p.gpus() * row.time_ms);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

namespace {

// How the GPUs were driven, when it was a process per GPU: "a process per GPU
// (torchrun), 4 ranks on 1 host (h1: ranks 0-3)"; empty for one process.
std::string processes_line(const sim::ParallelMeta& m) {
  if (m.launcher.empty()) return {};
  std::vector<std::pair<std::string, std::vector<int>>> hosts;
  for (const sim::ProcessRank& k : m.ranks) {
    auto h = std::find_if(hosts.begin(), hosts.end(), [&](const auto& x) { return x.first == k.host; });
    if (h == hosts.end()) hosts.push_back({k.host, {k.rank}});
    else h->second.push_back(k.rank);
  }
  std::string out = "a process per GPU (" + m.launcher + "), " + std::to_string(m.ranks.size()) + " ranks on " +
                    std::to_string(hosts.size()) + (hosts.size() == 1 ? " host" : " hosts") + " (";
  for (std::size_t i = 0; i < hosts.size(); ++i) {
    const std::vector<int>& rs = hosts[i].second;
    out += (i ? "; " : "") + hosts[i].first + ": rank" + (rs.size() > 1 ? "s " : " ");
    for (std::size_t k = 0; k < rs.size(); ++k) out += (k ? "," : "") + std::to_string(rs[k]);
  }
  return out + ")\n";
}

}  // namespace

std::string ring_table(const sim::MeasuredRuns& r) {
  TextTable t({"model", "B", "H", "H_kv", "N", "d", "P", "layout", "mask", "dtype", "pass", "kernel", "steps", "ms",
               "rung ms", "comm ms", "exposed ms", "overlap", "TFLOP/s/GPU", "peak/GPU", "scaling", "status"});
  for (const RingRow& row : ring_rows(r)) {
    const sim::MeasuredRun& run = r.runs[row.run];
    const sim::ParallelRun& pr = run.parallel_part();
    const sim::AttentionProblem& p = run.problem;
    const bool m = row.measured;
    t.add({row.model.empty() ? std::string("-") : row.model, std::to_string(p.batch), std::to_string(p.heads),
           std::to_string(p.h_kv()), std::to_string(p.seq_q), std::to_string(p.head_dim), std::to_string(p.gpus()),
           std::string(sim::ring_layout_name(p.layout())), p.causal ? "causal" : "full",
           std::string(sim::to_string(p.dtype)), std::string(sim::to_string(row.pass)),
           row.pass == sim::Pass::fwd ? run.kernel : pr.backward_kernel, pr.steps,
           m ? ms(row.time_ms) : "-", m && row.rung_ms >= 0 ? ms(row.rung_ms) : "-", m ? ms(row.comm_ms) : "-", m ? ms(row.exposed_comm_ms) : "-", m ? pct(row.overlap) : "-",
           m ? sim::fixed(row.tflops_per_gpu, 1) : "-",
           row.peak_allocated_bytes > 0 ? sim::bytes_iec(static_cast<double>(row.peak_allocated_bytes)) : "-",
           row.scaling_efficiency ? pct(*row.scaling_efficiency) : "-",
           run.status == sim::RunStatus::ok ? std::string("ok")
                                            : std::string(sim::to_string(run.status)) + ": " + run.reason});
  }
  std::string out = t.str();
  out += "TFLOP/s per GPU: 4·B·H·pairs·d forward (pairs = N² or, causal, N(N+1)/2), 2.5× that backward, over the "
         "median time and P; scaling: the P = 1 run's time over P × this time (\"-\": no P = 1 run of the same "
         "attention in the file); overlap: 1 − exposed / comm; rung ms: the busiest GPU's time inside the rung's "
         "launches (its compute less the step's other kernels and launch gaps); steps: fused (the rungs read grouped "
         "K/V heads, fold partial outputs, add gradients) or pairwise (separate kernels)\n";
  out += processes_line(r.meta.parallel_part());
  return out;
}

}  // namespace flashlab::analysis
