// The main loop: GLFW window, OpenGL 3.3 core, Dear ImGui. Per frame: script
// steps and input, recompute the model only if an input changed, draw every
// panel, render, screenshot on request, and time the frame.
#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <GL/gl.h>
#include <imgui.h>
#include <imgui_impl_glfw.h>
#include <imgui_impl_opengl3.h>
#include <imgui_internal.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <cfloat>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "app_state.hpp"
#include "bench_backend.hpp"
#include "format.hpp"
#include "gui.hpp"
#include "imgui_canvas.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "random_walk.hpp"
#include "scenario.hpp"
#include "screenshot.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

using Clock = std::chrono::steady_clock;

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
  const Charts& c = s.model.charts;
  for (const analysis::ChartSpec* ch : {&c.roofline, &c.roofline_hier, &c.io_n, &c.io_m, &c.io_d, &c.ai_n, &c.bench_time, &c.bench_tflops,
                                        &c.bench_memory, &c.bench_speedup, &c.bench_heatmap}) {
    std::vector<const std::string*> texts{&ch->title, &ch->subtitle};
    for (const auto& n : ch->notes) texts.push_back(&n);
    for (const auto& sr : ch->series) {
      texts.push_back(&sr.name);
      for (const auto& l : sr.point_labels) texts.push_back(&l);
    }
    for (const auto& r : ch->ref_lines) texts.push_back(&r.label);
    for (const auto& m : ch->markers) texts.push_back(&m.label);
    for (const auto& a : ch->annotations) texts.push_back(&a.text);
    for (const std::string* t : texts)
      if (bad(*t)) {
        if (s.checks.nonfinite++ == 0) s.checks.first_nonfinite = "chart " + ch->id + ": " + *t;
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

PixelRect panel_crop(const AppState& s, const std::string& panel, double fb_scale) {
  AppState::PanelRect r;
  if (panel == "controls") r = s.rect_controls;
  else if (panel == "tiling") r = s.rect_tiling;
  else if (panel == "counters") r = s.rect_counters;
  else if (panel == "plots") r = s.rect_plots;
  else if (panel == "concepts") r = s.rect_concepts;
  else return {};
  return {static_cast<int>(r.x * fb_scale), static_cast<int>(r.y * fb_scale), static_cast<int>(r.w * fb_scale),
          static_cast<int>(r.h * fb_scale)};
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

struct RunStats {
  std::vector<double> frame_ms;
  std::set<std::string> algorithms;
  i64 invalid_frames = 0, exceptions = 0;
  std::string first_exception;
  double max_recompute_ms = 0;
  int recomputes = 0;
  std::vector<double> draw_cmds, vertices;  // per frame: what the rasteriser gets
  std::map<std::string, int> vertices_by_list;  // of the last frame, per window
  std::vector<double> build_ms, raster_ms;  // per frame: ImGui + panels; GL draw + swap + finish
  std::vector<double> cpu_ms;  // per frame: CPU time of every thread (llvmpipe's too); steadier than wall time on a busy machine
};

double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

void print_stats(const AppState& s, const RunStats& st, const Options& opt, int width, int height, const std::string& renderer) {
  // The first frames upload the font atlas and warm caches: not steady state.
  const size_t warm = st.frame_ms.size() > 40 ? 10 : 0;
  const std::vector<double> steady(st.frame_ms.begin() + static_cast<std::ptrdiff_t>(warm), st.frame_ms.end());
  nlohmann::json j;
  j["frames"] = st.frame_ms.size();
  j["warmup_frames_excluded"] = warm;
  j["median_frame_ms"] = percentile(steady, 0.5);
  j["p95_frame_ms"] = percentile(steady, 0.95);
  j["max_frame_ms"] = steady.empty() ? 0.0 : *std::max_element(steady.begin(), steady.end());
  j["window"] = {{"width", width}, {"height", height}};
  j["median_frame_cpu_ms"] = percentile(std::vector<double>(st.cpu_ms.begin() + static_cast<std::ptrdiff_t>(warm), st.cpu_ms.end()), 0.5);
  j["median_build_ms"] = percentile(st.build_ms, 0.5);    // input, model updates, panels, ImGui::Render
  j["median_raster_ms"] = percentile(st.raster_ms, 0.5);   // OpenGL drawing, swap and glFinish
  j["median_draw_cmds"] = percentile(st.draw_cmds, 0.5);
  j["vertices_by_window"] = st.vertices_by_list;
  j["median_vertices"] = percentile(st.vertices, 0.5);
  j["ui_scale"] = s.view.ui_scale;
  j["gl_renderer"] = renderer;
  j["nonfinite_values"] = s.checks.nonfinite;
  j["first_nonfinite"] = s.checks.first_nonfinite;
  j["exceptions"] = st.exceptions;
  j["first_exception"] = st.first_exception;
  j["invalid_frames"] = st.invalid_frames;
  j["recomputes"] = st.recomputes;
  j["max_recompute_ms"] = st.max_recompute_ms;
  j["tabs_visited"] = s.tabs_visited;
  j["algorithms_shown"] = std::vector<std::string>(st.algorithms.begin(), st.algorithms.end());
  j["concepts_shown"] = s.rect_concepts.w > 0;
  j["random_walk"] = opt.random_walk.has_value();
  j["model_valid"] = s.model.valid;
  if (s.model.valid) {
    j["problem"] = sim::describe(s.model.problem);
    j["events"] = s.model.algos[0].cursor->size();
    j["position"] = s.model.algos[0].cursor->position();
  }
  std::cout << j.dump() << std::endl;
}

}  // namespace

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
  RunStats st;
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
  if (sc) {
    try {
      apply_settings(s, sc->settings, sc->base_dir);
    } catch (const std::exception& e) {
      fail("--scenario " + sc->path + ": " + e.what());
    }
  }
  if (opt.ui_scale > 0) s.view.pending_ui_scale = 0;  // the command line wins over the scenario
  if (opt.fullscreen) s.view.toggle_fullscreen = true;
  std::unique_ptr<RandomWalk> walk;
  if (opt.random_walk) {
    walk = std::make_unique<RandomWalk>(*opt.random_walk);
    s.view.export_dir = (std::filesystem::temp_directory_path() / "flashlab-random-walk").string();
  }
  int saved_x = 0, saved_y = 0, saved_w = width, saved_h = height;
  size_t step = 0;

  for (int frame = 0; result.exit_code == 0 && !glfwWindowShouldClose(window); ++frame) {
    if (opt.frames > 0 && frame >= opt.frames) break;
    const auto t0 = Clock::now();
    const double cpu0 = process_cpu_ms();
    s.frame = static_cast<std::uint64_t>(frame);
    // Interactive and idle (not playing, no benchmark running): sleep until an
    // event or a quarter second, instead of redrawing an unchanged window at
    // full speed — on a software renderer that is a whole CPU core.
    const bool idle = opt.frames == 0 && !s.playback.playing && !s.bench.job.running && frame > 2;
    if (idle) glfwWaitEventsTimeout(0.25);
    else glfwPollEvents();
    if (sc) {
      try {
        for (; step < sc->script.size() && sc->script[step].frame <= frame; ++step)
          apply_settings(s, sc->script[step].action, sc->base_dir);
      } catch (const std::exception& e) {
        fail("--scenario " + sc->path + ", step at frame " + std::to_string(sc->script[step].frame) + ": " + e.what());
        break;
      }
    }
    if (walk) walk->mutate_state(s);
    if (s.view.pending_ui_scale > 0) {
      rebuild_fonts(s, std::clamp(s.view.pending_ui_scale, 1.0, 3.0));
      s.view.pending_ui_scale = 0;
    }
    if (s.dirty || s.inputs != s.applied) {
      recompute(s);
      check_chart_text(s);
      ++st.recomputes;
      st.max_recompute_ms = std::max(st.max_recompute_ms, s.model.recompute_ms);
    }
    apply_cursor_request(s);
    continue_softmax(s);
    poll_bench_job(s);
    for (const AlgoView& v : s.model.algos) st.algorithms.insert(std::string(sim::to_string(v.algo)));
    if (!s.model.valid) ++st.invalid_frames;
    if (s.view.toggle_fullscreen) {
      s.view.toggle_fullscreen = false;
      toggle_fullscreen(window, s, saved_x, saved_y, saved_w, saved_h);
    }

    ImGui_ImplOpenGL3_NewFrame();
    ImGui_ImplGlfw_NewFrame();
    // Headless runs (tests, screenshots) ignore the X pointer, which Xvfb parks
    // mid-screen: no stray hover tooltips in a screenshot.
    if (opt.frames > 0 && !walk) io.MousePos = ImVec2(-FLT_MAX, -FLT_MAX);
    if (walk) walk->inject_input(s);
    ImGui::NewFrame();
    try {
      handle_keys(s);
      advance_playback(s, static_cast<double>(io.DeltaTime));
      draw_frame(s);
    } catch (const std::exception& e) {
      // Never take the lecture down: unwind ImGui's stacks and say what happened.
      ImGui::ErrorCheckEndFrameRecover(nullptr, nullptr);
      if (st.exceptions++ == 0) st.first_exception = e.what();
      s.view.status = std::string("internal error (please report): ") + e.what();
      s.view.status_is_error = true;
    }
    ImGui::Render();
    const auto t_built = Clock::now();
    int fbw = 0, fbh = 0;
    glfwGetFramebufferSize(window, &fbw, &fbh);
    glViewport(0, 0, fbw, fbh);
    glClearColor(0.10f, 0.11f, 0.13f, 1.0f);  // = WindowBg of the theme: the panels draw no background
    glClear(GL_COLOR_BUFFER_BIT);
    {
      const ImDrawData* dd = ImGui::GetDrawData();
      int cmds = 0;
      for (int k = 0; k < dd->CmdListsCount; ++k) cmds += dd->CmdLists[k]->CmdBuffer.Size;
      st.draw_cmds.push_back(cmds);
      st.vertices.push_back(dd->TotalVtxCount);
      for (int k = 0; k < dd->CmdListsCount; ++k) {
        const char* owner = dd->CmdLists[k]->_OwnerName ? dd->CmdLists[k]->_OwnerName : "?";
        st.vertices_by_list[owner] = dd->CmdLists[k]->VtxBuffer.Size;
      }
    }
    ImGui_ImplOpenGL3_RenderDrawData(ImGui::GetDrawData());

    const double fb_scale = io.DisplaySize.x > 0 ? fbw / static_cast<double>(io.DisplaySize.x) : 1.0;
    if (opt.frames > 0 && frame + 1 == opt.frames && !opt.screenshot.empty()) {
      try {
        write_screenshot(opt.screenshot, fbw, fbh, panel_crop(s, opt.screenshot_panel, fb_scale));
      } catch (const std::exception& e) {
        fail(std::string("--screenshot: ") + e.what());
      }
    }
    if (s.view.screenshot_requested) {
      s.view.screenshot_requested = false;
      try {
        write_screenshot(s.view.screenshot_path, fbw, fbh);
        s.view.status = "screenshot: " + s.view.screenshot_path;
        s.view.status_is_error = false;
      } catch (const std::exception& e) {
        s.view.status = e.what();
        s.view.status_is_error = true;
      }
    }
    glfwSwapBuffers(window);
    if (opt.stats) glFinish();  // count the rendering in the frame, not in the next one
    st.frame_ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
    st.build_ms.push_back(std::chrono::duration<double, std::milli>(t_built - t0).count());
    st.raster_ms.push_back(st.frame_ms.back() - st.build_ms.back());
    st.cpu_ms.push_back(process_cpu_ms() - cpu0);
  }

  if (s.bench.job.running) s.bench.job.cancel = true;
  if (s.bench.job.worker.joinable()) s.bench.job.worker.join();
  if (opt.stats) print_stats(s, st, opt, width, height, renderer);
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
