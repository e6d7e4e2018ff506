// The ring's controls: the model's attention shape, the problem, the ring (P,
// GPUs per node, layout), the links, the compute model (the app's hardware,
// an efficiency) and a measured results file. Widgets edit s.inputs.ring
// only; an invalid value is kept as typed and its reason shown in red, and
// the view shows nothing stale (ring_model.cpp).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>

#include "draw/controls.hpp"
#include "flashlab/sim/problem/attention_models.hpp"
#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "panels/panels.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

// A measured link (assets/interconnects/measured/) says so: its transfers follow its measured curve.
std::string link_label(const sim::InterconnectModel& l) {
  return l.id + " · " + sim::fixed(l.bandwidth / 1e9, 0) + " GB/s" + (l.kind == "measured" ? " (measured)" : "");
}

// A link preset, or the typed file of a measured link, as a combo.
void link_combo(const char* label, const char* id, std::string& value, float width, bool bad) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(width);
  ImGui::SetNextItemWidth(-1);
  const sim::InterconnectModel* cur = sim::find_interconnect(value);
  const std::string shown = cur ? link_label(*cur) : value.empty() ? std::string("(none)") : value;
  if (bad) ImGui::PushStyleColor(ImGuiCol_FrameBg, color_bad_field());
  if (ImGui::BeginCombo(id, shown.c_str())) {
    for (const sim::InterconnectModel& l : sim::interconnect_presets()) {
      if (ImGui::Selectable(link_label(l).c_str(), cur && cur->id == l.id)) value = l.id;
      if (ImGui::IsItemHovered()) {
        ImGui::BeginTooltip();
        ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
        ImGui::TextUnformatted(l.label.c_str());
        ImGui::TextColored(color_dim(), "%s", l.source.c_str());
        ImGui::PopTextWrapPos();
        ImGui::EndTooltip();
      }
    }
    ImGui::EndCombo();
  }
  if (bad) ImGui::PopStyleColor();
  if (cur && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 36);
    ImGui::TextUnformatted(cur->label.c_str());
    ImGui::TextColored(color_dim(), "%s", cur->source.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

// P as a slider over 1 … 64 and as typed text, both editing the same text.
void gpus_field(Inputs::Ring& in, float label_w, bool blamed) {
  const auto parsed = sim::parse_size(in.gpus);
  const bool usable = parsed && *parsed >= 1 && *parsed <= kRingMaxGpus && !blamed;
  int p = usable ? static_cast<int>(*parsed) : 8;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("GPUs P");
  ImGui::SameLine(label_w);
  ImGui::SetNextItemWidth(-1);
  if (ImGui::SliderInt("##ring_p", &p, 1, kRingMaxGpus, usable ? "%d" : "P typed is not usable", ImGuiSliderFlags_AlwaysClamp))
    in.gpus = std::to_string(p);
  size_field("P typed", "##ring_p_typed", in.gpus, "1 to 64", label_w, blamed);
}

}  // namespace

void panel_ring_controls(AppState& s) {
  Inputs::Ring& in = s.inputs.ring;
  const RingModel& m = s.ring.model;
  const float label_w = ImGui::CalcTextSize("efficiency η").x + ImGui::GetStyle().ItemSpacing.x * 2;
  const auto blamed = [&](const char* key) {
    return std::find(m.bad_fields.begin(), m.bad_fields.end(), key) != m.bad_fields.end();
  };

  if (ImGui::Button(s.view.show_concepts ? "Hide concepts" : "Concepts…")) s.view.show_concepts = !s.view.show_concepts;
  ImGui::SameLine();
  if (ImGui::Button("Reset ring")) in = Inputs::Ring{};

  section("Model");
  {
    const sim::AttentionModel* cur = sim::find_attention_model(in.model);
    const std::string shown = cur ? ring_model_label(*cur) : in.model == "custom" ? std::string("custom shape") : in.model;
    ImGui::SetNextItemWidth(-1);
    if (blamed("model")) ImGui::PushStyleColor(ImGuiCol_FrameBg, color_bad_field());
    if (ImGui::BeginCombo("##ring_model", shown.c_str())) {
      for (const sim::AttentionModel& am : sim::attention_models()) {
        if (ImGui::Selectable(ring_model_label(am).c_str(), cur == &am)) in.model = std::string(am.id);
        if (ImGui::IsItemHovered()) ImGui::SetTooltip("%s", std::string(am.source).c_str());
      }
      if (ImGui::Selectable("custom shape", in.model == "custom")) {
        // Start from the shape shown, so the fields are never empty.
        if (cur) {
          in.heads = std::to_string(cur->heads);
          in.kv_heads = std::to_string(cur->kv_heads);
          in.head_dim = std::to_string(cur->head_dim);
        }
        in.model = "custom";
      }
      ImGui::EndCombo();
    }
    if (blamed("model")) ImGui::PopStyleColor();
  }
  if (in.model == "custom") {
    size_field("heads H", "##ring_h", in.heads, "query heads", label_w, blamed("heads"));
    size_field("K/V heads", "##ring_hkv", in.kv_heads, "H_kv divides H", label_w, blamed("kv_heads"));
    size_field("head dim d", "##ring_d", in.head_dim, "e.g. 128", label_w, blamed("head_dim"));
  }
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("dtype");
  ImGui::SameLine(label_w);
  ImGui::SetNextItemWidth(-1);
  int dt = static_cast<int>(in.dtype);
  const char* dtypes[] = {"fp32", "fp16", "bf16"};
  if (ImGui::Combo("##ring_dtype", &dt, dtypes, 3)) in.dtype = static_cast<sim::DType>(dt);

  section("Problem");
  size_field("batch B", "##ring_b", in.batch, "e.g. 1", label_w, blamed("batch"));
  size_field("N (all)", "##ring_n", in.seq, "e.g. 32K", label_w, blamed("seq"));
  ImGui::Checkbox("causal mask", &in.causal);
  int pass = in.passes == sim::PassSelection::fwd_bwd ? 1 : 0;
  ImGui::RadioButton("forward", &pass, 0);
  ImGui::SameLine();
  ImGui::RadioButton("forward + backward", &pass, 1);
  in.passes = pass == 1 ? sim::PassSelection::fwd_bwd : sim::PassSelection::fwd;

  section("The ring");
  gpus_field(in, label_w, blamed("gpus"));
  size_field("per node", "##ring_node", in.gpus_per_node, "GPUs of a node", label_w, blamed("gpus_per_node"));
  const std::vector<sim::RingLayoutInfo>& layouts = sim::ring_layouts();
  int layout = 0;
  for (std::size_t k = 0; k < layouts.size(); ++k)
    if (layouts[k].layout == in.layout) layout = static_cast<int>(k);
  for (std::size_t k = 0; k < layouts.size(); ++k) {
    if (k > 0) ImGui::SameLine();
    ImGui::RadioButton(std::string(layouts[k].words).c_str(), &layout, static_cast<int>(k));
  }
  in.layout = layouts[static_cast<std::size_t>(layout)].layout;
  std::string layout_help;
  for (const sim::RingLayoutInfo& l : layouts)
    layout_help += (layout_help.empty() ? "" : " ") + std::string(l.words) + ": " +
                   (l.chunks_per_gpu == 1 ? std::string("P") : std::to_string(l.chunks_per_gpu) + "P") +
                   " chunks, GPU r holds " + std::string(l.holds) + "; " + std::string(l.summary) + ".";
  help_marker((layout_help + " Under the causal mask an unbalanced layout leaves GPU 0 idle after its first step "
                             "while the last GPU computes at every step.").c_str());
  ImGui::Checkbox("the other layout beneath", &in.compare_layouts);

  section("Links");
  link_combo("in a node", "##ring_intra", in.intra, label_w, blamed("intra"));
  link_combo("between", "##ring_inter", in.inter, label_w, blamed("inter"));

  section("Compute");
  ImGui::SetNextItemWidth(-1);
  if (s.inputs.use_hw_file) {
    ImGui::InputTextWithHint("##ring_hwfile", "path/to/profile.json (flashlab ceilings)", &s.inputs.hw_file);
  } else if (ImGui::BeginCombo("##ring_preset", s.inputs.hw_preset.c_str())) {
    for (const std::string& p : sim::list_presets())
      if (ImGui::Selectable(p.c_str(), p == s.inputs.hw_preset)) s.inputs.hw_preset = p;
    ImGui::EndCombo();
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the app's hardware (the one-GPU controls show the same)");
  text_field("efficiency η", "##ring_eff", in.efficiency, "e.g. 0.6", label_w, blamed("efficiency"));
  help_marker("The fraction of a chunk pair's time bound (max(FLOPs / peak, bytes / bandwidth), FlashAttention-2's "
              "counts) the single-GPU rung reaches. fa3_hopper measured 365–610 TFLOP/s of the H200's 989 at "
              "d = 128 (kernels/README.md): 0.4–0.6. With a results file, its P = 1 run calibrates it.");
  if (m.valid && !m.efficiency_note.empty()) math_text(m.efficiency_note, color_dim());

  section("Measured runs");
  RingResults& r = s.ring.results;
  ImGui::SetNextItemWidth(-ImGui::CalcTextSize("Open").x - ImGui::GetStyle().FramePadding.x * 2 - ImGui::GetStyle().ItemSpacing.x);
  const bool enter = ImGui::InputTextWithHint("##ring_results", "ring results (flashlab bench --gpus --json)", &r.path,
                                              ImGuiInputTextFlags_EnterReturnsTrue);
  ImGui::SameLine();
  if (ImGui::Button("Open##ring") || enter) open_ring_results(s, r.path);
  if (!r.error.empty()) math_text("✕ " + r.error, color_error());
  if (r.have) {
    const int shown = m.measured.run;
    const std::string cur = shown >= 0 ? ring_run_label(r.runs.runs[static_cast<size_t>(shown)], static_cast<size_t>(shown))
                                       : std::string("no run of this problem");
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##ring_run", cur.c_str())) {
      for (size_t k = 0; k < r.runs.runs.size(); ++k) {
        const sim::MeasuredRun& run = r.runs.runs[k];
        ImGui::PushID(static_cast<int>(k));
        const bool picked = ImGui::Selectable(ring_run_label(run, k).c_str(), static_cast<int>(k) == shown);
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("%s\n%s%s", sim::describe(run.problem).c_str(), run.kernel.c_str(),
                            run.parallel_part().backward_kernel.empty() ? "" : (" / " + run.parallel_part().backward_kernel).c_str());
        // The run's problem and steps become the ring's: simulated and measured are the same problem.
        if (picked) ring_inputs_from_run(in, r.runs, static_cast<int>(k));
        ImGui::PopID();
      }
      ImGui::EndCombo();
    }
    if (ImGui::IsItemHovered() && shown >= 0)
      ImGui::SetTooltip("%s", ring_run_label(r.runs.runs[static_cast<size_t>(shown)], static_cast<size_t>(shown)).c_str());
    // A problem the file measured with both step modes: either, by name.
    if (m.valid && shown >= 0) {
      const std::vector<std::string> modes = ring_run_steps(r.runs, m.problem);
      if (modes.size() > 1) {
        ImGui::AlignTextToFramePadding();
        ImGui::TextUnformatted("steps");
        const std::string& current = r.runs.runs[static_cast<size_t>(shown)].parallel_part().steps;
        for (const std::string& mode : modes) {
          ImGui::SameLine(mode == modes.front() ? label_w : 0.0f);
          if (ImGui::RadioButton(mode.c_str(), current == mode) && current != mode) {
            in.steps = mode;
            in.run_choice = -1;  // the run of this problem with those steps
          }
        }
        help_marker("The file measured this problem twice. fused: the rungs read K, V with their H_kv heads, fold "
                    "each partial output in their epilogue and add the gradients themselves. pairwise: K, V expanded "
                    "to H heads by a copy, each chunk pair's O, dQ, dK, dV merged or added by separate kernels.");
      }
    }
    ImGui::Checkbox("calibrated on the GPU", &in.calibrate);
    help_marker("The prediction beside a measured run times its chunk pairs with the rungs' launch model fitted on "
                "that GPU (assets/rungs: waves of CTAs, per CTA, per tile), when there is one, and the host's "
                "issuing measured with the link; else it takes its compute efficiency from the file's one-GPU run "
                "of the same attention. Off: the efficiency above.");
  }

  // The status of the inputs: errors in red, notes below.
  ImGui::Spacing();
  if (!m.valid) {
    for (const std::string& e : m.errors) math_text("✕ " + e, color_error());
  } else {
    for (const std::string& n : m.notes) math_text("• " + n, color_dim());
  }
}

}  // namespace flashlab::gui
