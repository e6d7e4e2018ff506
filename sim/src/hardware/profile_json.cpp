// A measured profile as JSON: a hardware preset's fields, then the device,
// the measurements, the bandwidth sweep and the run.
#include <fstream>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "flashlab/sim/core/json_fields.hpp"
#include "hardware/hardware_fields.hpp"
#include "flashlab/sim/hardware/measured_profile.hpp"

namespace flashlab::sim {

using nlohmann::json;

namespace {

// The fields of a profile: `path` ("device.", "run.", …) is written before a
// field's name in messages.
using detail::hardware_fail;
using detail::hardware_fields;
using detail::HardwareFields;

const json& need(const json& j, const std::string& path, const char* name, const std::string& origin) {
  const HardwareFields f = hardware_fields(origin);
  if (const json* v = f.find(j, name)) return *v;
  f.missing(path + name);
}

double positive(const json& j, const std::string& path, const char* name, const std::string& origin) {
  const json& v = need(j, path, name, origin);
  if (!v.is_number() || !(v.get<double>() > 0)) hardware_fields(origin).wrong(path + name, "a positive number", v.dump());
  return v.get<double>();
}

double non_negative_or(const json& j, const std::string& path, const char* name, const std::string& origin) {
  const HardwareFields f = hardware_fields(origin);
  const json* v = f.find(j, name);
  if (v == nullptr) return 0;
  if (!v->is_number() || v->get<double>() < 0) f.wrong(path + name, "a non-negative number", v->dump());
  return v->get<double>();
}

i64 integer_or(const json& j, const std::string& path, const char* name, const std::string& origin, bool required) {
  const HardwareFields f = hardware_fields(origin);
  const json* v = f.find(j, name);
  if (v == nullptr) {
    if (required) f.missing(path + name);
    return 0;
  }
  if (!v->is_number_integer() || v->get<i64>() < (required ? 1 : 0))
    f.wrong(path + name, std::string("a ") + (required ? "positive" : "non-negative") + " integer", v->dump());
  return v->get<i64>();
}

std::string string_or(const json& j, const std::string& path, const char* name, const std::string& origin,
                      bool required) {
  const HardwareFields f = hardware_fields(origin);
  const json* v = f.find(j, name);
  if (v == nullptr) {
    if (required) f.missing(path + name);
    return {};
  }
  if (!v->is_string() || (required && v->get<std::string>().empty()))
    f.wrong(path + name, std::string("a ") + (required ? "non-empty " : "") + "string");
  return v->get<std::string>();
}

json device_json(const DeviceFacts& d) {
  return json{{"name", d.name},
              {"compute_capability", d.compute_capability},
              {"sm_count", d.sm_count},
              {"smem_per_sm_bytes", d.smem_per_sm_bytes},
              {"smem_optin_bytes", d.smem_optin_bytes},
              {"l2_bytes", d.l2_bytes},
              {"total_memory_bytes", d.total_memory_bytes},
              {"max_sm_clock_mhz", d.max_sm_clock_mhz},
              {"mem_clock_mhz", d.mem_clock_mhz},
              {"mem_bus_bits", d.mem_bus_bits},
              {"driver", d.driver},
              {"cuda_driver", d.cuda_driver},
              {"cuda_runtime", d.cuda_runtime}};
}

DeviceFacts device_from(const json& j, const std::string& origin) {
  const std::string p = "device.";
  if (!j.is_object()) hardware_fail(origin, "field 'device' must be an object");
  DeviceFacts d;
  d.name = string_or(j, p, "name", origin, true);
  d.compute_capability = static_cast<int>(integer_or(j, p, "compute_capability", origin, false));
  d.sm_count = integer_or(j, p, "sm_count", origin, true);
  d.smem_per_sm_bytes = integer_or(j, p, "smem_per_sm_bytes", origin, false);
  d.smem_optin_bytes = integer_or(j, p, "smem_optin_bytes", origin, false);
  d.l2_bytes = integer_or(j, p, "l2_bytes", origin, false);
  d.total_memory_bytes = integer_or(j, p, "total_memory_bytes", origin, false);
  d.max_sm_clock_mhz = non_negative_or(j, p, "max_sm_clock_mhz", origin);
  d.mem_clock_mhz = non_negative_or(j, p, "mem_clock_mhz", origin);
  d.mem_bus_bits = static_cast<int>(integer_or(j, p, "mem_bus_bits", origin, false));
  d.driver = string_or(j, p, "driver", origin, false);
  d.cuda_driver = string_or(j, p, "cuda_driver", origin, false);
  d.cuda_runtime = string_or(j, p, "cuda_runtime", origin, false);
  return d;
}

json figure_json(const CeilingFigure& f) {
  const FigureSpec* s = find_figure_spec(f.id);
  const Quantity q = s ? s->quantity : Quantity::flops;
  json j{{"id", f.id},
         {"value", f.value / unit_scale(q)},
         {"unit", std::string(unit_of(q))},
         {"median_ms", f.median_ms},
         {"min_ms", f.min_ms},
         {"max_ms", f.max_ms},
         {"repeats", f.repeats},
         {"work", f.work}};
  if (f.sm_clock_mhz > 0) j["sm_clock_mhz"] = f.sm_clock_mhz;
  if (!f.method.empty()) j["method"] = f.method;
  return j;
}

CeilingFigure figure_from(const json& j, size_t index, const std::string& origin) {
  const std::string p = "measurements[" + std::to_string(index) + "].";
  if (!j.is_object()) hardware_fail(origin, "'measurements[" + std::to_string(index) + "]' must be an object");
  CeilingFigure f;
  f.id = string_or(j, p, "id", origin, true);
  const FigureSpec* s = find_figure_spec(f.id);
  if (!s) {
    std::string known;
    for (const FigureSpec& k : figure_specs()) known += (known.empty() ? "" : ", ") + std::string(k.id);
    hardware_fail(origin, p + "id: unknown measurement '" + f.id + "' (known: " + known + ")");
  }
  const std::string unit = string_or(j, p, "unit", origin, true);
  if (unit != unit_of(s->quantity))
    hardware_fail(origin, p + "unit: '" + unit + "' for " + f.id + " (expected " + std::string(unit_of(s->quantity)) + ")");
  f.value = positive(j, p, "value", origin) * unit_scale(s->quantity);
  f.median_ms = positive(j, p, "median_ms", origin);
  f.min_ms = non_negative_or(j, p, "min_ms", origin);
  f.max_ms = non_negative_or(j, p, "max_ms", origin);
  f.repeats = static_cast<int>(integer_or(j, p, "repeats", origin, true));
  f.work = non_negative_or(j, p, "work", origin);
  f.sm_clock_mhz = non_negative_or(j, p, "sm_clock_mhz", origin);
  f.method = string_or(j, p, "method", origin, false);
  return f;
}

json sweep_json(const SweepSeries& s) {
  json points = json::array();
  for (const SweepPoint& p : s.points)
    points.push_back({{"bytes", p.working_set_bytes}, {"gbs", p.bandwidth / 1e9}, {"median_ms", p.median_ms}});
  return json{{"loads", s.loads}, {"points", points}};
}

SweepSeries sweep_from(const json& j, size_t index, const std::string& origin) {
  const std::string p = "bandwidth_sweep[" + std::to_string(index) + "].";
  if (!j.is_object()) hardware_fail(origin, "'bandwidth_sweep[" + std::to_string(index) + "]' must be an object");
  SweepSeries s;
  s.loads = string_or(j, p, "loads", origin, true);
  const json& pts = need(j, p, "points", origin);
  if (!pts.is_array()) hardware_fail(origin, "field '" + p + "points' must be an array");
  for (size_t k = 0; k < pts.size(); ++k) {
    const std::string q = p + "points[" + std::to_string(k) + "].";
    if (!pts[k].is_object()) hardware_fail(origin, "'" + q.substr(0, q.size() - 1) + "' must be an object");
    SweepPoint pt;
    pt.working_set_bytes = integer_or(pts[k], q, "bytes", origin, true);
    pt.bandwidth = positive(pts[k], q, "gbs", origin) * 1e9;
    pt.median_ms = non_negative_or(pts[k], q, "median_ms", origin);
    s.points.push_back(pt);
  }
  return s;
}

}  // namespace

std::string profile_to_json(const MeasuredProfile& p) {
  json j = json::parse(to_hardware_json(p.hw));
  j["device"] = device_json(p.device);
  json figs = json::array();
  for (const CeilingFigure& f : p.figures) figs.push_back(figure_json(f));
  j["measurements"] = figs;
  json sweep = json::array();
  for (const SweepSeries& s : p.sweep) sweep.push_back(sweep_json(s));
  j["bandwidth_sweep"] = sweep;
  j["run"] = {{"mode", p.mode}, {"date", p.date}, {"wall_s", p.wall_s}, {"commit", p.commit}, {"notes", p.notes}};
  return j.dump(2) + "\n";
}

MeasuredProfile profile_from_json(const std::string& text, const std::string& origin) {
  MeasuredProfile p;
  p.hw = parse_hardware_json(text, origin);  // the preset part, with its own checks
  if (p.hw.kind != "measured")
    hardware_fail(origin, "kind is '" + p.hw.kind + "', not 'measured': a datasheet preset has no measurements");
  const json j = json::parse(text);  // valid: parse_hardware_json accepted it
  p.device = device_from(need(j, "", "device", origin), origin);
  const json& figs = need(j, "", "measurements", origin);
  if (!figs.is_array() || figs.empty()) hardware_fail(origin, "field 'measurements' must be a non-empty array");
  std::set<std::string> seen;
  for (size_t k = 0; k < figs.size(); ++k) {
    CeilingFigure f = figure_from(figs[k], k, origin);
    if (!seen.insert(f.id).second) hardware_fail(origin, "measurement '" + f.id + "' appears twice");
    p.figures.push_back(std::move(f));
  }
  if (auto it = j.find("bandwidth_sweep"); it != j.end() && !it->is_null()) {
    if (!it->is_array()) hardware_fail(origin, "field 'bandwidth_sweep' must be an array");
    for (size_t k = 0; k < it->size(); ++k) p.sweep.push_back(sweep_from((*it)[k], k, origin));
  }
  if (auto it = j.find("run"); it != j.end() && !it->is_null()) {
    if (!it->is_object()) hardware_fail(origin, "field 'run' must be an object");
    p.mode = string_or(*it, "run.", "mode", origin, false);
    p.date = string_or(*it, "run.", "date", origin, false);
    p.wall_s = non_negative_or(*it, "run.", "wall_s", origin);
    p.commit = string_or(*it, "run.", "commit", origin, false);
    if (auto n = it->find("notes"); n != it->end() && !n->is_null()) {
      if (!n->is_array()) hardware_fail(origin, "field 'run.notes' must be an array of strings");
      for (const json& line : *n) {
        if (!line.is_string()) hardware_fail(origin, "field 'run.notes' must hold strings");
        p.notes.push_back(line.get<std::string>());
      }
    }
  }
  return p;
}

MeasuredProfile load_profile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw HardwareError("cannot read profile '" + path + "'");
  std::ostringstream s;
  s << in.rdbuf();
  return profile_from_json(s.str(), path);
}

bool looks_measured(const std::string& text) {
  const json j = json::parse(text, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto it = j.find("kind");
  return it != j.end() && it->is_string() && it->get<std::string>() == "measured";
}

}  // namespace flashlab::sim
