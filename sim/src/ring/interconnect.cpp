// The links between GPUs as data: assets/interconnects/*.json
// ("flashlab-interconnect/1"), each figure with its source, and a measured
// link in the same format (assets/interconnects/measured/, `flashlab links`).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "core/enum_names.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/format.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "flashlab/sim/hardware/gpu_topology_json.hpp"
#include "flashlab/sim/hardware/host_issue_json.hpp"
#include "flashlab/sim/ring/link_curve_json.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kInterconnectFormat = "flashlab-interconnect/1";

using InterconnectFields = JsonFields<InterconnectError>;
InterconnectFields interconnect_fields(const std::string& origin) { return InterconnectFields(origin, FieldWording::quoted); }

[[noreturn]] void interconnect_fail(const std::string& origin, const std::string& msg) { interconnect_fields(origin).fail(msg); }

std::string required_string(const json& j, const char* name, const std::string& origin) {
  const InterconnectFields f = interconnect_fields(origin);
  const json& v = f.member(j, "", name);
  if (!v.is_string() || v.get<std::string>().empty()) f.wrong(name, "a non-empty string", v.dump());
  return v.get<std::string>();
}

// Empty when absent.
std::string optional_interconnect_string(const json& j, const char* name, const std::string& origin) {
  const InterconnectFields f = interconnect_fields(origin);
  const json* v = f.find(j, name);
  return v == nullptr ? std::string() : f.text_of(*v, name);
}

double number_in(const json& j, const char* name, const std::string& origin, bool positive, const std::string& at) {
  return interconnect_fields(origin).number(j, at, name, positive);
}

// A measured curve: points ascending in bytes, each rate its bytes over its time.
std::vector<LinkCurvePoint> curve_from(const json& j, const std::string& name, const std::string& origin) {
  std::vector<LinkCurvePoint> out;
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array() || it->empty())
    interconnect_fail(origin, "field '" + name + "' must be a non-empty list of {\"bytes\", \"time_us\", \"gbs\", \"bidir_gbs\"}");
  for (std::size_t k = 0; k < it->size(); ++k) {
    const json& p = (*it)[k];
    const std::string at = name + "[" + std::to_string(k) + "]";
    if (!p.is_object()) interconnect_fail(origin, "field '" + at + "' must be an object {\"bytes\", \"time_us\", \"gbs\", \"bidir_gbs\"}");
    LinkCurvePoint x;
    x.bytes = number_in(p, "bytes", origin, true, at);
    x.time_s = number_in(p, "time_us", origin, true, at) * 1e-6;
    x.bandwidth = number_in(p, "gbs", origin, true, at) * 1e9;
    if (p.contains("bidir_gbs")) x.bidir_bandwidth = number_in(p, "bidir_gbs", origin, false, at) * 1e9;
    if (!out.empty() && !(x.bytes > out.back().bytes))
      interconnect_fail(origin, "field '" + at + ".bytes' must exceed the point before it (" + sim::fixed(out.back().bytes, 0) +
                       " bytes): a curve lists each message size once, ascending");
    const double implied = x.bytes / x.time_s;
    if (std::abs(x.bandwidth - implied) > 0.01 * implied)
      interconnect_fail(origin, "field '" + at + ".gbs' (" + sim::fixed(x.bandwidth / 1e9, 3) + ") is not bytes / time_us (" +
                       sim::fixed(implied / 1e9, 3) + " GB/s)");
    out.push_back(x);
  }
  return out;
}

json curve_json(const std::vector<LinkCurvePoint>& curve) {
  json a = json::array();
  for (const LinkCurvePoint& p : curve)
    a.push_back({{"bytes", static_cast<i64>(std::llround(p.bytes))},
                 {"time_us", p.time_s * 1e6},
                 {"gbs", p.bandwidth / 1e9},
                 {"bidir_gbs", p.bidir_bandwidth / 1e9}});
  return a;
}

std::vector<LinkPairFigure> pairs_from(const json& j, const std::string& origin) {
  std::vector<LinkPairFigure> out;
  auto it = j.find("pairs");
  if (it == j.end() || it->is_null()) return out;
  if (!it->is_array()) interconnect_fail(origin, "field 'pairs' must be a list of {\"gpus\": [a, b], \"gbs\", ...}");
  for (std::size_t k = 0; k < it->size(); ++k) {
    const json& p = (*it)[k];
    const std::string at = "pairs[" + std::to_string(k) + "]";
    if (!p.is_object()) interconnect_fail(origin, "field '" + at + "' must be an object");
    const json& g = interconnect_fields(origin).member(p, at, "gpus");
    if (!g.is_array() || g.size() != 2 || !g[0].is_number_unsigned() || !g[1].is_number_unsigned() || g[0] == g[1])
      interconnect_fail(origin, "field '" + at + ".gpus' must be two different GPU ordinals (got " + g.dump() + ")");
    LinkPairFigure x;
    x.gpu_a = g[0].get<int>();
    x.gpu_b = g[1].get<int>();
    if (auto c = p.find("link"); c != p.end() && !c->is_null()) {
      if (!c->is_string()) interconnect_fail(origin, "field '" + at + ".link' must be a string (got " + c->dump() + ")");
      x.code = c->get<std::string>();
    }
    x.bytes = number_in(p, "bytes", origin, true, at);
    x.bandwidth = number_in(p, "gbs", origin, true, at) * 1e9;
    x.bidir_bandwidth = number_in(p, "bidir_gbs", origin, false, at) * 1e9;
    if (p.contains("copy_engine_gbs")) x.copy_engine_bandwidth = number_in(p, "copy_engine_gbs", origin, false, at) * 1e9;
    out.push_back(x);
  }
  return out;
}

json pairs_json(const std::vector<LinkPairFigure>& pairs) {
  json a = json::array();
  for (const LinkPairFigure& p : pairs) {
    json o{{"gpus", {p.gpu_a, p.gpu_b}},
           {"bytes", static_cast<i64>(std::llround(p.bytes))},
           {"gbs", p.bandwidth / 1e9},
           {"bidir_gbs", p.bidir_bandwidth / 1e9},
           {"copy_engine_gbs", p.copy_engine_bandwidth / 1e9}};
    if (!p.code.empty()) o["link"] = p.code;
    a.push_back(std::move(o));
  }
  return a;
}

// Read by id (read_interconnect_presets): the kind names the files' folder and their messages.
const AssetKind kLinks{"interconnects", "link", "interconnect", {}, {}, false, AssetKind::AbsentPath::not_found};

}  // namespace

InterconnectModel parse_interconnect_json(const std::string& text, const std::string& origin) {
  const json j = interconnect_fields(origin).parse_object(text);
  if (auto it = j.find("format"); it == j.end() || !it->is_string() || it->get<std::string>() != kInterconnectFormat)
    interconnect_fail(origin, std::string("field 'format' must be \"") + kInterconnectFormat + "\"" +
                     (it == j.end() ? std::string(" (missing)") : " (got " + it->dump() + ")"));
  InterconnectModel m;
  m.id = required_string(j, "id", origin);
  m.label = j.contains("label") ? required_string(j, "label", origin) : m.id;
  m.kind = j.contains("kind") ? required_string(j, "kind", origin) : "datasheet";
  if (m.kind != "datasheet" && m.kind != "measured")
    interconnect_fail(origin, "field 'kind' must be \"datasheet\" or \"measured\" (got \"" + m.kind + "\")");
  m.bandwidth = interconnect_fields(origin).number(j, "", "bandwidth_gbs", true) * 1e9;
  m.latency_s = interconnect_fields(origin).number(j, "", "latency_us", false) * 1e-6;
  m.source = required_string(j, "source", origin);
  if (auto it = j.find("notes"); it != j.end() && !it->is_null())
    m.notes = interconnect_fields(origin).strings(*it, "notes", false);
  m.curve = curve_from(j, "curve", origin);
  m.copy_engine_curve = curve_from(j, "copy_engine_curve", origin);
  m.ring_curve = curve_from(j, "ring_curve", origin);
  if (!m.ring_curve.empty()) m.ring_curve_source = "measured with " + m.id;
  m.pairs = pairs_from(j, origin);
  if (auto it = j.find("gpus"); it != j.end() && !it->is_null())
    m.gpus = interconnect_fields(origin).strings(*it, "gpus", false);
  m.nccl_version = optional_interconnect_string(j, "nccl_version", origin);
  // The text is the record; "topology" is derived from it and not read back.
  m.topology_text = optional_interconnect_string(j, "topology_text", origin);
  m.topology = parse_nvidia_smi_topo(m.topology_text);
  if (auto it = j.find("host"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) interconnect_fail(origin, "field 'host' must be an object (call_us, launch_us, exchange_us, gpus, source)");
    const std::string at = origin + ": host";
    m.host.call_s = interconnect_fields(at).number(*it, "", "call_us", false) * 1e-6;
    m.host.launch_s = interconnect_fields(at).number(*it, "", "launch_us", false) * 1e-6;
    m.host.exchange_s = interconnect_fields(at).number(*it, "", "exchange_us", false) * 1e-6;
    m.host.gpus = static_cast<int>(interconnect_fields(at).number(*it, "", "gpus", false));
    if (it->contains("exchange_sms"))  // measured links from before the exchange's SMs were
      m.host.exchange_sms = static_cast<int>(interconnect_fields(at).number(*it, "", "exchange_sms", false));
    m.host.source = optional_interconnect_string(*it, "source", at);
  }
  return m;
}

std::string to_interconnect_json(const InterconnectModel& link) {
  json j;
  j["format"] = kInterconnectFormat;
  j["id"] = link.id;
  j["label"] = link.label;
  j["kind"] = link.kind;
  j["bandwidth_gbs"] = link.bandwidth / 1e9;
  j["latency_us"] = link.latency_s * 1e6;
  j["source"] = link.source;
  if (!link.notes.empty()) j["notes"] = link.notes;
  if (!link.curve.empty()) j["curve"] = curve_json(link.curve);
  if (!link.copy_engine_curve.empty()) j["copy_engine_curve"] = curve_json(link.copy_engine_curve);
  if (!link.ring_curve.empty()) j["ring_curve"] = curve_json(link.ring_curve);
  if (!link.pairs.empty()) j["pairs"] = pairs_json(link.pairs);
  if (!link.gpus.empty()) j["gpus"] = link.gpus;
  if (!link.nccl_version.empty()) j["nccl_version"] = link.nccl_version;
  if (!link.topology_text.empty()) {
    j["topology"] = gpu_topology_json(parse_nvidia_smi_topo(link.topology_text));
    j["topology_text"] = link.topology_text;
  }
  if (link.host.measured()) j["host"] = host_issue_json(link.host);
  return j.dump(2) + "\n";
}

namespace {

// A point's time for its message: one direction, or with both directions
// busy (where measured).
double point_time_s(const LinkCurvePoint& p, bool both) {
  return both && p.bidir_bandwidth > 0 ? p.bytes / p.bidir_bandwidth : p.time_s;
}

// A measured curve's time for one message (InterconnectModel::transfer_s).
double curve_time_s(const std::vector<LinkCurvePoint>& curve, double bytes, bool both) {
  const LinkCurvePoint& last = curve.back();
  if (bytes >= last.bytes) return point_time_s(last, both) * (bytes / last.bytes);
  if (bytes <= curve.front().bytes) return point_time_s(curve.front(), both);
  // The first point above `bytes`, and the one before it.
  const auto hi = std::upper_bound(curve.begin(), curve.end(), bytes,
                                   [](double b, const LinkCurvePoint& p) { return b < p.bytes; });
  const LinkCurvePoint& a = *(hi - 1);
  const LinkCurvePoint& b = *hi;
  if (bytes == a.bytes) return point_time_s(a, both);
  const double f = std::log(bytes / a.bytes) / std::log(b.bytes / a.bytes);
  return point_time_s(a, both) * std::pow(point_time_s(b, both) / point_time_s(a, both), f);
}

}  // namespace

double InterconnectModel::arrival_s(double start_s, double bytes) const {
  if (curve.empty()) return start_s + latency_s + bytes / bandwidth;
  return start_s + curve_time_s(curve, bytes, false);
}

double InterconnectModel::exchange_arrival_s(double start_s, double bytes, int messages) const {
  const int n = std::max(1, messages);
  if (!ring_curve.empty()) {
    const double b = bytes / n, last = ring_curve.back().bytes;
    // Beyond the ring's largest message, the pair's both-ways curve where it
    // reaches further: its shape, from the ring's last point.
    if (b > last && !curve.empty() && curve.back().bytes > last)
      return start_s + n * ring_curve.back().time_s * curve_time_s(curve, b, true) / curve_time_s(curve, last, true);
    return start_s + n * curve_time_s(ring_curve, b, false);
  }
  if (curve.empty()) return arrival_s(start_s, bytes);
  return start_s + n * curve_time_s(curve, bytes / n, true);
}

nlohmann::json link_curve_json(const std::vector<LinkCurvePoint>& curve) { return curve_json(curve); }

std::vector<LinkCurvePoint> parse_link_curve(const nlohmann::json& j, const std::string& name,
                                             const std::string& origin) {
  return curve_from(j, name, origin);
}

std::vector<InterconnectModel> read_interconnect_presets(const std::string& assets) {
  std::vector<std::pair<InterconnectModel, std::string>> found;  // with its file
  for (const bool measured : {false, true}) {
    for (const std::string& path : asset_files(assets, measured ? "interconnects/measured" : kLinks.folder)) {
      InterconnectModel m = parse_interconnect_json(read_asset<InterconnectError>(kLinks, path), path);
      if (measured && m.kind != "measured")
        interconnect_fail(path, "a link in interconnects/measured/ must have \"kind\": \"measured\" (got \"" + m.kind + "\")");
      for (const auto& [other, other_path] : found)
        if (lower(other.id) == lower(m.id)) interconnect_fail(path, "id '" + m.id + "' is already the id of " + other_path);
      found.emplace_back(std::move(m), path);
    }
  }
  std::vector<InterconnectModel> out;
  for (auto& f : found) out.push_back(std::move(f.first));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

const std::vector<InterconnectModel>& interconnect_presets() {
  static const std::vector<InterconnectModel> presets = [] {
    const std::string dir = assets_dir();
    return dir.empty() ? std::vector<InterconnectModel>{} : read_interconnect_presets(dir);
  }();
  return presets;
}

const InterconnectModel* find_interconnect(std::string_view id) {
  const std::string want = lower(id);
  for (const InterconnectModel& m : interconnect_presets())
    if (lower(m.id) == want) return &m;
  return nullptr;
}

InterconnectModel load_interconnect(const std::string& preset_or_path) {
  if (preset_or_path.empty()) throw InterconnectError("empty link name");
  if (names_a_file(preset_or_path)) {
    const std::string path = asset_file<InterconnectError>(kLinks, preset_or_path);
    return parse_interconnect_json(read_asset<InterconnectError>(kLinks, path), path);
  }
  if (const InterconnectModel* m = find_interconnect(preset_or_path)) return *m;
  if (interconnect_presets().empty())
    throw InterconnectError("cannot find the assets folder with interconnect presets (set FLASHLAB_ASSETS)");
  // The datasheet presets first, then the measured ones.
  std::vector<std::string> datasheet;
  std::string measured;
  for (const InterconnectModel& m : interconnect_presets()) {
    if (m.kind == "measured")
      measured += (measured.empty() ? "" : ", ") + m.id;
    else
      datasheet.push_back(m.id);
  }
  throw InterconnectError(unknown_asset_message(
      "link", preset_or_path, datasheet, (measured.empty() ? "" : "measured: " + measured + "; ") + "or a JSON file"));
}

const InterconnectModel& RingTopology::link(int from_gpu, int to_gpu) const {
  return crosses_nodes(from_gpu, to_gpu) ? inter : intra;
}

RingTopology default_ring_topology() {
  RingTopology t;
  t.gpus_per_node = 8;
  t.intra = load_interconnect("nvlink4");
  t.inter = load_interconnect("ib-ndr");
  return t;
}

namespace {
constexpr detail::EnumName<RingSetupField> kSetupFieldKeys[] = {
    {RingSetupField::gpus_per_node, "gpus_per_node"}, {RingSetupField::intra, "intra"},
    {RingSetupField::inter, "inter"},                 {RingSetupField::efficiency, "efficiency"},
    {RingSetupField::hardware, "hardware"}};
static_assert(detail::lists_through(kSetupFieldKeys, RingSetupField::hardware));
}  // namespace

std::string_view ring_setup_field_key(RingSetupField f) { return detail::name_of(kSetupFieldKeys, f, "hardware"); }

std::vector<RingSetupError> validate(const RingTopology& t) {
  std::vector<RingSetupError> out;
  if (t.gpus_per_node < 1)
    out.push_back({RingSetupField::gpus_per_node,
                   "a node needs at least one GPU (gpus per node " + std::to_string(t.gpus_per_node) + ")"});
  for (const InterconnectModel* l : {&t.intra, &t.inter}) {
    const RingSetupField field = l == &t.intra ? RingSetupField::intra : RingSetupField::inter;
    const std::string name = l->id.empty() ? std::string(l == &t.intra ? "the intra-node link" : "the inter-node link")
                                           : "link '" + l->id + "'";
    if (!(l->bandwidth > 0)) out.push_back({field, name + " needs a positive bandwidth"});
    if (!(l->latency_s >= 0)) out.push_back({field, name + " needs a non-negative latency"});
  }
  return out;
}

}  // namespace flashlab::sim
