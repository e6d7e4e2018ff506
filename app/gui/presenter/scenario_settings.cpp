#include "scenario_settings.hpp"

#include <algorithm>
#include <stdexcept>

#include "bench/bench_action.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "draw/plot_tabs.hpp"
#include "model/ring_model.hpp"
#include "ring/ring_settings.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

using nlohmann::json;

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

// ---- "problem": {...} ----------------------------------------------------------

void set_problem_dtype(Inputs& in, const json& v) {
  const auto d = v.is_string() ? sim::parse_dtype(v.get<std::string>()) : std::nullopt;
  if (!d) throw std::runtime_error("problem.dtype must be fp16, bf16 or fp32");
  in.dtype = *d;
}

void set_problem(AppState& s, const json& p, const std::string&) {
  if (!p.is_object()) throw std::runtime_error("problem must be an object");
  for (auto it = p.begin(); it != p.end(); ++it) {
    const ProblemKeyRow* row = find_key(problem_key_rows(), it.key());
    if (!row) throw std::runtime_error("unknown key problem." + it.key() + " (expected " + key_list(problem_key_rows()) + ")");
    row->apply(s.inputs, *it);
  }
}

// ---- the one-GPU view's inputs -----------------------------------------------------

void set_hardware(AppState& s, const json& v, const std::string& base_dir) {
  Inputs& in = s.inputs;
  if (v.is_string()) {
    in.use_hw_file = false;
    in.hw_preset = v.get<std::string>();
  } else if (v.is_object() && v.contains("file") && v["file"].is_string()) {
    in.use_hw_file = true;
    in.hw_file = resolve_path(v["file"].get<std::string>(), base_dir);
  } else {
    throw std::runtime_error("hardware must be a preset name or {\"file\": PATH}");
  }
}

void set_sram(AppState& s, const json& v, const std::string&) {
  s.inputs.sram_override = !v.is_null();
  if (!v.is_null()) s.inputs.sram = text_of(v, "sram");
}

void set_tiles(AppState& s, const json& v, const std::string&) {
  Inputs& in = s.inputs;
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
}

void set_algorithms(AppState& s, const json& v, const std::string&) {
  Inputs& in = s.inputs;
  if (!v.is_array() || v.empty() || v.size() > 2) throw std::runtime_error("algorithms must list one or two names");
  in.algo_a = algorithm_of(v[0]);
  in.compare = v.size() == 2;
  if (v.size() == 2) in.algo_b = algorithm_of(v[1]);
}

void set_lockstep(AppState& s, const json& v, const std::string&) {
  const std::string m = v.is_string() ? v.get<std::string>() : "";
  if (m != "progress" && m != "block") throw std::runtime_error("lockstep must be \"progress\" or \"block\"");
  s.inputs.lockstep = m == "progress" ? Lockstep::progress : Lockstep::block;
}

void set_cursor(AppState& s, const json& v, const std::string&) {
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
}

// ---- playback and the view -----------------------------------------------------------

void set_events_per_s(AppState& s, const json& v, const std::string&) {
  s.playback.events_per_s = std::clamp(number_of(v, "events_per_s"), 0.25, 1e6);
}

void set_tab(AppState& s, const json& v, const std::string&) {
  const std::string t = v.is_string() ? v.get<std::string>() : "";
  if (!find_plot_tab(t)) throw std::runtime_error("unknown tab '" + t + "' (" + tab_ids() + ")");
  s.view.tab = t;
  s.view.force_tab = true;
}

void set_ui_scale(AppState& s, const json& v, const std::string&) {
  const double u = number_of(v, "ui_scale");
  if (!(u >= 1.0 && u <= 3.0)) throw std::runtime_error("ui_scale must be between 1.0 and 3.0");
  s.view.pending_ui_scale = u;
}

void set_theme_setting(AppState& s, const json& v, const std::string&) {
  const std::optional<Theme> t = v.is_string() ? parse_theme(v.get<std::string>()) : std::nullopt;
  if (!t) throw std::runtime_error("theme must be \"dark\" or \"light\"");
  s.view.theme = *t;
}

void set_workspace(AppState& s, const json& v, const std::string&) {
  const std::string w = v.is_string() ? v.get<std::string>() : "";
  if (w != "ring" && w != "one-gpu") throw std::runtime_error("workspace must be \"one-gpu\" or \"ring\"");
  s.view.workspace = w == "ring" ? Workspace::ring : Workspace::one_gpu;
}

// ---- files and runs ------------------------------------------------------------------

// A file that cannot be opened is an error naming the key (a scene's state is
// checked when the lecture loads); null closes the file open.
void set_results(AppState& s, const json& v, const std::string& base_dir) {
  if (v.is_null()) {
    close_results(s);
    return;
  }
  const std::string path = resolve_path(text_of(v, "results"), base_dir);
  open_results(s, path);
  if (!s.bench.have_results || s.bench.source != path) throw std::runtime_error("results: " + s.bench.error);
}

void set_ring_results(AppState& s, const json& v, const std::string& base_dir) {
  if (v.is_null()) {
    close_ring_results(s);
    return;
  }
  open_ring_results(s, resolve_path(text_of(v, "ring_results"), base_dir));
  if (s.view.status_is_error) throw std::runtime_error(s.view.status);
}

void set_bench(AppState& s, const json& v, const std::string&) {
  const BenchAction a = parse_bench_action(v);
  s.bench.pending = a.request;
  s.bench.pending_on_current_problem = a.on_current_problem;
}

}  // namespace

const std::vector<ProblemKeyRow>& problem_key_rows() {
  static const std::vector<ProblemKeyRow> rows{
      {{"batch", "count", "batch size B"}, [](Inputs& in, const json& v) { in.batch = text_of(v, "problem.batch"); }},
      {{"heads", "count", "heads H"}, [](Inputs& in, const json& v) { in.heads = text_of(v, "problem.heads"); }},
      {{"kv_heads", "count", "K/V heads H_kv (grouped-query attention; default H)"},
       [](Inputs& in, const json& v) { in.kv_heads = text_of(v, "problem.kv_heads"); }},
      {{"seq", "size", "sequence length N, e.g. 1024 or \"16K\""}, [](Inputs& in, const json& v) { in.seq = text_of(v, "problem.seq"); }},
      {{"head_dim", "count", "head dimension d"}, [](Inputs& in, const json& v) { in.head_dim = text_of(v, "problem.head_dim"); }},
      {{"causal", "bool", "a causal mask"}, [](Inputs& in, const json& v) { in.causal = bool_of(v, "problem.causal"); }},
      {{"dtype", "fp16 | bf16 | fp32", "element type"}, set_problem_dtype},
  };
  return rows;
}

const std::vector<SettingRow>& setting_rows() {
  static const std::vector<SettingRow> rows{
      {{"problem", "{batch, heads, kv_heads, seq, head_dim, causal, dtype}", "the attention problem (keys below)"}, true, set_problem},
      {{"hardware", "preset | {\"file\": PATH}", "the GPU: a preset of assets/hardware, or a profile file"}, true, set_hardware},
      {{"sram", "size | null", "the SRAM per SM instead of the preset's (null: the preset's)"}, true, set_sram},
      {{"tiles", "paper | hopper | {\"Br\": R, \"Bc\": C}", "the tile shape: the paper's rule, the Hopper rung's (with its schedule), or given"}, true, set_tiles},
      {{"algorithms", "[name] | [name, name]", "one algorithm, or two side by side (flashlab sim --help lists the names)"}, true, set_algorithms},
      {{"lockstep", "progress | block", "how the two algorithms' cursors move together"}, true, set_lockstep},
      {{"cursor", "{\"fraction\": F} | {\"position\": P} | {\"block\": [i, j]}", "where the schedule's cursor goes, once the model is up"}, true, set_cursor},
      {{"playing", "bool", "playback running"}, true,
       [](AppState& s, const json& v, const std::string&) { s.playback.playing = bool_of(v, "playing"); }},
      {{"events_per_s", "number", "playback speed in events per second (0.25 to 1e6)"}, true, set_events_per_s},
      {{"tab", "plot tab id", "the plot tab shown (a chart id, bench or counters)"}, true, set_tab},
      {{"concepts", "bool", "the Concepts window open"}, true,
       [](AppState& s, const json& v, const std::string&) { s.view.show_concepts = bool_of(v, "concepts"); }},
      {{"ui_scale", "1.0 to 3.0", "the UI scale (projectors: 1.5 to 2)"}, false, set_ui_scale},
      {{"theme", "dark | light", "the colours: dark, or dark text on near-white for a projector in a lit hall (L toggles)"}, false,
       set_theme_setting},
      {{"results", "PATH | null", "a results file opened (flashlab bench --json); null: none open"}, true, set_results},
      {{"export_dir", "PATH", "the folder exports and relative screenshots go to"}, true,
       [](AppState& s, const json& v, const std::string&) { s.view.export_dir = text_of(v, "export_dir"); }},
      {{"plots_large", "bool", "the plots given most of the window"}, true,
       [](AppState& s, const json& v, const std::string&) { s.view.plots_large = bool_of(v, "plots_large"); }},
      {{"hide_controls", "bool", "the controls hidden (F9)"}, true,
       [](AppState& s, const json& v, const std::string&) { s.view.hide_controls = bool_of(v, "hide_controls"); }},
      {{"ring_step_on_stage", "bool",
        "the hall layout's ring view shows the step-through (else the timeline with its totals)"},
       true, [](AppState& s, const json& v, const std::string&) { s.view.hall_ring_step = bool_of(v, "ring_step_on_stage"); }},
      {{"l2_first", "bool",
        "the step-through's text shows where the L2 served a read from (the wave's walk) before the online softmax's table"},
       true, [](AppState& s, const json& v, const std::string&) { s.view.l2_first = bool_of(v, "l2_first"); }},
      {{"bench", "{sweep, kernels, repeats, counters, pass}", "run kernels as the Benchmarks tab does, once the model is up (keys below)"}, false, set_bench},
      {{"workspace", "one-gpu | ring", "what is right of the controls: one GPU, or the ring across GPUs"}, true, set_workspace},
      {{"ring", "{model, seq, gpus, layout, ...}", "the ring's inputs in the Across GPUs view (keys below)"}, true,
       [](AppState& s, const json& v, const std::string& base_dir) { apply_ring_settings(s, v, base_dir); }},
      {{"ring_results", "PATH | null", "a ring results file (flashlab bench --gpus --json) under the ring's simulation; null: none"}, true, set_ring_results},
  };
  return rows;
}

const SettingRow* find_setting(std::string_view key) { return find_key(setting_rows(), key); }

void apply_settings(AppState& s, const json& j, const std::string& base_dir) {
  for (auto it = j.begin(); it != j.end(); ++it) {
    const SettingRow* row = find_setting(it.key());
    if (!row) throw std::runtime_error("unknown key '" + it.key() + "'");
    row->apply(s, *it, base_dir);
  }
}

std::string apply_cursor_request(AppState& s) {
  CursorRequest& r = s.cursor_request;
  if (r.kind == CursorRequest::Kind::none || !s.model.valid) return "";
  const AlgoView& v = s.model.algos[0];
  sim::Cursor& c = *v.cursor;
  std::string error;
  switch (r.kind) {
    case CursorRequest::Kind::fraction:
      seek_primary(s, static_cast<i64>(r.fraction * static_cast<double>(c.size()) + 0.5));
      break;
    case CursorRequest::Kind::position:
      if (r.position < 0 || r.position > c.size())
        error = "cursor.position: " + std::to_string(r.position) + " is outside the schedule of " +
                std::string(sim::to_string(v.algo)) + " (0 to " + std::to_string(c.size()) + " events)";
      else seek_primary(s, r.position);
      break;
    case CursorRequest::Kind::block: {
      const sim::TileGrid& g = v.schedule->grid();
      if (r.i < 0 || r.j < 0 || r.i >= g.T_r || r.j >= g.T_c)
        error = "cursor.block: [" + std::to_string(r.i) + ", " + std::to_string(r.j) + "] is outside the " +
                std::to_string(g.T_r) + " × " + std::to_string(g.T_c) + " blocks (i < T_r = " + std::to_string(g.T_r) +
                ", j < T_c = " + std::to_string(g.T_c) + ")";
      else if (c.seek_block(r.i, r.j)) seek_primary(s, c.position());
      else
        error = "cursor.block: " + std::string(sim::to_string(v.algo)) + " never visits block [" + std::to_string(r.i) +
                ", " + std::to_string(r.j) + "]" + (s.model.problem.causal ? " (above the causal mask's diagonal)" : "");
      break;
    }
    case CursorRequest::Kind::none: break;
  }
  r.kind = CursorRequest::Kind::none;
  if (!error.empty()) {  // the cursor stays where it was, and the window says why
    s.view.status = error;
    s.view.status_is_error = true;
  }
  return error;
}

}  // namespace flashlab::gui
