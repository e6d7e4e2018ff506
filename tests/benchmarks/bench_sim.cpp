// Micro-benchmarks of the simulator (Google Benchmark). Targets:
// a sweep of 4 algorithms × 512 points under 16 ms; a cursor jump at
// N = 65,536 with B_r = B_c = 64 under 1 ms. Figures go to docs/performance.md.
#include <benchmark/benchmark.h>

#include <random>

#include "flashlab/analysis.hpp"
#include "flashlab/sim.hpp"

using namespace flashlab;

namespace {

const sim::HardwareModel& a100() {
  static const sim::HardwareModel hw = sim::load_hardware("A100-SXM4-40GB");
  return hw;
}

// 4 algorithms × 512 values of N (128, 256, ..., 65,536), paper tiles.
void BM_Sweep4x512(benchmark::State& state) {
  sim::AttentionProblem p;
  p.batch = 8;
  p.heads = 16;
  p.causal = state.range(0) != 0;
  const auto spec = analysis::parse_sweep("seq=128:65536:+128");
  for (auto _ : state) {
    auto rows = analysis::run_sweep(p, a100(), spec, sim::all_algorithms(), {});
    benchmark::DoNotOptimize(rows.data());
  }
  state.SetItemsProcessed(state.iterations() * static_cast<int64_t>(spec.values.size()) * 4);
}
BENCHMARK(BM_Sweep4x512)->Arg(0)->Arg(1)->ArgName("causal")->Unit(benchmark::kMillisecond);

// A jump to a random step of a schedule at N = 65,536 with B_r = B_c = 64.
void BM_CursorJump(benchmark::State& state) {
  sim::AttentionProblem p;
  p.seq_q = 65536;
  p.head_dim = 64;
  p.causal = state.range(1) != 0;
  const auto algo = static_cast<sim::Algorithm>(state.range(0));
  const sim::Schedule s(algo, p, {64, 64});
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
  sim::AttentionProblem p;
  p.seq_q = 4096;
  p.head_dim = 64;
  const auto algo = static_cast<sim::Algorithm>(state.range(0));
  const sim::Schedule s(algo, p, {64, 64});
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
  sim::AttentionProblem p;
  p.seq_q = 65536;
  p.causal = state.range(0) != 0;
  const sim::Schedule s(sim::Algorithm::fa2, p, {64, 64});
  for (auto _ : state) benchmark::DoNotOptimize(s.closed_form());
}
BENCHMARK(BM_ClosedForm)->Arg(0)->Arg(1)->ArgName("causal")->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
