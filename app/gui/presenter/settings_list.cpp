// The scenario file's schema as text (gui.hpp): what `flashlab gui --list-settings` prints and
// docs/user-guide.md quotes, a test holding the two equal.
#include "state/gui.hpp"

#include <algorithm>
#include <ostream>
#include <string>
#include <utility>
#include <vector>

#include "bench/bench_action.hpp"
#include "presenter_stages.hpp"
#include "scenario.hpp"
#include "scenario_settings.hpp"
#include "script_keys.hpp"
#include "script_steps.hpp"

namespace flashlab::gui {

namespace {

// One entry: its name (a key, "ring.seq", a stage), the form of its value
// (empty: none), what it means.
struct Line {
  std::string name, kind, meaning;
};

// A heading, then each entry as "  NAME  KIND" over its meaning (or "  NAME  MEANING"
// when it takes no value), names padded to one column.
void section(std::ostream& out, const std::string& heading, const std::vector<Line>& lines) {
  size_t w = 0;
  for (const Line& l : lines) w = std::max(w, l.name.size());
  out << heading << "\n";
  for (const Line& l : lines) {
    out << "  " << l.name << std::string(w - l.name.size() + 2, ' ');
    if (l.kind.empty()) out << l.meaning << "\n";
    else out << l.kind << "\n  " << std::string(w + 2, ' ') << l.meaning << "\n";
  }
}

template <class Row>
std::vector<Line> lines_of(const std::vector<Row>& rows, const std::string& prefix) {
  std::vector<Line> out;
  for (const Row& r : rows) out.push_back({prefix + std::string(r.doc.key), std::string(r.doc.kind), std::string(r.doc.meaning)});
  return out;
}

// Entries that take no value: a key pressed, a stage.
template <class Row>
std::vector<Line> names_of(const std::vector<Row>& rows) {
  std::vector<Line> out;
  for (const Row& r : rows) out.push_back({std::string(r.name), "", std::string(r.meaning)});
  return out;
}

}  // namespace

void write_settings_list(std::ostream& out) {
  std::vector<std::pair<std::string, std::vector<Line>>> sections;
  std::vector<Line> settings;
  for (const SettingRow* r : settings_of(""))
    settings.push_back({std::string(r->doc.key), std::string(r->doc.kind) + (r->in_scene ? "" : "  (not in a scene's state)"),
                        std::string(r->doc.meaning)});
  sections.emplace_back("Settings: a scenario's top level, a scene's \"state\", a script step", settings);
  for (std::string_view object : setting_objects()) {
    std::vector<Line> keys;
    for (const SettingRow* r : settings_of(object))
      keys.push_back({std::string(object) + "." + std::string(r->doc.key), std::string(r->doc.kind), std::string(r->doc.meaning)});
    sections.emplace_back("\"" + std::string(object) + "\"", keys);
  }
  sections.emplace_back("\"bench\"", lines_of(bench_key_rows(), "bench."));
  sections.emplace_back("A script step's own keys", lines_of(step_key_rows(), ""));
  sections.emplace_back("A step's \"key\"", names_of(script_keys()));
  sections.emplace_back("A scene's keys", lines_of(scene_key_rows(), ""));
  sections.emplace_back("A scene's \"stage\"", names_of(presenter_stages()));
  for (size_t k = 0; k < sections.size(); ++k) {
    if (k > 0) out << "\n";
    section(out, sections[k].first, sections[k].second);
  }
}

}  // namespace flashlab::gui
