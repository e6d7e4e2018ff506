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

}  // namespace flashlab::analysis::test
