// The keys, one table for the keyboard and a script step's "key": what each
// does, in which mode it works, and what it does in the ring's view (the
// arrows, Home and End move the ring's step there) when that differs. The
// keyboard (frame.cpp's handle_keys) and a scenario press the same rows, so a
// key a script can press in presenter mode is one the lecturer can press too.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "state/app_state.hpp"

namespace flashlab::gui {

// Where a key works: everywhere, only on the presenter's stage, or only in the lab's panels.
enum class KeyMode { always, presenter, lab };

struct ScriptKey {
  std::string_view name;     // as a step's "key" writes it
  std::string_view label;    // as the keys overlay shows it: "→", "PgDn", "+"
  std::string_view meaning;  // one line, for --list-settings and the keys overlay
  void (*press)(AppState& s);
  void (*press_in_ring)(AppState& s);  // in the ring's view outside the presenter; nullptr: as press
  int glfw = 0, glfw_alt = 0;          // the keyboard's key (GLFW code) and another that does the same; 0: none
  bool repeats = true;                 // held down it repeats (the arrows); false: once a press (Space, Esc)
  KeyMode mode = KeyMode::always;
  // A word for the footer's line of keys ("zoom": "Z zoom"); empty: the footer leaves it to the ? overlay.
  std::string_view hint = {};
};

const std::vector<ScriptKey>& script_keys();

// Whether the key does something in the state's mode (presenter or lab).
bool key_works(const ScriptKey& k, const AppState& s);

// Throws std::runtime_error "unknown key 'K' (expected space, left, ...)".
void press_key(AppState& s, const std::string& name);
void press_key(AppState& s, const ScriptKey& k);

// "L light · P pointer · Z zoom · C clock": the keys with a hint that work in the state's mode.
std::string key_hints(const AppState& s);

}  // namespace flashlab::gui
