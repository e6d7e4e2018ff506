#include "script_keys.hpp"

#include <algorithm>
#include <stdexcept>

#include <GLFW/glfw3.h>

#include "model/model.hpp"
#include "presenter.hpp"
#include "model/ring_model.hpp"

namespace flashlab::gui {

namespace {

void right(AppState& s) {
  if (s.presenter.on) {
    presenter_right(s);
  } else {
    s.playback.playing = false;
    step_primary(s, 1);
  }
}

void left(AppState& s) {
  if (s.presenter.on) {
    presenter_left(s);
  } else {
    s.playback.playing = false;
    step_primary(s, -1);
  }
}

// Play or pause; at the schedule's end, play again from the start.
void play(AppState& s) {
  s.playback.playing = !s.playback.playing;
  if (s.playback.playing && s.model.valid && !s.model.algos.empty() && s.model.algos[0].cursor) {
    const sim::Cursor& c = *s.model.algos[0].cursor;
    if (c.position() >= c.size()) seek_primary(s, 0);
  }
}

void end(AppState& s) {
  if (s.model.valid) seek_primary(s, s.model.algos[0].cursor->size());
}

void ring_end(AppState& s) {
  if (s.ring.model.valid) ring_seek_step(s, s.ring.model.simulation.problem.gpus() - 1);
}

}  // namespace

const std::vector<ScriptKey>& script_keys() {
  using M = KeyMode;
  static const std::vector<ScriptKey> keys{
      {"space", "Space", "play or pause (at the end: again from the start)", play, nullptr, GLFW_KEY_SPACE, 0, false},
      {"left", "←", "a step back (the presenter: → / ← of its stage; the ring's view: its step)", left,
       [](AppState& s) { ring_step_by(s, -1); }, GLFW_KEY_LEFT},
      {"right", "→", "a step on (the presenter: → / ← of its stage; the ring's view: its step)", right,
       [](AppState& s) { ring_step_by(s, 1); }, GLFW_KEY_RIGHT},
      {"home", "Home", "the schedule's start (the ring's view: its first step)", [](AppState& s) { seek_primary(s, 0); },
       [](AppState& s) { ring_seek_step(s, 0); }, GLFW_KEY_HOME},
      {"end", "End", "the schedule's end (the ring's view: its last step)", end, ring_end, GLFW_KEY_END},
      // '+' is Shift+'=' on most layouts.
      {"plus", "+", "playback twice as fast",
       [](AppState& s) { s.playback.events_per_s = std::min(1e6, s.playback.events_per_s * 2); }, nullptr,
       GLFW_KEY_EQUAL, GLFW_KEY_KP_ADD},
      {"minus", "-", "playback half as fast",
       [](AppState& s) { s.playback.events_per_s = std::max(0.25, s.playback.events_per_s / 2); }, nullptr,
       GLFW_KEY_MINUS, GLFW_KEY_KP_SUBTRACT},
      {"pagedown", "PgDn", "the next scene", presenter_next, nullptr, GLFW_KEY_PAGE_DOWN, 0, true, M::presenter},
      {"pageup", "PgUp", "the previous scene", presenter_previous, nullptr, GLFW_KEY_PAGE_UP, 0, true, M::presenter},
      {"blackout", "B", "a black screen, and back (a clicker's blank-screen key '.' too)",
       [](AppState& s) { s.presenter.blackout = !s.presenter.blackout; }, nullptr, GLFW_KEY_B, GLFW_KEY_PERIOD, false,
       M::presenter},
      {"keys", "?", "the keys of this mode over the stage, and away (F1 too)",
       [](AppState& s) { s.presenter.show_keys = !s.presenter.show_keys; }, nullptr, GLFW_KEY_SLASH, GLFW_KEY_F1, false,
       M::presenter},
      {"light", "L", "the light theme (dark text on near-white, for a lit hall), and back to the dark one",
       [](AppState& s) { s.view.theme = s.view.theme == Theme::light ? Theme::dark : Theme::light; }, nullptr,
       GLFW_KEY_L, 0, false, M::always, "light"},
      {"pointer", "P", "a ring around the mouse pointer, for the hall to follow, and away",
       [](AppState& s) { s.presenter.pointer = !s.presenter.pointer; }, nullptr, GLFW_KEY_P, 0, false, M::presenter,
       "pointer"},
      {"zoom", "Z", "the stage magnified 2× around the mouse pointer, and back",
       [](AppState& s) { s.presenter.zoom = !s.presenter.zoom; }, nullptr, GLFW_KEY_Z, 0, false, M::presenter, "zoom"},
      {"clock", "C", "the clock and the time since the lecture began, in the title bar, and away",
       [](AppState& s) { s.presenter.clock = !s.presenter.clock; }, nullptr, GLFW_KEY_C, 0, false, M::presenter, "clock"},
      {"escape", "Esc", "leave the presenter for the lab's panels",
       [](AppState& s) {
         s.presenter.on = false;
         s.presenter.blackout = s.presenter.show_keys = false;
       },
       nullptr, GLFW_KEY_ESCAPE, 0, false, M::presenter},
      {"f5", "F5", "back to the presenter", [](AppState& s) { presenter_start(s); }, nullptr, GLFW_KEY_F5, 0, false,
       M::lab},
  };
  return keys;
}

bool key_works(const ScriptKey& k, const AppState& s) {
  return k.mode == KeyMode::always || (k.mode == KeyMode::presenter) == s.presenter.on;
}

void press_key(AppState& s, const ScriptKey& k) {
  const bool ring = s.view.workspace == Workspace::ring && !s.presenter.on;
  (ring && k.press_in_ring ? k.press_in_ring : k.press)(s);
}

std::string key_hints(const AppState& s) {
  std::string out;
  for (const ScriptKey& k : script_keys())
    if (!k.hint.empty() && key_works(k, s))
      out += (out.empty() ? "" : " · ") + std::string(k.label) + " " + std::string(k.hint);
  return out;
}

void press_key(AppState& s, const std::string& name) {
  const auto& keys = script_keys();
  const auto k = std::find_if(keys.begin(), keys.end(), [&](const ScriptKey& e) { return e.name == name; });
  if (k == keys.end()) {
    std::string names;
    for (const ScriptKey& e : keys) names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw std::runtime_error("unknown key '" + name + "' (expected " + names + ")");
  }
  press_key(s, *k);
}

}  // namespace flashlab::gui
