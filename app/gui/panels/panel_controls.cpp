// Controls: algorithms, the problem, the memory (hardware, M, tiles), the view.
// Widgets edit s.inputs only; an invalid value is kept as typed and its reason
// shown in red, and the model shows nothing stale (see model.cpp).
#include <imgui.h>
#include <imgui_stdlib.h>

#include <algorithm>
#include <cmath>

#include "draw/controls.hpp"
#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "model/model.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

bool algorithm_combo(const char* label, sim::Algorithm& a) {
  bool changed = false;
  if (ImGui::BeginCombo(label, std::string(sim::algorithm_info(a).title).c_str())) {
    for (sim::Algorithm x : sim::all_algorithms()) {
      const bool sel = x == a;
      if (ImGui::Selectable(std::string(sim::algorithm_info(x).title).c_str(), sel)) {
        a = x;
        changed = true;
      }
      if (sel) ImGui::SetItemDefaultFocus();
    }
    ImGui::EndCombo();
  }
  return changed;
}

// The round size nearest to n on a log scale: four steps per octave
// (1024, 1280, 1536, 1792, 2048, ...), exact below 8.
long long snap_round(long long n) {
  if (n < 8) return n;
  int k = 0;
  while ((n >> k) >= 8) ++k;  // n = m·2^k with 4 ≤ m < 8 after rounding
  const long long unit = 1LL << (k - 1 >= 0 ? k - 1 : 0);
  long long best = n, best_d = -1;
  for (long long m = 4; m <= 16; ++m) {
    const long long v = m * unit;
    const long long dist = v > n ? v - n : n - v;
    if (best_d < 0 || dist < best_d) {
      best = v;
      best_d = dist;
    }
  }
  return best;
}

}  // namespace

void section(const char* title) {
  ImGui::Spacing();
  ImGui::PushFont(fonts().big);
  ImGui::TextUnformatted(title);
  ImGui::PopFont();
  ImGui::Separator();
}

void text_field(const char* label, const char* id, std::string& value, const char* hint, float width, bool bad) {
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted(label);
  ImGui::SameLine(width);
  ImGui::SetNextItemWidth(-1);
  if (bad) ImGui::PushStyleColor(ImGuiCol_FrameBg, color_bad_field());
  ImGui::InputTextWithHint(id, hint, &value, ImGuiInputTextFlags_CharsNoBlank);
  if (bad) ImGui::PopStyleColor();
}

void size_field(const char* label, const char* id, std::string& value, const char* hint, float width, bool blamed) {
  text_field(label, id, value, hint, width, blamed || !sim::parse_size(value) || *sim::parse_size(value) < 1);
}

void help_marker(const char* text) {
  ImGui::SameLine();
  ImGui::TextDisabled("(?)");
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 30);
    ImGui::TextUnformatted(text);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
}

void workspace_switch(AppState& s, bool compact) {
  // Two halves of one row (or two buttons as wide as their text): the selected one lit like a pressed button.
  const float w = compact ? ImGui::CalcTextSize("Across GPUs").x + 2 * ImGui::GetStyle().FramePadding.x
                          : (ImGui::GetContentRegionAvail().x - ImGui::GetStyle().ItemSpacing.x) / 2;
  const std::pair<Workspace, const char*> items[] = {{Workspace::one_gpu, "One GPU"}, {Workspace::ring, "Across GPUs"}};
  for (int k = 0; k < 2; ++k) {
    const bool on = s.view.workspace == items[k].first;
    if (k) ImGui::SameLine();
    if (on) ImGui::PushStyleColor(ImGuiCol_Button, ImGui::GetStyleColorVec4(ImGuiCol_ButtonActive));
    if (ImGui::Button(items[k].second, ImVec2(w, 0))) s.view.workspace = items[k].first;
    if (on) ImGui::PopStyleColor();
    if (ImGui::IsItemHovered())
      ImGui::SetTooltip(k ? "ring attention over P GPUs: the timeline per GPU and the step-through (F6)"
                          : "one GPU: the tiling, the counters and the plots (F6)");
  }
}

void panel_controls(AppState& s) {
  workspace_switch(s);
  if (s.view.workspace == Workspace::ring) {
    panel_ring_controls(s);
    return;
  }
  Inputs& in = s.inputs;
  // Labels in one column as wide as the widest of them.
  const float label_w = ImGui::CalcTextSize("head dim d").x + ImGui::GetStyle().ItemSpacing.x * 2;

  if (ImGui::Button(s.view.show_concepts ? "Hide concepts" : "Concepts…")) s.view.show_concepts = !s.view.show_concepts;
  ImGui::SameLine();
  if (ImGui::Button("Reset view")) {
    in.reset_one_gpu();
    s.playback = Playback{};
  }

  section("Algorithms");
  ImGui::SetNextItemWidth(-1);
  algorithm_combo("##algo_a", in.algo_a);
  ImGui::Checkbox("side by side with", &in.compare);
  if (in.compare) {
    ImGui::SetNextItemWidth(-1);
    algorithm_combo("##algo_b", in.algo_b);
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("lockstep:");
    ImGui::SameLine();
    int ls = in.lockstep == Lockstep::progress ? 0 : 1;
    ImGui::RadioButton("progress", &ls, 0);
    ImGui::SameLine();
    ImGui::RadioButton("block (i, j)", &ls, 1);
    in.lockstep = ls == 0 ? Lockstep::progress : Lockstep::block;
    help_marker("progress: both cursors at the same fraction of their schedules (they finish together).\n"
                "block: the second jumps to the block (i, j) the first is visiting.");
  }

  section("Problem");
  const auto blamed = [&](const char* key) {
    return std::find(s.model.bad_fields.begin(), s.model.bad_fields.end(), key) != s.model.bad_fields.end();
  };
  // N: a log slider and the typed value, both editing the same text. The
  // slider snaps to round sizes; while the typed value is not a usable N it
  // says so instead of showing a stale one.
  {
    const auto parsed = sim::parse_size(in.seq);
    const bool usable = parsed && *parsed >= 1 && !blamed("seq");
    constexpr long long lo = 1, hi = 1 << 20;
    long long n = usable ? static_cast<long long>(std::min<i64>(*parsed, hi)) : 1024;
    ImGui::AlignTextToFramePadding();
    ImGui::TextUnformatted("N");
    ImGui::SameLine(label_w);
    ImGui::SetNextItemWidth(-1);
    const std::string shown = usable && *parsed > hi ? fmt_count(*parsed) + " (typed)" : "%lld";
    if (ImGui::SliderScalar("##n_slider", ImGuiDataType_S64, &n, &lo, &hi, usable ? shown.c_str() : "N typed is not usable",
                            ImGuiSliderFlags_Logarithmic | ImGuiSliderFlags_AlwaysClamp))
      in.seq = std::to_string(snap_round(n));
    size_field("N typed", "##n", in.seq, "e.g. 4096 or 16K", label_w, blamed("seq"));
  }
  size_field("head dim d", "##d", in.head_dim, "e.g. 64", label_w, blamed("head_dim"));
  size_field("batch B", "##b", in.batch, "e.g. 1", label_w, blamed("batch"));
  size_field("heads H", "##h", in.heads, "e.g. 16", label_w, blamed("heads"));
  {
    // H_kv may stay empty: as many K/V heads as query heads.
    const auto kv = sim::parse_size(in.kv_heads);
    const bool unusable = !in.kv_heads.empty() && (!kv || *kv < 1);
    text_field("K/V heads", "##hkv", in.kv_heads, "as many as H", label_w, blamed("kv_heads") || unusable);
  }
  ImGui::Checkbox("causal mask", &in.causal);
  ImGui::SameLine();
  ImGui::SetNextItemWidth(-1);
  int dt = static_cast<int>(in.dtype);
  const char* dtypes[] = {"fp32", "fp16", "bf16"};
  if (ImGui::Combo("##dtype", &dt, dtypes, 3)) in.dtype = static_cast<sim::DType>(dt);

  section("Memory");
  ImGui::Checkbox("measured profile file", &in.use_hw_file);
  if (in.use_hw_file) {
    ImGui::SetNextItemWidth(-1);
    ImGui::InputTextWithHint("##hwfile", "path/to/profile.json (flashlab ceilings)", &in.hw_file);
  } else {
    ImGui::SetNextItemWidth(-1);
    if (ImGui::BeginCombo("##preset", in.hw_preset.c_str())) {
      for (const std::string& p : sim::list_presets())
        if (ImGui::Selectable(p.c_str(), p == in.hw_preset)) in.hw_preset = p;
      ImGui::EndCombo();
    }
  }
  if (s.model.valid && !s.model.hw.sources.empty() && ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(ImGui::GetFontSize() * 40);
    for (const std::string& src : s.model.hw.sources) ImGui::BulletText("%s", src.c_str());
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
  }
  ImGui::Checkbox("override SRAM M", &in.sram_override);
  if (in.sram_override) {
    size_field("M (bytes)", "##sram", in.sram, "e.g. 100KiB", label_w, blamed("sram"));
  } else if (s.model.valid) {
    ImGui::SameLine();
    ImGui::TextColored(color_dim(), "M = %s", sim::bytes_iec(static_cast<double>(s.model.sram_bytes)).c_str());
  }
  int tm = in.hopper ? 2 : in.manual_tiles ? 1 : 0;
  ImGui::RadioButton("paper's rule", &tm, 0);
  ImGui::SameLine();
  ImGui::RadioButton("manual B_r, B_c", &tm, 1);
  ImGui::RadioButton("the Hopper rung's", &tm, 2);
  help_marker("The tiles fa3_hopper (forward) and fa3_hopper_bwd (backward) are compiled with (d = 64 or 128, "
              "fp16/bf16), and under FlashAttention-2's tiling view — forward or backward — the rung's schedule "
              "inside a CTA: the producer's TMA copies into a ring of shared-memory stages, the consumer "
              "warpgroups' products on the tensor cores and softmax between them.");
  in.manual_tiles = tm == 1;
  in.hopper = tm == 2;
  if (in.manual_tiles) {
    size_field("B_r", "##br", in.br, "rows of Q_i", label_w, blamed("br"));
    size_field("B_c", "##bc", in.bc, "rows of K_j", label_w, blamed("bc"));
  }
  if (s.model.valid) {
    const sim::SimResult& r = s.model.algos[0].result;
    ImGui::TextColored(color_note(), "B_r × B_c = %lld × %lld (%s)", static_cast<long long>(r.tiles.Br),
                       static_cast<long long>(r.tiles.Bc),
                       !s.applied.hopper ? r.tile_rule.c_str()
                       : sim::algorithm_info(s.model.algos[0].algo).pass == sim::Pass::bwd ? "compiled into fa3_hopper_bwd"
                                                                                          : "compiled into fa3_hopper");
    if (s.applied.hopper && s.model.algos[0].hopper && s.model.algos[0].hopper->persistent) {
      ImGui::PushStyleColor(ImGuiCol_Text, color_note());
      ImGui::TextWrapped("persistent: one block per SM walks the tiles, the next Q_i landing under each");
      ImGui::PopStyleColor();
    }
    ImGui::TextColored(color_note(), "T_r × T_c = %s × %s blocks", fmt_count(r.T_r).c_str(), fmt_count(r.T_c).c_str());
  }

  section("View");
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("UI scale");
  ImGui::SameLine(label_w);
  ImGui::SetNextItemWidth(-1);
  float scale = static_cast<float>(s.view.pending_ui_scale > 0 ? s.view.pending_ui_scale : s.view.ui_scale);
  ImGui::SliderFloat("##scale", &scale, 1.0f, 3.0f, "%.2f×", ImGuiSliderFlags_AlwaysClamp);
  // Applied when the slider is let go: rebuilding the font atlas every frame
  // of a drag would stall the projector.
  if (ImGui::IsItemDeactivatedAfterEdit()) s.view.pending_ui_scale = std::round(scale * 4) / 4;
  ImGui::AlignTextToFramePadding();
  ImGui::TextUnformatted("speed");
  ImGui::SameLine(label_w);
  ImGui::SetNextItemWidth(-1);
  float speed = static_cast<float>(s.playback.events_per_s);
  if (ImGui::SliderFloat("##speed", &speed, 0.25f, 1e6f, "%.4g events/s", ImGuiSliderFlags_Logarithmic |
                                                                                ImGuiSliderFlags_AlwaysClamp))
    s.playback.events_per_s = speed;

  // The status of the inputs: errors in red, notes below. Wrapped at spaces
  // only, so "196,608 B" never splits at its comma.
  ImGui::Spacing();
  if (!s.model.valid) {
    for (const std::string& e : s.model.errors) math_text("✕ " + e, color_error());
  } else {
    for (const std::string& n : s.model.notes) math_text("• " + n, color_dim());
  }
}

}  // namespace flashlab::gui
