// Writes an EXAMPLE ring results file ("flashlab-ring-results/1") for the
// multi-GPU view's tests and its user-guide screenshot, on machines without
// GPUs: NOT a measurement. Its "measured" steps are the ring's simulator run
// with other figures than the view's defaults — a compute efficiency of 0.52
// (0.45 backward), NVLink at 180 GB/s (what NCCL's send/recv reaches rather
// than the datasheet's 450) — and a fixed ±4% pattern on each step's compute,
// so that the placement beside the prediction has errors to show. Its meta
// and every run's transport ("example") say so, and the view shows it.
// Usage: make_example_ring_results OUT.json
#include <cmath>
#include <fstream>
#include <iostream>

#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "../support/problems.hpp"

using namespace flashlab;

namespace {

// ±4%, the same for the same (gpu, step, pass) on every run of the tool.
double wobble(int gpu, int step, sim::Pass pass) {
  const unsigned h = static_cast<unsigned>(gpu * 73856093) ^ static_cast<unsigned>(step * 19349663) ^
                     (pass == sim::Pass::bwd ? 83492791u : 0u);
  return 1.0 + 0.04 * (static_cast<double>(h % 2001) / 1000.0 - 1.0);
}

// Pass `pass` of run r as the simulation `s` times it.
void set_pass_of(sim::MeasuredRun& r, const sim::RingSimulation& s, sim::Pass pass) {
  const sim::RingPassResult& pr = s.pass(pass);
  const int P = s.problem.gpus();
  const int steps = pass == sim::Pass::bwd && P > 1 ? P + 1 : P;
  sim::PassTimeline m;
  sim::PassTimes t;
  const double origin = pr.start_s;
  std::vector<sim::MeasuredStep> grid(static_cast<size_t>(P * steps));
  for (int g = 0; g < P; ++g)
    for (int st = 0; st < steps; ++st) {
      sim::MeasuredStep& x = grid[static_cast<size_t>(g * steps + st)];
      x.gpu = g;
      x.step = st;
      x.pass = pass;
      x.kv_owner = st < P ? sim::ring_kv_source(g, st, P) : g;
    }
  double end = 0;
  for (const sim::RingEvent& e : s.events) {
    if (e.pass != pass) continue;
    const double a = (e.start_s - origin) * 1e3, b = (e.end_s - origin) * 1e3;
    if (e.kind == sim::RingEventKind::compute && e.step < P) {
      sim::MeasuredStep& x = grid[static_cast<size_t>(e.gpu * steps + e.step)];
      x.compute_start_ms = a;
      x.compute_end_ms = a + (b - a) * wobble(e.gpu, e.step, pass);
      end = std::max(end, x.compute_end_ms);
    } else if (e.kind == sim::RingEventKind::wait && e.step + 1 < P) {
      grid[static_cast<size_t>(e.gpu * steps + e.step + 1)].wait_ms += b - a;
    } else if (e.kind == sim::RingEventKind::transfer && e.step < steps) {
      for (int g : {e.gpu, e.peer}) {
        sim::MeasuredStep& x = grid[static_cast<size_t>(g * steps + e.step)];
        x.transfer_start_ms = x.transfer_start_ms < 0 ? a : std::min(x.transfer_start_ms, a);
        x.transfer_end_ms = std::max(x.transfer_end_ms, b);
      }
      grid[static_cast<size_t>(e.gpu * steps + e.step)].bytes_received += e.bytes;
      end = std::max(end, b);
    }
  }
  // To a tenth of a microsecond, as CUDA events would give them.
  const auto tenth_us = [](double ms) { return ms < 0 ? ms : std::round(ms * 1e4) / 1e4; };
  for (sim::MeasuredStep& x : grid) {
    for (double* v : {&x.compute_start_ms, &x.compute_end_ms, &x.wait_ms, &x.transfer_start_ms, &x.transfer_end_ms})
      *v = tenth_us(*v);
  }
  m.steps = grid;
  t.time_ms_median = tenth_us(std::max(end, pr.time_s * 1e3));
  t.time_ms_min = tenth_us(t.time_ms_median * 0.99);
  t.time_ms_max = tenth_us(t.time_ms_median * 1.03);
  t.repeats = 10;
  m.comm_ms = tenth_us(pr.comm_s * 1e3);
  m.exposed_comm_ms = tenth_us(pr.exposed_comm_s * 1e3);
  m.compute_ms = tenth_us(pr.compute_s * 1e3);
  sim::set_pass(r, pass, t, std::move(m));
}

sim::MeasuredRun run_of(const sim::AttentionProblem& p, const sim::RingTopology& topo, const sim::RingComputeModel& cm) {
  const sim::RingSimulation s = sim::simulate_ring(p, topo, cm);
  sim::MeasuredRun r;
  r.problem = p;
  r.kernel = "fa3_hopper";
  r.parallel_part().backward_kernel = p.backward() ? "fa2_tc_bwd" : "";
  r.parallel_part().transport = "example";
  r.status = sim::RunStatus::ok;
  set_pass_of(r, s, sim::Pass::fwd);
  if (s.backward) set_pass_of(r, s, sim::Pass::bwd);
  for (sim::i64 b : s.peak_bytes_per_gpu) {
    r.parallel_part().peak_allocated_bytes.push_back(b + b / 20);  // the rung's workspace beside the model's terms
    r.parallel_part().peak_device_used_bytes.push_back(b + b / 20 + (600LL << 20));
  }
  r.parallel_part().check_note = "EXAMPLE: not run on a GPU, nothing was checked";
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_example_ring_results OUT.json\n";
    return 2;
  }
  sim::RingComputeModel cm;
  cm.hw = sim::load_hardware("H100-SXM5-80GB");
  cm.efficiency = 0.52;
  cm.backward_efficiency = 0.45;
  sim::RingTopology topo = sim::default_ring_topology();
  topo.intra.bandwidth = 180e9;

  sim::MeasuredRuns runs;
  sim::RunMeta& d = runs.meta;
  d.gpu = "EXAMPLE, not measured: written by tests/gui/make_example_ring_results from the ring's simulator";
  d.flop_convention = "4·B·H·pairs·d forward, 2.5× that backward";
  d.date = "example";
  d.commit = "example";
  d.host = "example";
  runs.meta.parallel_part().gpu_count = 8;
  runs.meta.parallel_part().gpu_names.assign(8, "EXAMPLE (no GPU)");
  runs.meta.parallel_part().topology = "example: 8 GPUs of one node, NVLink at 180 GB/s in the example's figures";

  // LLaMA-2-7B's attention, 32K tokens, a training step.
  for (int gpus : {1, 4, 8})
    for (sim::RingLayout layout : {sim::RingLayout::zigzag, sim::RingLayout::contiguous}) {
      if (gpus < 8 && layout == sim::RingLayout::contiguous) continue;
      runs.runs.push_back(run_of(flashlab::test::ring_problem(gpus, layout, 1, 32, 32, 32768, 128), topo, cm));
    }
  std::ofstream out(argv[1]);
  out << analysis::ring_results_to_json(runs);
  if (!out) {
    std::cerr << "make_example_ring_results: cannot write " << argv[1] << "\n";
    return 1;
  }
  return 0;
}
