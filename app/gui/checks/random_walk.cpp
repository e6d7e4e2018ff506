#include "random_walk.hpp"

#include <GLFW/glfw3.h>
#include <imgui.h>

#include <algorithm>
#include <cmath>

#include "flashlab/sim.hpp"
#include "draw/plot_tabs.hpp"

namespace flashlab::gui {

namespace {

// Keys a user presses; F11 (full screen) is left out: it resizes the test window.
const int kKeys[] = {GLFW_KEY_SPACE, GLFW_KEY_LEFT,  GLFW_KEY_RIGHT, GLFW_KEY_HOME, GLFW_KEY_END,
                     GLFW_KEY_EQUAL, GLFW_KEY_MINUS, GLFW_KEY_KP_ADD, GLFW_KEY_TAB, GLFW_KEY_ENTER,
                     GLFW_KEY_BACKSPACE, GLFW_KEY_ESCAPE, GLFW_KEY_UP, GLFW_KEY_DOWN,
                     GLFW_KEY_PAGE_DOWN, GLFW_KEY_PAGE_UP, GLFW_KEY_F5, GLFW_KEY_B, GLFW_KEY_PERIOD,
                     GLFW_KEY_SLASH, GLFW_KEY_F1, GLFW_KEY_L, GLFW_KEY_P, GLFW_KEY_Z, GLFW_KEY_C};

const char* const kJunk[] = {"", "0", "-1", "abc", "1.5", "1e3", "99999999999999999999999", "9223372036854775807",
                             " 64 ", "0x40", "∞", "NaN", "-0", "1..2", "12abc", "4G", "1T"};

}  // namespace

std::string RandomWalk::random_size(bool valid_only) {
  if (!valid_only && uniform() < 0.35) return kJunk[pick(static_cast<int>(sizeof kJunk / sizeof kJunk[0]))];
  switch (pick(4)) {
    case 0: return std::to_string(1 + pick(4096));
    case 1: return std::to_string(1LL << pick(21));
    case 2: return std::to_string(1 + pick(300)) + "K";
    default: return std::to_string(16 * (1 + pick(16)));
  }
}

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
    s.inputs = Inputs{};
    return;
  }
  if (uniform() > 0.2) return;
  Inputs& in = s.inputs;
  RingInputs& ring = s.ring.inputs;
  const bool valid = uniform() < 0.6;
  switch (pick(20)) {
    case 0: in.seq = random_size(valid); break;
    case 1: in.head_dim = valid ? std::to_string(16 * (1 + pick(16))) : random_size(false); break;
    case 2: in.batch = valid ? std::to_string(1 + pick(64)) : random_size(false); break;
    case 3:
      in.heads = valid ? std::to_string(1 + pick(32)) : random_size(false);
      // Grouped K/V heads: a divisor, none, or a value that does not divide.
      in.kv_heads = uniform() < 0.5 ? std::string() : valid ? std::to_string(1 + pick(4)) : random_size(false);
      break;
    case 4: in.causal = !in.causal; break;
    case 5: in.dtype = static_cast<sim::DType>(pick(3)); break;
    case 6:
      in.sram_override = uniform() < 0.5;
      in.sram = valid ? std::to_string(16 + pick(240)) + "KiB" : random_size(false);
      break;
    case 7:
      in.manual_tiles = uniform() < 0.5;
      in.hopper = !in.manual_tiles && uniform() < 0.5;
      in.br = random_size(valid);
      in.bc = random_size(valid);
      break;
    case 8: {
      const auto presets = sim::list_presets();
      in.use_hw_file = false;
      in.hw_preset = !presets.empty() && valid ? presets[static_cast<size_t>(pick(static_cast<int>(presets.size())))]
                                               : "no-such-gpu";
      break;
    }
    case 9: {
      in.use_hw_file = true;
      const char* files[] = {"/nonexistent/profile.json", "/etc/hostname", "", "/"};
      in.hw_file = valid && !sim::list_presets().empty()
                       ? sim::assets_dir() + "/hardware/" + sim::list_presets().front() + ".json"
                       : files[pick(4)];
      break;
    }
    case 10: in.algo_a = random_algorithm(); break;
    case 11: in.algo_b = random_algorithm(); break;
    case 12: in.compare = !in.compare; break;
    case 13: in.lockstep = uniform() < 0.5 ? Lockstep::progress : Lockstep::block; break;
    case 14:
      s.view.tab = plot_tabs()[static_cast<size_t>(pick(static_cast<int>(plot_tabs().size())))].id;
      s.view.force_tab = true;
      if (uniform() < 0.3) s.view.show_concepts = !s.view.show_concepts;
      // A tab picked is a tab looked at: in the hall layout the plots take the
      // stage, and the Concepts window, which is the stage there, is closed first.
      if (s.view.hall_layout && uniform() < 0.8) s.view.show_concepts = false;
      s.view.plots_large = uniform() < 0.8;
      if (uniform() < 0.2) toggle_controls(s);
      break;
    case 15:
      if (uniform() < 0.15) s.view.pending_ui_scale = 1.0 + 0.25 * pick(9);  // font atlas rebuilds are slow: rarely
      s.playback.events_per_s = std::pow(2.0, pick(20) - 2);
      s.playback.playing = uniform() < 0.6;
      break;
    // The ring of GPUs: its view, and valid and invalid values in its fields.
    case 16: s.view.workspace = s.view.workspace == Workspace::ring ? Workspace::one_gpu : Workspace::ring; break;
    case 17:
      ring.gpus = valid ? std::to_string(1 + pick(64)) : random_size(false);
      ring.seq = valid ? std::to_string(1 + pick(64)) + "K" : random_size(false);
      if (uniform() < 0.3) ring.batch = valid ? std::to_string(1 + pick(8)) : random_size(false);
      break;
    case 18: {
      {
        const std::vector<sim::RingLayoutInfo>& layouts = sim::ring_layouts();
        const auto k = static_cast<std::size_t>(uniform() * static_cast<double>(layouts.size()));
        ring.layout = layouts[std::min(k, layouts.size() - 1)].layout;
      }
      ring.causal = uniform() < 0.7;
      ring.passes = uniform() < 0.4 ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd;
      ring.compare_layouts = uniform() < 0.4;
      const char* models[] = {"llama2-7b", "llama3.2-3b", "llama3.2-1b", "custom", "no-such-model"};
      ring.model = models[pick(valid ? 4 : 5)];
      ring.heads = valid ? std::to_string(8 * (1 + pick(8))) : random_size(false);
      ring.kv_heads = valid ? "8" : random_size(false);
      ring.head_dim = valid ? std::to_string(32 * (1 + pick(8))) : random_size(false);
      ring.efficiency = valid ? std::to_string(0.05 + 0.95 * uniform()) : kJunk[pick(static_cast<int>(sizeof kJunk / sizeof kJunk[0]))];
      break;
    }
    case 19: {
      const char* links[] = {"nvlink4", "pcie5", "ib-ndr", "", "no-such-link", "/nonexistent.json"};
      ring.intra = links[pick(valid ? 3 : 6)];
      ring.inter = links[pick(valid ? 3 : 6)];
      ring.gpus_per_node = valid ? std::to_string(1 + pick(16)) : random_size(false);
      ring.dtype = static_cast<sim::DType>(pick(3));
      s.ring.step_request = pick(70);
      break;
    }
  }
}

}  // namespace flashlab::gui
