#include "flashlab/analysis/bench_table.hpp"

#include <cstdio>
#include <sstream>

#include "flashlab/analysis/report.hpp"
#include "flashlab/sim/format.hpp"

namespace flashlab::analysis {

namespace {

std::string mib(sim::i64 bytes) {
  if (bytes <= 0) return "";
  return fixed(static_cast<double>(bytes) / (1024.0 * 1024.0), 1);
}

std::string error_text(double e) {
  if (e < 0) return "";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1e", e);
  return buf;
}

// Times keep three significant digits from 1 µs to minutes.
std::string ms(double v) {
  if (v <= 0) return "";
  return v < 1 ? fixed(v, 4) : v < 100 ? fixed(v, 3) : fixed(v, 1);
}

}  // namespace

std::string bench_table(const BenchResults& r) {
  std::ostringstream out;
  const BenchMeta& m = r.meta;
  out << "GPU " << (m.gpu.empty() ? "unknown" : m.gpu) << " (" << m.sm_count << " SMs";
  if (m.sm_clock_mhz > 0) out << ", SM clock observed " << fixed(m.sm_clock_mhz, 0) << " MHz";
  if (m.mem_clock_mhz > 0) out << ", memory clock " << fixed(m.mem_clock_mhz, 0) << " MHz";
  out << "), driver " << m.driver << ", CUDA runtime " << m.cuda_runtime << ", commit " << m.commit << "\n";
  out << "L2 " << (m.l2_flush ? "flushed before every timed run" : "not flushed (warm cache)") << "; " << m.flop_convention
      << "\n";
  TextTable t({"kernel", "B", "H", "N", "d", "dtype", "causal", "B_r×B_c", "status", "ms", "min-max ms", "TFLOP/s",
               "exact", "GB/s", "peak MiB", "model MiB", "rel err", "note"});
  for (const BenchRow& row : r.rows) {
    const sim::AttentionProblem& p = row.problem;
    const bool ok = row.status == RunStatus::ok;
    const bool timed = ok && row.repeats > 0;
    std::string n = std::to_string(p.n_q());
    if (p.n_kv() != p.n_q()) n += "/" + std::to_string(p.n_kv());
    t.add({row.kernel + (row.direction == "fwd" ? "" : " (" + row.direction + ")"), std::to_string(p.batch),
           std::to_string(p.heads), n, std::to_string(p.head_dim), std::string(sim::to_string(p.dtype)),
           p.causal ? "yes" : "no", row.tiles.Br > 0 ? std::to_string(row.tiles.Br) + "×" + std::to_string(row.tiles.Bc) : "",
           std::string(to_string(row.status)), timed ? ms(row.time_ms_median) : "",
           timed ? ms(row.time_ms_min) + "-" + ms(row.time_ms_max) : "", timed ? fixed(row.tflops, 1) : "",
           timed && row.tflops_exact > 0 ? fixed(row.tflops_exact, 1) : "", timed && row.gbps > 0 ? fixed(row.gbps, 0) : "",
           ok ? mib(row.peak_memory_bytes) : "", mib(row.predicted_memory_bytes), ok ? error_text(row.rel_error) : "",
           row.reason});
  }
  out << t.str();
  return out.str();
}

}  // namespace flashlab::analysis
