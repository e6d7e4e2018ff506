// Micro-benchmarks of the simulator (Google Benchmark). Targets:
// a sweep of 4 algorithms × 512 points under 16 ms; a cursor jump at
// N = 65,536 with B_r = B_c = 64 under 1 ms; with the L2 model, one
// `flashlab sim` at N = 131,072, d = 128 and the GUI's IO-vs-N chart over
// 4 algorithms × 64 values of N each under 1 s. Figures go to docs/performance.md.
#include <benchmark/benchmark.h>

#include <random>

#include "flashlab/analysis.hpp"
#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/sim.hpp"

using namespace flashlab;

namespace {

const sim::HardwareModel& a100() {
  static const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  return hw;
}

// One head (B = H = 1) of N = `seq`, d = 64, in 64 × 64 tiles.
sim::Schedule one_head(sim::Algorithm a, sim::i64 seq, bool causal) {
  sim::AttentionProblem p;
  p.seq_q = seq;
  p.head_dim = 64;
  p.causal = causal;
  return sim::Schedule(a, p, {64, 64});
}

// 4 algorithms × 512 values of N (128, 256, ..., 65,536), paper tiles.
void BM_Sweep4x512(benchmark::State& state) {
  sim::AttentionProblem p;
  p.batch = 8;
  p.heads = 16;
  p.causal = state.range(0) != 0;
  const auto spec = analysis::parse_sweep("seq=128:65536:+128");
  sim::SimOptions opt;
  opt.l2 = state.range(1) != 0;  // off: the requests only, the paper's two-level count
  for (auto _ : state) {
    auto rows = analysis::run_sweep(p, a100(), spec, sim::all_algorithms(), opt);
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(spec.values.size()) * 4);
}
BENCHMARK(BM_Sweep4x512)
    ->ArgsProduct({{0, 1}, {0}})
    ->Args({0, 1})
    ->ArgNames({"causal", "l2"})
    ->Unit(benchmark::kMillisecond);

// A jump to a random step of a schedule at N = 65,536 with B_r = B_c = 64.
void BM_CursorJump(benchmark::State& state) {
  const auto algo = static_cast<sim::Algorithm>(state.range(0));
  const sim::Schedule s = one_head(algo, 65536, state.range(1) != 0);
  sim::Cursor cur(s, 1 << 30);
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<sim::i64> step(0, cur.size());
  for (auto _ : state) {
    cur.seek(step(rng));
    benchmark::DoNotOptimize(cur.counters());
  }
  state.SetLabel(std::string(sim::to_string(algo)) + ", " + sim::group_digits(cur.size()) + " events");
}
BENCHMARK(BM_CursorJump)
    ->ArgsProduct({{0, 1, 2, 3}, {0, 1}})
    ->ArgNames({"algo", "causal"})
    ->Unit(benchmark::kMicrosecond);

// Events per second through the counting visitor.
void BM_EventStream(benchmark::State& state) {
  const auto algo = static_cast<sim::Algorithm>(state.range(0));
  const sim::Schedule s = one_head(algo, 4096, false);
  int64_t events = 0;
  for (auto _ : state) {
    sim::CounterSink c;
    s.emit(c);
    events += c.counters.events;
    benchmark::DoNotOptimize(c.counters);
  }
  state.SetItemsProcessed(events);
  state.SetLabel(std::string(sim::to_string(algo)));
}
BENCHMARK(BM_EventStream)->DenseRange(0, 3)->ArgName("algo")->Unit(benchmark::kMillisecond);

// The closed form of one whole schedule (what a sweep point costs).
void BM_ClosedForm(benchmark::State& state) {
  const sim::Schedule s = one_head(sim::Algorithm::fa2, 65536, state.range(0) != 0);
  for (auto _ : state) benchmark::DoNotOptimize(s.closed_form());
}
BENCHMARK(BM_ClosedForm)->Arg(0)->Arg(1)->ArgName("causal")->Unit(benchmark::kMicrosecond);

const sim::HardwareModel& h200() {
  static const sim::HardwareModel hw = sim::load_hardware("H200-SXM-141GB");
  return hw;
}

// What `flashlab sim` computes (its default options: the L2 model on, with
// its default access budget) at N = 131,072, d = 128 on the H200 preset.
// Args: algorithm, batch, heads.
void BM_SimL2(benchmark::State& state) {
  sim::AttentionProblem p;
  p.seq_q = p.seq_kv = 131072;
  p.head_dim = 128;
  p.batch = state.range(1);
  p.heads = state.range(2);
  const auto algo = static_cast<sim::Algorithm>(state.range(0));
  std::string method;
  for (auto _ : state) {
    const sim::SimResult r = sim::simulate(algo, p, h200(), {});
    benchmark::DoNotOptimize(r.dram_bytes());
    method = r.l2.modelled ? r.l2.method : r.l2.why_not;
  }
  state.SetLabel(std::string(sim::to_string(algo)) + " B" + std::to_string(p.batch) + " H" + std::to_string(p.heads) +
                 ": " + method);
}
BENCHMARK(BM_SimL2)
    ->ArgsProduct({{static_cast<int64_t>(sim::Algorithm::standard), static_cast<int64_t>(sim::Algorithm::fa1),
                    static_cast<int64_t>(sim::Algorithm::fa2)},
                   {1},
                   {8}})
    ->Args({static_cast<int64_t>(sim::Algorithm::standard), 4, 16})
    ->Args({static_cast<int64_t>(sim::Algorithm::fa1), 4, 16})
    ->Args({static_cast<int64_t>(sim::Algorithm::fa2), 4, 16})
    ->ArgNames({"algo", "B", "H"})
    ->Unit(benchmark::kMillisecond)
    ->Iterations(1);

// The GUI's IO-vs-N chart (analysis::io_chart: the sweep with the L2 model,
// its DRAM series) over every algorithm × 64 values of N (2K … 128K).
void BM_IoChartL2_4x64(benchmark::State& state) {
  analysis::ChartContext ctx;
  ctx.problem.batch = 1;
  ctx.problem.heads = 16;
  ctx.problem.head_dim = 128;
  ctx.hw = h200();
  ctx.algorithms = sim::all_algorithms();
  const auto spec = analysis::parse_sweep("seq=2048:131072:+2048");
  for (auto _ : state) {
    const analysis::ChartSpec c = analysis::io_chart(ctx, analysis::SweepAxis::seq, &spec.values);
    benchmark::DoNotOptimize(c.series.data());
  }
  state.SetLabel(std::to_string(spec.values.size()) + " values × " + std::to_string(ctx.algorithms.size()) + " algorithms");
}
BENCHMARK(BM_IoChartL2_4x64)->Unit(benchmark::kMillisecond);

}  // namespace

BENCHMARK_MAIN();
