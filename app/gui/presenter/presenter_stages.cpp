#include "presenter_stages.hpp"

#include <imgui.h>

#include "flashlab/analysis/charts/chart_table.hpp"
#include "draw/math_view.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "draw/plot.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

constexpr std::string_view kScheduleKeys =
    "PgDn / PgUp: scenes · → / ←: step (scenes at the ends) · Space: play · Esc: panels";
constexpr std::string_view kRingStepKeys = "PgDn / PgUp: scenes · → / ←: the ring's step (scenes at the ends) · Esc: panels";
constexpr std::string_view kSceneKeys = "PgDn / PgUp or → / ←: scenes · Esc: the lab's panels";

// The schedule's cursor of the first algorithm shown, one event on or back.
bool step_schedule(AppState& s, int direction) {
  const sim::Cursor* c = s.model.valid && !s.model.algos.empty() ? s.model.algos[0].cursor.get() : nullptr;
  if (!c || (direction > 0 ? c->position() >= c->size() : c->position() <= 0)) return false;
  s.playback.playing = false;
  step_primary(s, direction);
  return true;
}

// The ring's step, from 0 to P − 1.
bool step_ring(AppState& s, int direction) {
  const RingModel& m = s.ring.model;
  if (!m.valid || (direction > 0 ? m.step.step + 1 >= m.simulation.problem.gpus() : m.step.step <= 0)) return false;
  ring_step_by(s, direction);
  return true;
}

bool step_nothing(AppState&, int) { return false; }

// The stage's chart, drawn as large as the stage.
void draw_chart(AppState& s, const std::string& id) {
  const analysis::ChartEntry* e = analysis::find_chart(id);
  if (!e) return;
  if (e->needs_results && !s.bench.have_results) {
    math_text("This scene shows measured results: open a results file (the scene's \"results\") to draw them.",
              color_error());
    return;
  }
  const analysis::ChartSpec& c = s.model.charts.of(*e);
  if (plot::BeginPlot(("stage-" + id).c_str(), c, ImGui::GetContentRegionAvail(), s.view.ui_scale)) {
    // What the scene says its chart shows is placed first on a crowded chart.
    const Presenter& p = s.presenter;
    if (p.current >= 0 && static_cast<size_t>(p.current) < p.scenes.size()) plot::NameFirst(p.scenes[static_cast<size_t>(p.current)].shows);
    if (e->shows_ai_at_cursor && s.model.valid)
      for (const AlgoView& v : s.model.algos) plot::PlotSeries(v.snap.ai_marker);
    plot::EndPlot();
  }
}

void draw_tiling(AppState& s, const std::string&) { panel_tiling(s); }
void draw_counters(AppState& s, const std::string&) { counters_side_by_side(s); }
void draw_ring(AppState& s, const std::string&) { ring_stage(s, RingParts::timeline_and_step); }
void draw_ring_timeline(AppState& s, const std::string&) { ring_stage(s, RingParts::timeline); }
void draw_ring_step(AppState& s, const std::string&) { ring_stage(s, RingParts::step); }

bool is_chart_stage(const PresenterStage& st) { return st.name == kChartStageName; }

// "a, b, c" of the named stages in `w` (the chart stage left out).
std::string names_in(Workspace w) {
  std::string out;
  for (const PresenterStage& st : presenter_stages())
    if (st.workspace == w && !is_chart_stage(st)) out += (out.empty() ? "" : ", ") + std::string(st.name);
  return out;
}

}  // namespace

const std::vector<PresenterStage>& presenter_stages() {
  static const std::vector<PresenterStage> stages{
      {"tiling", "the tiling view: the schedule's blocks, stepped by → and ←", Workspace::one_gpu, false, step_schedule,
       kScheduleKeys, draw_tiling},
      {"counters", "the counters of the two algorithms side by side, with the ratio between them", Workspace::one_gpu,
       false, step_nothing, kSceneKeys, draw_counters},
      {kChartStageName, "a chart of the chart table, as large as the stage (flashlab export --help lists the ids)",
       Workspace::one_gpu, true, step_nothing, kSceneKeys, draw_chart},
      {"ring", "the ring across GPUs: its timeline over its step-through, stepped by → and ←", Workspace::ring, false,
       step_ring, kRingStepKeys, draw_ring},
      {"ring-timeline", "the ring's timeline per GPU with its totals", Workspace::ring, false, step_nothing, kSceneKeys,
       draw_ring_timeline},
      {"ring-step", "the ring's step-through, stepped by → and ←", Workspace::ring, false, step_ring, kRingStepKeys,
       draw_ring_step},
  };
  return stages;
}

const PresenterStage* find_stage(std::string_view name) {
  const PresenterStage* chart = nullptr;
  for (const PresenterStage& st : presenter_stages()) {
    if (is_chart_stage(st)) chart = &st;
    else if (st.name == name) return &st;
  }
  return chart && analysis::find_chart(name) ? chart : nullptr;
}

std::string unknown_stage_message(std::string_view name) {
  return "stage must be " + names_in(Workspace::one_gpu) + " or a chart (" + analysis::chart_id_list() +
         "), or the ring's " + names_in(Workspace::ring) + ", not '" + std::string(name) + "'";
}

}  // namespace flashlab::gui
