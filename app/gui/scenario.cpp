#include "scenario.hpp"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <stdexcept>

#include "flashlab/analysis/report.hpp"
#include "flashlab/sim/attention_models.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "plot_tabs.hpp"
#include "presenter.hpp"
#include "ring_model.hpp"

namespace flashlab::gui {

namespace {

using nlohmann::json;

const std::set<std::string> kSettingKeys{"problem",  "hardware", "sram",   "tiles", "algorithms", "lockstep",
                                         "cursor",   "playing",  "events_per_s", "tab", "concepts", "ui_scale",
                                         "results",  "export_dir", "plots_large", "hide_controls", "bench",
                                         "workspace", "ring", "ring_results"};
const std::set<std::string> kScriptOnlyKeys{"frame", "key", "export_all", "screenshot", "export", "wait_bench", "scene"};

std::string text_of(const json& v, const std::string& what) {
  if (v.is_string()) return v.get<std::string>();
  if (v.is_number_integer()) return std::to_string(v.get<long long>());
  if (v.is_number()) return json(v).dump();
  throw std::runtime_error(what + " must be a number or a string like \"16K\"");
}

bool bool_of(const json& v, const std::string& what) {
  if (!v.is_boolean()) throw std::runtime_error(what + " must be true or false");
  return v.get<bool>();
}

double number_of(const json& v, const std::string& what) {
  if (!v.is_number()) throw std::runtime_error(what + " must be a number");
  return v.get<double>();
}

// "roofline, ..., bench-heatmap, bench, counters": every plot tab.
std::string tab_ids() {
  std::string s;
  for (const PlotTab& t : plot_tabs()) s += (s.empty() ? "" : ", ") + std::string(t.id);
  return s;
}

sim::Algorithm algorithm_of(const json& v) {
  if (!v.is_string()) throw std::runtime_error("algorithms must be names (" + analysis::algorithm_keys(sim::all_algorithms()) + ")");
  const auto a = sim::parse_algorithm(v.get<std::string>());
  if (!a) throw std::runtime_error("unknown algorithm '" + v.get<std::string>() + "' (expected " + analysis::algorithm_keys(sim::all_algorithms()) + ")");
  return *a;
}

std::string resolve_path(const std::string& p, const std::string& base_dir) {
  namespace fs = std::filesystem;
  std::error_code ec;
  if (p.empty() || fs::path(p).is_absolute() || fs::exists(p, ec) || base_dir.empty()) return p;
  const fs::path alt = fs::path(base_dir) / p;
  return fs::exists(alt, ec) ? alt.string() : p;
}

void apply_problem(Inputs& in, const json& p) {
  if (!p.is_object()) throw std::runtime_error("problem must be an object");
  for (auto it = p.begin(); it != p.end(); ++it) {
    const std::string& k = it.key();
    if (k == "batch") in.batch = text_of(*it, "problem.batch");
    else if (k == "heads") in.heads = text_of(*it, "problem.heads");
    else if (k == "seq") in.seq = text_of(*it, "problem.seq");
    else if (k == "head_dim") in.head_dim = text_of(*it, "problem.head_dim");
    else if (k == "causal") in.causal = bool_of(*it, "problem.causal");
    else if (k == "dtype") {
      const auto d = it->is_string() ? sim::parse_dtype(it->get<std::string>()) : std::nullopt;
      if (!d) throw std::runtime_error("problem.dtype must be fp16, bf16 or fp32");
      in.dtype = *d;
    } else {
      throw std::runtime_error("unknown key problem." + k + " (expected batch, heads, seq, head_dim, causal, dtype)");
    }
  }
}

// The ring's settings: {"model": "llama2-7b" | "custom", "heads", "kv_heads",
// "head_dim", "batch", "seq", "gpus", "gpus_per_node", "layout": "zigzag" |
// "contiguous", "causal", "pass": "fwd" | "fwd+bwd", "dtype", "intra",
// "inter", "efficiency", "compare_layouts", "calibrate", "step", "run" (the
// measured run, from 1), "steps" (its steps: "fused" | "pairwise")}. Sizes as numbers or text; the ring's model judges them.
void apply_ring(AppState& s, const json& r, const std::string& base_dir) {
  if (!r.is_object()) throw std::runtime_error("ring must be an object");
  RingInputs& in = s.ring.inputs;
  for (auto it = r.begin(); it != r.end(); ++it) {
    const std::string& k = it.key();
    const json& v = *it;
    if (k == "model") {
      in.model = text_of(v, "ring.model");
      if (in.model != "custom") {
        const sim::AttentionModel* m = sim::find_attention_model(in.model);
        if (!m) throw std::runtime_error("ring.model: unknown model '" + in.model + "' (llama2-7b, llama3.2-3b, llama3.2-1b or custom)");
        in.model = std::string(m->id);
      }
    } else if (k == "heads") {
      in.heads = text_of(v, "ring.heads");
    } else if (k == "kv_heads") {
      in.kv_heads = text_of(v, "ring.kv_heads");
    } else if (k == "head_dim") {
      in.head_dim = text_of(v, "ring.head_dim");
    } else if (k == "batch") {
      in.batch = text_of(v, "ring.batch");
    } else if (k == "seq") {
      in.seq = text_of(v, "ring.seq");
    } else if (k == "gpus") {
      in.gpus = text_of(v, "ring.gpus");
    } else if (k == "gpus_per_node") {
      in.gpus_per_node = text_of(v, "ring.gpus_per_node");
    } else if (k == "layout") {
      sim::RingLayout l;
      if (!v.is_string() || !sim::parse_ring_layout(v.get<std::string>(), l))
        throw std::runtime_error("ring.layout must be \"zigzag\" or \"contiguous\"");
      in.layout = l;
    } else if (k == "causal") {
      in.causal = bool_of(v, "ring.causal");
    } else if (k == "pass") {
      const std::string p = v.is_string() ? v.get<std::string>() : "";
      if (p != "fwd" && p != "fwd+bwd") throw std::runtime_error("ring.pass must be \"fwd\" or \"fwd+bwd\"");
      in.backward = p == "fwd+bwd";
    } else if (k == "dtype") {
      const auto d = v.is_string() ? sim::parse_dtype(v.get<std::string>()) : std::nullopt;
      if (!d) throw std::runtime_error("ring.dtype must be fp16, bf16 or fp32");
      in.dtype = *d;
    } else if (k == "intra" || k == "inter") {
      (k == "intra" ? in.intra : in.inter) = resolve_path(text_of(v, "ring." + k), base_dir);
    } else if (k == "efficiency") {
      in.efficiency = text_of(v, "ring.efficiency");
    } else if (k == "compare_layouts") {
      in.compare_layouts = bool_of(v, "ring.compare_layouts");
    } else if (k == "calibrate") {
      in.calibrate = bool_of(v, "ring.calibrate");
    } else if (k == "step") {
      const double n = number_of(v, "ring.step");
      if (!(n >= 0 && n < 4096)) throw std::runtime_error("ring.step must be 0 or more (the last is P − 1)");
      s.ring.step_request = static_cast<int>(n);
    } else if (k == "run") {
      const double n = number_of(v, "ring.run");
      if (!(n >= 1 && n <= 1e6)) throw std::runtime_error("ring.run must be a run's number in the results file, from 1");
      in.run_choice = static_cast<int>(n) - 1;
    } else if (k == "steps") {
      const std::string st = v.is_string() ? v.get<std::string>() : "";
      if (!sim::parse_ring_steps(st)) throw std::runtime_error("ring.steps must be \"fused\" or \"pairwise\"");
      in.steps = st;
    } else {
      throw std::runtime_error("unknown key ring." + k +
                               " (expected model, heads, kv_heads, head_dim, batch, seq, gpus, gpus_per_node, layout, "
                               "causal, pass, dtype, intra, inter, efficiency, compare_layouts, calibrate, step, run, steps)");
    }
  }
}

void press(AppState& s, const std::string& key) {
  // In the ring's view the arrows, Home and End move its step, as the keyboard does.
  const bool ring = s.view.workspace == Workspace::ring && !s.presenter.on;
  if (ring && (key == "right" || key == "left" || key == "home" || key == "end")) {
    if (key == "right") ring_step_by(s, 1);
    else if (key == "left") ring_step_by(s, -1);
    else if (key == "home") ring_seek_step(s, 0);
    else if (s.ring.model.valid) ring_seek_step(s, s.ring.model.simulation.problem.gpus() - 1);
    return;
  }
  if (key == "space") {
    s.playback.playing = !s.playback.playing;
  } else if (key == "right") {
    if (s.presenter.on) presenter_right(s);
    else step_primary(s, 1);
  } else if (key == "left") {
    if (s.presenter.on) presenter_left(s);
    else step_primary(s, -1);
  } else if (key == "home") {
    seek_primary(s, 0);
  } else if (key == "end") {
    if (s.model.valid) seek_primary(s, s.model.algos[0].cursor->size());
  } else if (key == "plus") {
    s.playback.events_per_s = std::min(1e6, s.playback.events_per_s * 2);
  } else if (key == "minus") {
    s.playback.events_per_s = std::max(0.25, s.playback.events_per_s / 2);
  } else if (key == "pagedown") {
    presenter_next(s);
  } else if (key == "pageup") {
    presenter_previous(s);
  } else if (key == "escape") {
    s.presenter.on = false;
  } else if (key == "f5") {
    presenter_start(s);
  } else {
    throw std::runtime_error("unknown key '" + key +
                             "' (expected space, left, right, home, end, plus, minus, pagedown, pageup, escape, f5)");
  }
}

}  // namespace

BenchAction parse_bench_action(const json& v) {
  if (!v.is_object())
    throw std::runtime_error("bench must be {\"sweep\": NAME or null, \"kernels\": [...], \"repeats\": N, \"counters\": true}");
  BenchAction a;
  a.on_current_problem = true;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    const json& x = *it;
    if (k == "sweep") {
      if (x.is_null()) continue;
      if (!x.is_string() || x.get<std::string>().empty())
        throw std::runtime_error("bench.sweep must be the name of a sweep in assets/sweeps, or null for the current problem");
      a.request.sweep = x.get<std::string>();
      a.on_current_problem = false;
    } else if (k == "kernels") {
      if (!x.is_array()) throw std::runtime_error("bench.kernels must be a list of kernel ids, e.g. [\"fa2\", \"fa2_tc\"]");
      for (const json& id : x) {
        if (!id.is_string() || id.get<std::string>().empty())
          throw std::runtime_error("bench.kernels must be a list of kernel ids (strings)");
        a.request.kernels.push_back(id.get<std::string>());
      }
    } else if (k == "repeats") {
      if (!x.is_number_integer() || x.get<long long>() < 1 || x.get<long long>() > 1000)
        throw std::runtime_error("bench.repeats must be a whole number from 1 to 1000");
      a.request.repeats = static_cast<int>(x.get<long long>());
    } else if (k == "counters") {
      a.request.counters = bool_of(x, "bench.counters");
    } else if (k == "pass") {
      const auto p = x.is_string() ? sim::parse_pass_selection(x.get<std::string>()) : std::nullopt;
      if (!p) throw std::runtime_error("bench.pass must be \"fwd\", \"bwd\" or \"fwd+bwd\"");
      a.request.pass = *p;
    } else {
      throw std::runtime_error("unknown key bench." + k + " (expected sweep, kernels, repeats, counters, pass)");
    }
  }
  return a;
}

double parse_wait_bench(const json& v) {
  if (v.is_boolean()) {
    if (!v.get<bool>()) throw std::runtime_error("wait_bench must be true or a timeout in seconds (false waits for nothing)");
    return kDefaultBenchWaitS;
  }
  if (v.is_number() && v.get<double>() > 0 && v.get<double>() <= 86400) return v.get<double>();
  throw std::runtime_error("wait_bench must be true or a timeout in seconds (above 0, at most 86400)");
}

void apply_settings(AppState& s, const json& j, const std::string& base_dir) {
  Inputs& in = s.inputs;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    const json& v = *it;
    if (k == "problem") {
      apply_problem(in, v);
    } else if (k == "hardware") {
      if (v.is_string()) {
        in.use_hw_file = false;
        in.hw_preset = v.get<std::string>();
      } else if (v.is_object() && v.contains("file") && v["file"].is_string()) {
        in.use_hw_file = true;
        in.hw_file = resolve_path(v["file"].get<std::string>(), base_dir);
      } else {
        throw std::runtime_error("hardware must be a preset name or {\"file\": PATH}");
      }
    } else if (k == "sram") {
      in.sram_override = !v.is_null();
      if (!v.is_null()) in.sram = text_of(v, "sram");
    } else if (k == "tiles") {
      in.hopper = false;
      if (v.is_string() && v.get<std::string>() == "paper") {
        in.manual_tiles = false;
      } else if (v.is_string() && v.get<std::string>() == "hopper") {
        in.manual_tiles = false;
        in.hopper = true;
      } else if (v.is_object() && v.contains("Br") && v.contains("Bc")) {
        in.manual_tiles = true;
        in.br = text_of(v["Br"], "tiles.Br");
        in.bc = text_of(v["Bc"], "tiles.Bc");
      } else {
        throw std::runtime_error("tiles must be \"paper\", \"hopper\" (the Hopper rung's, with its schedule) or {\"Br\": R, \"Bc\": C}");
      }
    } else if (k == "algorithms") {
      if (!v.is_array() || v.empty() || v.size() > 2) throw std::runtime_error("algorithms must list one or two names");
      in.algo_a = algorithm_of(v[0]);
      in.compare = v.size() == 2;
      if (v.size() == 2) in.algo_b = algorithm_of(v[1]);
    } else if (k == "lockstep") {
      const std::string m = v.is_string() ? v.get<std::string>() : "";
      if (m != "progress" && m != "block") throw std::runtime_error("lockstep must be \"progress\" or \"block\"");
      in.lockstep = m == "progress" ? Lockstep::progress : Lockstep::block;
    } else if (k == "cursor") {
      CursorRequest r;
      if (v.is_object() && v.contains("fraction")) {
        r.kind = CursorRequest::Kind::fraction;
        r.fraction = std::clamp(number_of(v["fraction"], "cursor.fraction"), 0.0, 1.0);
      } else if (v.is_object() && v.contains("position")) {
        r.kind = CursorRequest::Kind::position;
        r.position = static_cast<i64>(number_of(v["position"], "cursor.position"));
      } else if (v.is_object() && v.contains("block") && v["block"].is_array() && v["block"].size() == 2) {
        r.kind = CursorRequest::Kind::block;
        r.i = static_cast<i64>(number_of(v["block"][0], "cursor.block"));
        r.j = static_cast<i64>(number_of(v["block"][1], "cursor.block"));
      } else {
        throw std::runtime_error("cursor must be {\"fraction\": F}, {\"position\": P} or {\"block\": [i, j]}");
      }
      s.cursor_request = r;
    } else if (k == "playing") {
      s.playback.playing = bool_of(v, "playing");
    } else if (k == "events_per_s") {
      s.playback.events_per_s = std::clamp(number_of(v, "events_per_s"), 0.25, 1e6);
    } else if (k == "tab") {
      const std::string t = v.is_string() ? v.get<std::string>() : "";
      if (!find_plot_tab(t)) throw std::runtime_error("unknown tab '" + t + "' (" + tab_ids() + ")");
      s.view.tab = t;
      s.view.force_tab = true;
    } else if (k == "concepts") {
      s.view.show_concepts = bool_of(v, "concepts");
    } else if (k == "plots_large") {
      s.view.plots_large = bool_of(v, "plots_large");
    } else if (k == "hide_controls") {
      s.view.hide_controls = bool_of(v, "hide_controls");
    } else if (k == "ui_scale") {
      const double u = number_of(v, "ui_scale");
      if (!(u >= 1.0 && u <= 3.0)) throw std::runtime_error("ui_scale must be between 1.0 and 3.0");
      s.view.pending_ui_scale = u;
    } else if (k == "results") {
      open_results(s, resolve_path(text_of(v, "results"), base_dir));
    } else if (k == "ring_results") {
      // Opened first: a "ring" beside it may name one of its runs.
      open_ring_results(s, resolve_path(text_of(v, "ring_results"), base_dir));
      if (s.view.status_is_error) throw std::runtime_error(s.view.status);
    } else if (k == "ring") {
      apply_ring(s, v, base_dir);
    } else if (k == "workspace") {
      const std::string w = v.is_string() ? v.get<std::string>() : "";
      if (w != "ring" && w != "one-gpu") throw std::runtime_error("workspace must be \"one-gpu\" or \"ring\"");
      s.view.workspace = w == "ring" ? Workspace::ring : Workspace::one_gpu;
    } else if (k == "export_dir") {
      s.view.export_dir = text_of(v, "export_dir");
    } else if (k == "key") {
      press(s, text_of(v, "key"));
    } else if (k == "export_all") {
      if (bool_of(v, "export_all")) export_all(s);
    } else if (k == "screenshot") {
      // A relative path is inside the export folder (created if needed).
      std::string path = text_of(v, "screenshot");
      if (path.empty()) throw std::runtime_error("screenshot must be a file name (PNG)");
      if (!std::filesystem::path(path).is_absolute() && !s.view.export_dir.empty()) {
        std::error_code ec;
        std::filesystem::create_directories(s.view.export_dir, ec);
        if (ec) throw std::runtime_error("screenshot: cannot create the export folder '" + s.view.export_dir + "': " + ec.message());
        path = (std::filesystem::path(s.view.export_dir) / path).string();
      }
      request_screenshot(s, path);
    } else if (k == "bench") {
      const BenchAction a = parse_bench_action(v);
      s.bench.pending = a.request;
      s.bench.pending_on_current_problem = a.on_current_problem;
    } else if (k == "wait_bench") {
      parse_wait_bench(v);  // the probe holds the script (probe.cpp)
    } else if (k == "export") {
      if (!v.is_object() || !v.contains("chart") || !v.contains("format"))
        throw std::runtime_error("export must be {\"chart\": ID, \"format\": png|svg|pdf|csv|all}");
      const std::string id = text_of(v["chart"], "export.chart"), fmt = text_of(v["format"], "export.format");
      const analysis::ChartEntry* chart = analysis::find_chart(id);
      if (!chart) throw std::runtime_error("unknown chart '" + id + "' (" + analysis::chart_id_list() + ")");
      export_chart_files(s, s.model.charts.of(*chart), fmt.c_str());
    } else if (k == "scene") {
      const double n = number_of(v, "scene");
      const int count = static_cast<int>(s.presenter.scenes.size());
      if (count == 0) throw std::runtime_error("scene: this scenario has no scenes");
      if (!(n >= 1 && n <= count)) throw std::runtime_error("scene must be 1 to " + std::to_string(count));
      s.presenter.on = true;
      enter_scene(s, static_cast<int>(n) - 1);
    } else if (k == "frame") {
      // the step's time, handled by the caller
    } else {
      throw std::runtime_error("unknown key '" + k + "'");
    }
  }
}

void apply_cursor_request(AppState& s) {
  CursorRequest& r = s.cursor_request;
  if (r.kind == CursorRequest::Kind::none || !s.model.valid) return;
  sim::Cursor& c = *s.model.algos[0].cursor;
  switch (r.kind) {
    case CursorRequest::Kind::fraction:
      seek_primary(s, static_cast<i64>(r.fraction * static_cast<double>(c.size()) + 0.5));
      break;
    case CursorRequest::Kind::position: seek_primary(s, r.position); break;
    case CursorRequest::Kind::block:
      if (c.seek_block(r.i, r.j)) seek_primary(s, c.position());
      break;
    case CursorRequest::Kind::none: break;
  }
  r.kind = CursorRequest::Kind::none;
}

Scene parse_scene(const json& v) {
  if (!v.is_object()) throw std::runtime_error("a scene is {\"title\": T, \"point\": P, \"stage\": S, \"state\": {...}}");
  Scene sc;
  for (auto it = v.begin(); it != v.end(); ++it) {
    const std::string& k = it.key();
    if (k == "title" || k == "point") {
      if (!it->is_string()) throw std::runtime_error(k + " must be text");
      (k == "title" ? sc.title : sc.point) = it->get<std::string>();
    } else if (k == "stage") {
      sc.stage = it->is_string() ? it->get<std::string>() : "";
      if (sc.stage != "tiling" && sc.stage != "counters" && !is_ring_stage(sc.stage) && !analysis::find_chart(sc.stage))
        throw std::runtime_error("stage must be tiling, counters or a chart (" + analysis::chart_id_list() +
                                 "), or the ring's ring, ring-timeline, ring-step, not '" + sc.stage + "'");
    } else if (k == "state") {
      if (!it->is_object()) throw std::runtime_error("state must be an object of setting keys");
      for (auto st = it->begin(); st != it->end(); ++st)
        if (!kSettingKeys.count(st.key()) || st.key() == "bench" || st.key() == "ui_scale")
          throw std::runtime_error("state: '" + st.key() + "' is not a setting a scene can take");
      sc.state = *it;
    } else {
      throw std::runtime_error("unknown key '" + k + "'");
    }
  }
  if (sc.title.empty()) throw std::runtime_error("a scene needs a title");
  return sc;
}

Scenario load_scenario(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw std::runtime_error(path + ": cannot open the scenario file");
  std::stringstream ss;
  ss << in.rdbuf();
  json j;
  try {
    j = json::parse(ss.str());
  } catch (const json::parse_error& e) {
    throw std::runtime_error(path + ": not valid JSON (" + std::string(e.what()) + ")");
  }
  if (!j.is_object()) throw std::runtime_error(path + ": a scenario is a JSON object");
  Scenario sc;
  sc.path = path;
  sc.base_dir = std::filesystem::path(path).parent_path().string();
  sc.settings = json::object();
  std::optional<bool> presenter;
  for (auto it = j.begin(); it != j.end(); ++it) {
    const std::string& k = it.key();
    if (k == "name" || k == "description") {
      (k == "name" ? sc.name : sc.description) = it->is_string() ? it->get<std::string>() : "";
    } else if (k == "window") {
      if (!it->is_object()) throw std::runtime_error(path + ": window must be {\"width\": W, \"height\": H}");
      if (it->contains("width")) sc.width = (*it)["width"].get<int>();
      if (it->contains("height")) sc.height = (*it)["height"].get<int>();
    } else if (k == "scenes") {
      if (!it->is_array() || it->empty()) throw std::runtime_error(path + ": scenes must be a non-empty list");
      for (size_t n = 0; n < it->size(); ++n) {
        try {
          sc.scenes.push_back(parse_scene((*it)[n]));
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ", scene " + std::to_string(n + 1) + ": " + e.what());
        }
      }
    } else if (k == "presenter") {
      if (!it->is_boolean()) throw std::runtime_error(path + ": presenter must be true or false");
      presenter = it->get<bool>();
    } else if (k == "script") {
      if (!it->is_array()) throw std::runtime_error(path + ": script must be a list of steps");
      for (const json& step : *it) {
        if (!step.is_object() || !step.contains("frame") || !step["frame"].is_number_integer())
          throw std::runtime_error(path + ": every script step needs an integer \"frame\"");
        for (auto st = step.begin(); st != step.end(); ++st)
          if (!kSettingKeys.count(st.key()) && !kScriptOnlyKeys.count(st.key()))
            throw std::runtime_error(path + ": unknown key '" + st.key() + "' in a script step");
        try {
          if (step.contains("bench")) parse_bench_action(step["bench"]);
          if (step.contains("wait_bench")) parse_wait_bench(step["wait_bench"]);
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ", step at frame " + std::to_string(step["frame"].get<int>()) + ": " + e.what());
        }
        sc.script.push_back({step["frame"].get<int>(), step});
      }
    } else if (kSettingKeys.count(k)) {
      if (k == "bench") {
        try {
          parse_bench_action(*it);
        } catch (const std::exception& e) {
          throw std::runtime_error(path + ": " + e.what());
        }
      }
      sc.settings[k] = *it;
    } else {
      throw std::runtime_error(path + ": unknown key '" + k + "'");
    }
  }
  std::stable_sort(sc.script.begin(), sc.script.end(), [](const ScriptStep& a, const ScriptStep& b) { return a.frame < b.frame; });
  if (presenter && *presenter && sc.scenes.empty()) throw std::runtime_error(path + ": presenter needs scenes");
  sc.presenter = presenter.value_or(!sc.scenes.empty());
  if (sc.width && (*sc.width < 320 || *sc.width > 8192)) throw std::runtime_error(path + ": window.width out of range (320-8192)");
  if (sc.height && (*sc.height < 240 || *sc.height > 8192)) throw std::runtime_error(path + ": window.height out of range (240-8192)");
  return sc;
}

}  // namespace flashlab::gui
