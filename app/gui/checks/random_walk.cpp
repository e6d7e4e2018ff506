#include "random_walk.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <stdexcept>
#include <vector>

#include "draw/plot_tabs.hpp"
#include "presenter/scenario_settings.hpp"

namespace flashlab::gui {

namespace {

// Keys a user presses; F11 (full screen) is left out: it resizes the test window.
const int kKeys[] = {GLFW_KEY_SPACE, GLFW_KEY_LEFT,  GLFW_KEY_RIGHT, GLFW_KEY_HOME, GLFW_KEY_END,
                     GLFW_KEY_EQUAL, GLFW_KEY_MINUS, GLFW_KEY_KP_ADD, GLFW_KEY_TAB, GLFW_KEY_ENTER,
                     GLFW_KEY_BACKSPACE, GLFW_KEY_ESCAPE, GLFW_KEY_UP, GLFW_KEY_DOWN,
                     GLFW_KEY_PAGE_DOWN, GLFW_KEY_PAGE_UP, GLFW_KEY_F5, GLFW_KEY_B, GLFW_KEY_PERIOD,
                     GLFW_KEY_SLASH, GLFW_KEY_F1, GLFW_KEY_L, GLFW_KEY_P, GLFW_KEY_Z, GLFW_KEY_C};

}  // namespace

void RandomWalk::inject_input(AppState& s) {
  ImGuiIO& io = ImGui::GetIO();
  const float W = std::max(io.DisplaySize.x, 1.0f), H = std::max(io.DisplaySize.y, 1.0f);
  if (key_down_ >= 0) {
    io.KeysDown[key_down_] = false;
    key_down_ = -1;
  }
  if (hold_frames_ > 0) {
    // Dragging: a slider, the scrub bar, a plot.
    --hold_frames_;
    x_ = std::clamp(x_ + static_cast<float>(uniform() * 60 - 30), 0.0f, W - 1);
    y_ = std::clamp(y_ + static_cast<float>(uniform() * 10 - 5), 0.0f, H - 1);
    io.MouseDown[0] = hold_frames_ > 0;
  } else {
    if (uniform() < 0.5) {
      x_ = static_cast<float>(uniform() * W);
      y_ = static_cast<float>(uniform() * H);
    }
    io.MouseDown[0] = uniform() < 0.25;
    if (io.MouseDown[0] && uniform() < 0.2) hold_frames_ = 2 + pick(20);
  }
  io.MousePos = ImVec2(x_, y_);
  if (uniform() < 0.08) io.MouseWheel += static_cast<float>(uniform() * 6 - 3);
  if (uniform() < 0.12) {
    key_down_ = kKeys[pick(static_cast<int>(sizeof kKeys / sizeof kKeys[0]))];
    io.KeysDown[key_down_] = true;
    io.KeyShift = uniform() < 0.2;
    s.keys.push_back({key_down_, io.KeyShift ? GLFW_MOD_SHIFT : 0, false});  // as GLFW's key callback queues it
  } else {
    io.KeyShift = false;
  }
  io.KeyCtrl = false;
  if (io.WantTextInput && uniform() < 0.5) {
    static const char chars[] = "0123456789KMGkib.- x";
    io.AddInputCharacter(static_cast<unsigned>(chars[pick(static_cast<int>(sizeof chars) - 1)]));
  }
}

void RandomWalk::mutate_state(AppState& s) {
  // Stuck on invalid inputs, a user presses "Reset view" sooner or later.
  if (!s.model.valid && uniform() < 0.03) {
    s.inputs.reset_one_gpu();
    return;
  }
  if (uniform() > 0.2) return;
  // Every setting the walk can draw a value of, one-GPU and ring, through the
  // reader a scenario file goes through; beside them, a user looking around
  // the tabs (one move in ten, so that a walk sees most of them) and, rarely,
  // another UI scale.
  static const std::vector<const SettingRow*> drawn = [] {
    std::vector<const SettingRow*> rows;
    for (const SettingRow& r : setting_rows())
      if (r.sample) rows.push_back(&r);
    return rows;
  }();
  const double move = uniform();
  if (move < 0.1) {
    s.view.tab = plot_tabs()[static_cast<size_t>(pick(static_cast<int>(plot_tabs().size())))].id;
    s.view.force_tab = true;
    if (uniform() < 0.3) s.view.show_concepts = !s.view.show_concepts;
    // A tab picked is a tab looked at: in the hall layout the plots take the
    // stage, and the Concepts window, which is the stage there, is closed first.
    if (s.view.hall_layout && uniform() < 0.8) s.view.show_concepts = false;
    s.view.plots_large = uniform() < 0.8;
    if (uniform() < 0.2) toggle_controls(s);
  } else if (move < 0.11) {
    s.view.pending_ui_scale = 1.0 + 0.25 * pick(9);  // font atlas rebuilds are slow: rarely
  } else {
    const SettingRow& row = *drawn[static_cast<size_t>(pick(static_cast<int>(drawn.size())))];
    try {
      row.apply(s, row.sample(rng_, uniform() < 0.6), "");
    } catch (const std::runtime_error&) {
      // Refused, as a scenario's value would be: the setting keeps its value.
    }
  }
}

}  // namespace flashlab::gui
