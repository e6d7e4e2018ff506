#include "scenario_settings.hpp"

#include <algorithm>
#include <cmath>
#include <stdexcept>

#include "bench/bench_action.hpp"
#include "flashlab/analysis/model/report.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "draw/plot_tabs.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/problem/attention_models.hpp"

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

// ---- an object's keys: "problem": {...}, "ring": {...} ------------------------------

// "a, b, c": the keys of an object, in the table's order.
std::string keys_of(std::string_view object) {
  std::string out;
  for (const SettingRow* r : settings_of(object)) out += (out.empty() ? "" : ", ") + std::string(r->doc.key);
  return out;
}

void apply_object(AppState& s, std::string_view object, const json& o, const std::string& base_dir) {
  const std::string name(object);
  if (!o.is_object()) throw std::runtime_error(name + " must be an object");
  for (auto it = o.begin(); it != o.end(); ++it) {
    const SettingRow* row = find_setting(it.key(), object);
    if (!row) throw std::runtime_error("unknown key " + name + "." + it.key() + " (expected " + keys_of(object) + ")");
    row->apply(s, *it, base_dir);
  }
}

sim::DType dtype_of(const json& v, const std::string& what) {
  const auto d = v.is_string() ? sim::parse_dtype(v.get<std::string>()) : std::nullopt;
  if (!d) throw std::runtime_error(what + " must be fp16, bf16 or fp32");
  return *d;
}

// ---- the ring's inputs -------------------------------------------------------------

// "llama2-7b | llama3.2-3b | llama3.2-1b | custom": the models' table and the custom shape.
const std::string& model_choices() {
  static const std::string s = sim::attention_model_ids(" | ") + " | custom";
  return s;
}

// "zigzag | contiguous": the layouts' table.
const std::string& layout_choices() {
  static const std::string s = sim::ring_layout_names(" | ");
  return s;
}

void set_ring_model(AppState& s, const json& v, const std::string&) {
  Inputs::Ring& in = s.inputs.ring;
  in.model = text_of(v, "ring.model");
  if (in.model != "custom") {
    const sim::AttentionModel* m = sim::find_attention_model(in.model);
    if (!m) throw std::runtime_error("ring.model: unknown model '" + in.model + "' (" + model_choices() + ")");
    in.model = std::string(m->id);
  }
}

void set_ring_layout(AppState& s, const json& v, const std::string&) {
  sim::RingLayout l;
  if (!v.is_string() || !sim::parse_ring_layout(v.get<std::string>(), l))
    throw std::runtime_error("ring.layout must be one of " + sim::ring_layout_names());
  s.inputs.ring.layout = l;
}

void set_ring_pass(AppState& s, const json& v, const std::string&) {
  const auto p = v.is_string() ? sim::parse_pass_selection(v.get<std::string>()) : std::nullopt;
  if (!p || *p == sim::PassSelection::bwd) throw std::runtime_error("ring.pass must be \"fwd\" or \"fwd+bwd\"");
  s.inputs.ring.passes = *p;
}

void set_ring_step(AppState& s, const json& v, const std::string&) {
  const double n = number_of(v, "ring.step");
  if (!(n >= 0 && n < sim::kMaxRingGpus)) throw std::runtime_error("ring.step must be 0 or more (the last is P − 1)");
  s.ring.step_request = static_cast<int>(n);
}

void set_ring_run(AppState& s, const json& v, const std::string&) {
  const double n = number_of(v, "ring.run");
  if (!(n >= 1 && n <= 1e6)) throw std::runtime_error("ring.run must be a run's number in the results file, from 1");
  s.inputs.ring.run_choice = static_cast<int>(n) - 1;
}

void set_ring_steps(AppState& s, const json& v, const std::string&) {
  const std::string st = v.is_string() ? v.get<std::string>() : "";
  if (!sim::parse_ring_steps(st)) throw std::runtime_error("ring.steps must be \"fused\" or \"pairwise\"");
  s.inputs.ring.steps = st;
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

// ---- the random walk's draws ---------------------------------------------------------

using Rng = std::mt19937_64;

double uniform(Rng& r) { return std::uniform_real_distribution<double>(0, 1)(r); }
int pick(Rng& r, int n) { return std::uniform_int_distribution<int>(0, n - 1)(r); }
template <class T, size_t N>
const T& one_of(Rng& r, const T (&options)[N]) { return options[pick(r, static_cast<int>(N))]; }
json flag(Rng& r, bool) { return uniform(r) < 0.5; }

// What a user types into a field that wants a size: nothing, signs, fractions, overflow, junk.
const char* const kJunk[] = {"", "0", "-1", "abc", "1.5", "1e3", "99999999999999999999999", "9223372036854775807",
                             " 64 ", "0x40", "∞", "NaN", "-0", "1..2", "12abc", "4G", "1T"};

// A size as text: a plausible one, or (not valid_only, a third of the time) junk.
std::string size_text(Rng& r, bool valid_only) {
  if (!valid_only && uniform(r) < 0.35) return one_of(r, kJunk);
  switch (pick(r, 4)) {
    case 0: return std::to_string(1 + pick(r, 4096));
    case 1: return std::to_string(1LL << pick(r, 21));
    case 2: return std::to_string(1 + pick(r, 300)) + "K";
    default: return std::to_string(16 * (1 + pick(r, 16)));
  }
}

// A count in [1, n] as text when valid, else any size or junk.
std::string count_text(Rng& r, bool valid, int n, int times = 1) {
  return valid ? std::to_string(times * (1 + pick(r, n))) : size_text(r, false);
}

json element_type(Rng& r, bool valid) {
  return valid ? json(std::string(sim::to_string(static_cast<sim::DType>(pick(r, 3))))) : json(one_of(r, kJunk));
}

json algorithm_names(Rng& r, bool) {
  const auto& all = sim::all_algorithms();
  json names = json::array();
  for (int k = 1 + pick(r, 2); k > 0; --k) names.push_back(std::string(sim::to_string(all[static_cast<size_t>(pick(r, static_cast<int>(all.size())))])));
  return names;
}

json hardware_value(Rng& r, bool valid) {
  const std::vector<std::string> presets = sim::list_presets();
  const bool have = valid && !presets.empty();
  if (uniform(r) < 0.5) return have ? presets[static_cast<size_t>(pick(r, static_cast<int>(presets.size())))] : "no-such-gpu";
  const char* files[] = {"/nonexistent/profile.json", "/etc/hostname", "", "/"};
  return {{"file", have ? sim::assets_dir() + "/hardware/" + presets.front() + ".json" : std::string(one_of(r, files))}};
}

json tiles_value(Rng& r, bool valid) {
  if (uniform(r) < 0.5) return uniform(r) < 0.5 ? "paper" : "hopper";
  return {{"Br", size_text(r, valid)}, {"Bc", size_text(r, valid)}};
}

json ring_model_value(Rng& r, bool valid) {
  const char* models[] = {"llama2-7b", "llama3.2-3b", "llama3.2-1b", "custom", "no-such-model"};
  return models[pick(r, valid ? 4 : 5)];
}

json ring_layout_value(Rng& r, bool) {
  const std::vector<sim::RingLayoutInfo>& layouts = sim::ring_layouts();
  return std::string(sim::ring_layout_name(layouts[static_cast<size_t>(pick(r, static_cast<int>(layouts.size())))].layout));
}

json ring_link(Rng& r, bool valid) {
  const char* links[] = {"nvlink4", "pcie5", "ib-ndr", "", "no-such-link", "/nonexistent.json"};
  return links[pick(r, valid ? 3 : 6)];
}

}  // namespace

// The text fields keep their text; the models parse it when they recompute.
#define FLASHLAB_TEXT(object, target, field) \
  [](AppState& s, const json& v, const std::string&) { target.field = text_of(v, object "." #field); }
#define FLASHLAB_BOOL(object, target, field) \
  [](AppState& s, const json& v, const std::string&) { target.field = bool_of(v, object "." #field); }
#define FLASHLAB_SETTING(key, target) \
  [](AppState& s, const json& v, const std::string&) { target = bool_of(v, key); }
#define FLASHLAB_DRAW(expr) [](Rng & r, [[maybe_unused]] bool valid) -> json { return expr; }

const std::vector<SettingRow>& setting_rows() {
  static const std::vector<SettingRow> rows{
      // ---- the top level ----
      {"", {"problem", "{batch, heads, kv_heads, seq, head_dim, causal, dtype}", "the attention problem (keys below)"}, true,
       [](AppState& s, const json& v, const std::string& base_dir) { apply_object(s, "problem", v, base_dir); }},
      {"", {"hardware", "preset | {\"file\": PATH}", "the GPU: a preset of assets/hardware, or a profile file"}, true,
       set_hardware, hardware_value},
      {"", {"sram", "size | null", "the SRAM per SM instead of the preset's (null: the preset's)"}, true, set_sram,
       FLASHLAB_DRAW(uniform(r) < 0.5 ? json(nullptr) : json(valid ? std::to_string(16 + pick(r, 240)) + "KiB" : size_text(r, false)))},
      {"", {"tiles", "paper | hopper | {\"Br\": R, \"Bc\": C}", "the tile shape: the paper's rule, the Hopper rung's (with its schedule), or given"},
       true, set_tiles, tiles_value},
      {"", {"algorithms", "[name] | [name, name]", "one algorithm, or two side by side (flashlab sim --help lists the names)"}, true,
       set_algorithms, algorithm_names},
      {"", {"lockstep", "progress | block", "how the two algorithms' cursors move together"}, true, set_lockstep,
       FLASHLAB_DRAW(uniform(r) < 0.5 ? "progress" : "block")},
      {"", {"cursor", "{\"fraction\": F} | {\"position\": P} | {\"block\": [i, j]}", "where the schedule's cursor goes, once the model is up"},
       true, set_cursor},
      {"", {"playing", "bool", "playback running"}, true, FLASHLAB_SETTING("playing", s.playback.playing),
       FLASHLAB_DRAW(uniform(r) < 0.6)},
      {"", {"events_per_s", "number", "playback speed in events per second (0.25 to 1e6)"}, true, set_events_per_s,
       FLASHLAB_DRAW(std::pow(2.0, pick(r, 20) - 2))},
      {"", {"tab", "plot tab id", "the plot tab shown (a chart id, bench or counters)"}, true, set_tab},
      {"", {"concepts", "bool", "the Concepts window open"}, true, FLASHLAB_SETTING("concepts", s.view.show_concepts)},
      {"", {"ui_scale", "1.0 to 3.0", "the UI scale (projectors: 1.5 to 2)"}, false, set_ui_scale},
      {"", {"theme", "dark | light", "the colours: dark, or dark text on near-white for a projector in a lit hall (L toggles)"}, false,
       set_theme_setting},
      {"", {"results", "PATH | null", "a results file opened (flashlab bench --json); null: none open"}, true, set_results},
      {"", {"export_dir", "PATH", "the folder exports and relative screenshots go to"}, true,
       [](AppState& s, const json& v, const std::string&) { s.view.export_dir = text_of(v, "export_dir"); }},
      {"", {"plots_large", "bool", "the plots given most of the window"}, true, FLASHLAB_SETTING("plots_large", s.view.plots_large)},
      {"", {"hide_controls", "bool", "the controls hidden (F9)"}, true, FLASHLAB_SETTING("hide_controls", s.view.hide_controls)},
      {"", {"ring_step_on_stage", "bool", "the hall layout's ring view shows the step-through (else the timeline with its totals)"},
       true, FLASHLAB_SETTING("ring_step_on_stage", s.view.hall_ring_step)},
      {"", {"l2_first", "bool",
            "the step-through's text shows where the L2 served a read from (the wave's walk) before the online softmax's table"},
       true, FLASHLAB_SETTING("l2_first", s.view.l2_first)},
      {"", {"bench", "{sweep, kernels, repeats, counters, pass}", "run kernels as the Benchmarks tab does, once the model is up (keys below)"},
       false, set_bench},
      {"", {"workspace", "one-gpu | ring", "what is right of the controls: one GPU, or the ring across GPUs"}, true, set_workspace,
       FLASHLAB_DRAW(uniform(r) < 0.5 ? "one-gpu" : "ring")},
      {"", {"ring", "{model, seq, gpus, layout, ...}", "the ring's inputs in the Across GPUs view (keys below)"}, true,
       [](AppState& s, const json& v, const std::string& base_dir) { apply_object(s, "ring", v, base_dir); }},
      {"", {"ring_results", "PATH | null", "a ring results file (flashlab bench --gpus --json) under the ring's simulation; null: none"},
       true, set_ring_results},

      // ---- "problem": the one-GPU view's problem ----
      {"problem", {"batch", "count", "batch size B"}, true, FLASHLAB_TEXT("problem", s.inputs, batch),
       FLASHLAB_DRAW(count_text(r, valid, 64))},
      {"problem", {"heads", "count", "heads H"}, true, FLASHLAB_TEXT("problem", s.inputs, heads), FLASHLAB_DRAW(count_text(r, valid, 32))},
      // Grouped K/V heads: as many as H (empty), a small count that may divide H, or one that cannot.
      {"problem", {"kv_heads", "count", "K/V heads H_kv (grouped-query attention; default H)"}, true,
       FLASHLAB_TEXT("problem", s.inputs, kv_heads), FLASHLAB_DRAW(uniform(r) < 0.5 ? std::string() : count_text(r, valid, 4))},
      {"problem", {"seq", "size", "sequence length N, e.g. 1024 or \"16K\""}, true, FLASHLAB_TEXT("problem", s.inputs, seq),
       FLASHLAB_DRAW(size_text(r, valid))},
      {"problem", {"head_dim", "count", "head dimension d"}, true, FLASHLAB_TEXT("problem", s.inputs, head_dim),
       FLASHLAB_DRAW(count_text(r, valid, 16, 16))},
      {"problem", {"causal", "bool", "a causal mask"}, true, FLASHLAB_BOOL("problem", s.inputs, causal), flag},
      {"problem", {"dtype", "fp16 | bf16 | fp32", "element type"}, true,
       [](AppState& s, const json& v, const std::string&) { s.inputs.dtype = dtype_of(v, "problem.dtype"); }, element_type},

      // ---- "ring": the Across GPUs view's inputs ----
      {"ring", {"model", model_choices(), "the model whose attention layer runs (custom: the heads below)"}, true, set_ring_model,
       ring_model_value},
      {"ring", {"heads", "count", "query heads (custom)"}, true, FLASHLAB_TEXT("ring", s.inputs.ring, heads),
       FLASHLAB_DRAW(count_text(r, valid, 8, 8))},
      {"ring", {"kv_heads", "count", "key/value heads (custom; fewer than heads: grouped-query)"}, true,
       FLASHLAB_TEXT("ring", s.inputs.ring, kv_heads), FLASHLAB_DRAW(valid ? std::string("8") : size_text(r, false))},
      {"ring", {"head_dim", "count", "head dimension d (custom)"}, true, FLASHLAB_TEXT("ring", s.inputs.ring, head_dim),
       FLASHLAB_DRAW(count_text(r, valid, 8, 32))},
      {"ring", {"batch", "count", "batch size"}, true, FLASHLAB_TEXT("ring", s.inputs.ring, batch), FLASHLAB_DRAW(count_text(r, valid, 8))},
      {"ring", {"seq", "size", "sequence length of the whole ring, e.g. \"32K\""}, true, FLASHLAB_TEXT("ring", s.inputs.ring, seq),
       FLASHLAB_DRAW(valid ? std::to_string(1 + pick(r, 64)) + "K" : size_text(r, false))},
      {"ring", {"gpus", "count", "GPUs in the ring, P"}, true, FLASHLAB_TEXT("ring", s.inputs.ring, gpus),
       FLASHLAB_DRAW(count_text(r, valid, 64))},
      {"ring", {"gpus_per_node", "count", "GPUs per node: the links inside a node, then between nodes"}, true,
       FLASHLAB_TEXT("ring", s.inputs.ring, gpus_per_node), FLASHLAB_DRAW(count_text(r, valid, 16))},
      {"ring", {"layout", layout_choices(), "how the sequence is cut into the GPUs' chunks"}, true, set_ring_layout,
       ring_layout_value},
      {"ring", {"causal", "bool", "a causal mask"}, true, FLASHLAB_BOOL("ring", s.inputs.ring, causal), FLASHLAB_DRAW(uniform(r) < 0.7)},
      {"ring", {"pass", "fwd | fwd+bwd", "the forward pass, or a training step's forward and backward"}, true, set_ring_pass,
       FLASHLAB_DRAW(uniform(r) < 0.4 ? "fwd+bwd" : "fwd")},
      {"ring", {"dtype", "fp16 | bf16 | fp32", "element type"}, true,
       [](AppState& s, const json& v, const std::string&) { s.inputs.ring.dtype = dtype_of(v, "ring.dtype"); }, element_type},
      {"ring", {"intra", "link id | PATH", "the link inside a node (assets/interconnects, or a measured link file)"}, true,
       [](AppState& s, const json& v, const std::string& base_dir) { s.inputs.ring.intra = resolve_path(text_of(v, "ring.intra"), base_dir); },
       ring_link},
      {"ring", {"inter", "link id | PATH", "the link between nodes"}, true,
       [](AppState& s, const json& v, const std::string& base_dir) { s.inputs.ring.inter = resolve_path(text_of(v, "ring.inter"), base_dir); },
       ring_link},
      {"ring", {"efficiency", "number", "fraction of the block's bound the rung reaches"}, true,
       FLASHLAB_TEXT("ring", s.inputs.ring, efficiency),
       FLASHLAB_DRAW(valid ? std::to_string(0.05 + 0.95 * uniform(r)) : std::string(one_of(r, kJunk)))},
      {"ring", {"compare_layouts", "bool", "the other layout's timeline under this one, on the same axis"}, true,
       FLASHLAB_BOOL("ring", s.inputs.ring, compare_layouts), FLASHLAB_DRAW(uniform(r) < 0.4)},
      {"ring", {"calibrate", "bool", "a measured run's prediction: the GPU's rung launch model, else the file's P = 1 run"}, true,
       FLASHLAB_BOOL("ring", s.inputs.ring, calibrate), flag},
      {"ring", {"step", "number", "the step shown, from 0 (the last is P − 1)"}, true, set_ring_step, FLASHLAB_DRAW(pick(r, 70))},
      {"ring", {"run", "number", "the measured run shown: its number in the results file, from 1"}, true, set_ring_run},
      {"ring", {"steps", "fused | pairwise", "the measured run's steps: how they launched their kernels"}, true, set_ring_steps},
  };
  return rows;
}

#undef FLASHLAB_TEXT
#undef FLASHLAB_BOOL
#undef FLASHLAB_SETTING
#undef FLASHLAB_DRAW

const SettingRow* find_setting(std::string_view key, std::string_view object) {
  for (const SettingRow& r : setting_rows())
    if (r.object == object && r.doc.key == key) return &r;
  return nullptr;
}

std::vector<const SettingRow*> settings_of(std::string_view object) {
  std::vector<const SettingRow*> out;
  for (const SettingRow& r : setting_rows())
    if (r.object == object) out.push_back(&r);
  return out;
}

std::vector<std::string_view> setting_objects() {
  std::vector<std::string_view> out;
  for (const SettingRow& r : setting_rows())
    if (!r.object.empty() && std::find(out.begin(), out.end(), r.object) == out.end()) out.push_back(r.object);
  return out;
}

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
