// Ring runs as data, their rows, and their placement beside the ring's
// simulation.
//
//   JSON  {"format": "flashlab-ring-results/1", "meta": {...}, "runs": [{...}, ...]}
//
// A run: {"problem": {...}, "kernel", "backward_kernel", "transport",
// "status", "reason", "forward": PASS, "backward": PASS (absent for a
// forward-only run), "peak_allocated_bytes": [per GPU],
// "peak_device_used_bytes": [per GPU], "rel_error", "rel_error_grads",
// "check_note"}; PASS: {"time_ms_median", "time_ms_min", "time_ms_max",
// "repeats", "comm_ms", "exposed_comm_ms", "compute_ms", "steps": [{"gpu",
// "step", "kv_owner", "compute_start_ms", "compute_end_ms", "wait_ms",
// "transfer_start_ms", "transfer_end_ms", "bytes_received", "rung_ms"}],
// "rung_ms"}; a run's "steps" is "fused" or "pairwise" (a file without it was
// measured before the fused steps existed: "pairwise"). Non-finite
// numbers are written "inf", "-inf", "nan". The meta's "gpu_topology"
// (sim/gpu_topology_json.hpp) is derived from its "topology" text when the
// file is written, and derived again when it is read.
#include "flashlab/analysis/ring_results.hpp"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <limits>
#include <sstream>
#include <stdexcept>

#include "flashlab/analysis/csv.hpp"
#include "flashlab/analysis/report.hpp"
#include "flashlab/sim/attention_models.hpp"
#include "flashlab/sim/format.hpp"
#include "results_json.hpp"
#include "flashlab/sim/gpu_topology_json.hpp"

namespace flashlab::analysis {

using nlohmann::json;

namespace {

using results_json::fail;
using results_json::number_json;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// ---- reading: one helper per kind of field, each naming the field ----

class Reader {
 public:
  explicit Reader(std::string origin) : origin_(std::move(origin)) {}

  const json& member(const json& o, const std::string& where, const char* key) const {
    auto it = o.find(key);
    if (it == o.end() || it->is_null()) fail(origin_, join(where, key), "missing");
    return *it;
  }
  bool has(const json& o, const char* key) const { return o.contains(key) && !o[key].is_null(); }

  const json& object(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_object()) fail(origin_, join(where, key), "expected an object (got " + v.dump() + ")");
    return v;
  }
  const json& array(const json& o, const std::string& where, const char* key) const {
    const json& v = member(o, where, key);
    if (!v.is_array()) fail(origin_, join(where, key), "expected a list (got " + brief(v) + ")");
    return v;
  }
  std::string text(const json& o, const std::string& where, const char* key, bool required = false) const {
    if (!required && !has(o, key)) return {};
    const json& v = member(o, where, key);
    if (!v.is_string()) fail(origin_, join(where, key), "expected a string (got " + brief(v) + ")");
    return v.get<std::string>();
  }
  i64 whole(const json& o, const std::string& where, const char* key, std::optional<i64> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    return whole_value(member(o, where, key), join(where, key));
  }
  i64 whole_value(const json& v, const std::string& where) const {
    if (!v.is_number_integer()) fail(origin_, where, "expected a whole number (got " + brief(v) + ")");
    return v.get<i64>();
  }
  double real(const json& o, const std::string& where, const char* key, std::optional<double> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    const json& v = member(o, where, key);
    const std::string w = join(where, key);
    if (v.is_number()) return v.get<double>();
    if (v.is_string()) {
      const std::string s = v.get<std::string>();
      if (s == "nan") return kNaN;
      if (s == "inf") return std::numeric_limits<double>::infinity();
      if (s == "-inf") return -std::numeric_limits<double>::infinity();
    }
    fail(origin_, w, "expected a number (got " + brief(v) + ")");
  }
  bool flag(const json& o, const std::string& where, const char* key, std::optional<bool> fallback = {}) const {
    if (fallback && !has(o, key)) return *fallback;
    const json& v = member(o, where, key);
    if (!v.is_boolean()) fail(origin_, join(where, key), "expected true or false (got " + brief(v) + ")");
    return v.get<bool>();
  }
  [[noreturn]] void error(const std::string& where, const std::string& why) const { fail(origin_, where, why); }
  const std::string& origin() const { return origin_; }

 private:
  static std::string join(const std::string& where, const char* key) {
    return where.empty() ? std::string(key) : where + "." + key;
  }
  static std::string brief(const json& v) {
    std::string s = v.dump();
    return s.size() > 40 ? s.substr(0, 37) + "..." : s;
  }
  std::string origin_;
};

}  // namespace

json ring_problem_json(const sim::AttentionProblem& p) {
  return json{{"batch", p.batch},
              {"heads", p.heads},
              {"kv_heads", p.h_kv()},
              {"seq", p.seq_q},
              {"head_dim", p.head_dim},
              {"causal", p.causal},
              {"dtype", std::string(sim::to_string(p.dtype))},
              {"gpus", p.gpus()},
              {"layout", std::string(sim::ring_layout_name(p.layout()))},
              {"backward", p.backward()}};
}

namespace {

sim::AttentionProblem problem_from(const Reader& rd, const json& o, const std::string& where) {
  sim::AttentionProblem p;
  p.parallel = sim::ParallelPart{};
  p.batch = rd.whole(o, where, "batch");
  p.heads = rd.whole(o, where, "heads");
  p.kv_heads = rd.whole(o, where, "kv_heads", p.heads);
  p.seq_q = rd.whole(o, where, "seq");
  p.head_dim = rd.whole(o, where, "head_dim");
  p.causal = rd.flag(o, where, "causal");
  const std::string dt = rd.text(o, where, "dtype", true);
  const auto dtype = sim::parse_dtype(dt);
  if (!dtype) rd.error(where + ".dtype", "unknown dtype '" + dt + "' (expected fp16, bf16, fp32)");
  p.dtype = *dtype;
  const i64 gpus = rd.whole(o, where, "gpus");
  if (gpus < 1 || gpus > 4096) rd.error(where + ".gpus", "expected 1 to 4096 GPUs (got " + std::to_string(gpus) + ")");
  p.parallel_part().gpus = static_cast<int>(gpus);
  const std::string layout = rd.text(o, where, "layout", true);
  if (!sim::parse_ring_layout(layout, p.parallel_part().layout))
    rd.error(where + ".layout", "unknown layout '" + layout + "' (expected contiguous, zigzag)");
  p.parallel_part().backward = rd.flag(o, where, "backward", false);
  if (const auto why = sim::validate(p); !why.empty()) rd.error(where, why.front().message);
  return p;
}

json pass_to_json(const sim::RingMeasuredPass& p) {
  json steps = json::array();
  for (const sim::RingMeasuredStep& s : p.steps)
    steps.push_back(json{{"gpu", s.gpu},
                         {"step", s.step},
                         {"kv_owner", s.kv_owner},
                         {"compute_start_ms", number_json(s.compute_start_ms)},
                         {"compute_end_ms", number_json(s.compute_end_ms)},
                         {"wait_ms", number_json(s.wait_ms)},
                         {"transfer_start_ms", number_json(s.transfer_start_ms)},
                         {"transfer_end_ms", number_json(s.transfer_end_ms)},
                         {"bytes_received", s.bytes_received},
                         {"rung_ms", number_json(s.rung_ms)}});
  return json{{"time_ms_median", number_json(p.time_ms_median)},
              {"time_ms_min", number_json(p.time_ms_min)},
              {"time_ms_max", number_json(p.time_ms_max)},
              {"repeats", p.repeats},
              {"comm_ms", number_json(p.comm_ms)},
              {"exposed_comm_ms", number_json(p.exposed_comm_ms)},
              {"compute_ms", number_json(p.compute_ms)},
              {"rung_ms", number_json(p.rung_ms)},
              {"steps", std::move(steps)}};
}

sim::RingMeasuredPass pass_from(const Reader& rd, const json& o, const std::string& where, sim::RingPass pass,
                                int gpus) {
  sim::RingMeasuredPass p;
  p.pass = pass;
  p.time_ms_median = rd.real(o, where, "time_ms_median");
  p.time_ms_min = rd.real(o, where, "time_ms_min", p.time_ms_median);
  p.time_ms_max = rd.real(o, where, "time_ms_max", p.time_ms_median);
  p.repeats = static_cast<int>(rd.whole(o, where, "repeats", 0));
  p.comm_ms = rd.real(o, where, "comm_ms", 0.0);
  p.exposed_comm_ms = rd.real(o, where, "exposed_comm_ms", 0.0);
  p.compute_ms = rd.real(o, where, "compute_ms", 0.0);
  p.rung_ms = rd.real(o, where, "rung_ms", -1.0);
  if (!rd.has(o, "steps")) return p;
  const json& steps = rd.array(o, where, "steps");
  const int last_step = pass == sim::RingPass::backward ? gpus : gpus - 1;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string w = where + ".steps[" + std::to_string(k) + "]";
    const json& s = steps[k];
    if (!s.is_object()) rd.error(w, "expected an object");
    sim::RingMeasuredStep x;
    x.pass = pass;
    auto index = [&](const char* key, int hi) {
      const i64 v = rd.whole(s, w, key);
      if (v < 0 || v > hi)
        rd.error(w + "." + key, std::to_string(v) + " is outside 0.." + std::to_string(hi));
      return static_cast<int>(v);
    };
    x.gpu = index("gpu", gpus - 1);
    x.step = index("step", last_step);
    x.kv_owner = index("kv_owner", gpus - 1);
    x.compute_start_ms = rd.real(s, w, "compute_start_ms", 0.0);
    x.compute_end_ms = rd.real(s, w, "compute_end_ms", x.compute_start_ms);
    x.wait_ms = rd.real(s, w, "wait_ms", 0.0);
    x.transfer_start_ms = rd.real(s, w, "transfer_start_ms", -1.0);
    x.transfer_end_ms = rd.real(s, w, "transfer_end_ms", -1.0);
    x.bytes_received = rd.whole(s, w, "bytes_received", 0);
    x.rung_ms = rd.real(s, w, "rung_ms", -1.0);
    p.steps.push_back(x);
  }
  return p;
}

json meta_to_json(const sim::RingRunMeta& m) {
  const sim::RunMeta& d = m.device;
  return json{{"device",
               {{"gpu", d.gpu},
                {"driver", d.driver},
                {"cuda_runtime", d.cuda_runtime},
                {"commit", d.commit},
                {"flop_convention", d.flop_convention},
                {"date", d.date},
                {"host", d.host},
                {"sm_count", d.sm_count},
                {"l2_bytes", d.l2_bytes},
                {"sm_clock_mhz", number_json(d.sm_clock_mhz)},
                {"mem_clock_mhz", number_json(d.mem_clock_mhz)},
                {"l2_flush", d.l2_flush}}},
              {"gpu_count", m.gpu_count},
              {"gpu_names", m.gpu_names},
              {"nccl_version", m.nccl_version},
              {"topology", m.topology},
              {"gpu_topology", sim::gpu_topology_json(sim::parse_nvidia_smi_topo(m.topology))},
              {"environment", m.environment}};
}

std::vector<std::string> strings_from(const Reader& rd, const json& o, const std::string& where, const char* key) {
  std::vector<std::string> out;
  if (!rd.has(o, key)) return out;
  const json& a = rd.array(o, where, key);
  for (std::size_t k = 0; k < a.size(); ++k) {
    if (!a[k].is_string()) rd.error(where + "." + key + "[" + std::to_string(k) + "]", "expected a string");
    out.push_back(a[k].get<std::string>());
  }
  return out;
}

std::vector<i64> wholes_from(const Reader& rd, const json& o, const std::string& where, const char* key) {
  std::vector<i64> out;
  if (!rd.has(o, key)) return out;
  const json& a = rd.array(o, where, key);
  for (std::size_t k = 0; k < a.size(); ++k)
    out.push_back(rd.whole_value(a[k], where + "." + key + "[" + std::to_string(k) + "]"));
  return out;
}

sim::RingRunMeta meta_from(const Reader& rd, const json& o) {
  sim::RingRunMeta m;
  const std::string w = "meta";
  if (rd.has(o, "device")) {
    const json& d = rd.object(o, w, "device");
    const std::string wd = w + ".device";
    sim::RunMeta& x = m.device;
    x.gpu = rd.text(d, wd, "gpu");
    x.driver = rd.text(d, wd, "driver");
    x.cuda_runtime = rd.text(d, wd, "cuda_runtime");
    x.commit = rd.text(d, wd, "commit");
    x.flop_convention = rd.text(d, wd, "flop_convention");
    x.date = rd.text(d, wd, "date");
    x.host = rd.text(d, wd, "host");
    x.sm_count = static_cast<int>(rd.whole(d, wd, "sm_count", 0));
    x.l2_bytes = rd.whole(d, wd, "l2_bytes", 0);
    x.sm_clock_mhz = rd.real(d, wd, "sm_clock_mhz", 0.0);
    x.mem_clock_mhz = rd.real(d, wd, "mem_clock_mhz", 0.0);
    x.l2_flush = rd.flag(d, wd, "l2_flush", true);
  }
  m.gpu_count = static_cast<int>(rd.whole(o, w, "gpu_count", 0));
  m.gpu_names = strings_from(rd, o, w, "gpu_names");
  m.nccl_version = rd.text(o, w, "nccl_version");
  m.topology = rd.text(o, w, "topology");
  // Derived from the text, in files that have it and in older files alike.
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  m.environment = strings_from(rd, o, w, "environment");
  return m;
}

std::string ms(double v, int decimals = 3) { return std::isfinite(v) ? sim::fixed(v, decimals) : std::string("-"); }

std::string pct(double f) { return std::isfinite(f) ? sim::fixed(100.0 * f, 0) + "%" : std::string("-"); }

std::string signed_pct(double f) {
  if (!std::isfinite(f)) return "-";
  return (f >= 0 ? "+" : "") + sim::fixed(100.0 * f, 1) + "%";
}

double rel_error(double predicted, double measured) {
  return measured > 0 && std::isfinite(predicted) ? (predicted - measured) / measured : kNaN;
}

}  // namespace

// ---- the file ------------------------------------------------------------------------

std::string ring_results_to_json(const sim::RingMeasuredRuns& r) {
  json runs = json::array();
  for (const sim::RingMeasuredRun& run : r.runs) {
    json o{{"problem", ring_problem_json(run.problem)},
           {"kernel", run.kernel},
           {"backward_kernel", run.backward_kernel},
           {"transport", run.transport},
           {"steps", run.steps},
           {"status", std::string(sim::to_string(run.status))},
           {"reason", run.reason},
           {"forward", pass_to_json(run.forward)},
           {"peak_allocated_bytes", run.peak_allocated_bytes},
           {"peak_device_used_bytes", run.peak_device_used_bytes},
           {"rel_error", number_json(run.rel_error)},
           {"rel_error_grads", number_json(run.rel_error_grads)},
           {"check_note", run.check_note}};
    if (run.backward) o["backward"] = pass_to_json(*run.backward);
    runs.push_back(std::move(o));
  }
  const json j{{"format", kRingResultsFormat}, {"meta", meta_to_json(r.meta)}, {"runs", std::move(runs)}};
  return j.dump(2) + "\n";
}

sim::RingMeasuredRuns ring_results_from_json(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    throw std::runtime_error(origin + ": not valid JSON: " + e.what());
  }
  const Reader rd(origin);
  if (!j.is_object()) rd.error("top level", "expected an object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kRingResultsFormat)
    rd.error("format", std::string("expected \"") + kRingResultsFormat + "\"" +
                           (j.contains("format") ? " (got " + j["format"].dump() + ")" : std::string(" (missing)")));
  sim::RingMeasuredRuns r;
  if (rd.has(j, "meta")) r.meta = meta_from(rd, rd.object(j, "", "meta"));
  const json& runs = rd.array(j, "", "runs");
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::string w = "runs[" + std::to_string(k) + "]";
    const json& o = runs[k];
    if (!o.is_object()) rd.error(w, "expected an object");
    sim::RingMeasuredRun run;
    run.problem = problem_from(rd, rd.object(o, w, "problem"), w + ".problem");
    run.kernel = rd.text(o, w, "kernel", true);
    if (run.kernel.empty()) rd.error(w + ".kernel", "empty");
    run.backward_kernel = rd.text(o, w, "backward_kernel");
    run.transport = rd.text(o, w, "transport");
    run.steps = rd.has(o, "steps") ? rd.text(o, w, "steps", true) : std::string("pairwise");
    if (!sim::parse_ring_steps(run.steps))
      rd.error(w + ".steps", "expected \"fused\" or \"pairwise\" (got \"" + run.steps + "\")");
    const std::string status = rd.text(o, w, "status", true);
    const auto st = sim::parse_run_status(status);
    if (!st) rd.error(w + ".status", "unknown status '" + status + "' (expected ok, OOM, skipped, failed)");
    run.status = *st;
    run.reason = rd.text(o, w, "reason");
    const int P = run.problem.gpus();
    // A run that did not finish may have no times.
    if (run.status == sim::RunStatus::ok || rd.has(o, "forward"))
      run.forward = pass_from(rd, rd.object(o, w, "forward"), w + ".forward", sim::RingPass::forward, P);
    if (rd.has(o, "backward"))
      run.backward = pass_from(rd, rd.object(o, w, "backward"), w + ".backward", sim::RingPass::backward, P);
    else if (run.problem.backward() && run.status == sim::RunStatus::ok)
      rd.error(w + ".backward", "missing (the problem has a backward pass and the run is ok)");
    run.peak_allocated_bytes = wholes_from(rd, o, w, "peak_allocated_bytes");
    run.peak_device_used_bytes = wholes_from(rd, o, w, "peak_device_used_bytes");
    for (const auto* v : {&run.peak_allocated_bytes, &run.peak_device_used_bytes})
      if (!v->empty() && v->size() != static_cast<std::size_t>(P))
        rd.error(w + (v == &run.peak_allocated_bytes ? ".peak_allocated_bytes" : ".peak_device_used_bytes"),
                 "has " + std::to_string(v->size()) + " entries for " + std::to_string(P) + " GPUs");
    run.rel_error = rd.real(o, w, "rel_error", -1.0);
    run.rel_error_grads = rd.real(o, w, "rel_error_grads", -1.0);
    run.check_note = rd.text(o, w, "check_note");
    r.runs.push_back(std::move(run));
  }
  return r;
}

sim::RingMeasuredRuns ring_results_from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw std::runtime_error(path + ": empty file");
  return ring_results_from_json(text, path);
}

// ---- rows ----------------------------------------------------------------------------

std::string ring_model_id(const sim::AttentionProblem& p) {
  for (const sim::AttentionModel& m : sim::attention_models())
    if (m.heads == p.heads && m.kv_heads == p.h_kv() && m.head_dim == p.head_dim) return std::string(m.id);
  return {};
}

i64 ring_total_pairs(const sim::AttentionProblem& p) { return p.causal ? p.seq_q * (p.seq_q + 1) / 2 : p.seq_q * p.seq_q; }

double ring_pass_flops(const sim::AttentionProblem& p, sim::RingPass pass) {
  return sim::ring_convention_flops(p, ring_total_pairs(p), pass);
}

const sim::RingMeasuredRun* ring_single_gpu_run(const sim::RingMeasuredRuns& runs, const sim::AttentionProblem& p,
                                                sim::RingPass pass) {
  // The one-GPU baseline is the rung at its best: a fused run (grouped K/V
  // heads read in place; pairwise steps copy them to H heads even on one GPU)
  // before a pairwise one, then the same layout; the first in the file on a tie.
  const sim::RingMeasuredRun* found = nullptr;
  int best = -1;
  for (const sim::RingMeasuredRun& r : runs.runs) {
    if (r.problem.gpus() != 1 || r.status != sim::RunStatus::ok || !sim::same_attention(r.problem, p)) continue;
    if (pass == sim::RingPass::backward && !r.backward) continue;
    const double t = pass == sim::RingPass::forward ? r.forward.time_ms_median : r.backward->time_ms_median;
    if (!(t > 0)) continue;
    const int score = (r.steps == "fused" ? 2 : 0) + (r.problem.layout() == p.layout() ? 1 : 0);
    if (score > best) {
      best = score;
      found = &r;
    }
  }
  return found;
}

std::vector<RingRow> ring_rows(const sim::RingMeasuredRuns& r) {
  std::vector<RingRow> rows;
  for (std::size_t k = 0; k < r.runs.size(); ++k) {
    const sim::RingMeasuredRun& run = r.runs[k];
    const sim::AttentionProblem& p = run.problem;
    for (sim::RingPass pass : {sim::RingPass::forward, sim::RingPass::backward}) {
      if (pass == sim::RingPass::backward && !run.backward && !p.backward()) continue;
      RingRow row;
      row.run = k;
      row.pass = pass;
      row.model = ring_model_id(p);
      for (i64 b : run.peak_allocated_bytes) row.peak_allocated_bytes = std::max(row.peak_allocated_bytes, b);
      for (i64 b : run.peak_device_used_bytes) row.peak_device_used_bytes = std::max(row.peak_device_used_bytes, b);
      row.rel_error = pass == sim::RingPass::forward ? run.rel_error : run.rel_error_grads;
      const sim::RingMeasuredPass* m =
          pass == sim::RingPass::forward ? &run.forward : (run.backward ? &*run.backward : nullptr);
      row.measured = run.status == sim::RunStatus::ok && m != nullptr && m->time_ms_median > 0;
      if (row.measured) {
        row.time_ms = m->time_ms_median;
        row.time_ms_min = m->time_ms_min;
        row.time_ms_max = m->time_ms_max;
        row.repeats = m->repeats;
        row.compute_ms = m->compute_ms;
        row.rung_ms = m->rung_ms;
        row.comm_ms = m->comm_ms;
        row.exposed_comm_ms = m->exposed_comm_ms;
        row.overlap = m->comm_ms > 0 ? std::clamp(1.0 - m->exposed_comm_ms / m->comm_ms, 0.0, 1.0) : 1.0;
        row.tflops_per_gpu = ring_pass_flops(p, pass) / (row.time_ms * 1e-3) / p.gpus() * 1e-12;
        if (const sim::RingMeasuredRun* one = ring_single_gpu_run(r, p, pass)) {
          const double t1 = pass == sim::RingPass::forward ? one->forward.time_ms_median : one->backward->time_ms_median;
          row.scaling_efficiency = t1 / (p.gpus() * row.time_ms);
        }
      }
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

std::vector<std::string> ring_csv_header() {
  return {"model",          "batch",           "heads",       "kv_heads",
          "seq",            "head_dim",        "gpus",        "layout",
          "causal",         "dtype",           "pass",        "time_ms",
          "comm_ms",        "exposed_comm_ms", "overlap",     "tflops_per_gpu",
          "peak_allocated_bytes_per_gpu",      "scaling_efficiency",
          "status",         "reason",          "kernel",      "transport",
          "time_ms_min",    "time_ms_max",     "repeats",     "compute_ms",
          "peak_device_used_bytes_per_gpu",    "rel_error",   "steps",
          "rung_ms"};
}

std::string ring_results_csv(const sim::RingMeasuredRuns& r) {
  std::string out = std::string("# format: \"") + kRingResultsFormat + "\"\n";
  const json meta = meta_to_json(r.meta);
  for (const auto& [key, value] : meta.items()) out += "# " + key + ": " + value.dump() + "\n";
  out += "# flop_convention: \"4·B·H·pairs·d forward (pairs = N² or, causal, N(N+1)/2), 2.5× that backward; "
         "TFLOP/s per GPU = FLOPs / time / P\"\n";
  out += csv_row(ring_csv_header());
  for (const RingRow& row : ring_rows(r)) {
    const sim::RingMeasuredRun& run = r.runs[row.run];
    const sim::AttentionProblem& p = run.problem;
    auto num = [&](double v) { return row.measured ? sim::shortest(v) : std::string(); };
    out += csv_row({row.model,
                    std::to_string(p.batch),
                    std::to_string(p.heads),
                    std::to_string(p.h_kv()),
                    std::to_string(p.seq_q),
                    std::to_string(p.head_dim),
                    std::to_string(p.gpus()),
                    std::string(sim::ring_layout_name(p.layout())),
                    p.causal ? "true" : "false",
                    std::string(sim::to_string(p.dtype)),
                    std::string(sim::ring_pass_name(row.pass)),
                    num(row.time_ms),
                    num(row.comm_ms),
                    num(row.exposed_comm_ms),
                    num(row.overlap),
                    num(row.tflops_per_gpu),
                    std::to_string(row.peak_allocated_bytes),
                    row.scaling_efficiency ? sim::shortest(*row.scaling_efficiency) : std::string(),
                    std::string(sim::to_string(run.status)),
                    run.reason,
                    row.pass == sim::RingPass::forward ? run.kernel : run.backward_kernel,
                    run.transport,
                    num(row.time_ms_min),
                    num(row.time_ms_max),
                    row.measured ? std::to_string(row.repeats) : std::string(),
                    num(row.compute_ms),
                    std::to_string(row.peak_device_used_bytes),
                    sim::shortest(row.rel_error),
                    run.steps,
                    row.measured && row.rung_ms >= 0 ? sim::shortest(row.rung_ms) : std::string()});
  }
  return out;
}

std::string ring_table(const sim::RingMeasuredRuns& r) {
  TextTable t({"model", "B", "H", "H_kv", "N", "d", "P", "layout", "mask", "dtype", "pass", "kernel", "steps", "ms",
               "rung ms", "comm ms", "exposed ms", "overlap", "TFLOP/s/GPU", "peak/GPU", "scaling", "status"});
  for (const RingRow& row : ring_rows(r)) {
    const sim::RingMeasuredRun& run = r.runs[row.run];
    const sim::AttentionProblem& p = run.problem;
    const bool m = row.measured;
    t.add({row.model.empty() ? std::string("-") : row.model, std::to_string(p.batch), std::to_string(p.heads),
           std::to_string(p.h_kv()), std::to_string(p.seq_q), std::to_string(p.head_dim), std::to_string(p.gpus()),
           std::string(sim::ring_layout_name(p.layout())), p.causal ? "causal" : "full",
           std::string(sim::to_string(p.dtype)), std::string(sim::ring_pass_name(row.pass)),
           row.pass == sim::RingPass::forward ? run.kernel : run.backward_kernel, run.steps,
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
  return out;
}

// ---- placement -----------------------------------------------------------------------

RingCalibration calibrate_ring_efficiency(const sim::RingMeasuredRuns& runs, const sim::AttentionProblem& p,
                                          const sim::RingTopology& topo, const sim::RingComputeModel& given) {
  RingCalibration c;
  c.forward = given.efficiency;
  c.backward = given.backward_efficiency;
  const sim::RingMeasuredRun* one = ring_single_gpu_run(runs, p, sim::RingPass::forward);
  if (one == nullptr) {
    c.note = "compute efficiency " + sim::fixed(given.efficiency, 3) +
             " as given: no P = 1 run of the same attention in the file to calibrate it";
    return c;
  }
  sim::RingComputeModel bound = given;
  bound.efficiency = 1.0;
  bound.backward_efficiency.reset();
  sim::AttentionProblem q = one->problem;
  q.parallel_part().backward = p.backward() && one->backward.has_value();
  const sim::RingSimulation s = sim::simulate_ring(q, topo, bound);
  std::vector<std::string> capped;
  auto eff = [&](double bound_s, double measured_ms, const char* name) {
    const double e = bound_s / (measured_ms * 1e-3);
    if (e > 1) capped.push_back(std::string(name) + " " + sim::fixed(e, 2));
    return std::min(e, 1.0);
  };
  c.from_single_gpu_run = true;
  c.forward = eff(s.forward.time_s, one->forward.time_ms_median, "forward");
  std::string what = "forward " + sim::fixed(c.forward, 3);
  if (s.backward) {
    c.backward = eff(s.backward->time_s, one->backward->time_ms_median, "backward");
    what += ", backward " + sim::fixed(*c.backward, 3);
  }
  c.note = "compute efficiency calibrated from the P = 1 run (" + std::string(sim::ring_layout_name(q.layout())) +
           ", " + one->kernel + "): its bound over its measured time, " + what;
  if (!capped.empty()) {
    std::string list;
    for (const std::string& x : capped) list += (list.empty() ? "" : ", ") + x;
    c.note += " (capped at 1: measured faster than the bound, " + list + ")";
  }
  return c;
}

RingPlacement place_ring_run(const sim::RingMeasuredRun& run, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm) {
  if (run.status != sim::RunStatus::ok)
    throw std::invalid_argument("the run is " + std::string(sim::to_string(run.status)) +
                                (run.reason.empty() ? "" : ": " + run.reason) + "; nothing to place");
  RingPlacement pl;
  pl.run = run;
  pl.calibration.forward = cm.efficiency;
  pl.calibration.backward = cm.backward_efficiency;
  pl.calibration.note = "compute efficiency " + sim::fixed(cm.efficiency, 3) + " as given";
  sim::AttentionProblem p = run.problem;
  p.parallel_part().backward = run.backward.has_value();
  // The prediction launches its steps as the run did: the scratch memory and
  // the homecoming's bytes differ between fused and pairwise steps.
  sim::RingComputeModel as_run = cm;
  if (const auto steps = sim::parse_ring_steps(run.steps)) as_run.steps = *steps;
  pl.simulation = sim::simulate_ring(p, topo, as_run);
  const sim::RingSimulation& s = pl.simulation;
  const int P = p.gpus();
  for (sim::RingPass pass : {sim::RingPass::forward, sim::RingPass::backward}) {
    const sim::RingMeasuredPass* m =
        pass == sim::RingPass::forward ? &run.forward : (run.backward ? &*run.backward : nullptr);
    if (m == nullptr) continue;
    const sim::RingPassResult& sp = s.pass(pass);
    RingPassPlacement pp;
    pp.pass = pass;
    pp.predicted_time_ms = sp.time_s * 1e3;
    pp.measured_time_ms = m->time_ms_median;
    pp.time_error = rel_error(pp.predicted_time_ms, pp.measured_time_ms);
    pp.predicted_compute_ms = sp.compute_s * 1e3;
    pp.measured_compute_ms = m->compute_ms;
    pp.compute_error = rel_error(pp.predicted_compute_ms, pp.measured_compute_ms);
    pp.predicted_comm_ms = sp.comm_s * 1e3;
    pp.measured_comm_ms = m->comm_ms;
    pp.comm_error = rel_error(pp.predicted_comm_ms, pp.measured_comm_ms);
    pp.predicted_exposed_ms = sp.exposed_comm_s * 1e3;
    pp.measured_exposed_ms = m->exposed_comm_ms;
    // The prediction per (gpu, step): its compute bar, the wait before the
    // next step, and the span of the transfers it sends or receives.
    const int steps = pass == sim::RingPass::backward && P > 1 ? P + 1 : P;
    std::vector<RingStepPlacement> grid(static_cast<std::size_t>(P * steps));
    std::vector<double> t0(grid.size(), std::numeric_limits<double>::infinity()), t1(grid.size(), -1.0);
    for (int g = 0; g < P; ++g)
      for (int st = 0; st < steps; ++st) {
        RingStepPlacement& x = grid[static_cast<std::size_t>(g * steps + st)];
        x.gpu = g;
        x.step = st;
        x.pass = pass;
        x.kv_owner = st < P ? sim::ring_kv_source(g, st, P) : g;
        x.predicted_compute_ms = x.measured_compute_ms = kNaN;
        x.predicted_compute_start_ms = x.measured_compute_start_ms = kNaN;
        x.predicted_transfer_ms = x.measured_transfer_ms = kNaN;
        x.predicted_wait_ms = 0;
        x.measured_wait_ms = kNaN;
      }
    auto cell = [&](int g, int st) -> std::size_t { return static_cast<std::size_t>(g * steps + st); };
    for (const sim::RingEvent& e : s.events) {
      if (e.pass != pass || e.step >= steps) continue;
      if (e.kind == sim::RingEventKind::compute) {
        RingStepPlacement& x = grid[cell(e.gpu, e.step)];
        x.predicted_compute_ms = e.duration_s() * 1e3;
        x.predicted_compute_start_ms = (e.start_s - sp.start_s) * 1e3;
      } else if (e.kind == sim::RingEventKind::wait) {
        // A wait after step s's compute delays step s + 1: the measured wait_ms
        // of a step is the wait before it.
        if (e.step + 1 < P) grid[cell(e.gpu, e.step + 1)].predicted_wait_ms += e.duration_s() * 1e3;
      } else if (e.kind == sim::RingEventKind::transfer) {
        for (int g : {e.gpu, e.peer}) {
          const std::size_t c = cell(g, e.step);
          t0[c] = std::min(t0[c], e.start_s);
          t1[c] = std::max(t1[c], e.end_s);
        }
      }
    }
    for (std::size_t c = 0; c < grid.size(); ++c)
      if (t1[c] >= 0) grid[c].predicted_transfer_ms = (t1[c] - t0[c]) * 1e3;
    for (const sim::RingMeasuredStep& ms_ : m->steps) {
      if (ms_.gpu < 0 || ms_.gpu >= P || ms_.step < 0 || ms_.step >= steps) continue;
      RingStepPlacement& x = grid[cell(ms_.gpu, ms_.step)];
      if (ms_.step < P) {
        x.measured_compute_ms = ms_.compute_end_ms - ms_.compute_start_ms;
        x.measured_compute_start_ms = ms_.compute_start_ms;
        x.measured_wait_ms = ms_.wait_ms;
      }
      if (ms_.transfer_start_ms >= 0 && ms_.transfer_end_ms >= ms_.transfer_start_ms)
        x.measured_transfer_ms = ms_.transfer_end_ms - ms_.transfer_start_ms;
    }
    for (RingStepPlacement& x : grid) {
      x.compute_error = rel_error(x.predicted_compute_ms, x.measured_compute_ms);
      x.transfer_error = rel_error(x.predicted_transfer_ms, x.measured_transfer_ms);
    }
    pp.steps = std::move(grid);
    pl.passes.push_back(std::move(pp));
  }
  if (run.transport == "local")
    pl.notes.push_back("transport \"local\": P virtual GPUs share one device's SMs and memory; neither its compute nor "
                       "its transfer times are those of P GPUs over links");
  if (run.forward.steps.empty()) pl.notes.push_back("the run recorded no steps: only the pass totals are placed");
  return pl;
}

RingPlacement place_ring_run(const sim::RingMeasuredRuns& runs, std::size_t index, const sim::RingTopology& topo,
                             const sim::RingComputeModel& cm) {
  if (index >= runs.runs.size())
    throw std::invalid_argument("run " + std::to_string(index) + " is not in the file (" +
                                std::to_string(runs.runs.size()) + " runs)");
  const sim::RingMeasuredRun& run = runs.runs[index];
  RingCalibration cal = calibrate_ring_efficiency(runs, run.problem, topo, cm);
  sim::RingComputeModel calibrated = cm;
  calibrated.efficiency = cal.forward;
  calibrated.backward_efficiency = cal.backward;
  RingPlacement pl = place_ring_run(run, topo, calibrated);
  pl.calibration = std::move(cal);
  return pl;
}

std::string ring_placement_text(const RingPlacement& pl, bool per_step) {
  const sim::RingMeasuredRun& run = pl.run;
  const sim::RingSimulation& s = pl.simulation;
  std::string out = "Ring run " + sim::describe(s.problem) + " (" + run.kernel +
                    (run.backward_kernel.empty() ? "" : " / " + run.backward_kernel) +
                    (run.transport.empty() ? "" : ", " + run.transport) + ")\n";
  out += "  model     " + pl.calibration.note + "\n";
  for (const std::string& n : pl.notes) out += "  note      " + n + "\n";
  TextTable totals({"pass", "time ms", "predicted", "error", "compute ms", "predicted", "error", "comm ms", "predicted",
                    "error", "exposed ms", "predicted"});
  for (const RingPassPlacement& p : pl.passes)
    totals.add({std::string(sim::ring_pass_name(p.pass)), ms(p.measured_time_ms), ms(p.predicted_time_ms),
                signed_pct(p.time_error), ms(p.measured_compute_ms), ms(p.predicted_compute_ms),
                signed_pct(p.compute_error), ms(p.measured_comm_ms), ms(p.predicted_comm_ms),
                signed_pct(p.comm_error), ms(p.measured_exposed_ms), ms(p.predicted_exposed_ms)});
  out += totals.str();
  if (!per_step) return out;
  for (const RingPassPlacement& p : pl.passes) {
    out += "\n" + std::string(p.pass == sim::RingPass::forward ? "Forward" : "Backward") +
           ", per GPU and step (measured beside predicted; transfer: the span of the step's sends and receives)\n";
    TextTable t({"GPU", "step", "K/V of", "compute ms", "predicted", "error", "transfer ms", "predicted", "error",
                 "wait ms", "predicted"});
    for (const RingStepPlacement& x : p.steps)
      t.add({std::to_string(x.gpu), x.step == s.problem.gpus() ? std::to_string(x.step) + " (home)" : std::to_string(x.step),
             std::to_string(x.kv_owner), ms(x.measured_compute_ms), ms(x.predicted_compute_ms),
             signed_pct(x.compute_error), ms(x.measured_transfer_ms), ms(x.predicted_transfer_ms),
             signed_pct(x.transfer_error), ms(x.measured_wait_ms), ms(x.predicted_wait_ms)});
    out += t.str();
  }
  return out;
}

nlohmann::json ring_placement_json(const RingPlacement& pl) {
  json passes = json::array();
  for (const RingPassPlacement& p : pl.passes) {
    json steps = json::array();
    for (const RingStepPlacement& x : p.steps)
      steps.push_back(json{{"gpu", x.gpu},
                           {"step", x.step},
                           {"kv_owner", x.kv_owner},
                           {"predicted_compute_ms", number_json(x.predicted_compute_ms)},
                           {"measured_compute_ms", number_json(x.measured_compute_ms)},
                           {"compute_error", number_json(x.compute_error)},
                           {"predicted_compute_start_ms", number_json(x.predicted_compute_start_ms)},
                           {"measured_compute_start_ms", number_json(x.measured_compute_start_ms)},
                           {"predicted_transfer_ms", number_json(x.predicted_transfer_ms)},
                           {"measured_transfer_ms", number_json(x.measured_transfer_ms)},
                           {"transfer_error", number_json(x.transfer_error)},
                           {"predicted_wait_ms", number_json(x.predicted_wait_ms)},
                           {"measured_wait_ms", number_json(x.measured_wait_ms)}});
    passes.push_back(json{{"pass", std::string(sim::ring_pass_name(p.pass))},
                          {"predicted_time_ms", number_json(p.predicted_time_ms)},
                          {"measured_time_ms", number_json(p.measured_time_ms)},
                          {"time_error", number_json(p.time_error)},
                          {"predicted_compute_ms", number_json(p.predicted_compute_ms)},
                          {"measured_compute_ms", number_json(p.measured_compute_ms)},
                          {"compute_error", number_json(p.compute_error)},
                          {"predicted_comm_ms", number_json(p.predicted_comm_ms)},
                          {"measured_comm_ms", number_json(p.measured_comm_ms)},
                          {"comm_error", number_json(p.comm_error)},
                          {"predicted_exposed_ms", number_json(p.predicted_exposed_ms)},
                          {"measured_exposed_ms", number_json(p.measured_exposed_ms)},
                          {"steps", std::move(steps)}});
  }
  return json{{"problem", ring_problem_json(pl.simulation.problem)},
              {"kernel", pl.run.kernel},
              {"backward_kernel", pl.run.backward_kernel},
              {"transport", pl.run.transport},
              {"efficiency",
               {{"forward", pl.calibration.forward},
                {"backward", pl.calibration.backward ? json(*pl.calibration.backward) : json(nullptr)},
                {"from_single_gpu_run", pl.calibration.from_single_gpu_run},
                {"note", pl.calibration.note}}},
              {"notes", pl.notes},
              {"passes", std::move(passes)}};
}

std::vector<std::string> ring_placement_csv_header() {
  return {"pass",          "gpu",           "step",
          "kv_owner",      "compute_ms",    "predicted_compute_ms",
          "compute_error", "transfer_ms",   "predicted_transfer_ms",
          "transfer_error", "wait_ms",      "predicted_wait_ms"};
}

std::vector<std::vector<std::string>> ring_placement_csv_rows(const RingPlacement& pl) {
  std::vector<std::vector<std::string>> rows;
  auto opt = [](double v) { return std::isfinite(v) ? sim::shortest(v) : std::string(); };
  for (const RingPassPlacement& p : pl.passes)
    for (const RingStepPlacement& x : p.steps)
      rows.push_back({std::string(sim::ring_pass_name(p.pass)), std::to_string(x.gpu), std::to_string(x.step),
                      std::to_string(x.kv_owner), opt(x.measured_compute_ms), opt(x.predicted_compute_ms),
                      opt(x.compute_error), opt(x.measured_transfer_ms), opt(x.predicted_transfer_ms),
                      opt(x.transfer_error), opt(x.measured_wait_ms), opt(x.predicted_wait_ms)});
  return rows;
}

}  // namespace flashlab::analysis
