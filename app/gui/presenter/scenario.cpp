#include "scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <stdexcept>

#include "model/model.hpp"
#include "model/ring_model.hpp"
#include "presenter_stages.hpp"
#include "scene_base.hpp"

namespace flashlab::gui {

using nlohmann::json;

const std::vector<SceneKeyRow>& scene_key_rows() {
  static const std::vector<SceneKeyRow> rows{
      {{"title", "text", "the scene's title, large at the top (required)"}},
      {{"point", "text", "its talking point, under the title"}},
      {{"stage", "a stage name", "the view that fills the stage (below); default tiling"}},
      {{"state", "an object", "setting keys applied on entering the scene (the settings above that a scene can take)"}},
      {{"shows", "a list of text",
        "what the point promises is on screen: each text must appear on one line of the stage (spaces aside); "
        "flashlab gui --stats counts the ones missing"}},
  };
  return rows;
}

Scene parse_scene(const json& v) {
  if (!v.is_object()) throw std::runtime_error("a scene is {\"title\": T, \"point\": P, \"stage\": S, \"state\": {...}}");
  Scene sc;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    if (!find_key(scene_key_rows(), k))
      throw std::runtime_error("unknown key '" + k + "' (a scene takes " + key_list(scene_key_rows()) + ")");
    if (k == "title" || k == "point") {
      if (!it->is_string()) throw std::runtime_error(k + " must be text");
      (k == "title" ? sc.title : sc.point) = it->get<std::string>();
    } else if (k == "stage") {
      sc.stage = it->is_string() ? it->get<std::string>() : "";
      if (!find_stage(sc.stage)) throw std::runtime_error(unknown_stage_message(sc.stage));
    } else if (k == "state") {
      if (!it->is_object()) throw std::runtime_error("state must be an object of setting keys");
      for (auto st = it->begin(); st != it->end(); ++st)
        if (const SettingRow* row = find_setting(st.key()); !row || !row->in_scene)
          throw std::runtime_error("state: '" + st.key() + "' is not a setting a scene can take");
      sc.state = *it;
    } else if (k == "shows") {
      if (!it->is_array()) throw std::runtime_error("shows must be a list of text");
      for (const json& t : *it) {
        if (!t.is_string() || t.get<std::string>().find_first_not_of(" ") == std::string::npos)
          throw std::runtime_error("shows must be a list of non-empty text");
        sc.shows.push_back(t.get<std::string>());
      }
    }
  }
  if (sc.title.empty()) throw std::runtime_error("a scene needs a title");
  return sc;
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw std::runtime_error(path + ": a scenario is a JSON object");
  Scenario sc;
  sc.path = path;
  sc.base_dir = std::filesystem::path(path).parent_path().string();
  sc.settings = json::object();
  std::optional<bool> presenter;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name" || k == "description") {
      (k == "name" ? sc.name : sc.description) = it->is_string() ? it->get<std::string>() : "";
    } else if (k == "window") {
      if (!it->is_object()) throw std::runtime_error(path + ": window must be {\"width\": W, \"height\": H}");
      if (it->contains("width")) sc.width = (*it)["width"].get<int>();
      if (it->contains("height")) sc.height = (*it)["height"].get<int>();
    } else if (k == "scenes") {
      if (!it->is_array() || it->empty()) throw std::runtime_error(path + ": scenes must be a non-empty list");
      for (size_t n = 0; n < it->size(); ++n) {
        try {
          sc.scenes.push_back(parse_scene((*it)[n]));
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ", scene " + std::to_string(n + 1) + ": " + e.what());
        }
      }
    } else if (k == "presenter") {
      if (!it->is_boolean()) throw std::runtime_error(path + ": presenter must be true or false");
      presenter = it->get<bool>();
    } else if (k == "script") {
      if (!it->is_array()) throw std::runtime_error(path + ": script must be a list of steps");
      for (const json& step : *it) {
        if (!step.is_object() || !step.contains("frame") || !step["frame"].is_number_integer())
          throw std::runtime_error(path + ": every script step needs an integer \"frame\"");
        for (auto st = step.begin(); st != step.end(); ++st)
          if (!find_setting(st.key()) && !find_step_key(st.key()))
            throw std::runtime_error(path + ": unknown key '" + st.key() + "' in a script step");
        try {
          if (step.contains("bench")) parse_bench_action(step["bench"]);
          if (step.contains("wait_bench")) parse_wait_bench(step["wait_bench"]);
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ", step at frame " + std::to_string(step["frame"].get<int>()) + ": " + e.what());
        }
        sc.script.push_back({step["frame"].get<int>(), step});
      }
    } else if (find_setting(k)) {
      if (k == "bench") {
        try {
          parse_bench_action(*it);
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ": " + e.what());
        }
      }
      sc.settings[k] = *it;
    } else {
      throw std::runtime_error(path + ": unknown key '" + k + "'");
    }
  }
  std::stable_sort(sc.script.begin(), sc.script.end(), [](const ScriptStep& a, const ScriptStep& b) { return a.frame < b.frame; });
  if (presenter && *presenter && sc.scenes.empty()) throw std::runtime_error(path + ": presenter needs scenes");
  sc.presenter = presenter.value_or(!sc.scenes.empty());
  if (sc.width && (*sc.width < 320 || *sc.width > 8192)) throw std::runtime_error(path + ": window.width out of range (320-8192)");
  if (sc.height && (*sc.height < 240 || *sc.height > 8192)) throw std::runtime_error(path + ": window.height out of range (240-8192)");
  return sc;
}

namespace {

// The scenario key a model error is about: the window's field it blames.
std::string key_of_field(const std::string& field) {
  static const std::map<std::string, std::string> keys{
      {"seq", "problem.seq"},         {"head_dim", "problem.head_dim"}, {"batch", "problem.batch"},
      {"heads", "problem.heads"},     {"kv_heads", "problem.kv_heads"}, {"br", "tiles"},
      {"bc", "tiles"},                {"sram", "sram"}};
  const auto it = keys.find(field);
  return it == keys.end() ? field : it->second;
}

// "KEY: reason" for the first thing the scene's state would show wrong: a
// problem, hardware, tiles or SRAM the model refuses, a cursor outside the
// schedule, ring inputs the ring's model refuses (where the scene shows the
// ring or its lecture sets it); "" when the scene is whole.
std::string scene_state_error(AppState& s, const Scene& scene, bool lecture_sets_ring) {
  recompute(s);
  if (!s.model.valid) {
    const std::string why = s.model.errors.empty() ? std::string("invalid inputs") : s.model.errors.front();
    if (why.rfind("hardware", 0) == 0) return why;
    if (s.model.bad_fields.empty()) return why;
    // The key the scene wrote, when it wrote one the model blames (an SRAM too small for the tiles: "sram").
    for (const std::string& f : s.model.bad_fields) {
      const std::string key = key_of_field(f);
      const bool problem_key = key.rfind("problem.", 0) == 0;
      if (problem_key ? scene.state.contains("problem") && scene.state["problem"].contains(key.substr(8))
                      : scene.state.contains(key))
        return key + ": " + why;
    }
    return key_of_field(s.model.bad_fields.front()) + ": " + why;
  }
  if (std::string e = apply_cursor_request(s); !e.empty()) return e;
  const PresenterStage* stage = find_stage(scene.stage);
  const bool ring = (stage && stage->workspace == Workspace::ring) || scene.state.contains("ring") ||
                    s.view.workspace == Workspace::ring || lecture_sets_ring;
  if (!ring) return "";
  recompute_ring(s);
  if (!s.ring.model.valid) {
    const std::string why = s.ring.model.errors.empty() ? std::string("invalid inputs") : s.ring.model.errors.front();
    return s.ring.model.bad_fields.empty() ? "ring: " + why : "ring." + s.ring.model.bad_fields.front() + ": " + why;
  }
  return "";
}

}  // namespace

std::string check_scene_states(const Scenario& sc) {
  auto scratch = std::make_unique<AppState>();
  apply_settings(*scratch, sc.settings, sc.base_dir);
  const SceneBase base = capture_scene_base(*scratch);
  for (size_t k = 0; k < sc.scenes.size(); ++k) {
    const std::string scene = "scene " + std::to_string(k + 1) + " (" + sc.scenes[k].title + "): ";
    try {
      restore_scene_base(*scratch, base, sc.scenes[k].state);
      apply_settings(*scratch, sc.scenes[k].state, sc.base_dir);
    } catch (const std::exception& e) {
      return scene + e.what();
    }
    if (const std::string bad = scene_state_error(*scratch, sc.scenes[k], sc.settings.contains("ring")); !bad.empty())
      return scene + bad;
  }
  return "";
}

}  // namespace flashlab::gui
