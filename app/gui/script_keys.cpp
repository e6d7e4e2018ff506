#include "script_keys.hpp"

#include <algorithm>
#include <stdexcept>

#include "model.hpp"
#include "presenter.hpp"
#include "ring_model.hpp"

namespace flashlab::gui {

namespace {

void right(AppState& s) {
  if (s.presenter.on) presenter_right(s);
  else step_primary(s, 1);
}

void left(AppState& s) {
  if (s.presenter.on) presenter_left(s);
  else step_primary(s, -1);
}

void end(AppState& s) {
  if (s.model.valid) seek_primary(s, s.model.algos[0].cursor->size());
}

void ring_end(AppState& s) {
  if (s.ring.model.valid) ring_seek_step(s, s.ring.model.simulation.problem.gpus() - 1);
}

}  // namespace

const std::vector<ScriptKey>& script_keys() {
  static const std::vector<ScriptKey> keys{
      {"space", "play or pause", [](AppState& s) { s.playback.playing = !s.playback.playing; }, nullptr},
      {"left", "a step back (the presenter: → / ← of its stage; the ring's view: its step)", left,
       [](AppState& s) { ring_step_by(s, -1); }},
      {"right", "a step on (the presenter: → / ← of its stage; the ring's view: its step)", right,
       [](AppState& s) { ring_step_by(s, 1); }},
      {"home", "the schedule's start (the ring's view: its first step)", [](AppState& s) { seek_primary(s, 0); },
       [](AppState& s) { ring_seek_step(s, 0); }},
      {"end", "the schedule's end (the ring's view: its last step)", end, ring_end},
      {"plus", "playback twice as fast",
       [](AppState& s) { s.playback.events_per_s = std::min(1e6, s.playback.events_per_s * 2); }, nullptr},
      {"minus", "playback half as fast",
       [](AppState& s) { s.playback.events_per_s = std::max(0.25, s.playback.events_per_s / 2); }, nullptr},
      {"pagedown", "the next scene", presenter_next, nullptr},
      {"pageup", "the previous scene", presenter_previous, nullptr},
      {"escape", "leave the presenter for the lab's panels", [](AppState& s) { s.presenter.on = false; }, nullptr},
      {"f5", "back to the presenter", [](AppState& s) { presenter_start(s); }, nullptr},
  };
  return keys;
}

void press_key(AppState& s, const std::string& name) {
  const auto& keys = script_keys();
  const auto k = std::find_if(keys.begin(), keys.end(), [&](const ScriptKey& e) { return e.name == name; });
  if (k == keys.end()) {
    std::string names;
    for (const ScriptKey& e : keys) names += (names.empty() ? "" : ", ") + std::string(e.name);
    throw std::runtime_error("unknown key '" + name + "' (expected " + names + ")");
  }
  const bool ring = s.view.workspace == Workspace::ring && !s.presenter.on;
  (ring && k->press_in_ring ? k->press_in_ring : k->press)(s);
}

}  // namespace flashlab::gui
