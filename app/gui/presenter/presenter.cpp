#include "presenter.hpp"

#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>
#include <vector>

#include "draw/math_view.hpp"
#include "draw/plot_tabs.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "model/chart_cache.hpp"
#include "model/model.hpp"
#include "presenter_stages.hpp"
#include "scene_base.hpp"
#include "script_keys.hpp"
#include "scenario_settings.hpp"
#include "draw/stage_effects.hpp"
#include "draw/theme.hpp"

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

// The stage of the current scene: the tiling view before the first scene.
const PresenterStage* current_stage(const AppState& s) {
  const Scene* sc = current_scene(s);
  return find_stage(sc ? sc->stage : std::string("tiling"));
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
    // Whole: the scenario's settings first, then the scene's own.
    if (p.base) restore_scene_base(s, *p.base, sc.state);
    apply_settings(s, sc.state, p.base_dir);
  } catch (const std::exception& e) {
    p.error = "scene " + std::to_string(k + 1) + ": " + e.what();
  }
  // Esc shows the lab's panels with the same view: the ring's, or the same chart.
  const PresenterStage* stage = find_stage(sc.stage);
  s.view.workspace = stage ? stage->workspace : Workspace::one_gpu;
  if (!stage || stage->opens_plot_tab) {
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

void presenter_right(AppState& s) {
  const Scene* sc = current_scene(s);
  const PresenterStage* stage = sc ? find_stage(sc->stage) : nullptr;
  if (!stage || !stage->step(s, 1)) presenter_next(s);
}

void presenter_left(AppState& s) {
  const Scene* sc = current_scene(s);
  const PresenterStage* stage = sc ? find_stage(sc->stage) : nullptr;
  if (!stage || !stage->step(s, -1)) presenter_previous(s);
}

const analysis::ChartEntry* shown_chart(const AppState& s) {
  if (s.presenter.on) {
    const Scene* sc = current_scene(s);
    return sc ? analysis::find_chart(sc->stage) : nullptr;
  }
  if (s.view.workspace == Workspace::ring || (s.view.hall_layout && !s.view.plots_large)) return nullptr;
  const PlotTab* t = find_plot_tab(s.view.tab);
  return t ? t->chart : nullptr;
}

void prepare_scenes(AppState& s) {
  const Presenter& p = s.presenter;
  if (!p.base || p.scenes.empty()) return;
  chart_cache(s);
  const int n = static_cast<int>(p.scenes.size()), from = std::max(0, p.current);
  for (int step = 0; step < n; ++step) {
    const Scene& sc = p.scenes[static_cast<size_t>((from + step) % n)];
    const analysis::ChartEntry* e = analysis::find_chart(sc.stage);
    if (!e || e->needs_results) continue;
    auto scratch = std::make_unique<AppState>();
    scratch->chart_cache = s.chart_cache;
    try {
      restore_scene_base(*scratch, *p.base, sc.state);
      apply_settings(*scratch, sc.state, p.base_dir);
    } catch (const std::exception&) {
      continue;  // said when the scene is entered
    }
    recompute(*scratch);
    chart_ahead(*scratch, *e);
  }
}

bool scenes_prepared(const AppState& s) { return !s.chart_cache || s.chart_cache->idle(); }

int charts_built_so_far(const AppState& s) { return s.chart_cache ? s.chart_cache->built() : 0; }

namespace {

// The projector shows black until B (or '.') again: the keys still work.
void draw_blackout(float W, float H) {
  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0, 0, 0, 1));
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(W, H));
  ImGui::Begin("##blackout", nullptr, kStageFlags);
  ImGui::End();
  ImGui::PopStyleColor();
}

// The keys of presenter mode, from the one key table, over the stage.
void draw_keys_overlay(const AppState& s, float W, float H) {
  std::vector<std::pair<std::string, std::string>> rows;
  for (const ScriptKey& k : script_keys())
    if (key_works(k, s)) rows.emplace_back(std::string(k.label), std::string(k.meaning));
  rows.emplace_back("F11", "full screen, and back");
  rows.emplace_back("F12", "a screenshot of the window");
  ImGui::SetNextWindowPos(ImVec2(W * 0.5f, H * 0.5f), ImGuiCond_Always, ImVec2(0.5f, 0.5f));
  ImGui::SetNextWindowBgAlpha(0.94f);
  if (ImGui::Begin("Keys of presenter mode (? to close)", nullptr,
                   ImGuiWindowFlags_AlwaysAutoResize | ImGuiWindowFlags_NoMove | ImGuiWindowFlags_NoCollapse |
                       ImGuiWindowFlags_NoSavedSettings)) {
    if (ImGui::BeginTable("##keys", 2, ImGuiTableFlags_RowBg)) {
      for (const auto& [key, what] : rows) {
        ImGui::TableNextRow();
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(key.c_str());
        ImGui::TableNextColumn();
        ImGui::TextUnformatted(what.c_str());
      }
      ImGui::EndTable();
    }
  }
  ImGui::End();
}

}  // namespace

void draw_presenter(AppState& s) {
  Presenter& p = s.presenter;
  const Scene* sc = current_scene(s);
  const ImVec2 D = ImGui::GetIO().DisplaySize;
  const float W = std::max(D.x, 200.0f), H = std::max(D.y, 200.0f);
  if (p.started_s < 0) p.started_s = ImGui::GetTime();
  if (p.blackout) {
    draw_blackout(W, H);
    return;
  }
  const ImGuiStyle& style = ImGui::GetStyle();
  const float pad = style.WindowPadding.x;
  const bool light = light_theme();

  // The title bar: the scene's title, large, and its talking point; the
  // scene's number at the right, the clock left of it when shown. Its height
  // is what they take at this width.
  const std::string counter = std::to_string(p.current + 1) + " / " + std::to_string(p.scenes.size());
  const std::string clock = p.clock ? clock_text(p.started_s, ImGui::GetTime()) : std::string();
  const float clock_w = clock.empty() ? 0.0f : ImGui::CalcTextSize(clock.c_str()).x + 2 * pad;
  ImGui::PushFont(fonts().big);
  const float counter_w = ImGui::CalcTextSize(counter.c_str()).x;
  const float title_w = std::max(40.0f, W - 4 * pad - counter_w - clock_w);
  const ImVec2 title_size = math_text_size(sc ? sc->title : std::string("—"), title_w);
  ImGui::PopFont();
  const ImVec2 point_size = sc && !sc->point.empty() ? math_text_size(sc->point, W - 2 * pad) : ImVec2(0, 0);
  const float title_h = std::ceil(title_size.y + point_size.y + 2 * style.WindowPadding.y + style.ItemSpacing.y);
  const float strip_h = std::ceil(ImGui::GetFrameHeight() * 2 + style.ItemSpacing.y + 2 * style.WindowPadding.y);
  const float stage_h = std::max(40.0f, H - title_h - strip_h);

  ImGui::PushStyleColor(ImGuiCol_WindowBg, light ? ImVec4(0.84f, 0.88f, 0.94f, 1.0f) : ImVec4(0.13f, 0.16f, 0.22f, 1.0f));
  ImGui::SetNextWindowPos(ImVec2(0, 0));
  ImGui::SetNextWindowSize(ImVec2(W, title_h));
  if (ImGui::Begin("##scene_title", nullptr, kStageFlags)) {
    ImGui::PushFont(fonts().big);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    const float big_h = ImGui::GetTextLineHeight();
    math_text(sc ? sc->title : std::string("—"), light ? ImVec4(0.02f, 0.03f, 0.06f, 1) : ImVec4(1, 1, 1, 1), title_w);
    ImDrawList* dl = ImGui::GetWindowDrawList();
    dl->AddText(ImVec2(W - pad - counter_w, at.y), light ? IM_COL32(25, 45, 85, 255) : IM_COL32(170, 190, 220, 255),
                counter.c_str());
    ImGui::PopFont();
    if (!clock.empty())
      dl->AddText(ImVec2(W - pad - counter_w - clock_w + pad, at.y + (big_h - ImGui::GetTextLineHeight()) / 2),
                  ImGui::GetColorU32(light ? ImVec4(0.2f, 0.24f, 0.32f, 1) : ImVec4(0.72f, 0.78f, 0.88f, 1)), clock.c_str());
    if (sc && !sc->point.empty())
      math_text(sc->point, light ? ImVec4(0.08f, 0.1f, 0.14f, 1) : ImVec4(0.85f, 0.88f, 0.92f, 1), W - 2 * pad);
  }
  ImGui::End();
  ImGui::PopStyleColor();

  ImGui::PushStyleColor(ImGuiCol_WindowBg, ImVec4(0, 0, 0, 0));
  ImGui::SetNextWindowPos(ImVec2(0, title_h));
  ImGui::SetNextWindowSize(ImVec2(W, stage_h));
  const PresenterStage* stage = current_stage(s);
  ImGuiWindow* stage_window = nullptr;
  if (ImGui::Begin(kStageWindow, nullptr, kStageFlags)) {
    stage_window = ImGui::GetCurrentWindow();
    s.rect_tiling = {0, title_h, W, stage_h};
    s.rect_ring = s.rect_tiling;
    if (stage) stage->draw(s, sc ? sc->stage : std::string(stage->name));
  }
  ImGui::End();
  // The stage as built, then what the hall needs of it: the light theme's
  // colours on views drawn for the dark one, the magnifier about the pointer.
  recolour_for_theme(stage_window);
  const ImGuiIO& io = ImGui::GetIO();
  const bool mouse = ImGui::IsMousePosValid(&io.MousePos);
  if (p.zoom && stage_window) {
    const ImVec2 centre = mouse ? io.MousePos : ImVec2(W / 2, title_h + stage_h / 2);
    magnify_drawn(stage_window, centre, 2.0f, ImVec4(0, title_h, W, title_h + stage_h));
  }

  // The strip: what to press, where the lecture is, and the status line.
  ImGui::SetNextWindowPos(ImVec2(0, title_h + stage_h));
  ImGui::SetNextWindowSize(ImVec2(W, strip_h));
  if (ImGui::Begin("##strip", nullptr, kStageFlags)) {
    const RingModel& rm = s.ring.model;
    const bool ring = stage && stage->workspace == Workspace::ring;
    if (!p.error.empty()) {
      ImGui::TextColored(color_error(), "✕ %s", p.error.c_str());
    } else if (ring && !rm.valid) {
      ImGui::TextColored(color_error(), "✕ %s", rm.errors.empty() ? "invalid inputs" : rm.errors.front().c_str());
    } else if (ring) {
      ImGui::TextColored(color_note(), "%s", (sim::describe(rm.simulation.problem) + " on " + rm.compute.hw.display_name +
                                              ", links " + rm.topology.intra.id + " / " + rm.topology.inter.id).c_str());
    } else if (!s.model.valid) {
      ImGui::TextColored(color_error(), "✕ %s", s.model.errors.empty() ? "invalid inputs" : s.model.errors.front().c_str());
    } else {
      ImGui::TextColored(color_note(), "%s", (sim::describe(s.model.problem) + " on " + s.model.hw.display_name).c_str());
    }
    if (stage) {
      // The stage's keys, then the hall's toggles from the key table where the line has room for them.
      const std::string keys = std::string(stage->key_hints) + " · ? keys";
      const std::string more = key_hints(s);
      const float room = ImGui::GetContentRegionAvail().x;
      const std::string line = !more.empty() && ImGui::CalcTextSize((keys + " · " + more).c_str()).x <= room
                                   ? keys + " · " + more
                                   : keys;
      ImGui::TextColored(color_dim(), "%s", line.c_str());
    }
  }
  ImGui::End();
  ImGui::PopStyleColor();
  if (p.show_keys) draw_keys_overlay(s, W, H);
  if (p.pointer && mouse) draw_pointer_ring(ImGui::GetForegroundDrawList(), io.MousePos, static_cast<float>(s.view.ui_scale));
}

}  // namespace flashlab::gui
