// The main loop: GLFW window, OpenGL 3.3 core, Dear ImGui. Per frame: input,
// recompute the model only if an input changed, draw every panel, render,
// screenshot on request. What headless runs drive and measure (scenario
// scripts, the random walk, --stats) is the probe's (probe.hpp).
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "state/app_state.hpp"
#include "flashlab/analysis/profiles/datasheet.hpp"
#include "state/bench_backend.hpp"
#include "state/format.hpp"
#include "state/gui.hpp"
#include "draw/imgui_canvas.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "checks/probe.hpp"
#include "model/ring_model.hpp"
#include "presenter/presenter.hpp"
#include "presenter/scenario.hpp"
#include "checks/screenshot.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

// A repeating 16×1 texture: `on` of 16 texels opaque white, the rest clear.
GLuint make_dash_texture(int on) {
  unsigned char px[16 * 4];
  for (int k = 0; k < 16; ++k) {
    px[k * 4] = px[k * 4 + 1] = px[k * 4 + 2] = 255;
    px[k * 4 + 3] = k < on ? 255 : 0;
  }
  GLuint tex = 0;
  glGenTextures(1, &tex);
  glBindTexture(GL_TEXTURE_2D, tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_LINEAR);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_REPEAT);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 1);
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA, 16, 1, 0, GL_RGBA, GL_UNSIGNED_BYTE, px);
  return tex;
}

std::string g_glfw_error;
void on_glfw_error(int code, const char* text) { g_glfw_error = std::to_string(code) + ": " + (text ? text : "?"); }

// Every key press queued as GLFW reports it (ImGui's backend sees it too): a
// press and its release inside one long frame would otherwise never show.
std::vector<KeyPress>* g_keys = nullptr;
GLFWkeyfun g_imgui_key = nullptr;
void on_key(GLFWwindow* w, int key, int scancode, int action, int mods) {
  if (g_imgui_key) g_imgui_key(w, key, scancode, action, mods);
  if (g_keys && action != GLFW_RELEASE && key != GLFW_KEY_UNKNOWN) g_keys->push_back({key, mods, action == GLFW_REPEAT});
}

// Each panel a screenshot can be cropped to, and where the last frame drew it.
const std::vector<std::pair<std::string, AppState::PanelRect AppState::*>>& panel_rects() {
  static const std::vector<std::pair<std::string, AppState::PanelRect AppState::*>> panels{
      {"controls", &AppState::rect_controls}, {"tiling", &AppState::rect_tiling},
      {"counters", &AppState::rect_counters}, {"plots", &AppState::rect_plots},
      {"concepts", &AppState::rect_concepts}, {"ring", &AppState::rect_ring},
      {"ring-step", &AppState::rect_ring_step}};
  return panels;
}

PixelRect panel_crop(const AppState& s, const std::string& panel, double fb_scale) {
  for (const auto& [name, rect] : panel_rects())
    if (name == panel) {
      const AppState::PanelRect& r = s.*rect;
      return {static_cast<int>(r.x * fb_scale), static_cast<int>(r.y * fb_scale), static_cast<int>(r.w * fb_scale),
              static_cast<int>(r.h * fb_scale)};
    }
  return {};
}

void rebuild_fonts(AppState& s, double scale) {
  ImGui_ImplOpenGL3_DestroyFontsTexture();
  Fonts f;
  s.view.font_note = load_fonts(f, scale);
  apply_theme(scale);
  ImGui_ImplOpenGL3_CreateFontsTexture();
  s.view.ui_scale = scale;
}

void toggle_fullscreen(GLFWwindow* w, AppState& s, int& saved_x, int& saved_y, int& saved_w, int& saved_h) {
  GLFWmonitor* mon = glfwGetPrimaryMonitor();
  if (!s.view.fullscreen) {
    const GLFWvidmode* mode = mon ? glfwGetVideoMode(mon) : nullptr;
    if (!mode) {
      s.view.status = "full screen: no monitor reported by the display";
      s.view.status_is_error = true;
      return;
    }
    glfwGetWindowPos(w, &saved_x, &saved_y);
    glfwGetWindowSize(w, &saved_w, &saved_h);
    glfwSetWindowMonitor(w, mon, 0, 0, mode->width, mode->height, mode->refreshRate);
    s.view.fullscreen = true;
  } else {
    glfwSetWindowMonitor(w, nullptr, saved_x, saved_y, saved_w, saved_h, 0);
    s.view.fullscreen = false;
  }
}

}  // namespace

bool built() { return true; }

const std::vector<std::string>& screenshot_panels() {
  static const std::vector<std::string> names = [] {
    std::vector<std::string> v;
    for (const auto& p : panel_rects()) v.push_back(p.first);
    return v;
  }();
  return names;
}

RunResult run(const Options& opt) {
  AppState s;
  set_screen_checks(&s.checks);
  register_builtin_bench_backends();
  std::optional<Scenario> sc;
  if (!opt.scenario.empty()) {
    try {
      sc = load_scenario(opt.scenario);
    } catch (const std::exception& e) {
      return {2, std::string("--scenario ") + e.what(), false};
    }
  }
  if (opt.ui_scale != 0 && !(opt.ui_scale >= 1.0 && opt.ui_scale <= 3.0))
    return {2, "--ui-scale must be between 1.0 and 3.0", false};
  const std::optional<Theme> cli_theme = opt.theme.empty() ? std::nullopt : parse_theme(opt.theme);
  if (!opt.theme.empty() && !cli_theme) return {2, "--theme must be dark or light, not '" + opt.theme + "'", false};
  const int width = sc && sc->width ? *sc->width : opt.width;
  const int height = sc && sc->height ? *sc->height : opt.height;

  glfwSetErrorCallback(on_glfw_error);
  if (!glfwInit())
    return {2, "cannot open a window: GLFW could not start (" + g_glfw_error + "); is there a display (DISPLAY or WAYLAND_DISPLAY)?", true};
  glfwWindowHint(GLFW_CONTEXT_VERSION_MAJOR, 3);
  glfwWindowHint(GLFW_CONTEXT_VERSION_MINOR, 3);
  glfwWindowHint(GLFW_OPENGL_PROFILE, GLFW_OPENGL_CORE_PROFILE);
  glfwWindowHint(GLFW_OPENGL_FORWARD_COMPAT, GLFW_TRUE);
  GLFWwindow* window = glfwCreateWindow(width, height, "FlashLab", nullptr, nullptr);
  if (!window) {
    glfwTerminate();
    return {2, "cannot create an OpenGL 3.3 core window (" + g_glfw_error + ")", true};
  }
  glfwMakeContextCurrent(window);
  // Headless runs measure frames: no waiting for vertical sync.
  glfwSwapInterval(opt.frames > 0 ? 0 : 1);

  IMGUI_CHECKVERSION();
  ImGui::CreateContext();
  ImGuiIO& io = ImGui::GetIO();
  io.IniFilename = nullptr;  // the layout is fixed: no imgui.ini in the user's folder
  io.LogFilename = nullptr;
  ImGui_ImplGlfw_InitForOpenGL(window, true);
  g_keys = &s.keys;
  g_imgui_key = glfwSetKeyCallback(window, on_key);
  if (!ImGui_ImplOpenGL3_Init("#version 330 core")) {
    ImGui_ImplGlfw_Shutdown();
    ImGui::DestroyContext();
    glfwDestroyWindow(window);
    glfwTerminate();
    return {2, "OpenGL 3.3 could not be loaded by the ImGui backend", true};
  }
  // Dashes 6 on / 4 off and dots 1.2 on / 2.5 off, in line widths: the same
  // patterns the exporters draw.
  const GLuint dash_tex = make_dash_texture(10), dot_tex = make_dash_texture(5);
  set_dash_textures({reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(dash_tex)),
                     reinterpret_cast<ImTextureID>(static_cast<std::uintptr_t>(dot_tex))});
  const char* gl_renderer = reinterpret_cast<const char*>(glGetString(GL_RENDERER));
  const std::string renderer = gl_renderer ? gl_renderer : "unknown";

  RunResult result;
  auto fail = [&](const std::string& msg) {
    if (result.exit_code == 0) result = {2, msg, false};
  };
  double scale = 1.0;
  if (sc && sc->settings.contains("ui_scale") && sc->settings["ui_scale"].is_number())
    scale = std::clamp(sc->settings["ui_scale"].get<double>(), 1.0, 3.0);
  if (opt.ui_scale > 0) scale = opt.ui_scale;
  {
    Fonts f;
    s.view.font_note = load_fonts(f, scale);
    apply_theme(scale);
    s.view.ui_scale = scale;
  }
  rebuild_bench_charts(s);
  Probe probe(opt, std::move(sc));
  if (const std::string e = probe.start(s); !e.empty()) fail(e);
  if (!opt.ring_results.empty()) {
    open_ring_results(s, opt.ring_results);
    if (s.view.status_is_error) fail("--ring-results: " + s.ring.results.error);
    s.view.workspace = Workspace::ring;
    // The file's GPU as the hardware (its datasheet preset); the run shown is
    // the one opening the file chose (ring_run_to_open).
    const sim::MeasuredRuns& runs = s.ring.results.runs;
    if (const auto hw = analysis::match_datasheet(runs.meta.gpu, runs.meta.sm_count,
                                                  analysis::datasheet_presets())) {
      s.inputs.hw_preset = hw->name;
      s.inputs.hw_file.clear();
    }
  }
  if (opt.ui_scale > 0) s.view.pending_ui_scale = 0;  // the command line wins over the scenario
  if (cli_theme) s.view.theme = *cli_theme;  // the command line wins over the scenario
  if (opt.fullscreen) s.view.toggle_fullscreen = true;
  int saved_x = 0, saved_y = 0, saved_w = width, saved_h = height;

  for (int frame = 0; result.exit_code == 0 && !glfwWindowShouldClose(window); ++frame) {
    if (opt.frames > 0 && frame - probe.held_frames() >= opt.frames) break;  // frames held by wait_bench do not count
    probe.frame_begin();
    s.frame = static_cast<std::uint64_t>(frame);
    // Interactive and idle (not playing, no benchmark running): sleep until an
    // event or a quarter second, instead of redrawing an unchanged window at
    // full speed — on a software renderer that is a whole CPU core.
    const bool idle = opt.frames == 0 && !s.playback.playing && !s.bench.job.running && frame > 2;
    if (idle) glfwWaitEventsTimeout(0.25);
    else glfwPollEvents();
    if (const std::string e = probe.before_frame(s, frame); !e.empty()) {
      fail(e);
      break;
    }
    if (s.view.theme != current_theme()) {  // a key pressed last frame, a script step
      set_theme(s.view.theme);
      apply_theme(s.view.ui_scale);
    }
    if (s.view.pending_ui_scale > 0) {
      rebuild_fonts(s, std::clamp(s.view.pending_ui_scale, 1.0, 3.0));
      s.view.pending_ui_scale = 0;
    }
    const auto bring_model_up_to_date = [&] {
      if (needs_recompute(s)) {
        recompute(s);
        probe.recomputed(s);
      }
      if (ring_needs_recompute(s)) {  // after the one-GPU model: the ring reuses its hardware
        recompute_ring(s);
        probe.recomputed(s);
      }
      apply_cursor_request(s);
      apply_ring_step_request(s);
    };
    bring_model_up_to_date();
    // The keys pressed since the last frame, before it is built: the frame
    // shows the scene a clicker moved to, with its model.
    try {
      handle_keys(s);
    } catch (const std::exception& e) {
      probe.exception(e.what());
      s.view.status = std::string("internal error (please report): ") + e.what();
      s.view.status_is_error = true;
    }
    bring_model_up_to_date();
    probe.input_handled(s);
    // The chart on screen, from the chart cache when it was built ahead.
    if (const analysis::ChartEntry* shown = shown_chart(s); shown && need_chart(s, *shown)) probe.charts_built(s);
    continue_softmax(s);
    poll_bench_job(s);
    probe.model_ready(s);
    if (s.view.toggle_fullscreen) {
      s.view.toggle_fullscreen = false;
      toggle_fullscreen(window, s, saved_x, saved_y, saved_w, saved_h);
    }

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    probe.inject_input(s);
    ImGui::NewFrame();
    try {
      advance_playback(s, static_cast<double>(io.DeltaTime));
      draw_frame(s);
    } catch (const std::exception& e) {
      // Never take the lecture down: unwind ImGui's stacks and say what happened.
      ImGui::ErrorCheckEndFrameRecover(nullptr, nullptr);
      probe.exception(e.what());
      s.view.status = std::string("internal error (please report): ") + e.what();
      s.view.status_is_error = true;
    }
    ImGui::Render();
    probe.frame_built(s.presenter.on && s.presenter.zoom && !s.presenter.blackout);
    int fbw = 0, fbh = 0;
    glfwGetFramebufferSize(window, &fbw, &fbh);
    glViewport(0, 0, fbw, fbh);
    const ImVec4 clear = color_background();  // = WindowBg of the theme: the panels draw no background
    glClearColor(clear.x, clear.y, clear.z, 1.0f);
    glClear(GL_COLOR_BUFFER_BIT);
    probe.frame_drawn(*ImGui::GetDrawData(), s.presenter.on ? s.presenter.current : -1);
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    const double fb_scale = io.DisplaySize.x > 0 ? fbw / static_cast<double>(io.DisplaySize.x) : 1.0;
    probe.frame_rendered(*ImGui::GetDrawData(), fbw, fbh, static_cast<float>(fb_scale));
    if (opt.frames > 0 && !probe.holding() && frame - probe.held_frames() + 1 == opt.frames && !opt.screenshot.empty()) {
      try {
        write_screenshot(opt.screenshot, fbw, fbh, panel_crop(s, opt.screenshot_panel, fb_scale));
      } catch (const std::exception& e) {
        fail(std::string("--screenshot: ") + e.what());
      }
    }
    if (s.view.screenshot_requested && s.view.screenshot_delay_frames > 0) {
      --s.view.screenshot_delay_frames;
    } else if (s.view.screenshot_requested) {
      s.view.screenshot_requested = false;
      const bool join = s.view.screenshot_joins_status;
      s.view.screenshot_joins_status = false;
      try {
        write_screenshot(s.view.screenshot_path, fbw, fbh);
        if (join) s.view.status += " · window: " + s.view.screenshot_path;
        else s.view.status = "screenshot: " + s.view.screenshot_path;
        if (!join) s.view.status_is_error = false;
      } catch (const std::exception& e) {
        s.view.status = join ? s.view.status + " · " + e.what() : std::string(e.what());
        s.view.status_is_error = true;
      }
    }
    glfwSwapBuffers(window);
    probe.frame_end();
  }

  g_keys = nullptr;
  if (s.bench.job.running) s.bench.job.cancel = true;
  if (s.bench.job.worker.joinable()) s.bench.job.worker.join();
  probe.finish(s, width, height, renderer);
  set_dash_textures({});
  glDeleteTextures(1, &dash_tex);
  glDeleteTextures(1, &dot_tex);
  ImGui_ImplOpenGL3_Shutdown();
  ImGui_ImplGlfw_Shutdown();
  ImGui::DestroyContext();
  glfwDestroyWindow(window);
  glfwTerminate();
  set_screen_checks(nullptr);
  return result;
}

}  // namespace flashlab::gui
