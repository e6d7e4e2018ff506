// The links measured, as rates, a table, CSV and a measured link.
#include "flashlab/analysis/ring/link_report.hpp"

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "flashlab/analysis/text/csv.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

namespace {

using sim::LinkTransport;

double gbs(double bytes, double us) { return us > 0 ? bytes / (us * 1e-6) / 1e9 : 0.0; }

std::string pair_name(const sim::LinkPairMeasurement& p) {
  return "GPU " + std::to_string(p.gpu_a) + " <-> GPU " + std::to_string(p.gpu_b);
}

const sim::LinkSeries& nccl_series(const sim::LinkPairMeasurement& p) {
  const sim::LinkSeries* s = p.find(LinkTransport::nccl);
  if (s == nullptr || s->samples.empty())
    throw std::invalid_argument(pair_name(p) + ": no NCCL figures (the measured link is NCCL's)");
  return *s;
}

// The pair's code in nvidia-smi's matrix; empty when unknown. Under
// CUDA_VISIBLE_DEVICES the CUDA ordinals are not nvidia-smi's GPU numbers,
// which matters only when the pairs differ.
std::string pair_code(const sim::LinkMeasurements& m, const sim::LinkPairMeasurement& p) {
  if (const std::string all = uniform_link_code(m.gpu_topology); !all.empty()) return all;
  for (const std::string& e : m.environment)
    if (e.rfind("CUDA_VISIBLE_DEVICES=", 0) == 0) return {};
  const int n = m.gpu_topology.gpu_count;
  if (p.gpu_a >= n || p.gpu_b >= n) return {};
  return m.gpu_topology.link(p.gpu_a, p.gpu_b);
}

std::vector<sim::LinkCurvePoint> curve_of(const sim::LinkSeries& s) {
  std::vector<sim::LinkCurvePoint> out;
  for (const sim::LinkSample& x : s.samples) {
    const LinkRate r = link_rate(x);
    out.push_back({static_cast<double>(x.bytes), r.one_way_us * 1e-6, r.one_way_gbs * 1e9,
                   r.both_per_direction_gbs * 1e9});
  }
  return out;
}

std::string slug(const std::string& text) {
  std::string s;
  for (const unsigned char c : text) {
    if (std::isalnum(c)) s += static_cast<char>(std::tolower(c));
    else if (!s.empty() && s.back() != '-') s += '-';
  }
  while (!s.empty() && s.back() == '-') s.pop_back();
  return s;
}

std::string gbs_text(double bytes_per_s) { return sim::fixed(bytes_per_s / 1e9, 1) + " GB/s"; }

// A rate in a table cell: enough decimals that an 8-byte message's is not 0.00.
std::string gbs_cell(double gbs) { return sim::fixed(gbs, gbs >= 100 ? 1 : gbs >= 1 ? 2 : 4); }

}  // namespace

std::string gpu_kinds(const std::vector<std::string>& names) {
  std::vector<std::string> kinds;
  for (const std::string& n : names)
    if (std::find(kinds.begin(), kinds.end(), n) == kinds.end()) kinds.push_back(n);
  std::string s;
  for (const std::string& k : kinds) s += (s.empty() ? "" : ", ") + k;
  return s;
}

std::string uniform_link_code(const sim::GpuTopology& t) {
  std::string code;
  for (int a = 0; a < t.gpu_count; ++a)
    for (int b = a + 1; b < t.gpu_count; ++b) {
      if (!code.empty() && t.link(a, b) != code) return {};
      code = t.link(a, b);
    }
  return code;
}

std::string gpus_and_links(const std::vector<std::string>& names, const sim::GpuTopology& t, bool with_code) {
  if (names.empty()) return {};
  const std::string code = with_code ? uniform_link_code(t) : std::string();
  return std::to_string(names.size()) + "× " + gpu_kinds(names) +
         (t.summary.empty() ? "" : " (" + t.summary + (code.empty() ? "" : ": " + code) + ")");
}

LinkRate link_rate(const sim::LinkSample& s) {
  LinkRate r;
  r.bytes = s.bytes;
  const auto b = static_cast<double>(s.bytes);
  r.one_way_us = s.one_way.time_us_median;
  r.one_way_gbs = gbs(b, r.one_way_us);
  r.both_us = s.both.time_us_median;
  r.both_per_direction_gbs = gbs(b, r.both_us);
  r.both_total_gbs = gbs(2 * b, r.both_us);
  return r;
}

const sim::LinkPairMeasurement& slowest_link_pair(const sim::LinkMeasurements& m) {
  if (m.pairs.empty()) throw std::invalid_argument("no GPU pair was measured");
  const sim::LinkPairMeasurement* slowest = nullptr;
  double lowest = 0;
  for (const sim::LinkPairMeasurement& p : m.pairs) {
    const double v = link_rate(nccl_series(p).samples.back()).one_way_gbs;
    if (slowest == nullptr || v < lowest) {
      slowest = &p;
      lowest = v;
    }
  }
  return *slowest;
}

std::string matching_datasheet_link(const sim::LinkMeasurements& m) {
  if (m.pairs.empty()) return {};
  for (const sim::LinkPairMeasurement& p : m.pairs)
    if (pair_code(m, p) != "NV18") return {};
  return "nvlink4";
}

sim::InterconnectModel measured_link(const sim::LinkMeasurements& m, const MeasuredLinkNames& names,
                                     const sim::InterconnectModel* datasheet) {
  const sim::LinkPairMeasurement& slow = slowest_link_pair(m);
  const sim::LinkSeries& nccl = nccl_series(slow);
  const std::string gpus = gpus_and_links(m.gpu_names, m.gpu_topology);
  sim::InterconnectModel l;
  l.kind = "measured";
  l.id = !names.id.empty() ? names.id
                           : "measured-" + slug(gpu_kinds(m.gpu_names)) + "-" + std::to_string(m.gpu_names.size()) +
                                 "gpu-" + m.date.substr(0, 10);
  l.label = !names.label.empty() ? names.label : "NCCL send/recv measured on " + gpus;
  l.curve = curve_of(nccl);
  l.bandwidth = l.curve.back().bandwidth;
  l.latency_s = l.curve.front().time_s;
  if (const sim::LinkSeries* ce = slow.find(LinkTransport::copy_engine); ce && !ce->samples.empty())
    l.copy_engine_curve = curve_of(*ce);
  l.source = "measured on " + gpus + " by flashlab links: NCCL send/recv between every GPU pair, one " +
             "direction and both at once, the median of " + std::to_string(nccl.samples.back().one_way.iterations) +
             " timed iterations of back-to-back messages after " + std::to_string(m.warmup) +
             " warm-ups (CUDA events), the received bytes checked; " + m.date +
             (m.host.empty() ? "" : ", host " + m.host) + (m.commit.empty() ? "" : ", commit " + m.commit) +
             ", NCCL " + m.nccl_version;

  const sim::LinkCurvePoint& big = l.curve.back();
  const std::string size = sim::bytes_iec(big.bytes);
  l.notes.push_back("bandwidth_gbs is the one-direction NCCL bandwidth at the largest message (" + size +
                    ") of the slowest pair, " + pair_name(slow) +
                    (m.pairs.size() > 1 ? " (a ring moves in lockstep: its slowest hop sets every step)" : "") +
                    "; latency_us is that pair's smallest message (" + sim::bytes_iec(l.curve.front().bytes) +
                    "), one direction; `curve` holds every size, and the ring's simulator interpolates it");
  if (datasheet != nullptr)
    l.notes.push_back("Datasheet (" + datasheet->id + "): " + gbs_text(datasheet->bandwidth) +
                      " one direction; measured " + gbs_text(big.bandwidth) + " = " +
                      sim::fixed(100 * big.bandwidth / datasheet->bandwidth, 0) + "% of it");
  l.notes.push_back("Both directions at once, as every GPU of a ring sends and receives: " +
                    gbs_text(big.bidir_bandwidth) + " per direction at " + size + " (" +
                    gbs_text(2 * big.bidir_bandwidth) + " together)");
  if (!l.copy_engine_curve.empty()) {
    const sim::LinkCurvePoint& ce = l.copy_engine_curve.back();
    l.notes.push_back("Copy engines (cudaMemcpyPeerAsync) on the same pair: " + gbs_text(ce.bandwidth) +
                      " one direction, " + gbs_text(ce.bidir_bandwidth) + " per direction both ways at " + size +
                      " (copy_engine_curve; the simulator uses NCCL's curve)");
  }
  for (const sim::LinkPairMeasurement& p : m.pairs)
    for (const sim::LinkSeries& s : p.series)
      if (!s.note.empty()) l.notes.push_back(s.note);

  for (const sim::LinkPairMeasurement& p : m.pairs) {
    sim::LinkPairFigure f;
    f.gpu_a = p.gpu_a;
    f.gpu_b = p.gpu_b;
    f.code = pair_code(m, p);
    const LinkRate r = link_rate(nccl_series(p).samples.back());
    f.bytes = static_cast<double>(r.bytes);
    f.bandwidth = r.one_way_gbs * 1e9;
    f.bidir_bandwidth = r.both_per_direction_gbs * 1e9;
    if (const sim::LinkSeries* ce = p.find(LinkTransport::copy_engine); ce && !ce->samples.empty())
      f.copy_engine_bandwidth = link_rate(ce->samples.back()).one_way_gbs * 1e9;
    l.pairs.push_back(f);
  }
  l.gpus = m.gpu_names;
  l.nccl_version = m.nccl_version;
  l.topology_text = m.topology;
  l.topology = m.gpu_topology;
  l.host = measured_host(m);
  l.ring_curve = ring_exchange_curve(m);
  if (!l.ring_curve.empty()) {
    l.ring_curve_source = "measured with " + l.id;
    const sim::LinkCurvePoint& r = l.ring_curve.back();
    l.notes.push_back("The ring's exchange over the " + std::to_string(m.gpu_names.size()) +
                      " GPUs at once (each sends to the next, receives from the previous): " +
                      gbs_text(r.bandwidth) + " per GPU and direction at " + sim::bytes_iec(r.bytes) +
                      " (ring_curve: what the ring's simulator moves its messages with)");
  }
  return l;
}

std::vector<sim::LinkCurvePoint> ring_exchange_curve(const sim::LinkMeasurements& m) {
  std::vector<sim::LinkCurvePoint> out;
  for (const sim::RingExchangeSample& x : m.ring_exchange) {
    const double t = x.timing.time_us_median * 1e-6;
    if (!(t > 0)) continue;
    const double bw = static_cast<double>(x.bytes) / t;
    out.push_back({static_cast<double>(x.bytes), t, bw, bw});
  }
  return out;
}

sim::HostIssueCosts measured_host(const sim::LinkMeasurements& m) {
  if (!m.issue.measured()) return {};
  sim::HostIssueCosts h = m.issue;
  h.source = "measured on " + std::to_string(m.gpu_names.size()) + "× " + gpu_kinds(m.gpu_names) + ", " +
             m.date.substr(0, 10) + ", one host thread, timing events on busy streams, medians of " +
             std::to_string(m.issue_rounds) + " rounds";
  return h;
}

std::string link_table(const sim::LinkMeasurements& m) {
  std::string out = "Links between " + std::to_string(m.gpu_names.size()) + " GPUs (" + gpu_kinds(m.gpu_names) +
                    "), NCCL " + m.nccl_version;
  if (!m.gpu_topology.summary.empty()) out += "; nvidia-smi topo -m: " + m.gpu_topology.summary;
  else if (!m.gpu_topology.problem.empty()) out += "; nvidia-smi topo -m not read: " + m.gpu_topology.problem;
  out += "\n";
  for (const sim::LinkPairMeasurement& p : m.pairs) {
    const std::string code = pair_code(m, p);
    out += "\n" + pair_name(p) + (code.empty() ? "" : " (" + code + ": " + sim::describe_link_code(code) + ")") + "\n";
    const sim::LinkSeries* ce = p.find(LinkTransport::copy_engine);
    TextTable t({"size", "nccl µs", "nccl GB/s", "both µs", "both GB/s/dir", "both GB/s", "copy µs", "copy GB/s",
                 "copy both µs", "copy both GB/s/dir", "copy both GB/s"});
    const sim::LinkSeries& nccl = nccl_series(p);
    for (std::size_t k = 0; k < nccl.samples.size(); ++k) {
      const LinkRate r = link_rate(nccl.samples[k]);
      std::vector<std::string> row{sim::bytes_iec(static_cast<double>(r.bytes)),
                                   sim::fixed(r.one_way_us, 2),
                                   gbs_cell(r.one_way_gbs),
                                   sim::fixed(r.both_us, 2),
                                   gbs_cell(r.both_per_direction_gbs),
                                   gbs_cell(r.both_total_gbs)};
      if (ce != nullptr && k < ce->samples.size() && ce->samples[k].bytes == r.bytes) {
        const LinkRate c = link_rate(ce->samples[k]);
        row.insert(row.end(), {sim::fixed(c.one_way_us, 2), gbs_cell(c.one_way_gbs), sim::fixed(c.both_us, 2),
                               gbs_cell(c.both_per_direction_gbs), gbs_cell(c.both_total_gbs)});
      } else {
        row.insert(row.end(), 5, "-");
      }
      t.add(std::move(row));
    }
    out += t.str();
    for (const sim::LinkSeries& s : p.series)
      if (!s.note.empty()) out += "note: " + s.note + "\n";
  }
  if (m.issue.measured())
    out += "\nThe host's issuing (one thread, medians of " + std::to_string(m.issue_rounds) + " rounds): " +
           sim::fixed(m.issue.call_s * 1e6, 2) + " µs a stream call (set the GPU, record an event, wait for one), " +
           sim::fixed(m.issue.launch_s * 1e6, 2) + " µs a small kernel's launch, " +
           sim::fixed(m.issue.exchange_s * 1e6, 1) + " µs an exchange of every GPU's send and receive (" +
           std::to_string(m.issue.gpus) + " GPUs, one NCCL group)\n";
  if (m.issue.exchange_sms > 0)
    out += "While an exchange is in flight its kernel holds " + std::to_string(m.issue.exchange_sms) +
           " SMs of a GPU (the most over the GPUs; one SM-filling CTA per SM launched beside it)\n";
  out += "\nµs: the median time per message over the timed iterations (one way: GPU a sends, GPU b receives; both: "
         "each sends the other one message at once); GB/s = 1e9 bytes/s: a message's bytes over its time, "
         "per direction, and both directions' bytes together; nccl: ncclSend/ncclRecv (kernels on the SMs); "
         "copy: cudaMemcpyPeerAsync (the copy engines)\n";
  return out;
}

std::string links_csv(const sim::LinkMeasurements& m) {
  std::string out = csv_row({"gpu_a", "gpu_b", "link", "transport", "bytes", "messages", "iterations",
                             "one_way_us_median", "one_way_us_min", "one_way_us_max", "one_way_gbs", "both_us_median",
                             "both_us_min", "both_us_max", "both_gbs_per_direction", "both_gbs_total", "checked"});
  for (const sim::LinkPairMeasurement& p : m.pairs)
    for (const sim::LinkSeries& s : p.series)
      for (const sim::LinkSample& x : s.samples) {
        const LinkRate r = link_rate(x);
        auto num = [](double v) { return sim::fixed(v, 4); };
        out += csv_row({std::to_string(p.gpu_a), std::to_string(p.gpu_b), pair_code(m, p),
                        std::string(sim::link_transport_name(s.transport)), std::to_string(x.bytes),
                        std::to_string(x.one_way.messages), std::to_string(x.one_way.iterations),
                        num(x.one_way.time_us_median), num(x.one_way.time_us_min), num(x.one_way.time_us_max),
                        num(r.one_way_gbs), num(x.both.time_us_median), num(x.both.time_us_min),
                        num(x.both.time_us_max), num(r.both_per_direction_gbs), num(r.both_total_gbs),
                        x.checked ? "yes" : "no"});
      }
  return out;
}

}  // namespace flashlab::analysis
