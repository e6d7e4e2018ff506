// The links between GPUs as data: assets/interconnects/*.json
// ("flashlab-interconnect/1"), each figure with its source, and a measured
// link in the same format.
#include <algorithm>
#include <cctype>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/sim/ring_schedule.hpp"
#include "json_fields.hpp"

namespace flashlab::sim {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr const char* kFormat = "flashlab-interconnect/1";

[[noreturn]] void fail(const std::string& origin, const std::string& msg) {
  json_fields::fail<InterconnectError>(origin, msg);
}

std::string required_string(const json& j, const char* name, const std::string& origin) {
  auto it = j.find(name);
  if (it == j.end() || it->is_null()) fail(origin, std::string("missing field '") + name + "'");
  if (!it->is_string() || it->get<std::string>().empty())
    fail(origin, std::string("field '") + name + "' must be a non-empty string (got " + it->dump() + ")");
  return it->get<std::string>();
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::string read_file(const fs::path& p) { return json_fields::read_file<InterconnectError>(p, "interconnect"); }

std::vector<InterconnectModel> read_presets() {
  std::vector<InterconnectModel> out;
  const std::string dir = assets_dir();
  if (dir.empty()) return out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(dir) / "interconnects", ec))
    if (e.is_regular_file() && e.path().extension() == ".json")
      out.push_back(parse_interconnect_json(read_file(e.path()), e.path().string()));
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.id < b.id; });
  return out;
}

}  // namespace

InterconnectModel parse_interconnect_json(const std::string& text, const std::string& origin) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    fail(origin, std::string("not valid JSON (") + e.what() + ")");
  }
  if (!j.is_object()) fail(origin, "expected a JSON object");
  if (auto it = j.find("format"); it == j.end() || !it->is_string() || it->get<std::string>() != kFormat)
    fail(origin, std::string("field 'format' must be \"") + kFormat + "\"" +
                     (it == j.end() ? std::string(" (missing)") : " (got " + it->dump() + ")"));
  InterconnectModel m;
  m.id = required_string(j, "id", origin);
  m.label = j.contains("label") ? required_string(j, "label", origin) : m.id;
  m.kind = j.contains("kind") ? required_string(j, "kind", origin) : "datasheet";
  if (m.kind != "datasheet" && m.kind != "measured")
    fail(origin, "field 'kind' must be \"datasheet\" or \"measured\" (got \"" + m.kind + "\")");
  m.bandwidth = json_fields::number<InterconnectError>(j, "bandwidth_gbs", origin, true) * 1e9;
  m.latency_s = json_fields::number<InterconnectError>(j, "latency_us", origin, false) * 1e-6;
  m.source = required_string(j, "source", origin);
  if (auto it = j.find("notes"); it != j.end() && !it->is_null())
    m.notes = json_fields::strings<InterconnectError>(*it, "notes", origin, false);
  return m;
}

std::string to_interconnect_json(const InterconnectModel& link) {
  json j;
  j["format"] = kFormat;
  j["id"] = link.id;
  j["label"] = link.label;
  j["kind"] = link.kind;
  j["bandwidth_gbs"] = link.bandwidth / 1e9;
  j["latency_us"] = link.latency_s * 1e6;
  j["source"] = link.source;
  if (!link.notes.empty()) j["notes"] = link.notes;
  return j.dump(2) + "\n";
}

const std::vector<InterconnectModel>& interconnect_presets() {
  static const std::vector<InterconnectModel> presets = read_presets();
  return presets;
}

const InterconnectModel* find_interconnect(std::string_view id) {
  const std::string want = lower(std::string(id));
  for (const InterconnectModel& m : interconnect_presets())
    if (lower(m.id) == want) return &m;
  return nullptr;
}

InterconnectModel load_interconnect(const std::string& preset_or_path) {
  if (preset_or_path.empty()) throw InterconnectError("empty link name");
  const bool is_path = preset_or_path.find('/') != std::string::npos ||
                       (preset_or_path.size() > 5 && preset_or_path.substr(preset_or_path.size() - 5) == ".json");
  if (is_path) {
    std::error_code ec;
    if (!fs::is_regular_file(preset_or_path, ec))
      throw InterconnectError("interconnect file '" + preset_or_path + "' not found");
    return parse_interconnect_json(read_file(preset_or_path), preset_or_path);
  }
  if (const InterconnectModel* m = find_interconnect(preset_or_path)) return *m;
  if (interconnect_presets().empty())
    throw InterconnectError("cannot find the assets folder with interconnect presets (set FLASHLAB_ASSETS)");
  std::string known;
  for (const InterconnectModel& m : interconnect_presets()) known += (known.empty() ? "" : ", ") + m.id;
  throw InterconnectError("unknown link '" + preset_or_path + "' (known: " + known + ", or a JSON file)");
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

std::vector<std::string> validate(const RingTopology& t) {
  std::vector<std::string> out;
  if (t.gpus_per_node < 1)
    out.push_back("a node needs at least one GPU (gpus per node " + std::to_string(t.gpus_per_node) + ")");
  for (const InterconnectModel* l : {&t.intra, &t.inter}) {
    const std::string name = l->id.empty() ? std::string(l == &t.intra ? "the intra-node link" : "the inter-node link")
                                           : "link '" + l->id + "'";
    if (!(l->bandwidth > 0)) out.push_back(name + " needs a positive bandwidth");
    if (!(l->latency_s >= 0)) out.push_back(name + " needs a non-negative latency");
  }
  return out;
}

}  // namespace flashlab::sim
