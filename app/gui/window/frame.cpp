// The window layout, the status line and the keyboard.
#include <GLFW/glfw3.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>

#include "state/format.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "presenter/presenter.hpp"
#include "presenter/script_keys.hpp"
#include "model/ring_model.hpp"
#include "draw/stage_effects.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

constexpr ImGuiWindowFlags kPanelFlags =
    ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse | ImGuiWindowFlags_NoSavedSettings |
    ImGuiWindowFlags_NoBringToFrontOnFocus;

struct Box {
  float x, y, w, h;
};

struct Layout {
  Box controls, tiling, counters, plots, status;
  bool counters_in_tabs = false;
  bool hall = false;
};

// Below this many unscaled pixels across, the window is a hall's: a 1920-wide
// projector at UI scale 2 shows one view at a time, as large as the
// presenter's stage, instead of four panels of a quarter of the size each.
constexpr float kHallWidth = 1000.0f;

bool is_hall_layout(float display_width, float scale) { return std::max(display_width, 200.0f) / scale < kHallWidth; }

// Controls left, tiling middle, counters right, plots below, one status line.
// Side panels keep a readable width (scaled). When the window is narrow for
// its UI scale (a projector at 2×), the counters join the plot tabs and the
// tiling view takes the whole width right of the controls.
Layout compute_layout(ImVec2 display, float scale, bool show_controls, bool plots_large) {
  Layout L;
  const float W = std::max(display.x, 200.0f), H = std::max(display.y, 200.0f);
  const float status_h = ImGui::GetFrameHeight() + 6 * scale;
  const float body_h = H - status_h;
  L.counters_in_tabs = W / scale < 1250.0f;
  L.hall = is_hall_layout(display.x, scale);
  if (L.hall) {
    // One view on the stage: the tiling view over a one-line strip that
    // opens the plots, or the plots over the whole height.
    const float left = show_controls ? std::min(std::max(W * 0.34f, 230.0f * scale), W * 0.5f) : 0.0f;
    const float strip = ImGui::GetFrameHeight() + 2 * ImGui::GetStyle().WindowPadding.y + 2;
    const float top_h = plots_large ? 0.0f : std::floor(body_h - strip);
    L.controls = {0, 0, std::floor(left), body_h};
    L.tiling = {L.controls.w, 0, W - L.controls.w, top_h};
    L.counters = {W, 0, 0, 0};
    L.plots = {L.controls.w, top_h, W - L.controls.w, body_h - top_h};
    L.status = {0, body_h, W, status_h};
    return L;
  }
  // The tiling view is the heart of the lecture: more of the height when space is short.
  const float top_h = std::floor(body_h * (plots_large ? 0.34f : L.counters_in_tabs ? 0.68f : 0.62f));
  float left, right;
  if (L.counters_in_tabs) {
    left = std::min(std::clamp(W * 0.28f, 230.0f * scale, 330.0f * scale), W * 0.4f);
    right = 0;
  } else {
      left = std::clamp(W * 0.21f, 250.0f * scale, 420.0f * scale);
      right = std::clamp(W * 0.25f, 280.0f * scale, 470.0f * scale);
      const float min_mid = 0.36f * W;
      if (left + right > W - min_mid) {
        const float k = (W - min_mid) / (left + right);
        left *= k;
        right *= k;
      }
  }
  if (!show_controls) left = 0;
  L.controls = {0, 0, std::floor(left), body_h};
  L.tiling = {L.controls.w, 0, std::floor(W - left - right), top_h};
  L.counters = {L.tiling.x + L.tiling.w, 0, W - L.tiling.x - L.tiling.w, top_h};
  L.plots = {L.controls.w, top_h, W - L.controls.w, body_h - top_h};
  L.status = {0, body_h, W, status_h};
  return L;
}

void place(const Box& b) {
  ImGui::SetNextWindowPos(ImVec2(b.x, b.y));
  ImGui::SetNextWindowSize(ImVec2(std::max(b.w, 1.0f), std::max(b.h, 1.0f)));
}

AppState::PanelRect rect_of(const Box& b) { return {b.x, b.y, b.w, b.h}; }

}  // namespace

void draw_frame(AppState& s) {
  if (s.presenter.on) {
    draw_presenter(s);
    return;
  }
  // The fixed panels tile the window: their background is the clear colour
  // (app.cpp), not one more full-screen layer of fill for the rasteriser.
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0, 0, 0, 0));
  const float scale = static_cast<float>(s.view.ui_scale);
  // The hall layout is the window's width at its UI scale: known before the
  // layout, so the first frame already keeps the controls closed.
  s.view.hall_layout = is_hall_layout(ImGui::GetIO().DisplaySize.x, scale);
  // The Concepts window, when open, has a place of its own in the layout and
  // covers none of the lab's text; its sections scroll inside it. In the
  // hall layout (one view at a time) it is the view: it takes the stage. Else
  // it is a column at the right from the top to the status line, and the
  // lab's panels share what is left.
  const ImVec2 display = ImGui::GetIO().DisplaySize;
  const bool concepts_on_stage = s.view.show_concepts && s.view.hall_layout;
  const float concepts_w =
      s.view.show_concepts && !concepts_on_stage
          ? std::floor(std::min(std::clamp(display.x * 0.3f, 300 * scale, 560 * scale), display.x * 0.45f))
          : 0.0f;
  const Layout L = compute_layout(ImVec2(display.x - concepts_w, display.y), scale, controls_shown(s), s.view.plots_large);
  s.rect_controls = rect_of(L.controls);
  s.rect_tiling = rect_of(L.tiling);
  s.rect_counters = rect_of(L.counters);
  s.rect_plots = rect_of(L.plots);

  if (L.controls.w > 0) {
    place(L.controls);
    if (ImGui::Begin("Controls", nullptr, kPanelFlags)) panel_controls(s);
    ImGui::End();
  }
  if (concepts_on_stage) {
    // The stage is the Concepts window's (below).
  } else if (s.view.workspace == Workspace::ring) {
    // The ring takes everything right of the controls.
    const Box ring{L.controls.w, 0, std::max(1.0f, L.plots.w), L.status.y};
    s.rect_ring = rect_of(ring);
    place(ring);
    if (ImGui::Begin("Ring attention across GPUs — the timeline per GPU and the step-through", nullptr,
                     kPanelFlags | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse)) {
      if (L.controls.w <= 0) {
        if (ImGui::Button("☰ controls")) toggle_controls(s);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("show the controls (F9)");
        ImGui::SameLine();
        workspace_switch(s, true);
      }
      panel_ring(s);
    }
    ImGuiWindow* drawn = ImGui::GetCurrentWindow();
    ImGui::End();
    recolour_for_theme(drawn);
  } else {
    if (L.tiling.h > 0) {
      place(L.tiling);
      if (ImGui::Begin("Tiling — step through the schedule", nullptr, kPanelFlags | ImGuiWindowFlags_NoScrollbar)) panel_tiling(s);
      ImGuiWindow* drawn = ImGui::GetCurrentWindow();
      ImGui::End();
      recolour_for_theme(drawn);  // the grid and the pipeline are drawn for the dark theme
    }
    s.view.counters_in_tabs = L.counters_in_tabs;
    if (!L.counters_in_tabs) {
      place(L.counters);
      if (ImGui::Begin("Counters", nullptr, kPanelFlags)) panel_counters(s);
      ImGui::End();
    }
    place(L.plots);
    if (ImGui::Begin("Plots", nullptr, kPanelFlags | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar))
      panel_plots(s);
    ImGui::End();
  }
  place(Box{L.status.x, L.status.y, display.x, L.status.h});  // the status line spans the window, under the Concepts
  if (ImGui::Begin("##status", nullptr,
                   kPanelFlags | ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse))
    status_bar(s);
  ImGui::End();
  ImGui::PopStyleColor();
  if (s.view.show_concepts) {
    const Box box = concepts_on_stage ? Box{L.controls.w, 0, display.x - L.controls.w, L.status.y}
                                      : Box{display.x - concepts_w, 0, concepts_w, L.status.y};
    place(box);
    s.rect_concepts = rect_of(box);
    // The scrollbar from the first frame: a reader sees at once that there is more below.
    if (ImGui::Begin("Concepts", &s.view.show_concepts,
                     (kPanelFlags & ~ImGuiWindowFlags_NoBringToFrontOnFocus) | ImGuiWindowFlags_AlwaysVerticalScrollbar))
      panel_concepts(s);
    ImGui::End();
  } else {
    s.rect_concepts = {};
  }
}

namespace {

// `text` whole when it fits `width`, else cut at a character (not inside a
// UTF-8 sequence) and ended with "…".
std::string elided(const std::string& text, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  std::size_t n = text.size();
  while (n > 0) {
    do --n;
    while (n > 0 && (static_cast<unsigned char>(text[n]) & 0xC0) == 0x80);
    const std::string cut = text.substr(0, n) + "…";
    if (ImGui::CalcTextSize(cut.c_str()).x <= width) return cut;
  }
  return {};
}

}  // namespace

void status_bar(AppState& s) {
  const Model& m = s.model;
  ImVec4 col = color_note();
  std::string text;
  const bool ring = s.view.workspace == Workspace::ring;
  const RingModel& rm = s.ring.model;
  if (ring && !rm.valid) {
    col = color_error();
    text = "✕ " + (rm.errors.empty() ? std::string("invalid inputs") : rm.errors.front());
  } else if (ring && s.view.status.empty()) {
    text = sim::describe(rm.simulation.problem) + " on " +
           (rm.compute.hw.display_name.empty() ? rm.compute.hw.name : rm.compute.hw.display_name) + ", links " +
           rm.topology.intra.id + " / " + rm.topology.inter.id;
  } else if (ring) {
    col = s.view.status_is_error ? color_error() : color_good();
    text = s.view.status;
  } else if (!m.valid) {
    col = color_error();
    text = "✕ " + (m.errors.empty() ? std::string("invalid inputs") : m.errors.front());
  } else if (!s.view.status.empty()) {
    col = s.view.status_is_error ? color_error() : color_good();
    text = s.view.status;
  } else if (!s.view.font_note.empty()) {
    col = color_error();
    text = s.view.font_note;
  } else {
    text = sim::describe(m.problem) + " on " + (m.hw.display_name.empty() ? m.hw.name : m.hw.display_name) +
           ", M = " + sim::bytes_iec(static_cast<double>(m.sram_bytes));
  }
  ImGui::AlignTextToFramePadding();
  // A message wider than the window ends in "…"; hovering it shows it whole.
  const std::string shown = elided(text, ImGui::GetContentRegionAvail().x);
  ImGui::TextColored(col, "%s", shown.c_str());
  const std::vector<std::string>& all = ring ? rm.errors : m.errors;
  if (shown != text && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    ImGui::TextUnformatted(text.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  } else if ((ring ? !rm.valid : !m.valid) && all.size() > 1 && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    for (const std::string& e : all) ImGui::TextUnformatted(e.c_str());
    ImGui::EndTooltip();
  }
  // The key reminder, only where it does not cover the message.
  const std::string keys = std::string(ring ? "←/→ step · Home/End · F6 one GPU · F9 controls · F11 full screen · F12 screenshot"
                                             : "Space play · ←/→ step · Home/End · +/- speed · F6 GPUs · F9 controls · F11 full screen · F12 screenshot") +
                           " · " + key_hints(s);
  const float kw = ImGui::CalcTextSize(keys.c_str()).x, tw = ImGui::CalcTextSize(shown.c_str()).x;
  const float W = ImGui::GetWindowWidth(), pad = ImGui::GetStyle().WindowPadding.x;
  if (tw + kw + 4 * pad < W) {
    ImGui::SameLine(W - kw - pad);
    ImGui::TextColored(color_dim(), "%s", keys.c_str());
  }
}

namespace {

// Whether what a key changed must reach the model before the next key is
// handled: → after PageDown steps the new scene's schedule, not the old one's.
bool model_behind(const AppState& s) {
  return needs_recompute(s) || (s.model.valid && s.cursor_request.kind != CursorRequest::Kind::none) ||
         ring_needs_recompute(s) || (s.ring.model.valid && s.ring.step_request >= 0);
}

// One key press: the window's own keys, then the table's (the rows a scenario's script presses).
void handle_key(AppState& s, const KeyPress& k) {
  const bool ctrl = (k.mods & GLFW_MOD_CONTROL) != 0, shift = (k.mods & GLFW_MOD_SHIFT) != 0;
  if (ctrl) {
    if (k.key == GLFW_KEY_EQUAL || k.key == GLFW_KEY_KP_ADD) s.view.pending_ui_scale = std::min(3.0, s.view.ui_scale + 0.25);
    if (k.key == GLFW_KEY_MINUS || k.key == GLFW_KEY_KP_SUBTRACT)
      s.view.pending_ui_scale = std::max(1.0, s.view.ui_scale - 0.25);
    return;
  }
  if (k.key == GLFW_KEY_F11 && !k.repeat) s.view.toggle_fullscreen = true;
  if (k.key == GLFW_KEY_F12 && !k.repeat) request_screenshot(s, "");
  // Shift with an arrow: a bigger step (10 events; 4 of the ring's steps), lab layout only.
  if (shift && !s.presenter.on && (k.key == GLFW_KEY_RIGHT || k.key == GLFW_KEY_LEFT)) {
    const int sign = k.key == GLFW_KEY_RIGHT ? 1 : -1;
    if (s.view.workspace == Workspace::ring) {
      ring_step_by(s, 4 * sign);
    } else {
      s.playback.playing = false;
      step_primary(s, 10 * sign);
    }
    return;
  }
  // Presenter mode: clickers send PageDown/PageUp; → and ← step the stage and
  // move between scenes at its ends; the speed keys, Home and End work there too.
  for (const ScriptKey& row : script_keys())
    if ((k.key == row.glfw || (row.glfw_alt != 0 && k.key == row.glfw_alt)) && (!k.repeat || row.repeats) && key_works(row, s)) {
      press_key(s, row);
      return;
    }
  if (s.presenter.on || k.repeat) return;
  if (k.key == GLFW_KEY_F9) toggle_controls(s);
  if (k.key == GLFW_KEY_F6) s.view.workspace = s.view.workspace == Workspace::ring ? Workspace::one_gpu : Workspace::ring;
}

}  // namespace

void handle_keys(AppState& s) {
  if (ImGui::GetIO().WantTextInput) {  // typing a value: the keys are the field's
    s.keys.clear();
    return;
  }
  // Every press in the order pressed, however long the last frame took; a key
  // that changed what the model is made from waits for the next frame.
  size_t n = 0;
  while (n < s.keys.size() && !model_behind(s)) handle_key(s, s.keys[n++]);
  s.keys.erase(s.keys.begin(), s.keys.begin() + static_cast<std::ptrdiff_t>(n));
}

bool controls_shown(const AppState& s) { return s.view.hall_layout ? s.view.hall_controls : !s.view.hide_controls; }

void toggle_controls(AppState& s) {
  if (s.view.hall_layout) s.view.hall_controls = !s.view.hall_controls;
  else s.view.hide_controls = !s.view.hide_controls;
}

}  // namespace flashlab::gui
