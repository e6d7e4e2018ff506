// The FlashLab window: entry point for `flashlab gui` and for `flashlab` with a
// display. Everything else in app/gui is internal to this library.
#pragma once

#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

namespace flashlab::gui {

// Whether this flashlab has the window. Without it (FLASHLAB_GUI=OFF, or no
// GLFW/OpenGL/ImGui at configure time) the entry points below are those of
// app/cli/gui_absent.cpp: false here, no panels, no settings, run() refuses.
bool built();

struct Options {
  int frames = 0;                // 0: until the window is closed
  std::string screenshot;        // PNG of the whole window after the last frame
  std::string screenshot_panel;  // crop the screenshot to one panel (controls, tiling, counters, plots, concepts, ring, ring-step)
  double ui_scale = 0;           // 0: the scenario's, else 1.0
  std::string theme;             // "dark" or "light"; empty: the scenario's, else dark
  std::string scenario;          // JSON file (assets/scenarios/*.json)
  std::string ring_results;      // a ring results file (flashlab bench --gpus --json): opened in the Across GPUs view
  bool stats = false;            // print one JSON object of frame times on stdout
  std::optional<std::uint64_t> random_walk;  // test: random controls and input every frame, seeded
  int width = 1600, height = 1000;
  bool fullscreen = false;
};

struct RunResult {
  int exit_code = 0;
  std::string error;            // one line when exit_code != 0
  bool no_window = false;       // no window could be opened (no display / no OpenGL 3.3)
};

RunResult run(const Options& options);

// The scenario file's schema: every setting and script key with the form of
// its value and what it means, every key a script presses, every presenter
// stage (`flashlab gui --list-settings`).
void write_settings_list(std::ostream& out);

// The panels a screenshot can be cropped to: controls, tiling, counters, plots, concepts, ring, ring-step.
const std::vector<std::string>& screenshot_panels();

}  // namespace flashlab::gui
