// The scenario file's key tables and the presenter's stages: unique names,
// every shipped scenario loading through them, the errors for what they do
// not know, and the schema they print (`flashlab gui --list-settings`) equal
// to its copy in docs/user-guide.md.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "state/gui.hpp"
#include "model/model.hpp"
#include "presenter/presenter_stages.hpp"
#include "presenter/scenario_settings.hpp"
#include "presenter/scenario.hpp"
#include "presenter/script_keys.hpp"
#include "settings_doc.hpp"
#include "shipped_scenarios.hpp"

namespace fs = std::filesystem;
using namespace flashlab;
using namespace flashlab::gui;
using nlohmann::json;

namespace {

template <class Row>
std::vector<std::string> keys_of(const std::vector<Row>& rows) {
  std::vector<std::string> out;
  for (const Row& r : rows) out.emplace_back(r.doc.key);
  return out;
}

// The keys of one object of the settings table ("": the top level), each as a file writes it ("ring.seq").
std::vector<std::string> setting_keys(std::string_view object) {
  std::vector<std::string> out;
  for (const SettingRow* r : settings_of(object)) out.push_back((object.empty() ? "" : std::string(object) + ".") + std::string(r->doc.key));
  return out;
}

// Every key of the settings table, the objects' included.
std::vector<std::string> all_setting_keys() {
  std::vector<std::string> out = setting_keys("");
  for (std::string_view object : setting_objects())
    for (const std::string& k : setting_keys(object)) out.push_back(k);
  return out;
}

std::vector<std::string> names_of_keys() {
  std::vector<std::string> out;
  for (const ScriptKey& k : script_keys()) out.emplace_back(k.name);
  return out;
}

std::vector<std::string> names_of_stages() {
  std::vector<std::string> out;
  for (const PresenterStage& st : presenter_stages()) out.emplace_back(st.name);
  return out;
}

bool unique(const std::vector<std::string>& v) { return std::set<std::string>(v.begin(), v.end()).size() == v.size(); }

std::string schema() {
  std::ostringstream out;
  write_settings_list(out);
  return out.str();
}

std::string temp_scenario(const std::string& name, const std::string& text) {
  const fs::path p = fs::temp_directory_path() / ("flashlab-test-tables-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  return p.string();
}

std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  return "(no error)";
}

fs::path user_guide() { return fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "user-guide.md"; }

}  // namespace

TEST_CASE("scenario tables: every key and stage name is unique, and no key is both a setting and a step's own",
          "[gui][scenario][tables]") {
  const std::vector<std::string> settings = all_setting_keys(), steps = keys_of(step_key_rows());
  CHECK(settings.size() == setting_rows().size());  // every row in the top level or an object listed
  CHECK(unique(settings));
  CHECK(unique(steps));
  CHECK(setting_objects() == std::vector<std::string_view>{"problem", "ring"});
  for (std::string_view object : setting_objects()) {
    INFO(std::string(object));
    const SettingRow* row = find_setting(object);
    REQUIRE(row);  // an object is itself a top-level setting
    CHECK(row->doc.kind.find(std::string(settings_of(object).front()->doc.key)) != std::string::npos);
  }
  CHECK(unique(keys_of(bench_key_rows())));
  CHECK(unique(names_of_keys()));
  CHECK(unique(names_of_stages()));
  for (const std::string& k : steps) {
    INFO(k);
    CHECK(find_setting(k) == nullptr);
  }
  for (const SettingRow& r : setting_rows()) {
    INFO(std::string(r.object) << " " << std::string(r.doc.key));
    CHECK(r.apply != nullptr);
    CHECK(!r.doc.kind.empty());
    CHECK(!r.doc.meaning.empty());
  }
  for (const ScriptKey& k : script_keys()) CHECK(k.press != nullptr);
}

TEST_CASE("presenter stages: each name finds its row, a chart id the chart stage, anything else the old error",
          "[gui][scenario][tables]") {
  for (const PresenterStage& st : presenter_stages()) {
    INFO(std::string(st.name));
    CHECK(st.draw != nullptr);
    CHECK(st.step != nullptr);
    CHECK(!st.key_hints.empty());
    if (st.name != kChartStageName) CHECK(find_stage(st.name) == &st);
  }
  const PresenterStage* chart = find_stage(analysis::chart_table().front().id);
  REQUIRE(chart);
  CHECK(chart->name == kChartStageName);
  CHECK(chart->opens_plot_tab);
  for (const analysis::ChartEntry& e : analysis::chart_table()) CHECK(find_stage(e.id) == chart);
  CHECK(find_stage("rings") == nullptr);
  CHECK(find_stage(kChartStageName) == nullptr);  // a placeholder in lists, not a name
  CHECK(find_stage("tiling")->workspace == Workspace::one_gpu);
  CHECK(find_stage("ring-timeline")->workspace == Workspace::ring);
  CHECK(unknown_stage_message("rings") == "stage must be tiling, counters or a chart (" + analysis::chart_id_list() +
                                             "), or the ring's ring, ring-timeline, ring-step, not 'rings'");
  CHECK_THROWS_WITH(parse_scene(json::parse(R"({"title": "t", "stage": "rings"})")), unknown_stage_message("rings"));
}

TEST_CASE("scenario tables: every shipped scenario loads, and every scene's state applies without an error",
          "[gui][scenario][tables]") {
  int files = 0, scenes = 0;
  for (const fs::path& path : test::shipped_scenarios()) {
    INFO(path.string());
    const Scenario sc = load_scenario(path.string());
    auto ps = std::make_unique<AppState>();
    AppState& s = *ps;
    REQUIRE_NOTHROW(apply_settings(s, sc.settings, sc.base_dir));
    for (const Scene& scene : sc.scenes) {
      INFO(scene.title);
      CHECK(find_stage(scene.stage) != nullptr);
      CHECK_NOTHROW(apply_settings(s, scene.state, sc.base_dir));
      ++scenes;
    }
    ++files;
  }
  CHECK(files >= 10);
  CHECK(scenes >= 20);
}

TEST_CASE("scenario tables: unknown keys are rejected with the messages they always had", "[gui][scenario][tables]") {
  const std::string top = temp_scenario("top.json", R"({"tabb": 1})");
  CHECK(message_of([&] { load_scenario(top); }) == top + ": unknown key 'tabb'");
  const std::string step = temp_scenario("step.json", R"({"script": [{"frame": 1, "tabb": 1}]})");
  CHECK(message_of([&] { load_scenario(step); }) == step + ": unknown key 'tabb' in a script step");
  const std::string state = temp_scenario("state.json", R"({"scenes": [{"title": "t", "state": {"key": "right"}}]})");
  CHECK(message_of([&] { load_scenario(state); }) == state + ", scene 1: state: 'key' is not a setting a scene can take");
  fs::remove(top);
  fs::remove(step);
  fs::remove(state);

  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  CHECK(message_of([&] { apply_settings(s, json{{"tabb", 1}}, ""); }) == "unknown key 'tabb'");
  CHECK(message_of([&] { apply_settings(s, json{{"key", "right"}}, ""); }) == "unknown key 'key'");  // a step's, not a setting
  CHECK(message_of([&] { apply_script_step(s, json{{"tabb", 1}}, ""); }) == "unknown key 'tabb'");
  CHECK(message_of([&] { apply_settings(s, json{{"problem", {{"N", 1}}}}, ""); }) ==
        "unknown key problem.N (expected batch, heads, kv_heads, seq, head_dim, causal, dtype)");
  CHECK(message_of([&] { apply_settings(s, json{{"ring", {{"gpu", 4}}}}, ""); }) ==
        "unknown key ring.gpu (expected model, heads, kv_heads, head_dim, batch, seq, gpus, gpus_per_node, layout, "
        "causal, pass, dtype, intra, inter, efficiency, compare_layouts, calibrate, step, run, steps)");
  CHECK(message_of([&] { parse_bench_action(json{{"counter", true}}); }) ==
        "unknown key bench.counter (expected sweep, kernels, repeats, counters, pass)");
  CHECK(message_of([&] { apply_script_step(s, json{{"key", "enter"}}, ""); }) ==
        "unknown key 'enter' (expected space, left, right, home, end, plus, minus, pagedown, pageup, blackout, keys, "
        "light, pointer, zoom, clock, escape, f5)");
}

TEST_CASE("presenter keys: every key a script presses is one the keyboard reaches, and the speed, Home and End work on "
          "the stage",
          "[gui][scenario][tables]") {
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  s.presenter.on = true;
  for (const ScriptKey& k : script_keys()) {
    INFO(std::string(k.name));
    CHECK(k.glfw != 0);  // the keyboard presses the same row
    CHECK_FALSE(k.label.empty());
    CHECK_FALSE(k.meaning.empty());
  }
  auto works = [&](const char* name) {
    for (const ScriptKey& k : script_keys())
      if (k.name == name) return key_works(k, s);
    FAIL("no key " << name);
    return false;
  };
  // The user guide's lecture: at a scene, Space and + twice.
  for (const char* name : {"space", "plus", "minus", "home", "end", "left", "right", "pagedown", "blackout", "keys", "escape"})
    CHECK(works(name));
  CHECK_FALSE(works("f5"));
  const double speed = s.playback.events_per_s;
  press_key(s, "plus");
  press_key(s, "plus");
  CHECK(s.playback.events_per_s == Approx(4 * speed));
  press_key(s, "minus");
  CHECK(s.playback.events_per_s == Approx(2 * speed));
  press_key(s, "blackout");
  CHECK(s.presenter.blackout);
  press_key(s, "blackout");
  CHECK_FALSE(s.presenter.blackout);
  press_key(s, "keys");
  CHECK(s.presenter.show_keys);
  press_key(s, "escape");
  CHECK_FALSE(s.presenter.on);
  CHECK_FALSE(s.presenter.show_keys);
  CHECK(works("f5"));
  CHECK_FALSE(works("pagedown"));  // the lab's panels have no scenes to turn
}

TEST_CASE("the hall's settings: theme is dark or light for the whole lecture, a script places the mouse, the keys toggle",
          "[gui][scenario][tables]") {
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  CHECK(s.view.theme == Theme::dark);
  apply_settings(s, json{{"theme", "light"}}, "");
  CHECK(s.view.theme == Theme::light);
  apply_settings(s, json{{"theme", "dark"}}, "");
  CHECK(s.view.theme == Theme::dark);
  for (const json& bad : {json("Light"), json("white"), json(1), json(nullptr), json::array({"light"})}) {
    INFO(bad.dump());
    CHECK(message_of([&] { apply_settings(s, json{{"theme", bad}}, ""); }) == "theme must be \"dark\" or \"light\"");
  }
  CHECK(s.view.theme == Theme::dark);  // a refused value changes nothing
  apply_script_step(s, json{{"theme", "light"}}, "");  // a script step may switch it mid-lecture
  CHECK(s.view.theme == Theme::light);
  // The whole lecture's, as the UI scale: a scene's state does not take it.
  const std::string state = temp_scenario("theme-scene.json", R"({"scenes": [{"title": "t", "state": {"theme": "light"}}]})");
  CHECK(message_of([&] { load_scenario(state); }) == state + ", scene 1: state: 'theme' is not a setting a scene can take");
  fs::remove(state);

  apply_script_step(s, json{{"mouse", {640, 360.5}}}, "");
  CHECK(s.view.script_mouse);
  CHECK(s.view.script_mouse_x == 640);
  CHECK(s.view.script_mouse_y == 360.5f);
  apply_script_step(s, json{{"mouse", nullptr}}, "");
  CHECK_FALSE(s.view.script_mouse);
  for (const json& bad : {json::array({1}), json::array({1, 2, 3}), json("1, 2"), json(3)}) {
    INFO(bad.dump());
    CHECK(message_of([&] { apply_script_step(s, json{{"mouse", bad}}, ""); }) == "mouse must be [x, y] in pixels, or null");
  }
  CHECK(message_of([&] { apply_script_step(s, json{{"mouse", {-1, 2}}}, ""); }) ==
        "mouse must be [x, y] in pixels from the window's top left");
  CHECK(message_of([&] { apply_script_step(s, json{{"mouse", {"a", 2}}}, ""); }).find("mouse") != std::string::npos);

  // The keys: the theme everywhere, the pointer, magnifier and clock on the stage.
  const auto works = [&](const char* name) {
    for (const ScriptKey& k : script_keys())
      if (k.name == name) return key_works(k, s);
    FAIL("no key " << name);
    return false;
  };
  CHECK(works("light"));
  for (const char* name : {"pointer", "zoom", "clock"}) CHECK_FALSE(works(name));
  press_key(s, "light");
  CHECK(s.view.theme == Theme::dark);
  s.presenter.on = true;
  for (const char* name : {"light", "pointer", "zoom", "clock"}) CHECK(works(name));
  press_key(s, "pointer");
  press_key(s, "zoom");
  press_key(s, "clock");
  CHECK((s.presenter.pointer && s.presenter.zoom && s.presenter.clock));
  CHECK(key_hints(s) == "L light · P pointer · Z zoom · C clock");
  press_key(s, "zoom");
  CHECK_FALSE(s.presenter.zoom);
  s.presenter.on = false;
  CHECK(key_hints(s) == "L light");
}

TEST_CASE("scenario tables: the schema lists every key, every key press, every stage and a scene's keys", "[gui][scenario][tables]") {
  const std::string text = schema();
  const auto listed = [&](const std::string& name) { return text.find("\n  " + name + " ") != std::string::npos; };
  for (const std::string& k : all_setting_keys()) CHECK(listed(k));
  for (const std::string& k : keys_of(step_key_rows())) CHECK(listed(k));
  for (const std::string& k : keys_of(bench_key_rows())) CHECK(listed("bench." + k));
  for (const std::string& k : names_of_keys()) CHECK(listed(k));
  for (const std::string& k : names_of_stages()) CHECK(listed(k));
  for (const std::string& k : keys_of(scene_key_rows())) CHECK(listed(k));
}

TEST_CASE("scenario tables: docs/user-guide.md lists exactly what the tables hold", "[gui][scenario][tables][docs]") {
  const std::string doc = test::settings_block_of(user_guide().string());
  INFO("docs/user-guide.md, under " << test::kSettingsDocMarker << ": paste the output of flashlab gui --list-settings");
  REQUIRE(!doc.empty());
  // Each entry's name, from the doc's lines "  NAME  ..." (two spaces in, not a meaning's continuation).
  std::set<std::string> in_doc;
  std::istringstream lines(doc);
  for (std::string line; std::getline(lines, line);)
    if (line.size() > 2 && line.compare(0, 2, "  ") == 0 && line[2] != ' ') in_doc.insert(line.substr(2, line.find(' ', 2) - 2));
  std::set<std::string> in_tables;
  for (const std::string& k : all_setting_keys()) in_tables.insert(k);
  for (const std::string& k : keys_of(step_key_rows())) in_tables.insert(k);
  for (const std::string& k : keys_of(bench_key_rows())) in_tables.insert("bench." + k);
  for (const std::string& k : names_of_keys()) in_tables.insert(k);
  for (const std::string& k : names_of_stages()) in_tables.insert(k);
  for (const std::string& k : keys_of(scene_key_rows())) in_tables.insert(k);
  for (const std::string& k : in_tables) {
    INFO("in the tables, not in the doc: " << k);
    CHECK(in_doc.count(k));
  }
  for (const std::string& k : in_doc) {
    INFO("in the doc, not in the tables: " << k);
    CHECK(in_tables.count(k));
  }
  CHECK(doc == schema());  // the kinds and meanings too
}

TEST_CASE("a scene whose state cannot apply is reported when the file loads, naming the scene", "[gui][scenario][tables]") {
  const std::string bad = temp_scenario("bad-scene.json", R"({"problem": {"seq": 1024},
    "scenes": [{"title": "fine", "stage": "tiling", "state": {"cursor": {"fraction": 0.5}}},
               {"title": "broken", "stage": "tiling", "state": {"problem": {"seq": "many"}}}]})");
  const Scenario sc = load_scenario(bad);  // the keys are known: the file loads
  CHECK_THAT(check_scene_states(sc), Catch::StartsWith("scene 2 (broken): ") && Catch::Contains("seq"));
  fs::remove(bad);
  for (const fs::path& path : test::shipped_scenarios()) {
    INFO(path.string());
    CHECK(check_scene_states(load_scenario(path.string())).empty());
  }
}

TEST_CASE("scenario tables: a scene's shows is a list of non-empty text, and a scene's unknown key names the keys", "[gui][scenario][tables]") {
  const nlohmann::json good = {{"title", "T"}, {"stage", "tiling"}, {"shows", {"9.13 GB", "requests"}}};
  CHECK(parse_scene(good).shows == std::vector<std::string>{"9.13 GB", "requests"});
  for (const nlohmann::json& bad : {nlohmann::json{{"title", "T"}, {"shows", "9.13 GB"}},
                                    nlohmann::json{{"title", "T"}, {"shows", {1}}},
                                    nlohmann::json{{"title", "T"}, {"shows", {" "}}}}) {
    INFO(bad.dump());
    CHECK_THROWS_WITH(parse_scene(bad), Catch::Contains("shows must be a list"));
  }
  CHECK_THROWS_WITH(parse_scene(nlohmann::json{{"title", "T"}, {"show", {"x"}}}),
                    Catch::Contains("unknown key 'show' (a scene takes title, point, stage, state, shows)"));
}

TEST_CASE("scenario tables: the random walk's valid draws are values the settings' readers take, and it walks both views",
          "[gui][scenario][tables]") {
  std::mt19937_64 rng(20240611);
  std::set<std::string> drawn;
  for (const SettingRow& row : setting_rows()) {
    if (!row.sample) continue;
    const std::string key = (row.object.empty() ? "" : std::string(row.object) + ".") + std::string(row.doc.key);
    drawn.insert(key);
    for (int k = 0; k < 40; ++k) {
      auto ps = std::make_unique<AppState>();
      const json v = row.sample(rng, true);
      INFO(key << " = " << v.dump());
      CHECK(message_of([&] { row.apply(*ps, v, ""); }) == "(no error)");
    }
  }
  for (const char* key : {"problem.seq", "problem.dtype", "hardware", "tiles", "algorithms", "ring.gpus", "ring.model", "ring.intra"}) {
    INFO(key);
    CHECK(drawn.count(key));
  }
}
