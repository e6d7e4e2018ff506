// A random walk over the controls for tests: every frame, random pointer
// moves, clicks, drags, wheel turns, keys and typed characters go through
// ImGui's input like a user's would, and now and then a setting of the one
// settings table (presenter/scenario_settings.hpp) is given a random valid or
// invalid value. Seeded, so a failure can be replayed.
#pragma once

#include <cstdint>
#include <random>

#include "state/app_state.hpp"

namespace flashlab::gui {

class RandomWalk {
 public:
  explicit RandomWalk(std::uint64_t seed) : rng_(seed) {}
  // After the backends' NewFrame, before ImGui::NewFrame.
  void inject_input(AppState& s);
  // Between frames (the model is recomputed before the next one).
  void mutate_state(AppState& s);

 private:
  double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
  int pick(int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng_); }

  std::mt19937_64 rng_;
  float x_ = 400, y_ = 300;
  int hold_frames_ = 0;
  int key_down_ = -1;
};

}  // namespace flashlab::gui
