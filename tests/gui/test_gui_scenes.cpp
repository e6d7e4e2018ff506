// A scene is whole: what it shows follows from the scenario and the scene
// alone, never from the scene shown before it. Every shipped lecture is played
// forward, back and forward again, and each scene's state must be the same at
// every visit; a setting left by one scene must not reach the next.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "model/model.hpp"
#include "model/ring_model.hpp"
#include "presenter/presenter.hpp"
#include "presenter/scenario.hpp"
#include "presenter/scene_base.hpp"
#include "shipped_scenarios.hpp"

namespace fs = std::filesystem;
using namespace flashlab;
using namespace flashlab::gui;
using nlohmann::json;

namespace {

json inputs_digest(const Inputs& in) {
  return {{"algo_a", sim::to_string(in.algo_a)}, {"algo_b", sim::to_string(in.algo_b)}, {"compare", in.compare},
          {"seq", in.seq}, {"batch", in.batch}, {"heads", in.heads}, {"kv_heads", in.kv_heads}, {"head_dim", in.head_dim},
          {"causal", in.causal}, {"dtype", sim::to_string(in.dtype)}, {"sram_override", in.sram_override}, {"sram", in.sram},
          {"manual_tiles", in.manual_tiles}, {"br", in.br}, {"bc", in.bc}, {"hopper", in.hopper}, {"hw_preset", in.hw_preset},
          {"use_hw_file", in.use_hw_file}, {"hw_file", in.hw_file}, {"lockstep", in.lockstep == Lockstep::block}};
}

json ring_digest(const Inputs::Ring& r) {
  return {{"model", r.model}, {"heads", r.heads}, {"kv_heads", r.kv_heads}, {"head_dim", r.head_dim}, {"batch", r.batch},
          {"seq", r.seq}, {"gpus", r.gpus}, {"gpus_per_node", r.gpus_per_node}, {"layout", static_cast<int>(r.layout)},
          {"causal", r.causal}, {"passes", std::string(sim::to_string(r.passes))}, {"dtype", sim::to_string(r.dtype)},
          {"intra", r.intra}, {"inter", r.inter}, {"efficiency", r.efficiency}, {"compare_layouts", r.compare_layouts},
          {"calibrate", r.calibrate}, {"run_choice", r.run_choice}, {"steps", r.steps}};
}

// What a scene's state can reach, as the window holds it after entering the scene.
json state_digest(const AppState& s) {
  const CursorRequest& c = s.cursor_request;
  return {{"inputs", inputs_digest(s.inputs)},
          {"ring", ring_digest(s.inputs.ring)},
          {"ring_step_request", s.ring.step_request},
          {"cursor", {static_cast<int>(c.kind), c.fraction, c.position, c.i, c.j}},
          {"playing", s.playback.playing},
          {"events_per_s", s.playback.events_per_s},
          {"tab", s.view.tab},
          {"concepts", s.view.show_concepts},
          {"plots_large", s.view.plots_large},
          {"hide_controls", s.view.hide_controls},
          {"hall_ring_step", s.view.hall_ring_step},
          {"l2_first", s.view.l2_first},
          {"workspace", s.view.workspace == Workspace::ring},
          {"export_dir", s.view.export_dir},
          {"results", s.bench.have_results ? s.bench.source : std::string("(none)")},
          {"result_rows", s.bench.results.rows.size()},
          {"ring_results", s.ring.results.have ? s.ring.results.source : std::string("(none)")}};
}

// A lecture loaded as `flashlab gui --scenario` does, on the stage at its first scene.
std::unique_ptr<AppState> open_lecture(const Scenario& sc) {
  auto s = std::make_unique<AppState>();
  apply_settings(*s, sc.settings, sc.base_dir);
  s->presenter.scenes = sc.scenes;
  s->presenter.base_dir = sc.base_dir;
  s->presenter.base = capture_scene_base(*s);
  presenter_start(*s);
  return s;
}

// Scenes 1 … n, n − 1 … 1, 2 … n, with the clicker's keys: each visit's digest by scene.
std::map<int, std::vector<json>> play_forward_back_forward(AppState& s, int n) {
  std::map<int, std::vector<json>> seen;
  const auto look = [&] { seen[s.presenter.current].push_back(state_digest(s)); };
  look();
  for (int k = 1; k < n; ++k) presenter_next(s), look();
  for (int k = 1; k < n; ++k) presenter_previous(s), look();
  for (int k = 1; k < n; ++k) presenter_next(s), look();
  return seen;
}

std::string temp_scenario(const std::string& name, const json& j) {
  const fs::path p = fs::temp_directory_path() / ("flashlab-test-scenes-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << j.dump(2);
  return p.string();
}

}  // namespace

TEST_CASE("every shipped lecture played forward, back and forward again: each scene the same at every visit",
          "[gui][scenario][scenes]") {
  int lectures = 0;
  for (const fs::path& path : test::shipped_scenarios()) {
    const Scenario sc = load_scenario(path.string());
    if (sc.scenes.empty()) continue;
    INFO(path.filename().string());
    auto ps = open_lecture(sc);
    const int n = static_cast<int>(sc.scenes.size());
    const auto seen = play_forward_back_forward(*ps, n);
    CHECK(ps->presenter.error.empty());
    REQUIRE(static_cast<int>(seen.size()) == n);
    for (const auto& [k, visits] : seen) {
      INFO("scene " << k + 1 << " (" << sc.scenes[static_cast<size_t>(k)].title << ")");
      for (const json& v : visits) CHECK(v.dump(1) == visits.front().dump(1));
    }
    ++lectures;
  }
  CHECK(lectures >= 7);
}

// Every key a scene's state can take, set by one scene, is gone at the next
// scene that does not set it: the next scene looks as it does when entered first.
TEST_CASE("a scene that sets nothing gets the scenario's settings, not the previous scene's", "[gui][scenario][scenes]") {
  const std::string data = FLASHLAB_TEST_DATA;
  const std::string results = (fs::path(data) / ".." / ".." / "docs" / "results" / "h100-labs.json").lexically_normal().string();
  const std::string ring_results = (fs::path(data) / "ring-results-example.json").string();
  // A value of every setting a scene can take, other than the scenario's.
  const std::map<std::string, json> samples{
      {"problem", {{"seq", 2048}, {"batch", 8}, {"causal", true}}},
      {"hardware", "H100-SXM5-80GB"},
      {"sram", "64KiB"},
      {"tiles", "paper"},
      {"algorithms", {"standard"}},
      {"lockstep", "block"},
      {"cursor", {{"fraction", 0.5}}},
      {"playing", true},
      {"events_per_s", 64},
      {"tab", "io-vs-n"},
      {"concepts", true},
      {"results", results},
      {"export_dir", "elsewhere"},
      {"plots_large", true},
      {"hide_controls", true},
      {"ring_step_on_stage", true},
      {"l2_first", true},
      {"workspace", "ring"},
      {"ring", {{"gpus", 4}, {"seq", "64K"}, {"layout", "contiguous"}, {"step", 2}}},
      {"ring_results", ring_results},
  };
  for (const SettingRow* row : settings_of("")) {
    if (!row->in_scene) continue;
    const std::string key(row->doc.key);
    INFO("setting " << key << ": every setting a scene can take needs a sample here");
    REQUIRE(samples.count(key) == 1);
    const json lecture = {{"problem", {{"seq", 1024}, {"head_dim", 64}}},
                          {"hardware", "A100-PCIe-80GB"},
                          {"tiles", {{"Br", 64}, {"Bc", 64}}},
                          {"algorithms", {"fa1", "fa2"}},
                          {"scenes",
                           {{{"title", "sets it"}, {"state", {{key, samples.at(key)}}}},
                            {{"title", "sets nothing"}, {"stage", "roofline"}}}}};
    const std::string path = temp_scenario("sample.json", lecture);
    const Scenario sc = load_scenario(path);
    fs::remove(path);
    // The second scene entered first, then after the first.
    auto direct = open_lecture(sc);
    enter_scene(*direct, 1);
    auto after = open_lecture(sc);
    CHECK(after->presenter.error.empty());
    enter_scene(*after, 1);
    CHECK(after->presenter.error.empty());
    CHECK(state_digest(*after).dump(1) == state_digest(*direct).dump(1));
  }
}

TEST_CASE("a results of null closes the file open, and the next scene opens the scenario's again", "[gui][scenario][scenes]") {
  const std::string results =
      (fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "h100-labs.json").lexically_normal().string();
  const json lecture = {{"results", results},
                        {"scenes",
                         {{{"title", "no measurements"}, {"stage", "roofline"}, {"state", {{"results", nullptr}}}},
                          {{"title", "the scenario's"}, {"stage", "roofline"}}}}};
  const std::string path = temp_scenario("null.json", lecture);
  const Scenario sc = load_scenario(path);
  fs::remove(path);
  CHECK(check_scene_states(sc).empty());
  auto s = open_lecture(sc);
  CHECK(s->presenter.error.empty());
  CHECK_FALSE(s->bench.have_results);
  presenter_next(*s);
  CHECK(s->bench.have_results);
  CHECK(s->bench.source == results);
  presenter_previous(*s);
  CHECK_FALSE(s->bench.have_results);
  // A script step (a setting) closes it too, and a ring file likewise.
  apply_settings(*s, json{{"ring_results", (fs::path(FLASHLAB_TEST_DATA) / "ring-results-example.json").string()}}, "");
  CHECK(s->ring.results.have);
  apply_settings(*s, json{{"ring_results", nullptr}}, "");
  CHECK_FALSE(s->ring.results.have);
}

// Every scenario value is checked when the lecture loads, as the hall would
// meet it: one line naming the scene and the key, never a scene that shows an
// error (or nothing) in front of the hall.
TEST_CASE("every scene's values are checked at load: one line naming the scene and the key", "[gui][scenario][scenes]") {
  struct Case {
    json state;
    std::string stage, says;
  };
  const std::vector<Case> cases{
      {{{"hardware", "H900-SXM-1TB"}}, "roofline", "hardware"},
      {{{"results", "no-such-results.json"}}, "bench-time", "results: "},
      {{{"ring", {{"gpus", 0}}}}, "ring", "ring.gpus: "},
      {{{"problem", {{"head_dim", 1000}}}}, "tiling", "problem.head_dim: "},
      {{{"tiles", {{"Br", 512}, {"Bc", 512}}}}, "tiling", "tiles: "},
      {{{"sram", "4KiB"}}, "tiling", "sram: "},
      {{{"cursor", {{"block", {40, 5}}}}}, "tiling", "cursor.block: [40, 5] is outside the 16 × 16 blocks"},
      {{{"cursor", {{"position", 1000000}}}}, "tiling", "cursor.position: "},
      {{{"problem", {{"seq", "99999999999999999999"}}}}, "tiling", "problem.seq: "},
  };
  for (const Case& c : cases) {
    INFO(c.state.dump());
    const json lecture = {{"problem", {{"seq", 1024}, {"head_dim", 64}}},
                          {"hardware", "A100-PCIe-80GB"},
                          {"tiles", {{"Br", 64}, {"Bc", 64}}},
                          {"algorithms", {"fa1", "fa2"}},
                          {"scenes",
                           {{{"title", "fine"}, {"stage", "tiling"}},
                            {{"title", "broken"}, {"stage", c.stage}, {"state", c.state}}}}};
    const std::string path = temp_scenario("broken.json", lecture);
    const Scenario sc = load_scenario(path);  // the keys are known: the file loads
    fs::remove(path);
    const std::string error = check_scene_states(sc);
    CHECK_THAT(error, Catch::StartsWith("scene 2 (broken): " + c.says));
    CHECK(error.find('\n') == std::string::npos);
  }
  // A number past a 64-bit count is said to be too large, not "not a whole number".
  const json huge = {{"scenes", {{{"title", "huge"}, {"state", {{"problem", {{"seq", "99999999999999999999"}}}}}}}}};
  const std::string path = temp_scenario("huge.json", huge);
  const std::string error = check_scene_states(load_scenario(path));
  fs::remove(path);
  CHECK_THAT(error, Catch::Contains("'99999999999999999999' is too large"));
  // At run time a cursor outside the schedule stays where it was, and the status line says why.
  auto s = std::make_unique<AppState>();
  apply_settings(*s, json{{"tiles", {{"Br", 64}, {"Bc", 64}}}, {"cursor", {{"block", {40, 5}}}}}, "");
  recompute(*s);
  CHECK_THAT(apply_cursor_request(*s), Catch::StartsWith("cursor.block: "));
  CHECK(s->view.status_is_error);
  CHECK(s->model.algos[0].cursor->position() == 0);
}
