// The window, run as a user would, under Xvfb: a smoke test that visits every
// panel, tab and algorithm and checks the screenshot; a random walk over the
// controls (≥ 2,000 frames of valid and invalid values) with no crash,
// assertion, exception or NaN on screen. Without xvfb-run and without a
// display these tests exit 77, which ctest reports as skipped, with the reason.
#include <catch2/catch.hpp>

#include <stb_image.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <tuple>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/charts/chart_table.hpp"
#include "settings_doc.hpp"

#ifndef FLASHLAB_EXE
#error "FLASHLAB_EXE must name the flashlab binary"
#endif
#ifndef FLASHLAB_ASSETS
#error "FLASHLAB_ASSETS must name the assets folder"
#endif
#ifndef FLASHLAB_TEST_DATA
#error "FLASHLAB_TEST_DATA must name tests/data"
#endif
#ifndef FLASHLAB_PRESS_KEYS_EXE
#error "FLASHLAB_PRESS_KEYS_EXE must name flashlab_press_keys (empty without Xlib)"
#endif
#ifndef FLASHLAB_EXAMPLE_RESULTS_EXE
#error "FLASHLAB_EXAMPLE_RESULTS_EXE must name make_example_results"
#endif

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

constexpr int kSkip = 77;

struct Run {
  int code = -1;
  std::string out, err;
};

Run run_shell(const std::string& cmd) {
  const fs::path dir = fs::temp_directory_path();
  const std::string tag = std::to_string(::getpid());
  const fs::path out = dir / ("flashlab-gui-test-" + tag + ".out"), err = dir / ("flashlab-gui-test-" + tag + ".err");
  const int status = std::system((cmd + " >" + out.string() + " 2>" + err.string()).c_str());
  Run r;
  r.code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::ifstream o(out), e(err);
  std::stringstream so, se;
  so << o.rdbuf();
  se << e.rdbuf();
  r.out = so.str();
  r.err = se.str();
  fs::remove(out);
  fs::remove(err);
  return r;
}

// A word for sh: in single quotes, its own single quotes escaped (a quoted command inside another).
std::string quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) out += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return out + "'";
}

// How to reach an X server: xvfb-run (preferred: a known screen size), else
// the display of the session. Neither: skip, saying why.
std::string x_prefix(int width, int height) {
  if (std::system("command -v xvfb-run >/dev/null 2>&1") == 0)
    return "xvfb-run -a -s '-screen 0 " + std::to_string(width) + "x" + std::to_string(height) + "x24' ";
  const char* d = std::getenv("DISPLAY");
  if (d && *d) return "";
  std::printf("SKIPPED: no X server for the GUI tests: xvfb-run is not installed and DISPLAY is unset "
              "(install the xvfb package, or run them in a desktop session)\n");
  std::fflush(stdout);
  std::exit(kSkip);
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("flashlab-gui-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

// A scenario over the example measured runs (make_example_results, written
// into `dir`) at B 2, H 4, N 1024, d 64, exporting into dir/export.
json example_scenario(const std::string& name, const fs::path& dir) {
  const Run gen = run_shell(quote(FLASHLAB_EXAMPLE_RESULTS_EXE) + " " + quote((dir / "bench.json").string()));
  REQUIRE(gen.code == 0);
  return {{"name", name},
          {"problem", {{"batch", 2}, {"heads", 4}, {"seq", 1024}, {"head_dim", 64}}},
          {"results", (dir / "bench.json").string()},
          {"export_dir", (dir / "export").string()}};
}

json stats_of(const Run& r) {
  // The stats object is the last line of stdout.
  const auto end = r.out.find_last_not_of('\n');
  const auto start = r.out.rfind('\n', end);
  const std::string line = r.out.substr(start == std::string::npos ? 0 : start + 1);
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  const json j = json::parse(line, nullptr, false);
  REQUIRE(j.is_object());
  return j;
}

// `flashlab gui --stats ARGS` on the X server of `x` (x_prefix): it exits 0;
// the stats it printed.
json gui_stats(const std::string& x, const std::string& args) {
  const Run r = run_shell(x + quote(FLASHLAB_EXE) + " gui --stats " + args);
  INFO("stderr: " << r.err);
  REQUIRE(r.code == 0);
  return stats_of(r);
}

// gui_stats of `scenario`, written to `file` first (--scenario FILE after ARGS).
json scenario_stats(const std::string& x, const fs::path& file, const json& scenario, const std::string& args) {
  std::ofstream(file) << scenario.dump(2);
  return gui_stats(x, args + " --scenario " + quote(file.string()));
}

struct Image {
  int w = 0, h = 0;
  std::vector<unsigned char> rgb;
  unsigned px(int x, int y) const {
    const size_t k = (static_cast<size_t>(y) * static_cast<size_t>(w) + static_cast<size_t>(x)) * 3;
    return static_cast<unsigned>(rgb[k]) << 16 | static_cast<unsigned>(rgb[k + 1]) << 8 | rgb[k + 2];
  }
};

// A screenshot as the GUI wrote it (PNG, or BMP: the scripts' own shots).
Image load_image(const fs::path& p) {
  Image im;
  int n = 0;
  unsigned char* data = stbi_load(p.c_str(), &im.w, &im.h, &n, 3);
  REQUIRE(data != nullptr);
  im.rgb.assign(data, data + static_cast<size_t>(im.w) * static_cast<size_t>(im.h) * 3);
  stbi_image_free(data);
  return im;
}

// Distinct colours inside a rectangle: a drawn panel has text, bars, tiles.
size_t colours_in(const Image& im, int x0, int y0, int x1, int y1) {
  std::set<unsigned> c;
  for (int y = std::max(0, y0); y < std::min(im.h, y1); y += 2)
    for (int x = std::max(0, x0); x < std::min(im.w, x1); x += 2) c.insert(im.px(x, y));
  return c.size();
}

}  // namespace

TEST_CASE("without a display, flashlab gui says so in one line and exits 2", "[gui]") {
  const Run r = run_shell("env -u DISPLAY -u WAYLAND_DISPLAY " + quote(FLASHLAB_EXE) + " gui --frames 1");
  CHECK(r.code == 2);
  CHECK(r.err.find("flashlab: error:") == 0);
  CHECK((r.err.find("no display") != std::string::npos || r.err.find("without the GUI") != std::string::npos));
  const Run bad = run_shell(quote(FLASHLAB_EXE) + " gui --ui-scale 7");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("--ui-scale") != std::string::npos);
  const Run shot = run_shell(quote(FLASHLAB_EXE) + " gui --screenshot out.jpg");
  CHECK(shot.code == 2);
  CHECK(shot.err.find(".png") != std::string::npos);
}

TEST_CASE("flashlab gui --list-settings prints the scenario schema of docs/user-guide.md and exits 0, with no display",
          "[gui]") {
  const Run r = run_shell("env -u DISPLAY -u WAYLAND_DISPLAY " + quote(FLASHLAB_EXE) + " gui --list-settings");
  INFO(r.err);
  CHECK(r.code == 0);
  const std::string doc = flashlab::test::settings_block_of(
      (fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "user-guide.md").string());
  REQUIRE(!doc.empty());
  CHECK(r.out == doc);
  for (const char* key : {"problem", "ring_results", "ring.steps", "bench.pass", "wait_bench", "pagedown", "ring-step", "CHART_ID"})
    CHECK_THAT(r.out, Catch::Contains(std::string("\n  ") + key + " "));
}

TEST_CASE("smoke: every panel, tab and algorithm is drawn, and the screenshot is not blank", "[gui][xvfb]") {
  const std::string x = x_prefix(1600, 1000);
  const fs::path dir = temp_dir("smoke");
  json sc = example_scenario("smoke", dir);
  sc["algorithms"] = json::array({"standard", "pytorch"});
  sc["playing"] = true;
  sc["events_per_s"] = 400;
  sc["tab"] = "roofline";
  // Every chart of the table, the benchmark table, and back to the roofline.
  std::vector<std::string> tabs;
  for (const flashlab::analysis::ChartEntry& e : flashlab::analysis::chart_table())
    if (e.id != "roofline") tabs.emplace_back(e.id);
  tabs.emplace_back("bench");
  tabs.emplace_back("roofline");
  REQUIRE(tabs.size() <= 18);  // two frames each within the 60 drawn, around the other steps
  json script = json::array();
  int frame = 4;
  for (const std::string& t : tabs) {
    script.push_back({{"frame", frame}, {"tab", t}});
    frame += 3;
  }
  script.push_back({{"frame", 12}, {"algorithms", {"fa1", "fa2"}}, {"problem", {{"causal", true}}}});
  script.push_back({{"frame", 20}, {"algorithms", {"pytorch", "fa2"}}, {"lockstep", "block"}});
  script.push_back({{"frame", 28}, {"concepts", true}, {"key", "right"}});
  script.push_back({{"frame", 36}, {"algorithms", {"fa2", "standard"}}, {"problem", {{"seq", "16K"}}}});
  script.push_back({{"frame", 44}, {"export", {{"chart", "io-vs-n"}, {"format", "all"}}}});
  script.push_back({{"frame", 46}, {"key", "end"}});
  script.push_back({{"frame", 50}, {"cursor", {{"fraction", 0.4}}}, {"playing", false}});
  sc["script"] = script;
  const fs::path shot = dir / "smoke.png";
  const json st = scenario_stats(x, dir / "smoke.json", sc, "--frames 60 --screenshot " + quote(shot.string()));
  CHECK(st["frames"] == 60);
  CHECK(st["exceptions"] == 0);
  CHECK(st["nonfinite_values"] == 0);
  CHECK(st["concepts_shown"] == true);
  CHECK(st["model_valid"] == true);
  std::set<std::string> visited = st["tabs_visited"].get<std::set<std::string>>();
  for (const std::string& t : tabs) CHECK(visited.count(t) == 1);
  const auto algos = st["algorithms_shown"].get<std::set<std::string>>();
  CHECK(algos == std::set<std::string>{"fa1", "fa2", "pytorch", "standard"});
  for (const char* ext : {"png", "svg", "pdf", "csv"}) CHECK(fs::exists(dir / "export" / (std::string("io-vs-n.") + ext)));

  const Image im = load_image(shot);
  CHECK(im.w == 1600);
  CHECK(im.h == 1000);
  // Each region of the layout is drawn: controls, tiling, counters, plots.
  CHECK(colours_in(im, 0, 0, 330, 900) > 20);
  CHECK(colours_in(im, 340, 0, 1190, 560) > 50);
  CHECK(colours_in(im, 1210, 0, 1600, 560) > 20);
  CHECK(colours_in(im, 340, 620, 1600, 950) > 20);
  fs::remove_all(dir);
}

TEST_CASE("Export… → every chart writes the lab report bundle, then the window once the menu has closed", "[gui][xvfb]") {
  const std::string x = x_prefix(1280, 800);
  const fs::path dir = temp_dir("report");
  json sc = example_scenario("report", dir);
  sc["script"] = json::array({json{{"frame", 3}, {"export_all", true}}});
  const json st = scenario_stats(x, dir / "report.json", sc, "--frames 10 --width 1280 --height 800");
  CHECK(st["exceptions"] == 0);
  // The status line names the report and the window, in that order.
  const std::string status = st["status"].get<std::string>();
  INFO("status: " << status);
  CHECK(st["status_is_error"] == false);
  CHECK(status.rfind("report: ", 0) == 0);
  CHECK(status.find(" · window: ") != std::string::npos);
  fs::path report;
  for (const auto& e : fs::directory_iterator(dir / "export"))
    if (e.path().filename().string().rfind("report-", 0) == 0) report = e.path();
  REQUIRE(!report.empty());
  for (const char* f : {"report.md", "report.pdf", "metadata.json", "window.png", "charts/model-roofline.png",
                        "charts/runs-bench-time.png", "charts/runs-bench-passes.csv", "tables/runs-runs.csv"})
    CHECK(fs::exists(report / f));
  fs::remove_all(dir);
}

// The shipped lecture in presenter mode on a projector: every scene drawn,
// none with text cut off at a panel's edge or printed over other text.
// The mean of the red, green and blue levels (0 to 255) of the whole image.
double mean_level(const Image& im) {
  double sum = 0;
  for (unsigned char v : im.rgb) sum += v;
  return im.rgb.empty() ? 0 : sum / static_cast<double>(im.rgb.size());
}

// A shipped scenario, its files named by absolute paths (the copy a test runs lives elsewhere).
json shipped_lecture(const std::string& scenario) {
  json sc = json::parse(std::ifstream(std::string(FLASHLAB_ASSETS) + "/scenarios/" + scenario + ".json"));
  const std::string dir = std::string(FLASHLAB_ASSETS) + "/scenarios/";
  const auto absolute = [&](json& settings) {
    for (const char* key : {"results", "ring_results"})
      if (settings.contains(key) && settings[key].is_string()) settings[key] = dir + settings[key].get<std::string>();
    if (settings.contains("hardware") && settings["hardware"].is_object())  // a profile's file, relative to the scenario
      settings["hardware"]["file"] = dir + settings["hardware"]["file"].get<std::string>();
  };
  absolute(sc);
  if (sc.contains("scenes"))
    for (auto& scene : sc["scenes"])
      if (scene.contains("state")) absolute(scene["state"]);
  return sc;
}

// The shipped scenarios that are lectures (a list of scenes), by name, sorted.
std::vector<std::string> shipped_lecture_names() {
  std::vector<std::string> names;
  for (const auto& entry : fs::directory_iterator(std::string(FLASHLAB_ASSETS) + "/scenarios")) {
    const std::string name = entry.path().stem().string();
    if (entry.path().extension() != ".json" || name.rfind("bench-results", 0) == 0) continue;
    if (shipped_lecture(name).contains("scenes")) names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// Every shipped scene says what its stage must show for its point to be true:
// the number of those claims over the lecture.
int claims_of(const json& lecture) {
  int claims = 0;
  for (const auto& scene : lecture["scenes"]) {
    INFO("scene " << scene["title"]);
    REQUIRE(scene.contains("shows"));
    CHECK(!scene["shows"].empty());
    claims += static_cast<int>(scene["shows"].size());
  }
  return claims;
}

// `theme`: "light" runs the lecture with --theme light and holds every
// screenshot's background light; empty: as the scenario says (dark).
void presenter_run(const std::string& scenario, int width, int height, double scale, const std::string& theme = "") {
  const std::string x = x_prefix(width, height);
  const fs::path dir = temp_dir("present-" + scenario + "-" + std::to_string(width) + theme);
  json sc = shipped_lecture(scenario);
  const int scenes = static_cast<int>(sc["scenes"].size());
  const int claims = claims_of(sc);
  sc["export_dir"] = (dir / "shots").string();
  json script = json::array();
  for (int k = 0; k < scenes; ++k) {
    // The first scene as the lecture opens on it (its own cursor), then the clicker's key.
    if (k == 0) script.push_back({{"frame", 3}, {"scene", 1}});
    else script.push_back({{"frame", 3 + 3 * k}, {"key", "pagedown"}});
    script.push_back({{"frame", 4 + 3 * k}, {"screenshot", "scene" + std::to_string(k + 1) + ".bmp"}});
  }
  sc["script"] = script;
  const int frames = 6 + 3 * scenes;
  const json st = scenario_stats(x, dir / "present.json", sc,
                                 "--frames " + std::to_string(frames) + " --width " + std::to_string(width) +
                                     " --height " + std::to_string(height) + " --ui-scale " + std::to_string(scale) +
                                     (theme.empty() ? "" : " --theme " + theme));
  CHECK(st["exceptions"] == 0);
  CHECK(st["nonfinite_values"] == 0);
  CHECK(st["theme"] == (theme.empty() ? "dark" : theme));
  CHECK(st["presenter"] == true);
  CHECK(st["scene"] == scenes);
  INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
  CHECK(st["clipped_glyphs"] == 0);
  CHECK(st["overlapping_text"] == 0);
  CHECK(st["text_runs"].get<int>() > 20);  // the check saw the text
  // WCAG AA on every frame as drawn: text 4.5 : 1, lines and markers 3 : 1.
  INFO("low contrast: " << st["low_contrast"]);
  CHECK(st["contrast_texts"].get<int>() > 20);
  CHECK(st["low_contrast_texts"] == 0);
  CHECK(st["low_contrast_marks"] == 0);
  CHECK(st["worst_text_contrast"].get<double>() >= 4.5);
  // Each scene's talking point against the text its stage showed.
  INFO("missing claims: " << st["missing_claims"]);
  CHECK(st["claims"] == claims);
  CHECK(st["claims_not_on_stage"] == 0);
  CHECK(st["claims_missing"] == 0);
  for (int k = 1; k <= scenes; ++k) {
    const Image im = load_image(dir / "shots" / ("scene" + std::to_string(k) + ".bmp"));
    CHECK(im.w == width);
    CHECK(colours_in(im, 0, 0, im.w, im.h / 8) > 10);   // the title bar
    CHECK(colours_in(im, 0, im.h / 6, im.w, im.h * 5 / 6) > 30);  // the stage
    if (theme == "light") {
      INFO("scene " << k);
      CHECK(mean_level(im) > 190);                            // mostly near-white
      CHECK(im.px(im.w / 2, im.h - 3) == 0xF9F9F6);           // the strip: the light theme's background
    } else {
      CHECK(mean_level(im) < 110);
    }
  }
  fs::remove_all(dir);
}

// A scene is whole: every shipped lecture played with the clicker forward,
// back and forward again, each scene's picture the same at every visit.
TEST_CASE("presenter mode: every shipped lecture forward, back and forward again, each scene's picture the same",
          "[gui][xvfb][present][scenes]") {
  const std::string x = x_prefix(1920, 1080);
  int lectures = 0;
  for (const std::string& name : shipped_lecture_names()) {
    json sc = shipped_lecture(name);
    INFO(name);
    const fs::path dir = temp_dir("whole-" + name);
    sc["export_dir"] = (dir / "shots").string();
    const int n = static_cast<int>(sc["scenes"].size());
    // Scenes 1 … n, back to 1, forward to n: a screenshot at each visit.
    std::vector<int> visits{1};
    for (int k = 2; k <= n; ++k) visits.push_back(k);
    for (int k = n - 1; k >= 1; --k) visits.push_back(k);
    for (int k = 2; k <= n; ++k) visits.push_back(k);
    // The lecture's charts built ahead (as while the lecturer speaks to the first scene), then the clicker.
    json script = json::array({json{{"frame", 2}, {"scene", 1}}, json{{"frame", 4}, {"screenshot", "v0.bmp"}},
                               json{{"frame", 4}, {"wait_prepared", true}}});
    for (size_t v = 1; v < visits.size(); ++v) {
      const int frame = 4 + 3 * static_cast<int>(v);
      script.push_back({{"frame", frame - 2}, {"key", visits[v] > visits[v - 1] ? "pagedown" : "pageup"}});
      script.push_back({{"frame", frame}, {"screenshot", "v" + std::to_string(v) + ".bmp"}});
    }
    sc["script"] = script;
    const json st = scenario_stats(x, dir / "whole.json", sc,
                                   "--frames " + std::to_string(8 + 3 * static_cast<int>(visits.size())) +
                                       " --width 1920 --height 1080 --ui-scale 2");
    CHECK(st["exceptions"] == 0);
    CHECK(st["scene"] == n);
    // A clicker never waits: from the key to the frame that shows the scene.
    INFO("scene changes (ms): " << st["scene_change_ms"]);
    CHECK(st["scene_changes"] == static_cast<int>(visits.size()));
    CHECK(st["max_scene_change_ms"].get<double>() < 300);
    std::map<int, Image> first;
    for (size_t v = 0; v < visits.size(); ++v) {
      INFO("scene " << visits[v] << ", visit " << v + 1 << " of the run");
      const Image im = load_image(dir / "shots" / ("v" + std::to_string(v) + ".bmp"));
      const auto seen = first.find(visits[v]);
      if (seen == first.end()) first.emplace(visits[v], im);
      else CHECK((im.w == seen->second.w && im.h == seen->second.h && im.rgb == seen->second.rgb));
    }
    fs::remove_all(dir);
    ++lectures;
  }
  CHECK(lectures >= 7);
}

TEST_CASE("presenter mode: the lecture in the light theme at 1920 × 1080, UI scale 2, nothing clipped or overlapping",
          "[gui][xvfb][present][theme]") {
  presenter_run("lecture-five-minutes", 1920, 1080, 2.0, "light");
}

TEST_CASE("presenter mode: the causal, backward, L2, Hopper, H100 and ring lectures in the light theme, readable",
          "[gui][xvfb][present][theme]") {
  for (const char* sc :
       {"lecture-causal-scenes", "lecture-backward", "lecture-l2", "lecture-hopper", "lecture-h100-in-five", "lecture-ring"}) {
    INFO(sc);
    presenter_run(sc, 1920, 1080, 2.0, "light");
  }
}

TEST_CASE("presenter mode: the pointer, the magnifier, the clock and the theme pressed by a script, on every kind of stage",
          "[gui][xvfb][present][theme]") {
  const fs::path dir = temp_dir("present-hall");
  json sc = shipped_lecture("lecture-five-minutes");
  sc["export_dir"] = (dir / "shots").string();
  const int scenes = static_cast<int>(sc["scenes"].size());
  json script = json::array({json{{"frame", 2}, {"key", "home"}},
                             json{{"frame", 2}, {"key", "pagedown"}},  // a tiling stage
                             json{{"frame", 3}, {"mouse", {500, 400}}},
                             json{{"frame", 3}, {"key", "pointer"}},
                             json{{"frame", 3}, {"key", "clock"}},
                             json{{"frame", 4}, {"screenshot", "plain.bmp"}},
                             json{{"frame", 5}, {"key", "zoom"}},
                             json{{"frame", 6}, {"screenshot", "zoomed.bmp"}},
                             json{{"frame", 7}, {"key", "light"}},
                             json{{"frame", 8}, {"mouse", {5000, 10}}},  // past the window's edge
                             json{{"frame", 9}, {"key", "blackout"}},
                             json{{"frame", 10}, {"key", "blackout"}},
                             json{{"frame", 11}, {"key", "keys"}},
                             json{{"frame", 12}, {"key", "keys"}},
                             json{{"frame", 13}, {"key", "escape"}},   // the lab, zoom still on: not drawn there
                             json{{"frame", 14}, {"key", "light"}},
                             json{{"frame", 15}, {"key", "f5"}},
                             json{{"frame", 16}, {"mouse", nullptr}}});
  // Every scene (the counters, the tiling, the charts) magnified, with the pointer.
  for (int k = 0; k < scenes; ++k) script.push_back({{"frame", 17 + k}, {"key", k == 0 ? "home" : "pagedown"}});
  script.push_back({{"frame", 17 + scenes}, {"key", "zoom"}});  // off: the last frames text-checked again
  sc["script"] = script;
  const int frames = 20 + scenes;
  const json st = scenario_stats(x_prefix(1280, 800), dir / "hall.json", sc,
                                 "--frames " + std::to_string(frames) + " --width 1280 --height 800");
  CHECK(st["exceptions"] == 0);
  CHECK(st["presenter"] == true);
  CHECK(st["scene"] == scenes);
  CHECK(st["theme"] == "dark");  // pressed twice
  CHECK(st["magnified_frames"].get<int>() >= scenes);
  // Clipped text is not held here: the lab's plot panel at 1280 × 800, shown by Esc, cuts a
  // few glyphs in either theme; the light lecture above holds the stage's text.
  INFO("first overlap: " << st["first_overlap"]);
  CHECK(st["overlapping_text"] == 0);
  const Image plain = load_image(dir / "shots" / "plain.bmp"), zoomed = load_image(dir / "shots" / "zoomed.bmp");
  REQUIRE((plain.w == zoomed.w && plain.h == zoomed.h));
  // The stage magnified: much of it changed.
  size_t stage_differs = 0;
  for (int y = 200; y < 600; y += 4)
    for (int x = 0; x < plain.w; x += 4) stage_differs += plain.px(x, y) != zoomed.px(x, y);
  CHECK(stage_differs > 1000);
  fs::remove_all(dir);
}

// The claim check can fail: a scene that promises a number its stage does not
// show is counted as missing, and one the run never reached as not on stage.
TEST_CASE("presenter mode: a talking point's promise that the stage does not keep is reported", "[gui][xvfb][present]") {
  const std::string x = x_prefix(1280, 720);
  const fs::path dir = temp_dir("claims");
  const json sc = {
      {"problem", {{"batch", 1}, {"heads", 1}, {"seq", 1024}, {"head_dim", 64}}},
      {"hardware", "A100-PCIe-80GB"},
      {"tiles", {{"Br", 64}, {"Bc", 64}}},
      {"scenes",
       {{{"title", "Kept"}, {"point", "16×16 blocks"}, {"stage", "tiling"}, {"shows", {"16×16 blocks of 64×64"}}},
        {{"title", "Broken"}, {"point", "The stage shows 99.99 TB"}, {"stage", "counters"}, {"shows", {"99.99 TB", "requests"}}},
        {{"title", "Never reached"}, {"stage", "roofline"}, {"shows", {"ridge"}}}}},
      {"script", {{{"frame", 3}, {"key", "pagedown"}}}}};
  const json st = scenario_stats(x, dir / "claims.json", sc, "--frames 8 --width 1280 --height 720 --ui-scale 1");
  CHECK(st["claims"] == 4);
  INFO("missing: " << st["missing_claims"]);
  CHECK(st["claims_missing"] == 1);
  CHECK(st["claims_not_on_stage"] == 1);
  REQUIRE(st["missing_claims"].size() == 1);
  CHECK(st["missing_claims"][0] == "scene 2 (Broken): 99.99 TB");
  fs::remove_all(dir);
}

namespace {

// `flashlab gui ARGS --stats` at w × h and a UI scale, the ring's view on
// screen: it ran, with inputs valid (or, `valid` false, refused), no exception,
// no "nan", nothing clipped or overlapping; its stats for the caller's own checks.
json ring_view_stats(int w, int h, double scale, const std::string& args, bool valid = true) {
  const json st = gui_stats(x_prefix(w, h), "--width " + std::to_string(w) + " --height " + std::to_string(h) +
                                                " --ui-scale " + std::to_string(scale) + " " + args);
  CHECK(st["exceptions"] == 0);
  CHECK(st["nonfinite_values"] == 0);
  CHECK(st["workspace"] == "ring");
  CHECK(st["ring_valid"] == valid);
  INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
  CHECK(st["clipped_glyphs"] == 0);
  CHECK(st["overlapping_text"] == 0);
  return st;
}

}  // namespace

// The multi-GPU view in the lab's panels: the example results beside the
// simulation, both layouts, 8 and 64 GPUs, a step moved by the keys.
TEST_CASE("the ring's view: simulated beside measured, up to 64 GPUs, drawn whole", "[gui][xvfb][ring]") {
  const std::string x = x_prefix(1600, 1000);
  const fs::path dir = temp_dir("ring");
  const std::string example = std::string(FLASHLAB_TEST_DATA) + "/ring-results-example.json";
  json sc = {{"name", "ring"},
             {"hardware", "H100-SXM5-80GB"},
             {"workspace", "ring"},
             {"ring_results", example},
             {"export_dir", (dir / "shots").string()},
             {"ring", {{"gpus", 8}, {"layout", "zigzag"}, {"pass", "fwd+bwd"}, {"compare_layouts", true}}}};
  sc["script"] = json::array({json{{"frame", 3}, {"key", "right"}},
                              json{{"frame", 4}, {"key", "right"}},
                              json{{"frame", 5}, {"screenshot", "measured.bmp"}},
                              json{{"frame", 7}, {"ring", {{"gpus", 64}, {"seq", "128K"}, {"layout", "contiguous"}}}},
                              json{{"frame", 9}, {"screenshot", "p64.bmp"}},
                              json{{"frame", 13}, {"ring", {{"gpus", 4}, {"compare_layouts", false}}}, {"key", "end"}}});
  std::ofstream(dir / "ring.json") << sc.dump(2);
  // On a projector the lecturer hides the controls (F9): their column scrolls at UI scale 2.
  sc["hide_controls"] = true;
  std::ofstream(dir / "ring-projector.json") << sc.dump(2);
  for (const auto& [w, h, scale] : {std::tuple<int, int, double>{1600, 1000, 1.0}, {1920, 1080, 2.0}}) {
    INFO(w << "×" << h << " at " << scale);
    const fs::path scenario = dir / (scale > 1 ? "ring-projector.json" : "ring.json");
    const json st = ring_view_stats(w, h, scale, "--frames 16 --scenario " + quote(scenario.string()));
    CHECK(st["ring_step"] == 3);  // End on 4 GPUs
    for (const char* shot : {"measured.bmp", "p64.bmp"}) {
      const Image im = load_image(dir / "shots" / shot);
      CHECK(im.w == w);
      CHECK(colours_in(im, im.w / 4, 0, im.w, im.h / 2) > 30);      // the timeline
      CHECK(colours_in(im, im.w / 4, im.h / 2, im.w, im.h) > 30);   // the step-through
    }
  }
  (void)x;
  fs::remove_all(dir);
}

// The measured files, opened as a user opens them: the run shown, its lane
// and labels (GPUs, links, steps) drawn whole at two window sizes (at UI
// scale 2 the controls' column scrolls: the projector test above hides it).
TEST_CASE("the ring's view of measured files: --ring-results opens a run of them, drawn whole", "[gui][xvfb][ring]") {
  const fs::path results = fs::path(FLASHLAB_TEST_DATA) / ".." / ".." / "docs" / "results" / "ring";
  for (const char* file : {"h200x4-ring.json", "h200x2-ring-homecoming.json", "h100-virtual-gpus.json"}) {
    if (!fs::exists(results / file)) {
      WARN("no " << (results / file).string() << ": skipped");
      continue;
    }
    for (const auto& [w, h, scale] : {std::tuple<int, int, double>{1600, 1000, 1.0}, {1920, 1080, 1.0}}) {
      INFO(file << " at " << w << "×" << h << ", UI scale " << scale);
      const json st = ring_view_stats(w, h, scale, "--frames 8 --ring-results " + quote((results / file).string()));
      CHECK(st["status"].get<std::string>().find("; showing run ") != std::string::npos);
    }
  }
}

// Inputs a user mistyped, many at once, on a projector-sized font: the ring's
// stage lists every reason (an unknown link's names every link preset) in a
// region that scrolls, so no line runs on under the status bar cut in half.
TEST_CASE("the ring's view with many invalid inputs at UI scale 2.25: every reason listed, none cut off", "[gui][xvfb][ring]") {
  const fs::path dir = temp_dir("ring-invalid");
  const json sc = {{"name", "ring-invalid"},
                   {"workspace", "ring"},
                   {"ring",
                    {{"model", "custom"}, {"heads", 7}, {"kv_heads", 3}, {"seq", 5}, {"gpus", 4096},
                     {"efficiency", 0}, {"intra", "0"}, {"inter", "0"}}}};
  std::ofstream(dir / "ring-invalid.json") << sc.dump(2);
  ring_view_stats(1280, 800, 2.25, "--frames 8 --scenario " + quote((dir / "ring-invalid.json").string()),
                  /*valid=*/false);
  fs::remove_all(dir);
}

// Every shipped lecture on a projector: each scene drawn whole and readable,
// keeping what its talking point promises (presenter_run). Returns how many.
int every_lecture_presented(int width, int height, double scale) {
  const std::vector<std::string> names = shipped_lecture_names();
  for (const std::string& name : names) {
    INFO(name);
    presenter_run(name, width, height, scale);
  }
  return static_cast<int>(names.size());
}

TEST_CASE("presenter mode: every shipped lecture at 1920 × 1080, UI scale 2, claims kept, readable, nothing clipped or overlapping",
          "[gui][xvfb][present][hall]") {
  CHECK(every_lecture_presented(1920, 1080, 2.0) >= 7);
}

TEST_CASE("presenter mode: every shipped lecture at 1280 × 720, UI scale 1.5, claims kept, readable, nothing clipped or overlapping",
          "[gui][xvfb][present][hall]") {
  // A smaller projector: every scene still keeps what its talking point promises.
  CHECK(every_lecture_presented(1280, 720, 1.5) >= 7);
}

// A clicker's taps as an X keyboard sends them (XTEST: each press and its
// release together), some while a frame is long (a scene whose chart is built
// on the spot): every tap moves a scene, none is lost.
TEST_CASE("presenter mode: no key press is lost, however quick the tap or long the frame", "[gui][xvfb][present][keys]") {
  const std::string presser = FLASHLAB_PRESS_KEYS_EXE;
  if (presser.empty()) {
    WARN("no Xlib in this build: flashlab_press_keys was not built");
    return;
  }
  const std::string x = x_prefix(1280, 800);
  const fs::path dir = temp_dir("lost-keys");
  std::ofstream(dir / "lecture.json") << shipped_lecture("lecture-five-minutes").dump(2);
  // Seven taps forward, three of them 30 ms apart, and three back (a tap
  // within the same millisecond as the last is one tap to X: GLFW drops it).
  const std::string taps = "Next:400 Next:30 Next:30 Next:400 Next:200 Next:30 Next:600 Prior:30 Prior:300 Prior:300";
  // The window is closed once the taps are in; a presser that fails ends the window too.
  const Run r = run_shell(x + "sh -c " +
                          quote(quote(FLASHLAB_EXE) + " gui --frames 5000 --stats --width 1280 --height 800 --scenario " +
                                quote((dir / "lecture.json").string()) + " & app=$!; " + quote(presser) + " FlashLab 1500 " +
                                taps + "; status=$?; [ $status -eq 0 ] || kill $app; wait $app; exit $status"));
  INFO("stdout: " << r.out << "\nstderr: " << r.err);
  if (r.code == kSkip || r.out.find("SKIPPED:") != std::string::npos) {
    WARN("skipped: " << r.out);
    return;
  }
  REQUIRE(r.code == 0);
  const json st = stats_of(r);
  CHECK(st["exceptions"] == 0);
  CHECK(st["scenes_entered"] == 1 + 10);
  CHECK(st["scene"] == 5);
  fs::remove_all(dir);
}

TEST_CASE("presenter mode: the clicker's keys move between scenes, → and ← step first", "[gui][xvfb][present]") {
  const std::string x = x_prefix(1280, 800);
  const fs::path dir = temp_dir("present-keys");
  json sc = {{"name", "keys"},
             {"problem", {{"batch", 1}, {"heads", 1}, {"seq", 256}, {"head_dim", 64}}},
             {"tiles", {{"Br", 64}, {"Bc", 64}}},
             {"scenes", json::array({json{{"title", "First"}, {"stage", "tiling"}, {"state", {{"algorithms", {"fa2"}}}}},
                                     json{{"title", "Second"}, {"stage", "roofline"}},
                                     json{{"title", "Third"}, {"stage", "counters"}, {"state", {{"algorithms", {"fa1", "fa2"}}}}}})},
             // On the first (tiling) scene → steps the schedule; at its end it moves on.
             {"script", json::array({json{{"frame", 2}, {"key", "right"}},
                                     json{{"frame", 3}, {"key", "end"}},
                                     json{{"frame", 4}, {"key", "right"}},   // at the end: the second scene
                                     json{{"frame", 5}, {"key", "right"}},   // a chart: the third
                                     json{{"frame", 6}, {"key", "pageup"}},  // back to the second
                                     json{{"frame", 7}, {"key", "escape"}},  // the lab's panels
                                     json{{"frame", 8}, {"key", "f5"}}})}};  // back on stage, where it was
  const json st = scenario_stats(x, dir / "keys.json", sc, "--frames 12");
  CHECK(st["presenter"] == true);
  CHECK(st["scene"] == 2);
  CHECK(st["scenes_entered"] == 4);  // first, second, third, second again
  // A scene whose view does not exist is an error naming the scene.
  json broken = sc;
  broken["scenes"][0]["stage"] = "no-such-view";
  std::ofstream(dir / "broken.json") << broken.dump(2);
  const Run b2 = run_shell(x + quote(FLASHLAB_EXE) + " gui --frames 1 --scenario " + quote((dir / "broken.json").string()));
  CHECK(b2.code == 2);
  CHECK(b2.err.find("scene 1: stage must be tiling, counters or a chart") != std::string::npos);
  fs::remove_all(dir);
}

// The tiling view's last events on the lecture's second scene, three steps in:
// where the heading that names the colours leaves no room for a line under it
// (UI scale 2), the short heading stands over the newest event; a heading is
// never drawn alone. At 1× the colours' heading keeps its place.
TEST_CASE("the tiling view's last events: the newest event under its heading, at UI scale 2 and at 1×",
          "[gui][xvfb][present][hall]") {
  const fs::path dir = temp_dir("last-events");
  json sc = shipped_lecture("lecture-five-minutes");
  json scene = sc["scenes"][1];
  REQUIRE(scene["stage"] == "tiling");
  struct Hall {
    int w, h;
    double scale;
    std::vector<std::string> shows;
  };
  for (const Hall& hall : {Hall{1920, 1080, 2.0, {"last events ▶ compute O_0"}},
                           Hall{1600, 1000, 1.0, {"last events (HBM ↔ SRAM transfers in colour)", "▶ store m init→HBM 4 KiB",
                                                  "▶ compute O_0"}}}) {
    INFO(hall.w << "×" << hall.h << " at " << hall.scale);
    scene["shows"] = hall.shows;
    sc["scenes"] = json::array({scene});
    sc["script"] = json::array({json{{"frame", 3}, {"key", "right"}}, json{{"frame", 4}, {"key", "right"}},
                                json{{"frame", 5}, {"key", "right"}}});
    const json st = scenario_stats(x_prefix(hall.w, hall.h), dir / "events.json", sc,
                                   "--frames 9 --width " + std::to_string(hall.w) + " --height " + std::to_string(hall.h) +
                                       " --ui-scale " + std::to_string(hall.scale));
    CHECK(st["position"] == 3);
    INFO("missing claims: " << st["missing_claims"] << "; first clipped: " << st["first_clipped"]);
    CHECK(st["claims"] == static_cast<int>(hall.shows.size()));
    CHECK(st["claims_missing"] == 0);
    CHECK(st["clipped_glyphs"] == 0);
    CHECK(st["overlapping_text"] == 0);
  }
  fs::remove_all(dir);
}

// The back row reads every word: the lab's layout on each kind of tab and the
// Concepts window, on the two projectors a hall has (1920 × 1080 at UI scale 2,
// 1280 × 720 at 1.5): no glyph cut off, no text over other text. Every shipped
// lecture's scenes on both: the presenter tests above.
TEST_CASE("the hall: the lab's layout and the Concepts window at 1920 × 1080 s2 and 1280 × 720 s1.5, no glyph clipped, "
          "no text overlapping",
          "[gui][xvfb][present][hall]") {
  struct Projector {
    int w, h;
    double scale;
  };
  const fs::path dir = temp_dir("hall-every");
  // One scenario's run on a projector: its counts (the worst frame's), checked zero.
  const auto counts = [&](const std::string& what, json sc, const Projector& p, int frames) {
    INFO(what << " at " << p.w << " × " << p.h << ", UI scale " << p.scale);
    const json st = scenario_stats(x_prefix(p.w, p.h), dir / "hall.json", sc,
                                   "--frames " + std::to_string(frames) + " --width " + std::to_string(p.w) +
                                       " --height " + std::to_string(p.h) + " --ui-scale " + std::to_string(p.scale));
    CHECK(st["exceptions"] == 0);
    CHECK(st["text_runs"].get<int>() > 20);  // the check saw the text
    INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
    CHECK(st["clipped_glyphs"] == 0);
    CHECK(st["overlapping_text"] == 0);
  };
  for (const Projector& p : {Projector{1920, 1080, 2.0}, Projector{1280, 720, 1.5}}) {
    for (const char* tab : {"", "roofline", "counters", "io-vs-n", "bench-time"}) {
      // A bench chart with the measured runs of the labs drawn (without results it is one line of text).
      json sc = shipped_lecture(std::string(tab) == "bench-time" ? "lab-report-h100" : "lecture-fa1-vs-fa2");
      if (*tab) sc["script"] = {{{"frame", 2}, {"plots_large", true}, {"tab", tab}}};
      counts(std::string("the lab's layout, tab ") + (*tab ? tab : "(the first)"), sc, p, 10);
    }
    json concepts = shipped_lecture("lecture-fa1-vs-fa2");
    concepts["script"] = {{{"frame", 2}, {"concepts", true}}};
    counts("the Concepts window", concepts, p, 10);
  }
  fs::remove_all(dir);
}

// A 1920-wide projector at UI scale 2: "Start here" opens in the hall layout
// (one view on the stage, the controls closed), the tiling view and then
// each kind of plot tab, nothing cut off or printed over other text.
TEST_CASE("the hall layout: Start here at 1920 × 1080, UI scale 2, one view at a time, drawn whole", "[gui][xvfb]") {
  const std::string x = x_prefix(1920, 1080);
  const fs::path dir = temp_dir("hall");
  // One scenario at UI scale 2: in the hall layout, no exception, drawn whole; its stats.
  const auto hall_run = [&](const json& sc) {
    const json st = scenario_stats(x, dir / "hall.json", sc, "--frames 10 --ui-scale 2 --width 1920 --height 1080");
    CHECK(st["exceptions"] == 0);
    CHECK(st["hall_layout"] == true);
    INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
    CHECK(st["clipped_glyphs"] == 0);
    CHECK(st["overlapping_text"] == 0);
    return st;
  };
  for (const char* tab : {"", "roofline", "counters", "io-vs-n", "bench-time"}) {
    INFO("tab " << tab);
    json sc = json::parse(std::ifstream(std::string(FLASHLAB_ASSETS) + "/scenarios/lecture-fa1-vs-fa2.json"));
    if (*tab) sc["script"] = {{{"frame", 2}, {"plots_large", true}, {"tab", tab}}};
    hall_run(sc);
  }
  // The ring's view in the hall layout: the timeline, then the step-through, each on the stage.
  for (const bool step : {false, true}) {
    INFO("ring step-through on the stage: " << step);
    json sc = json::parse(std::ifstream(std::string(FLASHLAB_ASSETS) + "/scenarios/ring-layouts.json"));
    sc["script"] = {{{"frame", 1}, {"ring_step_on_stage", step}}};
    CHECK(hall_run(sc)["workspace"] == "ring");
  }
  // The same window at UI scale 1 keeps the lab's four panels.
  CHECK(gui_stats(x, "--frames 6 --ui-scale 1 --width 1920 --height 1080")["hall_layout"] == false);
  fs::remove_all(dir);
}

// An extreme problem: N = 1M with 1 × 1 tiles, 16 trillion events a head; K and V
// read a million times more by one algorithm: every panel drawn whole at 1920 × 1080.
TEST_CASE("N = 1M with 1 × 1 tiles: the counters' ratios keep their column, nothing clipped", "[gui][xvfb]") {
  const fs::path dir = temp_dir("n1m");
  const json sc = {{"name", "n1m"},
                   {"problem", {{"batch", 1}, {"heads", 1}, {"seq", "1M"}, {"head_dim", 64}}},
                   {"hardware", "A100-PCIe-80GB"},
                   {"tiles", {{"Br", 1}, {"Bc", 1}}},
                   {"algorithms", {"fa1", "fa2"}}};
  const json st = scenario_stats(x_prefix(1920, 1080), dir / "n1m.json", sc, "--frames 6 --width 1920 --height 1080");
  CHECK(st["exceptions"] == 0);
  CHECK(st["model_valid"] == true);
  CHECK(st["nonfinite_values"] == 0);
  INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
  CHECK(st["clipped_glyphs"] == 0);
  CHECK(st["overlapping_text"] == 0);
  fs::remove_all(dir);
}

// The Concepts window has a place of its own: a column right of the lab's
// panels, or the stage in the hall layout; inside the window, over none of
// the lab's text, its own text scrolled rather than cut.
TEST_CASE("the Concepts window inside the window, beside the lab's panels or on the hall's stage, nothing clipped or overlapping",
          "[gui][xvfb]") {
  const fs::path dir = temp_dir("concepts");
  for (const auto& [w, h, scale, hall] : {std::tuple<int, int, double, bool>{1600, 1000, 1.0, false},
                                          {1920, 1080, 2.0, true}, {1280, 720, 1.5, true}}) {
    INFO(w << " × " << h << " at UI scale " << scale);
    json sc = json::parse(std::ifstream(std::string(FLASHLAB_ASSETS) + "/scenarios/lecture-fa1-vs-fa2.json"));
    sc["script"] = {{{"frame", 2}, {"concepts", true}}};
    const json st = scenario_stats(x_prefix(w, h), dir / "concepts.json", sc,
                                   "--frames 10 --width " + std::to_string(w) + " --height " + std::to_string(h) +
                                       " --ui-scale " + std::to_string(scale));
    CHECK(st["exceptions"] == 0);
    CHECK(st["hall_layout"] == hall);
    REQUIRE(st["concepts_shown"] == true);
    const auto box = st["concepts_rect"].get<std::vector<double>>();
    REQUIRE(box.size() == 4);
    CHECK(box[0] >= 0);
    CHECK(box[1] >= 0);
    CHECK(box[0] + box[2] <= w + 0.5);
    CHECK(box[1] + box[3] <= h + 0.5);
    CHECK(box[2] >= (hall ? 0.6 : 0.2) * w);  // readable: the stage, or a real column
    INFO("first clipped: " << st["first_clipped"] << "; first overlap: " << st["first_overlap"]);
    CHECK(st["clipped_glyphs"] == 0);
    CHECK(st["overlapping_text"] == 0);
  }
  fs::remove_all(dir);
}

TEST_CASE("at UI scale 2 on a small window the layout reflows and stays drawn", "[gui][xvfb]") {
  const std::string x = x_prefix(1280, 800);
  const fs::path dir = temp_dir("scale");
  const fs::path shot = dir / "scale2.png";
  const json st = gui_stats(x, "--frames 12 --ui-scale 2 --width 1280 --height 800 --screenshot " + quote(shot.string()));
  CHECK(st["exceptions"] == 0);
  CHECK(st["ui_scale"] == 2.0);
  const Image im = load_image(shot);
  CHECK(im.w == 1280);
  CHECK(colours_in(im, 0, 0, im.w, im.h) > 100);
  fs::remove_all(dir);
}

TEST_CASE("random walk: 2,000 frames of random input and values, no crash, no exception, no NaN, nothing unreadable",
          "[gui][xvfb][walk]") {
  const std::string x = x_prefix(1280, 800);
  const fs::path dir = temp_dir("walk");
  const Run r = run_shell(x + "timeout 600 " + quote(FLASHLAB_EXE) +
                          " gui --frames 2000 --stats --width 1280 --height 800 --random-walk 20240611");
  INFO("stderr: " << r.err);
  REQUIRE(r.code == 0);  // an assertion (IM_ASSERT is on in the GUI) or a crash ends the process early
  const json st = stats_of(r);
  CHECK(st["frames"] == 2000);
  CHECK(st["random_walk"] == true);
  INFO("first non-finite: " << st["first_nonfinite"] << ", first exception: " << st["first_exception"]);
  CHECK(st["exceptions"] == 0);
  CHECK(st["nonfinite_values"] == 0);
  // The walk went through both valid and invalid inputs, and redrew the model.
  CHECK(st["invalid_frames"].get<int>() > 20);
  CHECK(st["invalid_frames"].get<int>() < 1990);
  CHECK(st["recomputes"].get<int>() > 50);
  CHECK(st["tabs_visited"].size() >= 8);
  // Every frame is read back: in both themes, hovered, pressed and selected,
  // no text below 4.5 : 1 on what it is drawn on, no mark below 3 : 1.
  INFO("low contrast: " << st["low_contrast"].dump());
  CHECK(st["low_contrast_texts"] == 0);
  CHECK(st["low_contrast_marks"] == 0);
  fs::remove_all(dir);
  fs::remove_all(fs::temp_directory_path() / "flashlab-random-walk");
}
