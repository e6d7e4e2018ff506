// What a headless run drives and watches, kept out of the frame loop: a
// scenario's script (settings at given frames), the random walk (random input
// and values every frame) and the --stats numbers (frame times, draw-list
// sizes, recomputes, exceptions, non-finite text in the charts), printed at
// the end as one JSON object. The frame loop calls it at fixed points.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "state/app_state.hpp"
#include "state/gui.hpp"
#include "random_walk.hpp"
#include "presenter/scenario.hpp"
#include "contrast_check.hpp"
#include "text_check.hpp"

struct ImDrawData;

namespace flashlab::gui {

class Probe {
 public:
  Probe(const Options& options, std::optional<Scenario> scenario);

  // Before the first frame: the scenario's settings, the walk's export folder.
  // An error line (the run ends with exit code 2), or empty.
  std::string start(AppState& s);
  // Each frame, before the model is brought up to date: the script's steps
  // due at `frame` and the walk's random values. An error line, or empty.
  std::string before_frame(AppState& s, int frame);
  // Between the backends' NewFrame and ImGui::NewFrame: the walk's input, or,
  // in a headless run, the pointer parked off-window (Xvfb parks it
  // mid-screen: no stray hover tooltips in a screenshot).
  void inject_input(AppState& s);

  void frame_begin();
  void recomputed(AppState& s);       // after each recompute of the model
  void charts_built(AppState& s);     // after a model chart was built (or taken from the cache) for the screen
  // After the keys (and the script) were handled: a scene entered starts the
  // clock of its change, which the frame that shows it stops.
  void input_handled(const AppState& s);
  void model_ready(const AppState& s);  // the frame's model, before drawing
  void exception(const std::string& what);  // a panel threw (the window goes on)
  // ImGui::Render done; `magnified`: the stage was drawn 2× about the pointer
  // (its text cut at the stage's edge on purpose: the text check skips it).
  void frame_built(bool magnified = false);
  // Before the draw data is rasterised; `scene`: the presenter's scene on
  // stage (from 0), -1 when none.
  void frame_drawn(const ImDrawData& dd, int scene);
  // After the draw data is rasterised, before the buffers swap: the text and
  // the data marks against the frame as drawn (`fb_width` × `fb_height`
  // pixels, `fb_scale` per display pixel).
  void frame_rendered(const ImDrawData& dd, int fb_width, int fb_height, float fb_scale);
  void frame_end();                   // after the buffer swap

  // Frames the script was held by "wait_bench" so far: they do not count
  // towards --frames. holding(): this frame was one of them.
  int held_frames() const { return held_frames_; }
  bool holding() const { return holding_; }

  // --stats: one JSON object on stdout.
  void finish(const AppState& s, int width, int height, const std::string& renderer) const;

 private:
  using Clock = std::chrono::steady_clock;

  Options options_;
  std::optional<Scenario> scenario_;
  size_t step_ = 0;  // next script step
  // "wait_bench": the script waits for the benchmark until this time.
  std::optional<std::chrono::steady_clock::time_point> wait_until_;
  double wait_s_ = 0;
  int held_frames_ = 0;
  bool holding_ = false;
  std::unique_ptr<RandomWalk> walk_;

  Clock::time_point t0_, t_built_;
  double cpu0_ = 0;
  std::vector<double> frame_ms_;
  std::set<std::string> algorithms_;
  sim::i64 invalid_frames_ = 0, exceptions_ = 0;
  std::string first_exception_;
  double max_recompute_ms_ = 0;
  int recomputes_ = 0;
  std::vector<double> draw_cmds_, vertices_;         // per frame: what the rasteriser gets
  std::map<std::string, int> vertices_by_list_;      // of the last frame, per window
  std::vector<double> build_ms_, raster_ms_;         // per frame: ImGui + panels; GL draw + swap + finish
  // Per frame: CPU time of every thread (llvmpipe's too); steadier than wall time on a busy machine.
  std::vector<double> cpu_ms_;
  TextCheck text_;     // the worst frame's clipped glyphs and overlapping runs
  int text_runs_ = 0;  // runs of text on the last frame
  // The lowest contrast of text and of marks over every frame checked, and
  // every run or mark under its bar (each named once).
  ContrastCheck contrast_;
  std::set<std::string> low_contrast_;
  bool magnified_ = false;    // this frame's stage is magnified
  int magnified_frames_ = 0;  // frames the text check skipped for it
  // The text each scene's stage showed, read from the last frame it was on.
  std::map<int, std::vector<TextLine>> scene_text_;
  // Scene changes: from the key (or step) that entered a scene to the end of
  // the frame that showed it, in ms.
  int scenes_entered_ = 0;
  std::optional<Clock::time_point> change_started_;
  std::vector<double> scene_change_ms_;
  bool wait_prepared_ = false;  // the script holds until the lecture's charts are built ahead
};

}  // namespace flashlab::gui
