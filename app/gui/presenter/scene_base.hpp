// A scene is whole: entering it starts from the scenario's own settings (the
// SceneBase taken when the lecture loads) and then applies the scene's
// "state", so that what a scene shows never depends on the scene shown
// before it — a results file, a GPU, a tab or a cursor left by another scene.
#pragma once

#include <nlohmann/json.hpp>

#include "state/app_state.hpp"

namespace flashlab::gui {

// The parts of `s` a scene's state can set, as they are now: called once the
// scenario's top-level settings are applied, before the first scene.
SceneBase capture_scene_base(const AppState& s);

// Puts back what a scene's state can set, from `base`; the files named there
// are opened again (or closed) unless `scene_state` names its own. Throws
// std::runtime_error naming the key when a file of the base cannot be opened.
void restore_scene_base(AppState& s, const SceneBase& base, const nlohmann::json& scene_state);

}  // namespace flashlab::gui
