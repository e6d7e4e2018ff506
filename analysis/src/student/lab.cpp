#include "flashlab/analysis/student/lab.hpp"

#include <algorithm>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/results/bench_filter.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/closest_name.hpp"
#include "flashlab/sim/core/json_fields.hpp"
#include "text/results_json.hpp"

namespace flashlab::analysis {

namespace {

using nlohmann::json;

constexpr const char* kLabFormat = "flashlab-lab/1";

using Fields = sim::JsonFields<std::runtime_error>;

[[noreturn]] void lab_fail(const std::string& origin, const std::string& where, const std::string& why) {
  Fields(origin).error(where, why);
}

void only_keys(const json& j, const std::set<std::string>& known, const std::string& origin, const std::string& where) {
  for (const auto& [key, value] : j.items()) {
    (void)value;
    if (!known.count(key)) {
      const std::vector<std::string> names(known.begin(), known.end());
      lab_fail(origin, where, "unknown key '" + key + "'" + sim::did_you_mean(key, names));
    }
  }
}

std::string text(const json& j, const char* key, const std::string& origin, const std::string& where, bool required) {
  if (!j.contains(key)) {
    if (required) lab_fail(origin, where, std::string("missing \"") + key + "\"");
    return {};
  }
  if (!j[key].is_string()) Fields(origin).wrong(Fields::join(where, key), "text");
  return j[key].get<std::string>();
}

std::vector<std::string> texts(const json& j, const char* key, const std::string& origin, const std::string& where) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  const Fields f(origin);
  if (!j[key].is_array()) f.wrong(Fields::join(where, key), "a list of text");
  for (const json& v : j[key]) {
    if (!v.is_string()) f.wrong(Fields::join(where, key), "a list of text");
    out.push_back(v.get<std::string>());
  }
  return out;
}

LabFigure figure_from(const json& j, const std::string& origin, const std::string& where) {
  if (!j.is_object()) lab_fail(origin, where, "expected an object");
  only_keys(j, {"item", "chart", "sweep", "kernels", "filter", "kernel", "baseline", "note"}, origin, where);
  LabFigure f;
  f.item = text(j, "item", origin, where, true);
  f.chart = text(j, "chart", origin, where, true);
  f.sweep = text(j, "sweep", origin, where, true);
  f.kernels = texts(j, "kernels", origin, where);
  f.filter = text(j, "filter", origin, where, false);
  f.kernel = text(j, "kernel", origin, where, false);
  f.baseline = text(j, "baseline", origin, where, false);
  f.note = text(j, "note", origin, where, false);
  for (const std::string& k : f.kernels)
    if (!find_implementation(k)) {
      std::vector<std::string> ids;
      for (const Implementation& i : implementations()) ids.emplace_back(i.id);
      lab_fail(origin, where + ".kernels", "unknown implementation '" + k + "'" + sim::did_you_mean(k, ids));
    }
  if (!is_bench_chart(f.chart)) {
    std::vector<std::string> bench;
    for (const ChartEntry& e : chart_table())
      if (e.needs_results) bench.emplace_back(e.id);
    lab_fail(origin, where + ".chart", "'" + f.chart + "' is not a chart of measured runs" + sim::did_you_mean(f.chart, bench));
  }
  try {
    parse_bench_filter(f.filter);
  } catch (const std::invalid_argument& e) {
    lab_fail(origin, where + ".filter", e.what());
  }
  return f;
}

}  // namespace

std::vector<std::string> lab_sweeps(const Lab& lab) {
  std::vector<std::string> out;
  for (const LabFigure& f : lab.figures)
    if (std::find(out.begin(), out.end(), f.sweep) == out.end()) out.push_back(f.sweep);
  return out;
}

std::vector<std::string> lab_names() { return sim::asset_names("labs"); }

Lab parse_lab(const std::string& body, const std::string& origin) {
  json j = results_json::parse(body, origin);
  if (!j.is_object()) lab_fail(origin, "top level", "expected an object");
  only_keys(j, {"format", "name", "title", "measured", "results", "figures", "differences"}, origin, "top level");
  if (j.value("format", std::string()) != kLabFormat) lab_fail(origin, "format", std::string("expected \"") + kLabFormat + "\"");
  Lab lab;
  lab.name = text(j, "name", origin, "top level", true);
  lab.title = text(j, "title", origin, "top level", true);
  lab.measured = text(j, "measured", origin, "top level", true);
  lab.results = texts(j, "results", origin, "top level");
  lab.differences = texts(j, "differences", origin, "top level");
  if (!j.contains("figures") || !j["figures"].is_array() || j["figures"].empty())
    lab_fail(origin, "figures", "missing, or not a non-empty list");
  for (std::size_t k = 0; k < j["figures"].size(); ++k)
    lab.figures.push_back(figure_from(j["figures"][k], origin, "figures[" + std::to_string(k) + "]"));
  return lab;
}

Lab load_lab(const std::string& name_or_path) {
  static constexpr sim::AssetKind kLabs{"labs", "lab", "lab", "labs", {}, true, sim::AssetKind::AbsentPath::read};
  const std::string path = sim::asset_file<std::runtime_error>(kLabs, name_or_path);
  return parse_lab(sim::read_asset<std::runtime_error>(kLabs, path), path);
}

}  // namespace flashlab::analysis
