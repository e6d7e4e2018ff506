// flashlab gui: the FlashLab window, and `flashlab` with no arguments (the GUI
// when a display exists and the GUI is built, the headless comparison otherwise).
#include <algorithm>
#include <cstdlib>
#include <iostream>
#include <string>

#include "commands.hpp"
#include "common.hpp"

#include "state/gui.hpp"

namespace flashlab::cli {
namespace {

bool display_present() {
  const char* x = std::getenv("DISPLAY");
  const char* w = std::getenv("WAYLAND_DISPLAY");
  return (x && *x) || (w && *w);
}

// "controls, tiling, counters, plots, concepts": the GUI's list ("" without a GUI).
std::string panel_list() {
  std::string s;
  for (const std::string& p : gui::screenshot_panels()) s += (s.empty() ? "" : ", ") + p;
  return s;
}

class GuiCommand : public Command {
 public:
  void setup(CLI::App& root) override {
    app = root.add_subcommand("gui", "open the FlashLab window: step-through tiling, counters, plots, benchmarks");
    app->add_option("--frames", frames_, "draw N frames, then exit (0: until the window is closed)")->capture_default_str();
    app->add_option("--screenshot", screenshot_, "after the last frame, write the window as PNG (default 5 frames)");
    app->add_option("--screenshot-panel", panel_, "crop the screenshot to one panel" + (panel_list().empty() ? "" : ": " + panel_list()));
    app->add_option("--ui-scale", scale_, "UI scale 1.0 to 3.0 (projectors: 1.5 to 2)");
    app->add_option("--theme", theme_, "dark or light (dark text on near-white, for a projector in a lit hall; L toggles)");
    app->add_option("--scenario", scenario_, "a scenario JSON (assets/scenarios/*.json)");
    app->add_option("--ring-results", ring_results_, "open a ring results file (flashlab bench --gpus --json) in the "
                                                     "Across GPUs view: the measured steps under the simulation");
    app->add_flag("--stats", stats_, "print one JSON object: frames, median_frame_ms, p95_frame_ms, ...");
    app->add_option("--width", width_, "window width in pixels")->capture_default_str();
    app->add_option("--height", height_, "window height in pixels")->capture_default_str();
    app->add_flag("--fullscreen", fullscreen_, "start full screen (F11 toggles)");
    app->add_option("--random-walk", walk_seed_, "testing: random input every frame from this seed");
    app->add_flag("--list-settings", list_settings_,
                  "print every scenario setting and script key (the form of its value, what it means) and every "
                  "presenter stage, then exit");
  }

  int run() override {
    if (!gui::built())
      throw UsageError("this flashlab was built without the GUI (FLASHLAB_GUI=OFF, or GLFW/OpenGL/ImGui missing at "
                       "configure time); the CLI works: try 'flashlab compare'");
    if (list_settings_) {
      gui::write_settings_list(std::cout);
      return 0;
    }
    if (frames_ < 0) throw UsageError("--frames must be 0 or more");
    if (!screenshot_.empty()) {
      const auto dot = screenshot_.find_last_of('.');
      std::string ext = dot == std::string::npos ? "" : screenshot_.substr(dot);
      for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (ext != ".png") throw UsageError("--screenshot: '" + screenshot_ + "' must end in .png");
      if (frames_ == 0) frames_ = 5;
    }
    const std::vector<std::string>& panels = gui::screenshot_panels();
    if (!panel_.empty() && std::find(panels.begin(), panels.end(), panel_) == panels.end())
      throw UsageError("--screenshot-panel: '" + panel_ + "' is not one of " + panel_list());
    if (app->count("--ui-scale") > 0 && !(scale_ >= 1.0 && scale_ <= 3.0))
      throw UsageError("--ui-scale must be between 1.0 and 3.0");
    if (width_ < 320 || width_ > 8192 || height_ < 240 || height_ > 8192)
      throw UsageError("--width/--height out of range (320×240 to 8192×8192)");
    if (!display_present())
      throw UsageError("no display: DISPLAY and WAYLAND_DISPLAY are unset (on a server, run under xvfb-run)");
    gui::Options o;
    o.frames = frames_;
    o.screenshot = screenshot_;
    o.screenshot_panel = panel_;
    o.ui_scale = scale_;
    o.theme = theme_;
    o.scenario = scenario_;
    o.ring_results = ring_results_;
    o.stats = stats_;
    o.width = width_;
    o.height = height_;
    o.fullscreen = fullscreen_;
    if (!walk_seed_.empty()) {
      const auto v = sim::parse_size(walk_seed_);
      if (!v) throw UsageError("--random-walk: '" + walk_seed_ + "' is not a whole number");
      o.random_walk = static_cast<std::uint64_t>(*v);
    }
    const gui::RunResult r = gui::run(o);
    if (r.exit_code != 0) throw UsageError(r.error);
    return 0;
  }

 private:
  int frames_ = 0, width_ = 1600, height_ = 1000;
  std::string screenshot_, panel_, scenario_, walk_seed_, ring_results_, theme_;
  double scale_ = 0;
  bool stats_ = false, fullscreen_ = false, list_settings_ = false;
};

}  // namespace

std::unique_ptr<Command> make_gui_command() { return std::make_unique<GuiCommand>(); }

int run_main_job() {
  if (gui::built() && display_present()) {
    const gui::RunResult r = gui::run(gui::Options{});
    if (r.exit_code == 0) return 0;
    if (!r.no_window) throw UsageError(r.error);
    std::cerr << "flashlab: note: " << r.error << "; printing the comparison instead\n";
  }
  return run_default_comparison();
}

}  // namespace flashlab::cli
