// Inputs the chart, GUI and CLI tests share: the lecture's problem on an A100, and a small
// batch × seq grid of measured runs with OOM cells.
#pragma once

#include <string>

#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/sim.hpp"

namespace flashlab::analysis::test {

inline ChartContext lecture_context() {
  ChartContext ctx;
  ctx.problem.batch = 1;
  ctx.problem.heads = 1;
  ctx.problem.seq_q = 1024;
  ctx.problem.head_dim = 64;
  ctx.hw = sim::load_hardware("A100-PCIe-80GB");
  return ctx;
}

inline BenchRow row(const std::string& kernel, sim::i64 batch, sim::i64 seq, double ms, RunStatus st = RunStatus::ok) {
  BenchRow r;
  r.kernel = kernel;
  r.problem.batch = batch;
  r.problem.heads = 32;
  r.problem.seq_q = seq;
  r.problem.seq_kv = seq;
  r.problem.head_dim = 64;
  r.status = st;
  r.time_ms_median = st == RunStatus::ok ? ms : 0;
  r.tflops = st == RunStatus::ok ? 10.0 / ms : 0;
  r.peak_memory_bytes = st == RunStatus::ok ? batch * seq * 1000 : 0;
  if (st == RunStatus::oom) r.reason = "asked for 17 GiB";
  return r;
}

inline BenchResults lab_grid() {
  BenchResults r;
  r.meta.gpu = "test GPU";
  for (sim::i64 b : {16, 32, 64})
    for (sim::i64 n : {512, 1024, 2048}) {
      const bool oom = b * n >= 64 * 1024;
      r.rows.push_back(row("torch_eager", b, n, 0.01 * static_cast<double>(b * n), oom ? RunStatus::oom : RunStatus::ok));
      r.rows.back().model = "pytorch";  // each row names its model, as result files do
      r.rows.push_back(row("fa2", b, n, 0.002 * static_cast<double>(b * n)));
      r.rows.back().model = "fa2";
    }
  return r;
}

// A constant-token grid, as `flashlab bench --sweep perf` measures it: B·N =
// 16K tokens (batch 16 at N 1K, 4 at 4K, 1 at 16K), at two head shapes and
// both masks, five rungs; naive_cublas is the fastest of the standard ones and
// fa2_tc about four times faster than it at N 1K.
inline BenchResults token_grid() {
  BenchResults r;
  r.meta.gpu = "test GPU";
  const std::pair<const char*, double> rungs[] = {
      {"naive", 1.7}, {"naive_cublas", 1.0}, {"fa1", 4.0}, {"fa2", 3.4}, {"fa2_tc", 0.26}};
  for (const auto& [h, d] : {std::pair<sim::i64, sim::i64>{32, 64}, {16, 128}})
    for (bool causal : {false, true})
      for (const auto& [b, n] : {std::pair<sim::i64, sim::i64>{16, 1024}, {4, 4096}, {1, 16384}})
        for (const auto& [kernel, ms] : rungs) {
          BenchRow x = row(kernel, b, n, ms * static_cast<double>(n) / 1024 * (causal ? 0.6 : 1.0));
          x.problem.heads = h;
          x.problem.head_dim = d;
          x.problem.causal = causal;
          x.model = std::string(kernel).rfind("naive", 0) == 0 ? "standard" : std::string(kernel).substr(0, 3);
          r.rows.push_back(x);
        }
  return r;
}

}  // namespace flashlab::analysis::test
