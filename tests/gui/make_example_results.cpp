// Writes a SYNTHETIC benchmark result set (flashlab-bench/1 JSON) for tests and
// screenshots on machines without a GPU: the lab reports' batch × seq grid
// (heads 32, d 64, fp16, causal and not), times = the simulator's roofline
// lower bound on a T4 preset × a fixed inefficiency per kernel, memory = the
// model's tensors. The metadata says, in the GPU field, that it is not a
// measurement. Usage: make_example_results OUT.json
#include <cstdio>
#include <iostream>

#include "flashlab/analysis.hpp"
#include "flashlab/analysis/results/bench_results.hpp"
#include "flashlab/sim.hpp"

using namespace flashlab;

int main(int argc, char** argv) {
  if (argc != 2) {
    std::cerr << "usage: make_example_results OUT.json\n";
    return 2;
  }
  const sim::HardwareModel hw = sim::load_hardware("T4");
  analysis::BenchResults r;
  r.meta.gpu = "SYNTHETIC example, not a measurement (T4 roofline bound × fixed factors)";
  r.meta.flop_convention = "4·B·H·N²·d forward, halved when causal";
  r.meta.date = "synthetic";
  r.meta.commit = "synthetic";
  r.meta.l2_flush = true;
  struct K {
    const char* id;
    sim::Algorithm algo;
    double slowdown;  // × the roofline lower bound
  };
  const K kernels[] = {{"torch_eager", sim::Algorithm::pytorch, 2.4}, {"fa1", sim::Algorithm::fa1, 1.9},
                       {"fa2", sim::Algorithm::fa2, 1.35}};
  const sim::i64 memory_limit = 15LL << 30;  // a 16 GB T4 after the context
  for (bool causal : {false, true})
    for (sim::i64 batch : {16, 32, 64})
      for (sim::i64 seq : {512, 1024, 2048})
        for (const K& k : kernels)
          for (const char* dir : {"fwd", "bwd"}) {
            if (std::string(dir) == "bwd" && std::string(k.id) != "fa2") continue;
            sim::AttentionProblem p;
            p.batch = batch;
            p.heads = 32;
            p.seq_q = p.seq_kv = seq;
            p.head_dim = 64;
            p.causal = causal;
            p.dtype = sim::DType::fp16;
            const sim::SimResult s = sim::simulate(k.algo, p, hw);
            const analysis::RooflineEstimate e = analysis::roofline(s, hw);
            analysis::BenchRow row;
            row.kernel = k.id;
            row.model = std::string(sim::to_string(k.algo));
            row.direction = dir;
            row.problem = p;
            row.tiles = s.tiles;
            // Q, K, V, O (+ S and P when materialised), in the problem dtype.
            const sim::i64 elems = p.batch * p.heads * (4 * seq * 64 + (k.algo == sim::Algorithm::pytorch ? 2 * seq * seq : 0));
            row.predicted_memory_bytes = elems * 2;
            if (row.predicted_memory_bytes > memory_limit) {
              row.status = analysis::RunStatus::oom;
              row.reason = "asked for " + sim::bytes_iec(static_cast<double>(row.predicted_memory_bytes)) + " (synthetic limit 15 GiB)";
              r.rows.push_back(row);
              continue;
            }
            const double factor = std::string(dir) == "bwd" ? 2.6 : 1.0;  // backward ≈ 2.5× the forward's work
            row.time_ms_median = e.time_s * 1e3 * k.slowdown * factor;
            row.time_ms_min = row.time_ms_median * 0.97;
            row.time_ms_max = row.time_ms_median * 1.06;
            row.repeats = 20;
            row.tflops = e.convention_flops * (std::string(dir) == "bwd" ? 2.5 : 1.0) / (row.time_ms_median * 1e-3) / 1e12;
            row.tflops_exact = e.flops / (row.time_ms_median * 1e-3) / 1e12;
            row.gbps = e.dram_bytes / (row.time_ms_median * 1e-3) / 1e9;
            row.peak_memory_bytes = row.predicted_memory_bytes + (64LL << 20);
            row.rel_error = 1e-3;
            r.rows.push_back(row);
          }
  try {
    analysis::write_file_atomic(argv[1], analysis::bench_to_json(r));
  } catch (const std::exception& e) {
    std::cerr << "make_example_results: " << e.what() << "\n";
    return 2;
  }
  std::printf("wrote %zu synthetic rows to %s\n", r.rows.size(), argv[1]);
  return 0;
}
