#include "probe.hpp"

#include "presenter/presenter.hpp"
#include "presenter/scene_base.hpp"

#include <GL/gl.h>
#include <imgui.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cctype>
#include <cfloat>
#include <cmath>
#include <ctime>
#include <filesystem>
#include <iostream>
#include <optional>
#include <thread>
#include <unordered_set>

#include <nlohmann/json.hpp>

#include "panels/panels.hpp"
#include "draw/drawn_marks.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

// Text the charts will show: none may read NaN or ∞ (counted like numbers).
// Quoted text ('…') is the user's own input echoed in an error: not counted.
void check_chart_text(AppState& s) {
  auto bad = [](const std::string& quoted) {
    std::string t;
    bool in_quote = false;
    for (char ch : quoted) {
      if (ch == '\'') in_quote = !in_quote;
      else if (!in_quote) t += ch;
    }
    if (t.find("NaN") != std::string::npos || t.find("nan") != std::string::npos || t.find("∞") != std::string::npos)
      return true;
    for (size_t p = t.find("inf"); p != std::string::npos; p = t.find("inf", p + 1)) {
      const bool left = p == 0 || !std::isalpha(static_cast<unsigned char>(t[p - 1]));
      const bool right = p + 3 >= t.size() || !std::isalpha(static_cast<unsigned char>(t[p + 3]));
      if (left && right) return true;
    }
    return false;
  };
  for (const analysis::ChartSpec& ch : s.model.charts.specs) {
    std::vector<const std::string*> texts{&ch.title, &ch.subtitle};
    for (const auto& n : ch.notes) texts.push_back(&n);
    for (const auto& sr : ch.series) {
      texts.push_back(&sr.name);
      for (const auto& l : sr.point_labels) texts.push_back(&l);
    }
    for (const auto& r : ch.ref_lines) texts.push_back(&r.label);
    for (const auto& m : ch.markers) texts.push_back(&m.label);
    for (const auto& a : ch.annotations) texts.push_back(&a.text);
    for (const std::string* t : texts)
      if (bad(*t)) {
        if (s.checks.nonfinite++ == 0) s.checks.first_nonfinite = "chart " + ch.id + ": " + *t;
      }
  }
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const double idx = p * static_cast<double>(v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(idx)), hi = static_cast<size_t>(std::ceil(idx));
  return v[lo] + (v[hi] - v[lo]) * (idx - static_cast<double>(lo));
}

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

double ms_between(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double, std::milli>(b - a).count();
}

}  // namespace

Probe::Probe(const Options& options, std::optional<Scenario> scenario)
    : options_(options), scenario_(std::move(scenario)) {
  if (options_.random_walk) walk_ = std::make_unique<RandomWalk>(*options_.random_walk);
}

std::string Probe::start(AppState& s) {
  std::string error;
  if (scenario_) {
    try {
      apply_settings(s, scenario_->settings, scenario_->base_dir);
      if (const std::string bad = check_scene_states(*scenario_); !bad.empty())
        return "--scenario " + scenario_->path + ", " + bad;
      s.presenter.scenes = scenario_->scenes;
      s.presenter.base_dir = scenario_->base_dir;
      if (!s.presenter.scenes.empty()) s.presenter.base = capture_scene_base(s);
      if (scenario_->presenter) {
        presenter_start(s);
        if (!s.presenter.error.empty()) error = "--scenario " + scenario_->path + ", " + s.presenter.error;
      }
      scenes_entered_ = s.presenter.scenes_entered;
      prepare_scenes(s);
    } catch (const std::exception& e) {
      error = "--scenario " + scenario_->path + ": " + e.what();
    }
  }
  if (walk_) s.view.export_dir = (std::filesystem::temp_directory_path() / "flashlab-random-walk").string();
  record_marks(options_.stats);
  return error;
}

std::string Probe::before_frame(AppState& s, int frame) {
  holding_ = false;
  if (scenario_ && wait_until_) {
    if (bench_busy(s)) {
      if (Clock::now() > *wait_until_) {
        s.bench.job.cancel = true;
        wait_until_.reset();
        return "--scenario " + scenario_->path + ": wait_bench: the benchmark did not finish within " +
               std::to_string(static_cast<long long>(wait_s_)) + " s (cancelled)";
      }
      holding_ = true;
      ++held_frames_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));  // a headless run need not spin while the GPU works
      return "";
    }
    wait_until_.reset();
  }
  if (scenario_ && wait_prepared_) {
    if (!scenes_prepared(s)) {
      holding_ = true;
      ++held_frames_;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
      return "";
    }
    wait_prepared_ = false;
  }
  if (scenario_) {
    const int script_frame = frame - held_frames_;
    try {
      for (; step_ < scenario_->script.size() && scenario_->script[step_].frame <= script_frame; ++step_) {
        const nlohmann::json& action = scenario_->script[step_].action;
        apply_script_step(s, action, scenario_->base_dir);
        if (action.contains("wait_prepared") && action["wait_prepared"].get<bool>()) {
          wait_prepared_ = true;
          ++step_;
          break;  // the steps after it wait for the charts
        }
        if (action.contains("wait_bench")) {
          wait_s_ = parse_wait_bench(action["wait_bench"]);
          wait_until_ = Clock::now() + std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(wait_s_));
          ++step_;
          break;  // the steps after it wait for the benchmark
        }
      }
    } catch (const std::exception& e) {
      return "--scenario " + scenario_->path + ", step at frame " + std::to_string(scenario_->script[step_].frame) + ": " +
             e.what();
    }
  }
  if (walk_) walk_->mutate_state(s);
  return "";
}

void Probe::inject_input(AppState& s) {
  if (walk_) walk_->inject_input(s);
  else if (options_.frames > 0)
    ImGui::GetIO().MousePos = s.view.script_mouse ? ImVec2(s.view.script_mouse_x, s.view.script_mouse_y) : ImVec2(-FLT_MAX, -FLT_MAX);
}

void Probe::frame_begin() {
  clear_drawn_marks();
  t0_ = Clock::now();
  cpu0_ = process_cpu_ms();
}

void Probe::recomputed(AppState& s) {
  check_chart_text(s);
  ++recomputes_;
  max_recompute_ms_ = std::max(max_recompute_ms_, s.model.recompute_ms);
}

void Probe::charts_built(AppState& s) { check_chart_text(s); }

void Probe::input_handled(const AppState& s) {
  if (s.presenter.scenes_entered != scenes_entered_) {
    scenes_entered_ = s.presenter.scenes_entered;
    change_started_ = t0_;  // the frame's start: the key was handled in it
  }
}

void Probe::model_ready(const AppState& s) {
  for (const AlgoView& v : s.model.algos) algorithms_.insert(std::string(sim::to_string(v.algo)));
  if (!s.model.valid) ++invalid_frames_;
}

void Probe::exception(const std::string& what) {
  if (exceptions_++ == 0) first_exception_ = what;
}

void Probe::frame_built(bool magnified) {
  t_built_ = Clock::now();
  magnified_ = magnified;
  if (magnified) ++magnified_frames_;
}

void Probe::frame_drawn(const ImDrawData& dd, int scene) {
  int cmds = 0;
  for (int k = 0; k < dd.CmdListsCount; ++k) cmds += dd.CmdLists[k]->CmdBuffer.Size;
  draw_cmds_.push_back(cmds);
  vertices_.push_back(dd.TotalVtxCount);
  for (int k = 0; k < dd.CmdListsCount; ++k) {
    const char* owner = dd.CmdLists[k]->_OwnerName ? dd.CmdLists[k]->_OwnerName : "?";
    vertices_by_list_[owner] = dd.CmdLists[k]->VtxBuffer.Size;
  }
  if (magnified_) return;  // the stage magnified: its text is cut at the stage's edge on purpose
  // The text as drawn: cut off at a panel's edge, or printed over other text.
  // The worst frame of the run is what the stats report.
  const ImGuiIO& io = ImGui::GetIO();
  // A scene on stage is read back as characters, for its claims (the atlas is
  // indexed each time: a UI scale change rebuilds it).
  const bool read = options_.stats && scene >= 0;
  const std::optional<GlyphIndex> glyphs = read ? std::optional<GlyphIndex>(GlyphIndex(*io.Fonts)) : std::nullopt;
  // The windows a scrollbar scrolls up and down: a line half scrolled into view at their edge is not cut off.
  std::unordered_set<std::string> scrolling;
  // A window that may scroll and whose content runs past its bottom in this
  // frame counts too: on its first frame its scrollbar is not there yet.
  // (`Active`: drawn in this frame, the one read back; `WasActive` is the frame before.)
  for (const ImGuiWindow* w : GImGui->Windows) {
    if (!w->Active) continue;
    const bool overflows = !(w->Flags & ImGuiWindowFlags_NoScrollbar) && w->DC.CursorMaxPos.y > w->InnerRect.Max.y + 0.5f;
    if ((w->ScrollbarY && w->ScrollMax.y > 0) || overflows) scrolling.insert(w->Name);
  }
  const TextCheck t = check_text(dd, io.Fonts->TexID, io.Fonts->TexUvWhitePixel, glyphs ? &*glyphs : nullptr, &scrolling);
  text_runs_ = t.runs;
  if (read) scene_text_[scene] = t.lines;
  if (t.clipped_glyphs > text_.clipped_glyphs) {
    text_.clipped_glyphs = t.clipped_glyphs;
    text_.first_clipped = "frame " + std::to_string(frame_ms_.size()) + ": " + t.first_clipped;
  }
  if (t.overlapping_runs > text_.overlapping_runs) {
    text_.overlapping_runs = t.overlapping_runs;
    text_.first_overlap = "frame " + std::to_string(frame_ms_.size()) + ": " + t.first_overlap;
  }
}

void Probe::frame_rendered(const ImDrawData& dd, int fb_width, int fb_height, float fb_scale) {
  if (!options_.stats || magnified_) return;
  const ImGuiIO& io = ImGui::GetIO();
  const GlyphIndex glyphs(*io.Fonts);
  const ContrastCheck c = check_contrast(dd, io.Fonts->TexID, io.Fonts->TexUvWhitePixel, read_frame(fb_width, fb_height),
                                         fb_scale, drawn_marks(), &glyphs);
  contrast_.texts += c.texts;
  contrast_.marks += c.marks;
  if (c.worst_text < contrast_.worst_text) contrast_.worst_text = c.worst_text, contrast_.worst_text_at = c.worst_text_at;
  if (c.worst_mark < contrast_.worst_mark) contrast_.worst_mark = c.worst_mark, contrast_.worst_mark_at = c.worst_mark_at;
  // Each low run or mark once, whatever the frames that showed it: its message less where it was drawn.
  for (const std::string& l : c.low) {
    const std::string key = l.substr(0, l.rfind(" at ("));
    if (!low_contrast_.insert(key).second) continue;
    (l.rfind("text ", 0) == 0 ? contrast_.low_texts : contrast_.low_marks)++;
    if (contrast_.low.size() < 40) contrast_.low.push_back(l);
  }
}

void Probe::frame_end() {
  if (options_.stats) glFinish();  // count the rendering in the frame, not in the next one
  const Clock::time_point t1 = Clock::now();
  frame_ms_.push_back(ms_between(t0_, t1));
  if (change_started_ && !holding_) {
    scene_change_ms_.push_back(ms_between(*change_started_, t1));
    change_started_.reset();
  }
  build_ms_.push_back(ms_between(t0_, t_built_));
  raster_ms_.push_back(frame_ms_.back() - build_ms_.back());
  cpu_ms_.push_back(process_cpu_ms() - cpu0_);
}

void Probe::finish(const AppState& s, int width, int height, const std::string& renderer) const {
  if (!options_.stats) return;
  // The first frames upload the font atlas and warm caches: not steady state.
  const size_t warm = frame_ms_.size() > 40 ? 10 : 0;
  const std::vector<double> steady(frame_ms_.begin() + static_cast<std::ptrdiff_t>(warm), frame_ms_.end());
  nlohmann::json j;
  j["frames"] = frame_ms_.size();
  j["warmup_frames_excluded"] = warm;
  j["median_frame_ms"] = percentile(steady, 0.5);
  j["p95_frame_ms"] = percentile(steady, 0.95);
  j["max_frame_ms"] = steady.empty() ? 0.0 : *std::max_element(steady.begin(), steady.end());
  j["window"] = {{"width", width}, {"height", height}};
  j["median_frame_cpu_ms"] = percentile(std::vector<double>(cpu_ms_.begin() + static_cast<std::ptrdiff_t>(warm), cpu_ms_.end()), 0.5);
  j["median_build_ms"] = percentile(build_ms_, 0.5);    // input, model updates, panels, ImGui::Render
  j["median_raster_ms"] = percentile(raster_ms_, 0.5);   // OpenGL drawing, swap and glFinish
  j["median_draw_cmds"] = percentile(draw_cmds_, 0.5);
  j["vertices_by_window"] = vertices_by_list_;
  j["median_vertices"] = percentile(vertices_, 0.5);
  j["ui_scale"] = s.view.ui_scale;
  j["gl_renderer"] = renderer;
  j["nonfinite_values"] = s.checks.nonfinite;
  j["first_nonfinite"] = s.checks.first_nonfinite;
  j["exceptions"] = exceptions_;
  j["first_exception"] = first_exception_;
  j["invalid_frames"] = invalid_frames_;
  j["recomputes"] = recomputes_;
  j["max_recompute_ms"] = max_recompute_ms_;
  j["tabs_visited"] = s.tabs_visited;
  j["algorithms_shown"] = std::vector<std::string>(algorithms_.begin(), algorithms_.end());
  j["concepts_shown"] = s.rect_concepts.w > 0;
  j["concepts_rect"] = {s.rect_concepts.x, s.rect_concepts.y, s.rect_concepts.w, s.rect_concepts.h};  // where the layout put it
  j["random_walk"] = options_.random_walk.has_value();
  j["model_valid"] = s.model.valid;
  j["status"] = s.view.status;  // the status line as the last frame showed it
  j["text_runs"] = text_runs_;
  j["clipped_glyphs"] = text_.clipped_glyphs;
  j["first_clipped"] = text_.first_clipped;
  j["overlapping_text"] = text_.overlapping_runs;
  j["first_overlap"] = text_.first_overlap;
  j["magnified_frames"] = magnified_frames_;  // not text-checked
  // WCAG AA on the frames as drawn: text 4.5 : 1, lines and markers 3 : 1.
  const auto two = [](double v) { return std::round(v * 100) / 100; };
  j["contrast_texts"] = contrast_.texts;
  j["contrast_marks"] = contrast_.marks;
  j["worst_text_contrast"] = two(contrast_.worst_text);
  j["worst_text_at"] = contrast_.worst_text_at;
  j["worst_mark_contrast"] = two(contrast_.worst_mark);
  j["worst_mark_at"] = contrast_.worst_mark_at;
  j["low_contrast_texts"] = contrast_.low_texts;
  j["low_contrast_marks"] = contrast_.low_marks;
  j["low_contrast"] = contrast_.low;
  j["theme"] = theme_name(s.view.theme);
  // Each scene's claims ("shows") against the text its stage showed.
  int claims = 0, missing = 0, unseen = 0;
  nlohmann::json missing_list = nlohmann::json::array();
  for (size_t k = 0; k < s.presenter.scenes.size(); ++k) {
    const Scene& sc = s.presenter.scenes[k];
    const auto seen = scene_text_.find(static_cast<int>(k));
    for (const std::string& claim : sc.shows) {
      ++claims;
      if (seen == scene_text_.end()) {
        ++unseen;
      } else if (!text_shows(seen->second, kStageWindow, claim)) {
        ++missing;
        missing_list.push_back("scene " + std::to_string(k + 1) + " (" + sc.title + "): " + claim);
      }
    }
  }
  j["claims"] = claims;
  j["claims_missing"] = missing;
  j["claims_not_on_stage"] = unseen;  // scenes the run never showed
  j["missing_claims"] = missing_list;
  j["presenter"] = s.presenter.on;
  j["scene"] = s.presenter.current + 1;  // 1-based; 0: none
  j["scenes"] = s.presenter.scenes.size();
  j["scenes_entered"] = s.presenter.scenes_entered;
  // From a key that changed the scene to the end of the frame that showed it.
  j["scene_changes"] = scene_change_ms_.size();
  j["max_scene_change_ms"] = scene_change_ms_.empty() ? 0.0 : *std::max_element(scene_change_ms_.begin(), scene_change_ms_.end());
  j["scene_change_ms"] = scene_change_ms_;
  j["charts_built"] = charts_built_so_far(s);
  j["status_is_error"] = s.view.status_is_error;
  j["hall_layout"] = s.view.hall_layout;
  j["workspace"] = s.view.workspace == Workspace::ring ? "ring" : "one-gpu";
  j["ring_valid"] = s.ring.model.valid;
  if (s.ring.model.valid) {
    j["ring_problem"] = sim::describe(s.ring.model.simulation.problem);
    j["ring_step"] = s.ring.model.step.step;
    j["ring_lanes"] = s.ring.model.lanes.size();
    j["ring_measured_run"] = s.ring.model.measured.run + 1;  // 0: none
    j["ring_recompute_ms"] = s.ring.model.recompute_ms;
  } else {
    j["ring_error"] = s.ring.model.errors.empty() ? std::string() : s.ring.model.errors.front();
  }
  if (s.model.valid) {
    j["problem"] = sim::describe(s.model.problem);
    j["events"] = s.model.algos[0].cursor->size();
    j["position"] = s.model.algos[0].cursor->position();
  }
  std::cout << j.dump() << std::endl;
}

}  // namespace flashlab::gui
