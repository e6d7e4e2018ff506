#include "scene_base.hpp"

#include <stdexcept>

#include "model/ring_model.hpp"
#include "panels/panels.hpp"

namespace flashlab::gui {

SceneBase capture_scene_base(const AppState& s) {
  SceneBase b;
  b.inputs = s.inputs;
  b.ring_step = std::max(0, s.ring.step_request);
  b.cursor = s.cursor_request;
  b.events_per_s = s.playback.events_per_s;
  b.tab = s.view.tab;
  b.show_concepts = s.view.show_concepts;
  b.plots_large = s.view.plots_large;
  b.hide_controls = s.view.hide_controls;
  b.hall_ring_step = s.view.hall_ring_step;
  b.l2_first = s.view.l2_first;
  b.workspace = s.view.workspace;
  b.export_dir = s.view.export_dir;
  if (s.bench.have_results) b.results = s.bench.source;
  if (s.ring.results.have) b.ring_results = s.ring.results.source;
  return b;
}

void restore_scene_base(AppState& s, const SceneBase& b, const nlohmann::json& scene_state) {
  s.inputs = b.inputs;
  s.ring.step_request = b.ring_step;
  // No cursor of its own: the schedule's start, not where the last scene left it.
  s.cursor_request = b.cursor;
  if (s.cursor_request.kind == CursorRequest::Kind::none) {
    s.cursor_request.kind = CursorRequest::Kind::position;
    s.cursor_request.position = 0;
  }
  s.playback.playing = false;
  s.playback.carry = 0;
  s.playback.events_per_s = b.events_per_s;
  s.view.tab = b.tab;
  s.view.force_tab = true;
  s.view.show_concepts = b.show_concepts;
  s.view.plots_large = b.plots_large;
  s.view.hide_controls = b.hide_controls;
  s.view.hall_ring_step = b.hall_ring_step;
  s.view.l2_first = b.l2_first;
  s.view.workspace = b.workspace;
  s.view.export_dir = b.export_dir;
  // The files: opened again only when another is open (a parse is not free), closed when the base has none.
  if (!scene_state.contains("results")) {
    if (b.results.empty()) {
      if (s.bench.have_results) close_results(s);
    } else if (!s.bench.have_results || s.bench.source != b.results) {
      open_results(s, b.results);
      if (!s.bench.have_results || s.bench.source != b.results) throw std::runtime_error("results: " + s.bench.error);
    }
  }
  if (!scene_state.contains("ring_results")) {
    if (b.ring_results.empty()) {
      if (s.ring.results.have) close_ring_results(s);
    } else if (!s.ring.results.have || s.ring.results.source != b.ring_results) {
      open_ring_results(s, b.ring_results);
      if (!s.ring.results.have) throw std::runtime_error("ring_results: " + s.ring.results.error);
      s.inputs.ring = b.inputs.ring;  // the file's run was chosen when the base was taken
    }
  }
}

}  // namespace flashlab::gui
