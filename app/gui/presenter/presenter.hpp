// Presenter mode: a lecture as a sequence of scenes (a scenario's "scenes").
// The stage shows one thing large — the tiling view, a chart, the counters
// of two algorithms side by side, or the ring of GPUs (its timeline, its
// step-through, or both) — under a title bar readable from the back of
// the room, with a thin strip of transport and keys below. PageDown/PageUp
// (what presentation clickers send) move between scenes; → and ← step the
// schedule on a tiling stage (the ring's step on a stage showing its
// step-through) and move between scenes at its ends, and on any other stage;
// Esc leaves for the lab's panels, F5 comes back.
#pragma once

#include "state/app_state.hpp"

namespace flashlab::gui {

// The stage's window: what a scene's claims ("shows") are read from, not
// the title bar above it (the point itself) nor the strip of keys below.
constexpr const char* kStageWindow = "##stage";

// Starts presenting at the current scene (the first when none yet); false
// when the scenario has no scenes.
bool presenter_start(AppState& s);
// Applies scene k's state and puts its view on the stage (k is clamped).
void enter_scene(AppState& s, int k);
void presenter_next(AppState& s);
void presenter_previous(AppState& s);
// → and ←: a step of the schedule on a tiling stage, the next or previous
// scene at its ends and on the other stages.
void presenter_right(AppState& s);
void presenter_left(AppState& s);

// Draws the whole window as the stage (instead of draw_frame's panels).
void draw_presenter(AppState& s);

// The model chart on screen: the stage's, or the lab's plot tab's; nullptr when none.
const analysis::ChartEntry* shown_chart(const AppState& s);

// Asks the chart cache's worker for every scene's chart ahead of the hall
// reaching it, from the current scene on: each scene entered on a scratch
// state (the scenario's settings, then its own), its chart queued.
void prepare_scenes(AppState& s);
// Whether every chart asked for ahead is built; how many model charts were built in all.
bool scenes_prepared(const AppState& s);
int charts_built_so_far(const AppState& s);

}  // namespace flashlab::gui
