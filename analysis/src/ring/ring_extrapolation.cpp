#include "flashlab/analysis/ring/ring_extrapolation.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/analysis/results/ring_results.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

using nlohmann::json;

namespace {

std::string seconds_ms(double s, int decimals = 3) { return sim::fixed(s * 1e3, decimals); }
std::string fraction_pct(double f) { return sim::fixed(100.0 * f, 0) + "%"; }
std::string gib(i64 b) { return sim::bytes_iec(static_cast<double>(b)); }

std::string link_line(const sim::InterconnectModel& l) {
  std::string s = l.label + ": " + sim::fixed(l.bandwidth / 1e9, 0) + " GB/s one direction, " +
                  sim::fixed(l.latency_s * 1e6, 1) + " µs a message (" + l.kind + ")";
  if (!l.curve.empty())
    s += "; transfers follow its measured curve of " + std::to_string(l.curve.size()) + " message sizes";
  return s;
}

int nodes_of(int gpus, int per_node) { return (gpus + per_node - 1) / per_node; }

const sim::RingMemory& largest_memory(const sim::RingSimulation& s) {
  std::size_t best = 0;
  for (std::size_t r = 1; r < s.memory.size(); ++r)
    if (s.memory[r].total_bytes() > s.memory[best].total_bytes()) best = r;
  return s.memory.at(best);
}

std::string seq_text(i64 n) { return n % 1024 == 0 ? std::to_string(n / 1024) + "K" : std::to_string(n); }

json pass_json(const sim::RingPassResult& p) {
  json gpus = json::array();
  for (const sim::RingGpuTotals& g : p.gpus)
    gpus.push_back(json{{"compute_s", g.compute_s},
                        {"comm_s", g.comm_s},
                        {"wait_s", g.wait_s},
                        {"tail_wait_s", g.tail_wait_s},
                        {"idle_s", g.idle_s},
                        {"pairs", g.pairs},
                        {"bytes_received", g.bytes_received}});
  return json{{"pass", std::string(sim::to_string(p.pass))},
              {"start_s", p.start_s},
              {"end_s", p.end_s},
              {"time_s", p.time_s},
              {"compute_s", p.compute_s},
              {"comm_s", p.comm_s},
              {"exposed_comm_s", p.exposed_comm_s},
              {"exposed_steps_s", p.exposed_steps_s},
              {"tail_s", p.tail_s},
              {"overlap", p.overlap},
              {"idle_s", p.idle_s},
              {"flops", p.flops},
              {"bytes_per_step", p.bytes_per_step},
              {"gpus", std::move(gpus)}};
}

}  // namespace

// ---- one simulation ------------------------------------------------------------------

std::string ring_summary_text(const sim::RingSimulation& s, const sim::RingTopology& topo,
                              const sim::RingComputeModel& cm) {
  const sim::AttentionProblem& p = s.problem;
  std::string out = "Ring attention on " + std::to_string(p.gpus()) + " × " + cm.hw.display_name + "\n";
  out += "  problem   " + sim::describe(p) + "\n";
  const std::string model = ring_model_id(p);
  if (!model.empty()) out += "  model     " + model + "'s attention layer (one layer)\n";
  i64 lo = s.partition.chunks.front().size(), hi = lo;
  for (const sim::RingChunk& c : s.partition.chunks) {
    lo = std::min(lo, c.size());
    hi = std::max(hi, c.size());
  }
  out += "  layout    " + std::to_string(s.partition.chunks.size()) + " chunks of " + std::to_string(lo) +
         (hi != lo ? "–" + std::to_string(hi) : std::string()) + " tokens; GPU r holds " +
         std::string(sim::ring_layout_info(p.layout()).holds) + "\n";
  const int nodes = nodes_of(p.gpus(), topo.gpus_per_node);
  out += "  links     inside a node (" + std::to_string(topo.gpus_per_node) + " GPUs): " + link_line(topo.intra) + "\n";
  if (nodes > 1)
    out += "            between the " + std::to_string(nodes) + " nodes: " + link_line(topo.inter) + "\n";
  if (cm.rung_set)
    out += "  compute   each chunk pair's launch: waves of CTAs, per CTA, per tile (the rungs' launch model fitted on " +
           cm.rung_set->gpu + "; docs/multi-gpu.md)\n";
  else
    out += "  compute   FlashAttention-2's FLOPs and HBM requests per chunk pair (no L2), bound max(FLOPs/peak, "
           "bytes/bandwidth) at efficiency " +
           sim::fixed(cm.efficiency, 3) +
           (cm.backward_efficiency ? " (backward " + sim::fixed(*cm.backward_efficiency, 3) + ")" : std::string()) + "\n";
  if (cm.host.measured()) {
    const bool per_gpu = cm.host.per_gpu(p.gpus(), topo.gpus_per_node);
    out += std::string("  host      ") +
           (per_gpu ? "a process per GPU issues its work: " : "one thread issues every GPU's work: ") +
           host_prices_text(cm.host, cm.host.exchange_share(p.gpus(), topo.gpus_per_node),
                            per_gpu ? "its part of an exchange" : "an exchange") +
           "\n";
  }
  TextTable t({"pass", "time ms", "compute ms", "comm ms", "exposed ms", "of it tail", "overlap", "idle ms",
               "MB received/step", "TFLOP/s/GPU"});
  for (const sim::RingPassResult* r : {&s.forward, s.backward ? &*s.backward : nullptr}) {
    if (r == nullptr) continue;
    t.add({std::string(sim::to_string(r->pass)), seconds_ms(r->time_s), seconds_ms(r->compute_s), seconds_ms(r->comm_s),
           seconds_ms(r->exposed_comm_s), seconds_ms(r->exposed_comm_s - r->exposed_steps_s), fraction_pct(r->overlap), seconds_ms(r->idle_s), sim::fixed(static_cast<double>(r->bytes_per_step) / 1e6, 1),
           r->time_s > 0 ? sim::fixed(r->flops / r->time_s / p.gpus() * 1e-12, 1) : std::string("-")});
  }
  std::string table = t.str();
  std::string indented;
  for (std::size_t a = 0; a < table.size();) {
    const std::size_t b = table.find('\n', a);
    indented += "  " + table.substr(a, b - a) + "\n";
    a = b == std::string::npos ? table.size() : b + 1;
  }
  out += indented;
  out += "  total     " + seconds_ms(s.time_s) + " ms; one GPU alone " + seconds_ms(s.single_gpu_s) + " ms; scaling efficiency " +
         fraction_pct(s.scaling_efficiency) + " (single-GPU time / (P × time))\n";
  const sim::RingMemory& m = largest_memory(s);
  out += "  memory    " + gib(m.total_bytes()) + " on the largest GPU, as the ring's kernels allocate it (the rungs' "
         "workspaces not counted)";
  if (cm.hw.hbm_bytes > 0 && m.total_bytes() > cm.hw.hbm_bytes)
    out += ", more than the " + gib(cm.hw.hbm_bytes) + " of " + cm.hw.name;
  out += ":\n";
  for (const sim::RingMemoryTerm& x : m.terms)
    out += "            " + std::string(sim::to_string(x.pass)) + "  " + x.name + ": " + gib(x.bytes) + " (" +
           x.formula + ")\n";
  out += "            (n: its tokens; n_acc: those in chunks with more than one visible pair; n_gpu_max: the most a "
         "GPU holds; n_chunk_max: the largest chunk)\n";
  out += "  exposed   the longest a GPU waited for a transfer; of it, the tail: after its last compute (the "
         "backward's dK, dV coming home)\n";
  out += "  convention TFLOP/s per GPU: 4·B·H·pairs·d forward, 2.5× backward, over the pass's time and P\n";
  return out;
}

std::string ring_timeline_table(const sim::RingSimulation& s) {
  TextTable t({"pass", "GPU", "step", "event", "start ms", "end ms", "ms", "K/V of", "from", "MB", "pairs"});
  for (const sim::RingEvent& e : s.events) {
    const bool xfer = e.kind == sim::RingEventKind::transfer;
    std::string what(sim::ring_event_name(e.kind));
    if (xfer) what += e.gradients ? " dK,dV" : " K,V";
    if (xfer && e.crosses_nodes) what += " (inter)";
    t.add({std::string(sim::to_string(e.pass)), std::to_string(e.gpu), std::to_string(e.step), what,
           seconds_ms(e.start_s), seconds_ms(e.end_s), seconds_ms(e.duration_s()),
           e.kind == sim::RingEventKind::compute || xfer ? std::to_string(e.kv_owner) : std::string(),
           xfer ? std::to_string(e.peer) : std::string(),
           xfer ? sim::fixed(static_cast<double>(e.bytes) / 1e6, 2) : std::string(),
           e.kind == sim::RingEventKind::compute ? sim::group_digits(e.pairs) : std::string()});
  }
  return t.str();
}

std::vector<std::string> ring_events_csv_header() {
  return {"pass", "gpu", "step", "kind", "start_s", "end_s", "kv_owner", "peer", "gradients", "crosses_nodes",
          "bytes", "pairs", "flops"};
}

std::string ring_events_csv(const sim::RingSimulation& s) {
  std::string out = csv_row(ring_events_csv_header());
  for (const sim::RingEvent& e : s.events)
    out += csv_row({std::string(sim::to_string(e.pass)), std::to_string(e.gpu), std::to_string(e.step),
                    std::string(sim::ring_event_name(e.kind)), sim::shortest(e.start_s), sim::shortest(e.end_s),
                    std::to_string(e.kv_owner), std::to_string(e.peer), e.gradients ? "true" : "false",
                    e.crosses_nodes ? "true" : "false", std::to_string(e.bytes), std::to_string(e.pairs),
                    sim::shortest(e.flops)});
  return out;
}

json interconnect_json(const sim::InterconnectModel& l) {
  json j{{"id", l.id},
         {"label", l.label},
         {"kind", l.kind},
         {"bandwidth_gbs", l.bandwidth / 1e9},
         {"latency_us", l.latency_s * 1e6},
         {"source", l.source},
         {"notes", l.notes}};
  if (!l.curve.empty()) j["curve_points"] = l.curve.size();
  return j;
}

std::string host_prices_text(const sim::HostIssueCosts& h, double exchange_s, const std::string& exchange_words) {
  return sim::fixed(h.call_s * 1e6, 2) + " µs a stream call, " + sim::fixed(h.launch_s * 1e6, 2) + " µs a launch, " +
         sim::fixed(exchange_s * 1e6, 1) + " µs " + exchange_words +
         (h.exchange_sms > 0 ? ", its kernel holding " + std::to_string(h.exchange_sms) + " SMs while in flight" : "") +
         " (" + h.source + ")";
}

json ring_simulation_json(const sim::RingSimulation& s, const sim::RingTopology& topo, const sim::RingComputeModel& cm,
                          bool with_events) {
  json memory = json::array();
  for (std::size_t r = 0; r < s.memory.size(); ++r) {
    json terms = json::array();
    for (const sim::RingMemoryTerm& x : s.memory[r].terms)
      terms.push_back(json{{"name", x.name},
                           {"formula", x.formula},
                           {"bytes", x.bytes},
                           {"pass", std::string(sim::to_string(x.pass))}});
    memory.push_back(json{{"gpu", r},
                          {"bytes", s.memory[r].total_bytes()},
                          {"terms", std::move(terms)}});
  }
  json chunks = json::array();
  for (const sim::RingChunk& c : s.partition.chunks)
    chunks.push_back(json{{"index", c.index}, {"begin", c.begin}, {"end", c.end}});
  json j{{"problem", ring_problem_json(s.problem)},
         {"model", ring_model_id(s.problem)},
         {"hardware", cm.hw.name},
         {"efficiency", cm.efficiency},
         {"backward_efficiency", cm.backward_efficiency ? json(*cm.backward_efficiency) : json(nullptr)},
         {"topology",
          {{"gpus_per_node", topo.gpus_per_node},
           {"nodes", nodes_of(s.problem.gpus(), topo.gpus_per_node)},
           {"intra", interconnect_json(topo.intra)},
           {"inter", interconnect_json(topo.inter)}}},
         {"partition", {{"chunks", std::move(chunks)}, {"held", s.partition.held}}},
         {"forward", pass_json(s.forward)},
         {"backward", s.backward ? pass_json(*s.backward) : json(nullptr)},
         {"time_s", s.time_s},
         {"single_gpu_s", s.single_gpu_s},
         {"scaling_efficiency", s.scaling_efficiency},
         {"peak_bytes_per_gpu", s.peak_bytes_per_gpu},
         {"memory", std::move(memory)}};
  if (cm.host.measured()) {
    // One host for the node's GPUs, or a process per GPU issuing its own part of each exchange.
    j["host"] = {{"process_per_gpu", cm.host.per_gpu(s.problem.gpus(), topo.gpus_per_node)},
                 {"call_us", cm.host.call_s * 1e6},
                 {"launch_us", cm.host.launch_s * 1e6},
                 {"exchange_us", cm.host.exchange_share(s.problem.gpus(), topo.gpus_per_node) * 1e6},
                 {"exchange_sms", cm.host.exchange_sms},
                 {"source", cm.host.source}};
  }
  if (with_events) {
    json events = json::array();
    for (const sim::RingEvent& e : s.events) {
      json o{{"pass", std::string(sim::to_string(e.pass))},
             {"gpu", e.gpu},
             {"step", e.step},
             {"kind", std::string(sim::ring_event_name(e.kind))},
             {"start_s", e.start_s},
             {"end_s", e.end_s}};
      if (e.kind == sim::RingEventKind::compute) {
        o["kv_owner"] = e.kv_owner;
        o["pairs"] = e.pairs;
        o["flops"] = e.flops;
      } else if (e.kind == sim::RingEventKind::transfer) {
        o["kv_owner"] = e.kv_owner;
        o["peer"] = e.peer;
        o["gradients"] = e.gradients;
        o["crosses_nodes"] = e.crosses_nodes;
        o["bytes"] = e.bytes;
      }
      events.push_back(std::move(o));
    }
    j["events"] = std::move(events);
  }
  return j;
}

// ---- the extrapolation -------------------------------------------------------------------

std::vector<int> default_extrapolation_gpus() { return {1, 2, 4, 8, 16, 32}; }
std::vector<i64> default_extrapolation_seqs() { return {8192, 16384, 32768, 65536, 131072}; }

RingExtrapolation extrapolate_ring(const std::vector<RingScaleShape>& shapes, const std::vector<i64>& seqs,
                                   const std::vector<int>& gpus, const sim::RingTopology& topo,
                                   const sim::RingComputeModel& cm) {
  RingExtrapolation x;
  x.gpus = gpus;
  x.seqs = seqs;
  x.topology = topo;
  x.compute = cm;
  for (const RingScaleShape& shape : shapes)
    for (i64 n : seqs) {
      RingScaleRow row;
      row.model = shape.model;
      row.problem = shape.problem;
      row.problem.seq_q = n;
      for (int g : gpus) {
        sim::AttentionProblem p = row.problem;
        p.parallel_part().gpus = g;
        const int chunks = sim::ring_layout_info(p.layout()).chunks_per_gpu * g;
        if (n < chunks) continue;
        // Each pass as the ring's bench times it (2 warm-ups, 10 timed runs, the
        // median): under the power limit where the rung has one.
        const sim::RingSimulation s = sim::simulate_ring_timed(p, topo, cm, {}, {});
        RingScalePoint pt;
        pt.gpus = g;
        pt.nodes = nodes_of(g, topo.gpus_per_node);
        pt.time_s = s.time_s;
        for (const sim::RingPassResult* r : {&s.forward, s.backward ? &*s.backward : nullptr}) {
          if (r == nullptr) continue;
          pt.compute_s += r->compute_s;
          pt.comm_s += r->comm_s;
          pt.exposed_comm_s += r->exposed_comm_s;
          pt.exposed_steps_s += r->exposed_steps_s;
          pt.tail_s += r->tail_s;
          if (r->time_s > 0) pt.exposed_fraction = std::max(pt.exposed_fraction, r->exposed_steps_s / r->time_s);
        }
        pt.tail_fraction = pt.time_s > 0 ? pt.tail_s / pt.time_s : 0.0;
        pt.scaling_efficiency = s.scaling_efficiency;
        for (i64 b : s.peak_bytes_per_gpu) pt.peak_bytes_per_gpu = std::max(pt.peak_bytes_per_gpu, b);
        pt.fits = cm.hw.hbm_bytes <= 0 || pt.peak_bytes_per_gpu <= cm.hw.hbm_bytes;
        if (!pt.hidden() && !row.first_exposed_gpus) row.first_exposed_gpus = g;
        row.points.push_back(pt);
      }
      if (!row.points.empty()) row.problem.parallel_part().gpus = row.points.front().gpus;
      x.rows.push_back(std::move(row));
    }
  return x;
}

std::string ring_extrapolation_table(const RingExtrapolation& x, bool markdown) {
  std::vector<std::string> header{"model", "N"};
  for (int g : x.gpus) {
    const int nodes = nodes_of(g, x.topology.gpus_per_node);
    header.push_back("P=" + std::to_string(g) + (nodes > 1 ? " (" + std::to_string(nodes) + " nodes)" : ""));
  }
  header.push_back("communication");
  std::vector<std::vector<std::string>> rows;
  for (const RingScaleRow& r : x.rows) {
    std::vector<std::string> row{r.model, seq_text(r.problem.seq_q)};
    for (int g : x.gpus) {
      auto it = std::find_if(r.points.begin(), r.points.end(), [&](const RingScalePoint& p) { return p.gpus == g; });
      if (it == r.points.end()) {
        row.push_back("-");
        continue;
      }
      std::string cell = sim::fixed(it->time_s * 1e3, it->time_s * 1e3 < 10 ? 2 : 1) + " / " + fraction_pct(it->scaling_efficiency);
      if (!it->hidden()) cell += "*";
      if (!it->fits) cell += "!";
      row.push_back(cell);
    }
    if (!r.first_exposed_gpus) {
      row.push_back("hidden to P=" + std::to_string(r.points.empty() ? 0 : r.points.back().gpus));
    } else {
      const int g = *r.first_exposed_gpus;
      const auto it = std::find_if(r.points.begin(), r.points.end(), [&](const RingScalePoint& p) { return p.gpus == g; });
      row.push_back("exposed from P=" + std::to_string(g) + " (" + fraction_pct(it->exposed_fraction) + ", " +
                    (it->nodes > 1 ? "between nodes" : "in a node") + ")");
    }
    rows.push_back(std::move(row));
  }
  double tail = 0;
  for (const RingScaleRow& r : x.rows)
    for (const RingScalePoint& p : r.points) tail = std::max(tail, p.tail_fraction);
  std::string foot;
  if (tail > 0)
    foot = "Not in the criterion: the backward's tail, dK and dV (fp32) coming home after the last step, which no "
           "compute of the layer hides: up to " + fraction_pct(tail) + " of a point's time here.\n";
  if (!markdown) {
    TextTable t(header);
    for (auto& row : rows) t.add(std::move(row));
    return t.str() + foot;
  }
  auto line = [](const std::vector<std::string>& cells) {
    std::string s = "|";
    for (const std::string& c : cells) s += " " + c + " |";
    return s + "\n";
  };
  std::string out = line(header);
  std::vector<std::string> rule(header.size(), "---:");
  rule[0] = "---";
  rule.back() = "---";
  out += line(rule);
  for (const auto& row : rows) out += line(row);
  return out + (foot.empty() ? "" : "\n" + foot);
}

std::vector<std::string> ring_extrapolation_csv_header() {
  return {"model",    "batch",     "heads",        "kv_heads",         "seq",  "head_dim",  "causal",
          "dtype",    "layout",    "passes",       "gpus",             "nodes", "time_ms",  "compute_ms",
          "comm_ms",  "exposed_comm_ms", "exposed_steps_ms", "tail_ms", "exposed_fraction", "tail_fraction",
          "hidden", "scaling_efficiency", "peak_bytes_per_gpu", "fits"};
}

std::string ring_extrapolation_csv(const RingExtrapolation& x) {
  std::string out = csv_row(ring_extrapolation_csv_header());
  for (const RingScaleRow& r : x.rows)
    for (const RingScalePoint& p : r.points) {
      const sim::AttentionProblem& q = r.problem;
      out += csv_row({r.model,
                      std::to_string(q.batch),
                      std::to_string(q.heads),
                      std::to_string(q.h_kv()),
                      std::to_string(q.seq_q),
                      std::to_string(q.head_dim),
                      q.causal ? "true" : "false",
                      std::string(sim::to_string(q.dtype)),
                      std::string(sim::ring_layout_name(q.layout())),
                      std::string(sim::to_string(q.passes())),
                      std::to_string(p.gpus),
                      std::to_string(p.nodes),
                      sim::shortest(p.time_s * 1e3),
                      sim::shortest(p.compute_s * 1e3),
                      sim::shortest(p.comm_s * 1e3),
                      sim::shortest(p.exposed_comm_s * 1e3),
                      sim::shortest(p.exposed_steps_s * 1e3),
                      sim::shortest(p.tail_s * 1e3),
                      sim::shortest(p.exposed_fraction),
                      sim::shortest(p.tail_fraction),
                      p.hidden() ? "true" : "false",
                      sim::shortest(p.scaling_efficiency),
                      std::to_string(p.peak_bytes_per_gpu),
                      p.fits ? "true" : "false"});
    }
  return out;
}

json ring_extrapolation_json(const RingExtrapolation& x) {
  json rows = json::array();
  for (const RingScaleRow& r : x.rows) {
    json points = json::array();
    for (const RingScalePoint& p : r.points)
      points.push_back(json{{"gpus", p.gpus},
                            {"nodes", p.nodes},
                            {"time_s", p.time_s},
                            {"compute_s", p.compute_s},
                            {"comm_s", p.comm_s},
                            {"exposed_comm_s", p.exposed_comm_s},
                            {"exposed_steps_s", p.exposed_steps_s},
                            {"tail_s", p.tail_s},
                            {"exposed_fraction", p.exposed_fraction},
                            {"tail_fraction", p.tail_fraction},
                            {"hidden", p.hidden()},
                            {"scaling_efficiency", p.scaling_efficiency},
                            {"peak_bytes_per_gpu", p.peak_bytes_per_gpu},
                            {"fits", p.fits}});
    rows.push_back(json{{"model", r.model},
                        {"problem", ring_problem_json(r.problem)},
                        {"first_exposed_gpus", r.first_exposed_gpus ? json(*r.first_exposed_gpus) : json(nullptr)},
                        {"points", std::move(points)}});
  }
  return json{{"hardware", x.compute.hw.name},
              {"efficiency", x.compute.efficiency},
              {"gpus_per_node", x.topology.gpus_per_node},
              {"intra", interconnect_json(x.topology.intra)},
              {"inter", interconnect_json(x.topology.inter)},
              {"exposed_threshold", kExposedCommThreshold},
              {"gpus", x.gpus},
              {"seqs", x.seqs},
              {"rows", std::move(rows)}};
}

}  // namespace flashlab::analysis
