#include "presenter.hpp"

#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "math_view.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "plot.hpp"
#include "ring_model.hpp"
#include "scenario.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

constexpr ImGuiWindowFlags kStageFlags = ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoCollapse |
                                         ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoBringToFrontOnFocus |
                                         ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoScrollbar |
                                         ImGuiWindowFlags_NoScrollWithMouse;

const Scene* current_scene(const AppState& s) {
  const Presenter& p = s.presenter;
  if (p.current < 0 || static_cast<size_t>(p.current) >= p.scenes.size()) return nullptr;
  return &p.scenes[static_cast<size_t>(p.current)];
}

bool cursor_at_end(const AppState& s) {
  if (!s.model.valid || s.model.algos.empty() || !s.model.algos[0].cursor) return true;
  const sim::Cursor& c = *s.model.algos[0].cursor;
  return c.position() >= c.size();
}

bool cursor_at_start(const AppState& s) {
  if (!s.model.valid || s.model.algos.empty() || !s.model.algos[0].cursor) return true;
  return s.model.algos[0].cursor->position() <= 0;
}

// The stage's chart, drawn as large as the stage.
void chart_stage(AppState& s, const std::string& id, ImVec2 size) {
  const analysis::ChartEntry* e = analysis::find_chart(id);
  if (!e) return;
  if (e->needs_results && !s.bench.have_results) {
    math_text("This scene shows measured results: open a results file (the scene's \"results\") to draw them.",
              color_error());
    return;
  }
  const analysis::ChartSpec& c = s.model.charts.of(*e);
  if (plot::BeginPlot(("stage-" + id).c_str(), c, size, s.view.ui_scale)) {
    if (e->shows_ai_at_cursor && s.model.valid)
      for (const AlgoView& v : s.model.algos) plot::PlotSeries(v.snap.ai_marker);
    plot::EndPlot();
  }
}

}  // namespace

bool presenter_start(AppState& s) {
  Presenter& p = s.presenter;
  if (p.scenes.empty()) return false;
  p.on = true;
  if (p.current < 0) enter_scene(s, 0);
  return true;
}

void enter_scene(AppState& s, int k) {
  Presenter& p = s.presenter;
  if (p.scenes.empty()) return;
  k = std::clamp(k, 0, static_cast<int>(p.scenes.size()) - 1);
  p.current = k;
  ++p.scenes_entered;
  p.error.clear();
  const Scene& sc = p.scenes[static_cast<size_t>(k)];
  s.playback.playing = false;
  try {
    apply_settings(s, sc.state, p.base_dir);
  } catch (const std::exception& e) {
    p.error = "scene " + std::to_string(k + 1) + ": " + e.what();
  }
  // Esc shows the lab's panels with the same view: the ring's, or the same chart.
  s.view.workspace = is_ring_stage(sc.stage) ? Workspace::ring : Workspace::one_gpu;
  if (sc.stage != "tiling" && sc.stage != "counters" && !is_ring_stage(sc.stage)) {
    s.view.tab = sc.stage;
    s.view.force_tab = true;
  }
}

void presenter_next(AppState& s) {
  if (!s.presenter.on) return;
  if (s.presenter.current + 1 < static_cast<int>(s.presenter.scenes.size())) enter_scene(s, s.presenter.current + 1);
}

void presenter_previous(AppState& s) {
  if (!s.presenter.on) return;
  if (s.presenter.current > 0) enter_scene(s, s.presenter.current - 1);
}

namespace {

// A ring stage that shows the step-through steps it first, like a tiling stage.
bool ring_steps(const Scene* sc) { return sc && (sc->stage == "ring" || sc->stage == "ring-step"); }

bool ring_at_end(const AppState& s) {
  const RingModel& m = s.ring.model;
  return !m.valid || m.step.step + 1 >= m.simulation.problem.gpus();
}

}  // namespace

void presenter_right(AppState& s) {
  const Scene* sc = current_scene(s);
  if (ring_steps(sc) && !ring_at_end(s)) {
    ring_step_by(s, 1);
  } else if (sc && sc->stage == "tiling" && !cursor_at_end(s)) {
    s.playback.playing = false;
    step_primary(s, 1);
  } else {
    presenter_next(s);
  }
}

void presenter_left(AppState& s) {
  const Scene* sc = current_scene(s);
  if (ring_steps(sc) && s.ring.model.valid && s.ring.model.step.step > 0) {
    ring_step_by(s, -1);
  } else if (sc && sc->stage == "tiling" && !cursor_at_start(s)) {
    s.playback.playing = false;
    step_primary(s, -1);
  } else {
    presenter_previous(s);
  }
}

void draw_presenter(AppState& s) {
  const Presenter& p = s.presenter;
  const Scene* sc = current_scene(s);
  const ImVec2 D = ImGui::GetIO().DisplaySize;
  const float W = std::max(D.x, 200.0f), H = std::max(D.y, 200.0f);
  const ImGuiStyle& style = ImGui::GetStyle();
  const float pad = style.WindowPadding.x;

  // The title bar: the scene's title, large, and its talking point; the
  // scene's number at the right. Its height is what they take at this width.
  const std::string counter = std::to_string(p.current + 1) + " / " + std::to_string(p.scenes.size());
  ImGui::PushFont(fonts().big);
  const float counter_w = ImGui::CalcTextSize(counter.c_str()).x;
  const float title_w = W - 4 * pad - counter_w;
  const ImVec2 title_size = math_text_size(sc ? sc->title : std::string("—"), title_w);
  ImGui::PopFont();
  const ImVec2 point_size = sc && !sc->point.empty() ? math_text_size(sc->point, W - 2 * pad) : ImVec2(0, 0);
  const float title_h = std::ceil(title_size.y + point_size.y + 2 * style.WindowPadding.y + style.ItemSpacing.y);
  const float strip_h = std::ceil(ImGui::GetFrameHeight() * 2 + style.ItemSpacing.y + 2 * style.WindowPadding.y);
  const float stage_h = std::max(40.0f, H - title_h - strip_h);

  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0.13f, 0.16f, 0.22f, 1.0f));
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(W, title_h));
  if (ImGui::Begin("##scene_title", nullptr, kStageFlags)) {
    ImGui::PushFont(fonts().big);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    math_text(sc ? sc->title : std::string("—"), ImVec4(1, 1, 1, 1), title_w);
    ImGui::GetWindowDrawList()->AddText(ImVec2(W - pad - counter_w, at.y), IM_COL32(170, 190, 220, 255), counter.c_str());
    ImGui::PopFont();
    if (sc && !sc->point.empty()) math_text(sc->point, ImVec4(0.85f, 0.88f, 0.92f, 1), W - 2 * pad);
  }
  ImGui::End();
  ImGui::PopStyleColor();

  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0, 0, 0, 0));
  ImGui::SetNextWindowPos(ImVec2(0, title_h));
  ImGui::SetNextWindowSize(ImVec2(W, stage_h));
  const std::string stage = sc ? sc->stage : std::string("tiling");
  if (ImGui::Begin("##stage", nullptr, kStageFlags)) {
    s.rect_tiling = {0, title_h, W, stage_h};
    s.rect_ring = s.rect_tiling;
    if (stage == "tiling") panel_tiling(s);
    else if (stage == "counters") counters_side_by_side(s);
    else if (is_ring_stage(stage)) ring_stage(s, stage);
    else chart_stage(s, stage, ImGui::GetContentRegionAvail());
  }
  ImGui::End();

  // The strip: what to press, where the lecture is, and the status line.
  ImGui::SetNextWindowPos(ImVec2(0, title_h + stage_h));
  ImGui::SetNextWindowSize(ImVec2(W, strip_h));
  if (ImGui::Begin("##strip", nullptr, kStageFlags)) {
    const RingModel& rm = s.ring.model;
    if (!p.error.empty()) {
      ImGui::TextColored(color_error(), "✕ %s", p.error.c_str());
    } else if (is_ring_stage(stage) && !rm.valid) {
      ImGui::TextColored(color_error(), "✕ %s", rm.errors.empty() ? "invalid inputs" : rm.errors.front().c_str());
    } else if (is_ring_stage(stage)) {
      ImGui::TextColored(color_note(), "%s", (sim::describe(rm.simulation.problem) + " on " + rm.compute.hw.display_name +
                                              ", links " + rm.topology.intra.id + " / " + rm.topology.inter.id).c_str());
    } else if (!s.model.valid) {
      ImGui::TextColored(color_error(), "✕ %s", s.model.errors.empty() ? "invalid inputs" : s.model.errors.front().c_str());
    } else {
      ImGui::TextColored(color_note(), "%s", (sim::describe(s.model.problem) + " on " + s.model.hw.display_name).c_str());
    }
    const char* keys = stage == "tiling" ? "PgDn / PgUp: scenes · → / ←: step (scenes at the ends) · Space: play · Esc: panels"
                       : stage == "ring" || stage == "ring-step"
                           ? "PgDn / PgUp: scenes · → / ←: the ring's step (scenes at the ends) · Esc: panels"
                           : "PgDn / PgUp or → / ←: scenes · Esc: the lab's panels";
    ImGui::TextColored(color_dim(), "%s", keys);
  }
  ImGui::End();
  ImGui::PopStyleColor();
}

}  // namespace flashlab::gui
