// The Hopper schedule under the tiling view: the CTA's timeline around the
// cursor's moment — the producer's TMA copies, the tensor cores, the softmax
// units, each op coloured by the warpgroup that issued it (the producer's
// copies in its own neutral; the tile's name says which) — and the ring of
// shared-memory stages as it is at that moment. Every number comes from the
// snapshot (model.cpp, sim::HopperPipeline); this file only places it.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "math_view.hpp"
#include "panels.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

// The warpgroups' colours, one meaning in every lane and in the legend: the
// producer (w < 0, its TMA copies) a neutral steel, the consumers (at most three
// in the compiled configurations) orange, teal, violet. Tensor colours would
// say "K" in one lane and "warpgroup 1" in the next, so the copies do not take them.
ImU32 warpgroup_color(int w, int alpha = 255) {
  static const ImU32 base[] = {IM_COL32(245, 160, 60, 255), IM_COL32(80, 200, 170, 255), IM_COL32(175, 130, 240, 255)};
  const ImU32 c = w < 0 ? IM_COL32(165, 175, 190, 255) : base[static_cast<size_t>(w % 3)];
  return (c & 0x00FFFFFFu) | (static_cast<ImU32>(alpha) << 24);
}

std::string block_label(const sim::PipeInterval& iv) {
  const std::string j = "{" + std::to_string(iv.j) + "}";
  switch (iv.op) {
    case sim::PipeOp::copy_Q: return "Q_i";
    case sim::PipeOp::copy_K: return "K_" + j;
    case sim::PipeOp::copy_V: return "V_" + j;
    case sim::PipeOp::gemm_S: return "S_" + j;
    case sim::PipeOp::softmax: return "exp_" + j;
    case sim::PipeOp::gemm_PV: return "PV_" + j;
    case sim::PipeOp::epilogue: return "O_i";
  }
  return "";
}

ImU32 fill_of(const sim::PipeInterval& iv) {
  switch (iv.op) {
    case sim::PipeOp::copy_Q:
    case sim::PipeOp::copy_K:
    case sim::PipeOp::copy_V:
    case sim::PipeOp::epilogue: return warpgroup_color(-1, 200);  // the producer's, whichever tile
    case sim::PipeOp::gemm_S: return warpgroup_color(iv.warpgroup, 150);
    case sim::PipeOp::softmax: return warpgroup_color(iv.warpgroup, 200);
    case sim::PipeOp::gemm_PV: return warpgroup_color(iv.warpgroup, 235);
  }
  return IM_COL32(128, 128, 128, 200);
}

// A label inside [x0, x1] × [y0, y1], only when it fits whole.
void label_in(ImDrawList* dl, const std::string& text, float x0, float x1, float y0, float y1) {
  const ImVec2 sz = math_label_size(text);
  if (sz.x + 4 > x1 - x0 || sz.y > y1 - y0 + 2) return;
  math_label(dl, ImVec2((x0 + x1 - sz.x) / 2, (y0 + y1 - sz.y) / 2), text, IM_COL32(15, 15, 20, 255));
}

// A half of a stage: "K_{9}" and how far it is (landing, held, free).
std::string half_text(char name, const sim::PipelineState::Stage& st, sim::StageStatus status) {
  const std::string tile = std::string(1, name) + "_{" + std::to_string(st.j) + "}";
  switch (status) {
    case sim::StageStatus::empty: return "empty";
    case sim::StageStatus::loading: return tile + " landing";
    case sim::StageStatus::full: return tile;
    case sim::StageStatus::released: return "free";
  }
  return "";
}

ImU32 stage_fill(sim::StageStatus status) {
  switch (status) {
    case sim::StageStatus::loading: return IM_COL32(60, 95, 150, 255);
    case sim::StageStatus::full: return IM_COL32(50, 135, 85, 255);
    default: return IM_COL32(45, 45, 52, 255);
  }
}

}  // namespace

void draw_pipeline(const AppState& s, const AlgoView& v, float height) {
  const ImVec2 size(0, height);
  const PipelineAtCursor& pa = v.snap.pipeline;
  const float scale = static_cast<float>(s.view.ui_scale);
  ImGui::BeginChild("pipeline", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float width = ImGui::GetContentRegionAvail().x;
  if (!pa.has || !v.pipeline) {
    if (!pa.why_not.empty()) math_text(pa.why_not, color_error(), width);
    ImGui::EndChild();
    return;
  }
  const sim::HopperPipeline& h = *v.pipeline;
  const sim::HopperConfig& c = h.config;
  // The heading: what is drawn, then where the cursor is in it.
  const std::string head = "The Hopper rung's schedule inside one CTA (fa3_hopper, d = " + std::to_string(c.head_dim) +
                           ": B_r × B_c = " + std::to_string(c.Br) + " × " + std::to_string(c.Bc) + ", " +
                           std::to_string(c.consumers()) + " consumer warpgroups, " + std::to_string(c.stages) +
                           "-stage ring" + (c.overlap ? ", softmax overlapped with P̃V" : "") + ")";
  const float line = math_line_height();
  if (math_text_size(head, width).y <= line * 1.05f) math_text(head, color_note(), width);
  else math_text("fa3_hopper's schedule in one CTA", color_note(), width);
  if (math_text_size(pa.caption, width).y <= line * 1.05f) math_text(pa.caption, color_dim(), width);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const char* lanes[] = {"TMA (producer)", "tensor cores", "softmax (exp2)"};
  float label_w = ImGui::CalcTextSize("ring (SMEM)").x;
  for (const char* l : lanes) label_w = std::max(label_w, ImGui::CalcTextSize(l).x);
  label_w += 10 * scale;
  const float x0 = o.x + label_w, x1 = o.x + avail.x - 4 * scale;
  if (x1 - x0 < 40 * scale || avail.y < line * 4) {
    ImGui::EndChild();
    return;
  }
  // Lanes: copies, tensor cores, softmax units; then the ring.
  // Four rows (three units and the ring) and the warpgroups' legend under them.
  const float lane_h = std::min(line * 1.1f, (avail.y - ImGui::GetTextLineHeight() - 16 * scale) / 4.0f);
  const sim::PipeUnit units[] = {sim::PipeUnit::copy_engine, sim::PipeUnit::tensor_cores, sim::PipeUnit::softmax_units};

  // The window: a few visits around the cursor's moment.
  const double per_visit = h.visits > 0 ? h.end_ns / static_cast<double>(h.visits + 1) : h.end_ns;
  const double span = std::max(1.0, per_visit * (c.stages + 3));
  double t0 = pa.t_ns - 0.35 * span;
  t0 = std::max(-0.02 * span, std::min(t0, h.end_ns - 0.98 * span));
  const double t1 = t0 + span;
  auto x_of = [&](double t) { return static_cast<float>(x0 + (x1 - x0) * (t - t0) / (t1 - t0)); };

  for (int k = 0; k < 3; ++k) {
    const float y = o.y + k * (lane_h + 2 * scale);
    dl->AddText(ImVec2(o.x, y + (lane_h - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), lanes[k]);
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + lane_h), IM_COL32(30, 30, 36, 255));
  }
  dl->PushClipRect(ImVec2(x0, o.y), ImVec2(x1, o.y + 3 * (lane_h + 2 * scale)), true);
  for (const sim::PipeInterval& iv : h.intervals) {
    const double b = iv.start_ns, e = iv.start_ns + iv.busy_ns;
    if (e < t0 || b > t1) continue;
    const int k = static_cast<int>(std::find(std::begin(units), std::end(units), iv.unit) - std::begin(units));
    const float y = o.y + k * (lane_h + 2 * scale);
    const float bx = x_of(b), ex = std::max(x_of(e), bx + 1);
    dl->AddRectFilled(ImVec2(bx, y + 1), ImVec2(ex, y + lane_h - 1), fill_of(iv), 2);
    dl->AddRect(ImVec2(bx, y + 1), ImVec2(ex, y + lane_h - 1), IM_COL32(10, 10, 14, 255), 2);
    label_in(dl, block_label(iv), std::max(bx, x0), std::min(ex, x1), y, y + lane_h);
  }
  // The moment of the cursor's event.
  const float xt = x_of(pa.t_ns);
  dl->AddLine(ImVec2(xt, o.y - 2), ImVec2(xt, o.y + 3 * (lane_h + 2 * scale)), IM_COL32(255, 255, 255, 230), 2 * scale);
  dl->PopClipRect();

  // The ring at that moment.
  const float ry = o.y + 3 * (lane_h + 2 * scale) + 4 * scale;
  dl->AddText(ImVec2(o.x, ry + (lane_h - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_TextDisabled),
              "ring (SMEM)");
  const int n = static_cast<int>(pa.state.stages.size());
  const float gap = 6 * scale, w = (x1 - x0 - gap * static_cast<float>(n - 1)) / static_cast<float>(std::max(1, n));
  for (int k = 0; k < n; ++k) {
    const sim::PipelineState::Stage& st = pa.state.stages[static_cast<size_t>(k)];
    const float bx = x0 + k * (w + gap);
    // "stage k" on the left where it fits, then the K_j and V_j halves.
    const std::string name = "stage " + std::to_string(k);
    const float name_w = ImGui::CalcTextSize(name.c_str()).x + 8 * scale;
    const bool named = name_w < w * 0.3f;
    if (named) {
      dl->AddRectFilled(ImVec2(bx, ry), ImVec2(bx + name_w, ry + lane_h), IM_COL32(38, 38, 44, 255), 3);
      dl->AddText(ImVec2(bx + 4 * scale, ry + (lane_h - ImGui::GetTextLineHeight()) / 2),
                  ImGui::GetColorU32(ImGuiCol_TextDisabled), name.c_str());
    }
    const float hx = bx + (named ? name_w : 0), hw = (bx + w - hx) / 2;
    const std::pair<char, sim::StageStatus> halves[] = {{'K', st.K}, {'V', st.V}};
    for (int side = 0; side < 2; ++side) {
      const float a = hx + side * hw;
      dl->AddRectFilled(ImVec2(a + 1, ry), ImVec2(a + hw - 1, ry + lane_h), stage_fill(halves[side].second), 3);
      const std::string t = st.j < 0 ? "empty" : half_text(halves[side].first, st, halves[side].second);
      const ImVec2 tz = math_label_size(t);
      if (tz.x + 8 * scale <= hw)
        math_label(dl, ImVec2(a + (hw - tz.x) / 2, ry + (lane_h - tz.y) / 2), t, IM_COL32(235, 235, 235, 255));
    }
  }
  // A legend of the warpgroups under the ring, the producer first, where it fits.
  float lx = x0;
  const float ly = ry + lane_h + 4 * scale;
  if (ly + ImGui::GetTextLineHeight() <= o.y + avail.y) {
    for (int wg = -1; wg < c.consumers(); ++wg) {
      const std::string t = wg < 0 ? "producer (TMA)" : "warpgroup " + std::to_string(wg + 1);
      const float tw = ImGui::CalcTextSize(t.c_str()).x;
      if (lx + tw + 20 * scale > x1) break;
      dl->AddRectFilled(ImVec2(lx, ly + 3 * scale), ImVec2(lx + 10 * scale, ly + ImGui::GetTextLineHeight() - 3 * scale),
                        warpgroup_color(wg), 2);
      dl->AddText(ImVec2(lx + 14 * scale, ly), ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
      lx += tw + 30 * scale;
    }
  }
  ImGui::EndChild();
}

}  // namespace flashlab::gui
