#include "ring_settings.hpp"

#include <stdexcept>

#include "flashlab/sim/problem/attention_models.hpp"

namespace flashlab::gui {

namespace {

using nlohmann::json;

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

void set_model(AppState& s, const json& v, const std::string&) {
  RingInputs& in = s.ring.inputs;
  in.model = text_of(v, "ring.model");
  if (in.model != "custom") {
    const sim::AttentionModel* m = sim::find_attention_model(in.model);
    if (!m) throw std::runtime_error("ring.model: unknown model '" + in.model + "' (" + model_choices() + ")");
    in.model = std::string(m->id);
  }
}

void set_layout(AppState& s, const json& v, const std::string&) {
  sim::RingLayout l;
  if (!v.is_string() || !sim::parse_ring_layout(v.get<std::string>(), l))
    throw std::runtime_error("ring.layout must be one of " + sim::ring_layout_names());
  s.ring.inputs.layout = l;
}

void set_pass(AppState& s, const json& v, const std::string&) {
  const auto p = v.is_string() ? sim::parse_pass_selection(v.get<std::string>()) : std::nullopt;
  if (!p || *p == sim::PassSelection::bwd) throw std::runtime_error("ring.pass must be \"fwd\" or \"fwd+bwd\"");
  s.ring.inputs.passes = *p;
}

void set_dtype(AppState& s, const json& v, const std::string&) {
  const auto d = v.is_string() ? sim::parse_dtype(v.get<std::string>()) : std::nullopt;
  if (!d) throw std::runtime_error("ring.dtype must be fp16, bf16 or fp32");
  s.ring.inputs.dtype = *d;
}

void set_step(AppState& s, const json& v, const std::string&) {
  const double n = number_of(v, "ring.step");
  if (!(n >= 0 && n < sim::kMaxRingGpus)) throw std::runtime_error("ring.step must be 0 or more (the last is P − 1)");
  s.ring.step_request = static_cast<int>(n);
}

void set_run(AppState& s, const json& v, const std::string&) {
  const double n = number_of(v, "ring.run");
  if (!(n >= 1 && n <= 1e6)) throw std::runtime_error("ring.run must be a run's number in the results file, from 1");
  s.ring.inputs.run_choice = static_cast<int>(n) - 1;
}

void set_steps(AppState& s, const json& v, const std::string&) {
  const std::string st = v.is_string() ? v.get<std::string>() : "";
  if (!sim::parse_ring_steps(st)) throw std::runtime_error("ring.steps must be \"fused\" or \"pairwise\"");
  s.ring.inputs.steps = st;
}

}  // namespace

// The text fields keep their text; the model parses it when it recomputes.
#define FLASHLAB_RING_TEXT(field) \
  [](AppState& s, const json& v, const std::string&) { s.ring.inputs.field = text_of(v, "ring." #field); }
#define FLASHLAB_RING_BOOL(field) \
  [](AppState& s, const json& v, const std::string&) { s.ring.inputs.field = bool_of(v, "ring." #field); }

const std::vector<RingSettingRow>& ring_setting_rows() {
  static const std::vector<RingSettingRow> rows{
      {{"model", model_choices(), "the model whose attention layer runs (custom: the heads below)"}, set_model},
      {{"heads", "count", "query heads (custom)"}, FLASHLAB_RING_TEXT(heads)},
      {{"kv_heads", "count", "key/value heads (custom; fewer than heads: grouped-query)"}, FLASHLAB_RING_TEXT(kv_heads)},
      {{"head_dim", "count", "head dimension d (custom)"}, FLASHLAB_RING_TEXT(head_dim)},
      {{"batch", "count", "batch size"}, FLASHLAB_RING_TEXT(batch)},
      {{"seq", "size", "sequence length of the whole ring, e.g. \"32K\""}, FLASHLAB_RING_TEXT(seq)},
      {{"gpus", "count", "GPUs in the ring, P"}, FLASHLAB_RING_TEXT(gpus)},
      {{"gpus_per_node", "count", "GPUs per node: the links inside a node, then between nodes"}, FLASHLAB_RING_TEXT(gpus_per_node)},
      {{"layout", layout_choices(), "how the sequence is cut into the GPUs' chunks"}, set_layout},
      {{"causal", "bool", "a causal mask"}, FLASHLAB_RING_BOOL(causal)},
      {{"pass", "fwd | fwd+bwd", "the forward pass, or a training step's forward and backward"}, set_pass},
      {{"dtype", "fp16 | bf16 | fp32", "element type"}, set_dtype},
      {{"intra", "link id | PATH", "the link inside a node (assets/interconnects, or a measured link file)"},
       [](AppState& s, const json& v, const std::string& base_dir) {
         s.ring.inputs.intra = resolve_path(text_of(v, "ring.intra"), base_dir);
       }},
      {{"inter", "link id | PATH", "the link between nodes"},
       [](AppState& s, const json& v, const std::string& base_dir) {
         s.ring.inputs.inter = resolve_path(text_of(v, "ring.inter"), base_dir);
       }},
      {{"efficiency", "number", "fraction of the block's bound the rung reaches"}, FLASHLAB_RING_TEXT(efficiency)},
      {{"compare_layouts", "bool", "the other layout's timeline under this one, on the same axis"}, FLASHLAB_RING_BOOL(compare_layouts)},
      {{"calibrate", "bool", "a measured run's prediction: the GPU's rung launch model, else the file's P = 1 run"}, FLASHLAB_RING_BOOL(calibrate)},
      {{"step", "number", "the step shown, from 0 (the last is P − 1)"}, set_step},
      {{"run", "number", "the measured run shown: its number in the results file, from 1"}, set_run},
      {{"steps", "fused | pairwise", "the measured run's steps: how they launched their kernels"}, set_steps},
  };
  return rows;
}

#undef FLASHLAB_RING_TEXT
#undef FLASHLAB_RING_BOOL

void apply_ring_settings(AppState& s, const json& r, const std::string& base_dir) {
  if (!r.is_object()) throw std::runtime_error("ring must be an object");
  for (auto it = r.begin(); it != r.end(); ++it) {
    const RingSettingRow* row = find_key(ring_setting_rows(), it.key());
    if (!row) throw std::runtime_error("unknown key ring." + it.key() + " (expected " + key_list(ring_setting_rows()) + ")");
    row->apply(s, *it, base_dir);
  }
}

}  // namespace flashlab::gui
