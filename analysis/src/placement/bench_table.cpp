#include "flashlab/analysis/placement/bench_table.hpp"

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>

#include "flashlab/analysis/placement/placement.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/median.hpp"

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
std::string ms_cell(double v) {
  if (v <= 0) return "";
  return v < 1 ? fixed(v, 4) : v < 100 ? fixed(v, 3) : fixed(v, 1);
}

std::string gb(sim::i64 bytes) { return bytes >= 0 ? fixed(static_cast<double>(bytes) / 1e9, 3) : ""; }

bool any_counters(const BenchResults& r) {
  return std::any_of(r.rows.begin(), r.rows.end(),
                     [](const BenchRow& row) { return row.has_counters() || !row.counters_note.empty(); });
}

// The H column: H, or H/H_kv with grouped K/V heads (as N_q/N_kv in the N column).
std::string heads_text(const sim::AttentionProblem& p) {
  return p.h_kv() == p.heads ? std::to_string(p.heads) : std::to_string(p.heads) + "/" + std::to_string(p.h_kv());
}

std::string dram_verdict(const DramCheck& c) {
  return c.available ? (c.within() ? "within " : "MISSES ") + fixed(100 * c.target, 0) + "%" : "";
}

std::string note_and(const std::string& a, const std::string& b) { return a.empty() ? b : a + "; " + b; }

// Measured DRAM bytes beside the L2 model's, per row, then per kernel: the
// median and largest error and the points within the target. A row whose
// launch has two states (dram_states) takes a second line, the slots apart,
// and is scored against the state its measurement is nearer.
std::string dram_table(const BenchResults& r) {
  std::ostringstream out;
  out << "\nDRAM bytes: the counter pass (CUPTI, L2 flushed by reading before it) beside the L2 model's prediction "
         "for the launch that ran\n";
  TextTable t({"kernel", "B", "H", "N", "d", "causal", "CTAs/SM", "read GB", "write GB", "model read", "model write",
               "error", "target", "note"});
  std::map<std::string, std::vector<double>> errors;
  std::map<std::string, int> within, counted, apart;
  std::vector<std::string> order;
  bool two_states = false;
  for (const BenchRow& row : r.rows) {
    if (row.status != RunStatus::ok) continue;
    const sim::AttentionProblem& p = row.problem;
    const DramStates s = dram_states(row);
    const DramCheck& c = s.scored();
    if (c.available) {
      if (!errors.count(row.kernel)) order.push_back(row.kernel);
      errors[row.kernel].push_back(std::abs(c.error));
      ++counted[row.kernel];
      within[row.kernel] += c.within() ? 1 : 0;
      apart[row.kernel] += s.apart_nearer() ? 1 : 0;
    }
    const DramCheck& l = s.lockstep;
    std::string note = dram_note(row);
    if (s.two()) note = note_and(note, s.apart_nearer() ? "in lockstep" : "in lockstep (nearer: scored)");
    t.add({row.kernel, std::to_string(p.batch), heads_text(p), std::to_string(p.n_q()),
           std::to_string(p.head_dim), p.causal ? "yes" : "no", row.ctas_per_sm > 0 ? std::to_string(row.ctas_per_sm) : "",
           gb(row.dram_read_bytes), gb(row.dram_write_bytes), gb(row.predicted_dram_read_bytes),
           gb(row.predicted_dram_write_bytes), l.available ? fixed(100 * l.error, 1) + "%" : "", dram_verdict(l),
           note});
    if (!s.two()) continue;
    two_states = true;
    t.add({"", "", "", "", "", "", "", "", "", gb(row.apart_dram_read_bytes), gb(row.apart_dram_write_bytes),
           fixed(100 * s.apart.error, 1) + "%", dram_verdict(s.apart),
           s.apart_nearer() ? "slots apart (nearer: scored)" : "slots apart"});
  }
  out << t.str();
  if (two_states)
    out << "Two lines for a point: with several CTAs per SM the model has two states, the slots in lockstep (its "
           "prediction) and each SM's slots walking apart; which one a kernel settles in is decided by its timing, "
           "so the point is scored against the nearer (docs/model.md, section 7b)\n";
  for (const std::string& k : order) {
    const sim::Spread e = sim::spread(errors[k]);
    out << k << ": median |error| " << fixed(100 * e.median, 1) << "%, largest " << fixed(100 * e.max, 1) << "%, "
        << within[k] << " of " << counted[k] << " points within the target";
    if (apart[k] > 0) out << " (" << apart[k] << " scored with the slots apart)";
    out << "\n";
  }
  return out.str();
}

}  // namespace

std::string dram_note(const BenchRow& row) {
  if (!row.has_counters()) return row.counters_note;
  const auto algo = sim::model_algorithm(row);
  if (algo && sim::algorithm_info(*algo).pass == sim::Pass::bwd && !sim::algorithm_info(*algo).materializes_scores &&
      !row.storage.dq_accumulator)
    return "no dq_accumulator in the file: dQ modelled in " + std::string(sim::to_string(row.problem.dtype)) +
           ", no convert pass";
  return "";
}

std::string dram_points(const BenchResults& r) {
  std::string out;
  char buf[256];
  for (const BenchRow& row : r.rows) {
    const sim::AttentionProblem& p = row.problem;
    std::snprintf(buf, sizeof buf, "%-15s %-3s B %lld H %-5s N %6lld d %3lld %s %-6s", row.kernel.c_str(),
                  row.direction.c_str(), static_cast<long long>(p.batch), heads_text(p).c_str(),
                  static_cast<long long>(p.n_q()), static_cast<long long>(p.head_dim),
                  std::string(sim::to_string(p.dtype)).c_str(), p.causal ? "causal" : "");
    out += buf;
    if (row.status != RunStatus::ok) {
      out += "  " + std::string(to_string(row.status)) + ": " + row.reason + "\n";
      continue;
    }
    const DramStates s = dram_states(row);
    if (!s.lockstep.available) {
      out += "  no counters or no prediction (" + row.counters_note + ")\n";
      continue;
    }
    auto cell = [](i64 v) { return v > 0 ? std::to_string(v) : std::string("-"); };
    std::snprintf(buf, sizeof buf, "  predicted %8.4f GB  measured %8.4f GB  error %+6.1f%%  (%s CTA/SM, %sx%s)",
                  s.lockstep.predicted / 1e9, s.lockstep.measured / 1e9, 100 * s.lockstep.error,
                  cell(row.ctas_per_sm).c_str(), cell(row.tiles.Br).c_str(), cell(row.tiles.Bc).c_str());
    out += buf;
    if (s.two()) {
      std::snprintf(buf, sizeof buf, "  in lockstep; slots apart: predicted %8.4f GB  error %+6.1f%%  nearer: %s",
                    s.apart.predicted / 1e9, 100 * s.apart.error, s.apart_nearer() ? "slots apart" : "in lockstep");
      out += buf;
    }
    out += "\n";
  }
  return out;
}

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
           heads_text(p), n, std::to_string(p.head_dim), std::string(sim::to_string(p.dtype)),
           p.causal ? "yes" : "no", row.tiles.Br > 0 ? std::to_string(row.tiles.Br) + "×" + std::to_string(row.tiles.Bc) : "",
           std::string(to_string(row.status)), timed ? ms_cell(row.time_ms_median) : "",
           timed ? ms_cell(row.time_ms_min) + "-" + ms_cell(row.time_ms_max) : "", timed ? fixed(row.tflops, 1) : "",
           timed && row.tflops_exact > 0 ? fixed(row.tflops_exact, 1) : "", timed && row.gbps > 0 ? fixed(row.gbps, 0) : "",
           ok ? mib(row.peak_memory_bytes) : "", mib(row.predicted_memory_bytes), ok ? error_text(row.rel_error) : "",
           row.reason});
  }
  out << t.str();
  if (any_counters(r)) out << dram_table(r);
  return out.str();
}

}  // namespace flashlab::analysis
