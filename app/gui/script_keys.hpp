// The keys a script step's "key" presses, as the keyboard does: one row each,
// with what it does in the ring's view (the arrows, Home and End move the
// ring's step there) when that differs.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "app_state.hpp"

namespace flashlab::gui {

struct ScriptKey {
  std::string_view name;     // as a step's "key" writes it
  std::string_view meaning;  // one line, for --list-settings
  void (*press)(AppState& s);
  void (*press_in_ring)(AppState& s);  // in the ring's view outside the presenter; nullptr: as press
};

const std::vector<ScriptKey>& script_keys();

// Throws std::runtime_error "unknown key 'K' (expected space, left, ...)".
void press_key(AppState& s, const std::string& name);

}  // namespace flashlab::gui
