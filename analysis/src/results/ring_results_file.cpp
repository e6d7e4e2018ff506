// Ring runs as data: the results file, written and read, and its rows as CSV.
//
//   JSON  {"format": "flashlab-ring-results/1", "meta": {...}, "runs": [{...}, ...]}
//
// A run: {"problem": {...}, "kernel", "backward_kernel", "transport",
// "status", "reason", "forward": PASS, "backward": PASS (absent for a
// forward-only run), "peak_allocated_bytes": [per GPU],
// "peak_device_used_bytes": [per GPU], "rel_error", "rel_error_grads",
// "check_note"}; PASS: {"time_ms_median", "time_ms_min", "time_ms_max",
// "repeats", "warmup" (absent: 2), "comm_ms", "exposed_comm_ms", "compute_ms", "steps": [{"gpu",
// "step", "kv_owner", "compute_start_ms", "compute_end_ms", "wait_ms",
// "transfer_start_ms", "transfer_end_ms", "bytes_received", "rung_ms",
// "host_start_ms", "host_end_ms"}],
// "rung_ms"}; a run's "steps" is "fused" or "pairwise" (a file without it was
// measured before the fused steps existed: "pairwise"); its "comm_stream" is
// "priority" or "default" (a file without it: "default"). Non-finite
// numbers are written "inf", "-inf", "nan". The meta's "gpu_topology"
// (sim/hardware/gpu_topology_json.hpp) is derived from its "topology" text when the
// file is written, and derived again when it is read.
#include <algorithm>
#include <fstream>
#include <sstream>
#include <stdexcept>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/hardware/gpu_topology_json.hpp"
#include "flashlab/sim/hardware/host_issue_json.hpp"
#include "flashlab/sim/ring/link_curve_json.hpp"
#include "results/run_meta_json.hpp"
#include "text/results_json.hpp"

namespace flashlab::analysis {

using nlohmann::json;

namespace {

using results_json::fail;
using results_json::number_json;
using results_json::Reader;

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
  if (gpus < 1 || gpus > sim::kMaxRingGpus)
    rd.error(where + ".gpus",
             "expected 1 to " + std::to_string(sim::kMaxRingGpus) + " GPUs (got " + std::to_string(gpus) + ")");
  p.parallel_part().gpus = static_cast<int>(gpus);
  const std::string layout = rd.text(o, where, "layout", true);
  if (!sim::parse_ring_layout(layout, p.parallel_part().layout))
    rd.error(where + ".layout", "unknown layout '" + layout + "' (expected " + sim::ring_layout_names() + ")");
  p.parallel_part().passes = rd.flag(o, where, "backward", false) ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd;
  if (const auto why = sim::validate(p); !why.empty()) rd.error(where, why.front().message);
  return p;
}

json pass_to_json(const sim::PassTimes& t, const sim::PassTimeline& p) {
  json steps = json::array();
  for (const sim::MeasuredStep& s : p.steps)
    steps.push_back(json{{"gpu", s.gpu},
                         {"step", s.step},
                         {"kv_owner", s.kv_owner},
                         {"compute_start_ms", number_json(s.compute_start_ms)},
                         {"compute_end_ms", number_json(s.compute_end_ms)},
                         {"wait_ms", number_json(s.wait_ms)},
                         {"transfer_start_ms", number_json(s.transfer_start_ms)},
                         {"transfer_end_ms", number_json(s.transfer_end_ms)},
                         {"bytes_received", s.bytes_received},
                         {"rung_ms", number_json(s.rung_ms)},
                         {"host_start_ms", number_json(s.host_start_ms)},
                         {"host_end_ms", number_json(s.host_end_ms)}});
  return json{{"time_ms_median", number_json(t.time_ms_median)},
              {"time_ms_min", number_json(t.time_ms_min)},
              {"time_ms_max", number_json(t.time_ms_max)},
              {"repeats", t.repeats},
              {"warmup", p.warmup},
              {"comm_ms", number_json(p.comm_ms)},
              {"exposed_comm_ms", number_json(p.exposed_comm_ms)},
              {"compute_ms", number_json(p.compute_ms)},
              {"rung_ms", number_json(p.rung_ms)},
              {"steps", std::move(steps)}};
}

void pass_from(const Reader& rd, const json& o, const std::string& where, sim::Pass pass, int gpus, sim::PassTimes& t,
               sim::PassTimeline& p) {
  p.pass = pass;
  t.time_ms_median = rd.real(o, where, "time_ms_median");
  t.time_ms_min = rd.real(o, where, "time_ms_min", t.time_ms_median);
  t.time_ms_max = rd.real(o, where, "time_ms_max", t.time_ms_median);
  t.repeats = static_cast<int>(rd.whole(o, where, "repeats", 0));
  p.warmup = static_cast<int>(rd.whole(o, where, "warmup", -1));
  if (p.warmup < -1) rd.error(where + ".warmup", "expected 0 or more untimed runs (got " + std::to_string(p.warmup) + ")");
  p.comm_ms = rd.real(o, where, "comm_ms", 0.0);
  p.exposed_comm_ms = rd.real(o, where, "exposed_comm_ms", 0.0);
  p.compute_ms = rd.real(o, where, "compute_ms", 0.0);
  p.rung_ms = rd.real(o, where, "rung_ms", -1.0);
  if (!rd.has(o, "steps")) return;
  const json& steps = rd.array(o, where, "steps");
  const int last_step = pass == sim::Pass::bwd ? gpus : gpus - 1;
  for (std::size_t k = 0; k < steps.size(); ++k) {
    const std::string w = where + ".steps[" + std::to_string(k) + "]";
    const json& s = steps[k];
    if (!s.is_object()) rd.error(w, "expected an object");
    sim::MeasuredStep x;
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
    x.host_start_ms = rd.real(s, w, "host_start_ms", -1.0);
    x.host_end_ms = rd.real(s, w, "host_end_ms", -1.0);
    p.steps.push_back(x);
  }
}

// A process per GPU: the launcher, the GPUs per node and each rank's place.
json processes_json(const sim::ParallelMeta& m) {
  json ranks = json::array();
  for (const sim::ProcessRank& k : m.ranks)
    ranks.push_back(
        {{"rank", k.rank}, {"host", k.host}, {"local_rank", k.local_rank}, {"device", k.device}, {"gpu", k.gpu}});
  return json{{"launcher", m.launcher}, {"gpus_per_node", m.gpus_per_node}, {"ranks", ranks}};
}

void processes_from(const Reader& rd, const json& o, sim::ParallelMeta& m) {
  const std::string w = "meta.processes";
  const json& p = rd.object(o, "meta", "processes");
  m.launcher = rd.text(p, w, "launcher", true);
  m.gpus_per_node = static_cast<int>(rd.whole(p, w, "gpus_per_node", 0));
  const json& a = rd.array(p, w, "ranks");
  for (std::size_t i = 0; i < a.size(); ++i) {
    const std::string wi = w + ".ranks[" + std::to_string(i) + "]";
    sim::ProcessRank k;
    k.rank = static_cast<int>(rd.whole(a[i], wi, "rank"));
    k.host = rd.text(a[i], wi, "host");
    k.local_rank = static_cast<int>(rd.whole(a[i], wi, "local_rank", 0));
    k.device = static_cast<int>(rd.whole(a[i], wi, "device", 0));
    k.gpu = rd.text(a[i], wi, "gpu");
    m.ranks.push_back(k);
  }
}

json meta_to_json(const sim::RunMeta& device) {
  const sim::ParallelMeta& m = device.parallel_part();
  json out{{"device", run_meta_json(device)},
              {"gpu_count", m.gpu_count},
              {"gpu_names", m.gpu_names},
              {"nccl_version", m.nccl_version},
              {"topology", m.topology},
              {"gpu_topology", sim::gpu_topology_json(sim::parse_nvidia_smi_topo(m.topology))},
              {"environment", m.environment}};
  // Only a run that started a process per GPU says so: one process's files are as before.
  if (!m.launcher.empty()) out["processes"] = processes_json(m);
  if (m.host.measured()) out["host_issue"] = sim::host_issue_json(m.host);
  if (!m.ring_exchange.empty()) out["ring_exchange"] = sim::link_curve_json(m.ring_exchange);
  return out;
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

sim::RunMeta meta_from(const Reader& rd, const json& o) {
  sim::RunMeta device;
  const std::string w = "meta";
  if (rd.has(o, "device")) run_meta_from(rd, rd.object(o, w, "device"), w + ".device", device);
  sim::ParallelMeta& m = device.parallel_part();
  m.gpu_count = static_cast<int>(rd.whole(o, w, "gpu_count", 0));
  m.gpu_names = strings_from(rd, o, w, "gpu_names");
  m.nccl_version = rd.text(o, w, "nccl_version");
  m.topology = rd.text(o, w, "topology");
  // Derived from the text, in files that have it and in older files alike.
  m.gpu_topology = sim::parse_nvidia_smi_topo(m.topology);
  m.environment = strings_from(rd, o, w, "environment");
  if (rd.has(o, "processes")) processes_from(rd, o, m);
  if (rd.has(o, "host_issue")) {
    const json& h = rd.object(o, w, "host_issue");
    const std::string wh = w + ".host_issue";
    m.host.call_s = rd.real(h, wh, "call_us", 0.0) * 1e-6;
    m.host.launch_s = rd.real(h, wh, "launch_us", 0.0) * 1e-6;
    m.host.exchange_s = rd.real(h, wh, "exchange_us", 0.0) * 1e-6;
    m.host.gpus = static_cast<int>(rd.whole(h, wh, "gpus", 0));
    m.host.exchange_sms = static_cast<int>(rd.whole(h, wh, "exchange_sms", 0));
    m.host.source = rd.text(h, wh, "source");
  }
  try {
    m.ring_exchange = sim::parse_link_curve(o, "ring_exchange", rd.origin() + ": " + w);
  } catch (const sim::InterconnectError& e) {
    throw std::runtime_error(e.what());
  }
  return device;
}

}  // namespace

// ---- the file ------------------------------------------------------------------------

std::string ring_results_to_json(const sim::MeasuredRuns& r) {
  json runs = json::array();
  for (const sim::MeasuredRun& run : r.runs) {
    const sim::ParallelRun& pr = run.parallel_part();
    json o{{"problem", ring_problem_json(run.problem)},
           {"kernel", run.kernel},
           {"backward_kernel", pr.backward_kernel},
           {"transport", pr.transport},
           {"steps", pr.steps},
           {"comm_stream", pr.comm_stream},
           {"status", std::string(sim::to_string(run.status))},
           {"reason", run.reason},
           {"forward", pass_to_json(run, pr.forward)},
           {"peak_allocated_bytes", pr.peak_allocated_bytes},
           {"peak_device_used_bytes", pr.peak_device_used_bytes},
           {"rel_error", number_json(run.rel_error)},
           {"rel_error_grads", number_json(pr.rel_error_grads)},
           {"check_note", pr.check_note}};
    if (pr.backward) o["backward"] = pass_to_json(*pr.backward, pr.backward->timeline);
    runs.push_back(std::move(o));
  }
  const json j{{"format", kRingResultsFormat}, {"meta", meta_to_json(r.meta)}, {"runs", std::move(runs)}};
  return j.dump(2) + "\n";
}

sim::MeasuredRuns ring_results_from_json(const std::string& text, const std::string& origin) {
  json j = results_json::parse(text, origin);
  const Reader rd(origin);
  if (!j.is_object()) rd.error("top level", "expected an object");
  if (!j.contains("format") || !j["format"].is_string() || j["format"].get<std::string>() != kRingResultsFormat)
    rd.error("format", std::string("expected \"") + kRingResultsFormat + "\"" +
                           (j.contains("format") ? " (got " + j["format"].dump() + ")" : std::string(" (missing)")));
  sim::MeasuredRuns r;
  r.meta = rd.has(j, "meta") ? meta_from(rd, rd.object(j, "", "meta")) : meta_from(rd, json::object());
  const json& runs = rd.array(j, "", "runs");
  for (std::size_t k = 0; k < runs.size(); ++k) {
    const std::string w = "runs[" + std::to_string(k) + "]";
    const json& o = runs[k];
    if (!o.is_object()) rd.error(w, "expected an object");
    sim::MeasuredRun run;
    sim::ParallelRun& pr = run.parallel_part();
    run.problem = problem_from(rd, rd.object(o, w, "problem"), w + ".problem");
    run.kernel = rd.text(o, w, "kernel", true);
    if (run.kernel.empty()) rd.error(w + ".kernel", "empty");
    pr.backward_kernel = rd.text(o, w, "backward_kernel");
    pr.transport = rd.text(o, w, "transport");
    pr.steps = rd.has(o, "steps") ? rd.text(o, w, "steps", true) : std::string("pairwise");
    if (!sim::parse_ring_steps(pr.steps))
      rd.error(w + ".steps", "expected \"fused\" or \"pairwise\" (got \"" + pr.steps + "\")");
    pr.comm_stream = rd.has(o, "comm_stream") ? rd.text(o, w, "comm_stream", true) : std::string("default");
    if (pr.comm_stream != "priority" && pr.comm_stream != "default")
      rd.error(w + ".comm_stream", "expected \"priority\" or \"default\" (got \"" + pr.comm_stream + "\")");
    const std::string status = rd.text(o, w, "status", true);
    const auto st = sim::parse_run_status(status);
    if (!st) rd.error(w + ".status", "unknown status '" + status + "' (expected ok, OOM, skipped, failed)");
    run.status = *st;
    run.reason = rd.text(o, w, "reason");
    const int P = run.problem.gpus();
    // A run that did not finish may have no times.
    if (run.status == sim::RunStatus::ok || rd.has(o, "forward"))
      pass_from(rd, rd.object(o, w, "forward"), w + ".forward", sim::Pass::fwd, P, run, pr.forward);
    if (rd.has(o, "backward")) {
      sim::MeasuredBackward& b = pr.backward.emplace();
      pass_from(rd, rd.object(o, w, "backward"), w + ".backward", sim::Pass::bwd, P, b, b.timeline);
    } else if (run.problem.backward() && run.status == sim::RunStatus::ok)
      rd.error(w + ".backward", "missing (the problem has a backward pass and the run is ok)");
    pr.peak_allocated_bytes = wholes_from(rd, o, w, "peak_allocated_bytes");
    pr.peak_device_used_bytes = wholes_from(rd, o, w, "peak_device_used_bytes");
    for (const auto* v : {&pr.peak_allocated_bytes, &pr.peak_device_used_bytes})
      if (!v->empty() && v->size() != static_cast<std::size_t>(P))
        rd.error(w + (v == &pr.peak_allocated_bytes ? ".peak_allocated_bytes" : ".peak_device_used_bytes"),
                 "has " + std::to_string(v->size()) + " entries for " + std::to_string(P) + " GPUs");
    for (i64 b : pr.peak_allocated_bytes) run.peak_memory_bytes = std::max(run.peak_memory_bytes, b);
    run.rel_error = rd.real(o, w, "rel_error", -1.0);
    pr.rel_error_grads = rd.real(o, w, "rel_error_grads", -1.0);
    pr.check_note = rd.text(o, w, "check_note");
    r.runs.push_back(std::move(run));
  }
  return r;
}

sim::MeasuredRuns ring_results_from_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open for reading");
  std::ostringstream s;
  s << in.rdbuf();
  const std::string text = s.str();
  if (text.find_first_not_of(" \t\r\n") == std::string::npos) throw std::runtime_error(path + ": empty file");
  return ring_results_from_json(text, path);
}

// ---- CSV ------------------------------------------------------------------------------

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

std::string ring_results_csv(const sim::MeasuredRuns& r) {
  std::string out = std::string("# format: \"") + kRingResultsFormat + "\"\n";
  const json meta = meta_to_json(r.meta);
  for (const auto& [key, value] : meta.items()) out += "# " + key + ": " + value.dump() + "\n";
  out += "# flop_convention: \"4·B·H·pairs·d forward (pairs = N² or, causal, N(N+1)/2), 2.5× that backward; "
         "TFLOP/s per GPU = FLOPs / time / P\"\n";
  out += csv_row(ring_csv_header());
  for (const RingRow& row : ring_rows(r)) {
    const sim::MeasuredRun& run = r.runs[row.run];
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
                    std::string(sim::to_string(row.pass)),
                    num(row.time_ms),
                    num(row.comm_ms),
                    num(row.exposed_comm_ms),
                    num(row.overlap),
                    num(row.tflops_per_gpu),
                    row.measured && row.peak_allocated_bytes > 0 ? std::to_string(row.peak_allocated_bytes) : std::string(),
                    row.scaling_efficiency ? sim::shortest(*row.scaling_efficiency) : std::string(),
                    std::string(sim::to_string(run.status)),
                    run.reason,
                    row.pass == sim::Pass::fwd ? run.kernel : run.parallel_part().backward_kernel,
                    run.parallel_part().transport,
                    num(row.time_ms_min),
                    num(row.time_ms_max),
                    row.measured ? std::to_string(row.repeats) : std::string(),
                    num(row.compute_ms),
                    row.measured && row.peak_device_used_bytes > 0 ? std::to_string(row.peak_device_used_bytes)
                                                                   : std::string(),
                    row.rel_error >= 0 ? sim::shortest(row.rel_error) : std::string(),  // empty: not checked
                    run.parallel_part().steps,
                    row.measured && row.rung_ms >= 0 ? sim::shortest(row.rung_ms) : std::string()});
  }
  return out;
}

}  // namespace flashlab::analysis
