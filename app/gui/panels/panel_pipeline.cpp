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

#include "draw/math_view.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

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
    // The backward's, in a CTA that owns K_j, V_j: its steps are row blocks i.
    case sim::PipeOp::copy_dO: return "dO_{" + std::to_string(iv.i) + "}";
    case sim::PipeOp::copy_LD: return "L,D";
    case sim::PipeOp::gemm_St: return "Sᵀ";
    case sim::PipeOp::gemm_dPt: return "dPᵀ";
    case sim::PipeOp::softmax_bwd: return "P";
    case sim::PipeOp::store_dS: return "dS→";
    case sim::PipeOp::gemm_dV: return "dV";
    case sim::PipeOp::gemm_dK: return "dK";
    case sim::PipeOp::gemm_dQ: return "dQ";
    case sim::PipeOp::reduce_dQ:  // the writer's TMA reductions, or the warpgroup's own
      return "dQ_{" + std::to_string(iv.i) + "} += " + (iv.unit == sim::PipeUnit::dq_writer ? "(TMA)" : "(L2)");
    case sim::PipeOp::epilogue_dKdV: return "dK_j, dV_j";
    case sim::PipeOp::store_dQ: return "dQ→";
  }
  return "";
}

// The backward's copies name their row block; the forward's copy_Q does not.
std::string bwd_block_label(const sim::PipeInterval& iv) {
  if (iv.op == sim::PipeOp::copy_Q) return "Q_{" + std::to_string(iv.i) + "}";
  if (iv.op == sim::PipeOp::copy_K) return "K_j";
  if (iv.op == sim::PipeOp::copy_V) return "V_j";
  return block_label(iv);
}

ImU32 fill_of(const sim::PipeInterval& iv) {
  switch (iv.op) {
    case sim::PipeOp::copy_Q:
    case sim::PipeOp::copy_K:
    case sim::PipeOp::copy_V:
    case sim::PipeOp::epilogue: return warpgroup_color(-1, 200);  // the producer's, whichever tile
    case sim::PipeOp::gemm_S: return warpgroup_color(iv.warpgroup, 170);
    case sim::PipeOp::softmax: return warpgroup_color(iv.warpgroup, 200);
    case sim::PipeOp::gemm_PV: return warpgroup_color(iv.warpgroup, 235);
    case sim::PipeOp::copy_dO:
    case sim::PipeOp::copy_LD: return warpgroup_color(-1, 200);
    case sim::PipeOp::gemm_St:
    case sim::PipeOp::gemm_dPt:
    case sim::PipeOp::gemm_dV:
    case sim::PipeOp::gemm_dK:
    case sim::PipeOp::gemm_dQ: return warpgroup_color(iv.warpgroup, 235);
    case sim::PipeOp::softmax_bwd:
    case sim::PipeOp::store_dS:
    case sim::PipeOp::store_dQ: return warpgroup_color(iv.warpgroup, 200);
    case sim::PipeOp::reduce_dQ:
    case sim::PipeOp::epilogue_dKdV: return warpgroup_color(iv.warpgroup, 170);
  }
  return IM_COL32(128, 128, 128, 200);
}

// The lanes' ground, drawn for the dark theme (the light theme turns it light).
constexpr ImU32 kLane = IM_COL32(30, 30, 36, 255);

// A label inside [x0, x1] × [y0, y1] on `fill` (over a lane), only when it
// fits whole: near-black, or near-white where that reads better on the dark
// theme's lane (the light theme's lanes are light: black reads there).
void label_in(ImDrawList* dl, const std::string& text, ImU32 fill, float x0, float x1, float y0, float y1) {
  const ImVec2 sz = math_label_size(text);
  if (sz.x + 4 > x1 - x0 || sz.y > y1 - y0 + 2) return;
  const ImU32 dark = IM_COL32(15, 15, 20, 255), light = IM_COL32(245, 245, 245, 255);
  const float a = static_cast<float>((fill >> IM_COL32_A_SHIFT) & 0xFF) / 255.0f;
  const ImVec4 f = ImGui::ColorConvertU32ToFloat4(fill), l = ImGui::ColorConvertU32ToFloat4(kLane);
  const ImU32 on = ImGui::ColorConvertFloat4ToU32(
      ImVec4(f.x * a + l.x * (1 - a), f.y * a + l.y * (1 - a), f.z * a + l.z * (1 - a), 1));
  const ImU32 ink = light_theme() || contrast_ratio(dark, on) >= contrast_ratio(light, on) ? dark : light;
  math_label(dl, ImVec2((x0 + x1 - sz.x) / 2, (y0 + y1 - sz.y) / 2), text, ink);
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

// A stage's fill under its light text (which the light theme turns dark): deep
// blue and green on the dark theme, pale ones on the light theme.
ImU32 stage_fill(sim::StageStatus status) {
  const bool light = light_theme();
  switch (status) {
    case sim::StageStatus::loading: return light ? IM_COL32(175, 200, 240, 255) : IM_COL32(45, 75, 125, 255);
    case sim::StageStatus::full: return light ? IM_COL32(165, 220, 185, 255) : IM_COL32(30, 100, 60, 255);
    default: return IM_COL32(45, 45, 52, 255);
  }
}

// The part of a CTA's timeline drawn, `span` ns wide around the cursor's
// moment (a third of it before), kept inside the CTA's [0, end], on the
// pixels [x0, x1].
struct TimeWindow {
  double t0 = 0, t1 = 0;
  float x0 = 0, x1 = 0;
  float x_of(double t) const { return static_cast<float>(x0 + (x1 - x0) * (t - t0) / (t1 - t0)); }
};

TimeWindow window_around(double t_ns, double end_ns, double span, float x0, float x1) {
  const double t0 = std::max(-0.02 * span, std::min(t_ns - 0.35 * span, end_ns - 0.98 * span));
  return {t0, t0 + span, x0, x1};
}

// The window of `shown` steps around the cursor's moment, a step being the
// CTA's time over its `visits` + 1 (the visits and the ends).
TimeWindow window_of_steps(double t_ns, double end_ns, sim::i64 visits, double shown, float x0, float x1) {
  const double per_step = visits > 0 ? end_ns / static_cast<double>(visits + 1) : end_ns;
  return window_around(t_ns, end_ns, std::max(1.0, per_step * shown), x0, x1);
}

// The lanes' names left of x0 and their backgrounds from x0 to x1, lane k at
// o.y + k · (lane_h + gap).
void draw_lanes(ImDrawList* dl, ImVec2 o, const char* const lanes[], int count, float lane_h, float gap, float x0,
                float x1) {
  for (int k = 0; k < count; ++k) {
    const float y = o.y + k * (lane_h + gap);
    dl->AddText(ImVec2(o.x, y + (lane_h - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_TextDisabled), lanes[k]);
    dl->AddRectFilled(ImVec2(x0, y), ImVec2(x1, y + lane_h), kLane);
  }
}

// A schedule's heading: the whole line when it fits on one, else its short
// form; under it the cursor's caption, when that fits on one line too.
void schedule_heading(const std::string& head, const char* short_head, const std::string& caption, float width) {
  const float line = math_line_height();
  if (math_text_size(head, width).y <= line * 1.05f) math_text(head, color_note(), width);
  else math_text(short_head, color_note(), width);
  if (math_text_size(caption, width).y <= line * 1.05f) math_text(caption, color_dim(), width);
}

}  // namespace

namespace {

// The named barrier of the backward: a line of its own colour across the lanes.
ImU32 barrier_color() { return IM_COL32(255, 90, 120, 255); }

// One stage of the backward's ring: "stage k", then Q_i, dO_i and L_i, D_i as they are.
void draw_bwd_stage(ImDrawList* dl, const sim::BwdPipelineState::Stage& st, int k, float bx, float w, float y, float h,
                    float scale) {
  const std::string name = "stage " + std::to_string(k);
  const float name_w = ImGui::CalcTextSize(name.c_str()).x + 8 * scale;
  const bool named = name_w < w * 0.25f;
  if (named) {
    dl->AddRectFilled(ImVec2(bx, y), ImVec2(bx + name_w, y + h), IM_COL32(38, 38, 44, 255), 3);
    dl->AddText(ImVec2(bx + 4 * scale, y + (h - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_Text),
                name.c_str());
  }
  const std::string i = std::to_string(st.i);
  const std::pair<std::string, sim::StageStatus> parts[] = {
      {"Q_{" + i + "}", st.Q}, {"dO_{" + i + "}", st.dO}, {"L_{" + i + "}, D_{" + i + "}", st.LD}};
  const float hx = bx + (named ? name_w : 0), pw = (bx + w - hx) / 3;
  for (int p = 0; p < 3; ++p) {
    const float a = hx + p * pw;
    const sim::StageStatus status = parts[p].second;
    dl->AddRectFilled(ImVec2(a + 1, y), ImVec2(a + pw - 1, y + h), stage_fill(status), 3);
    std::string t = st.i < 0 || status == sim::StageStatus::empty ? "empty"
                    : status == sim::StageStatus::released    ? "free"
                                                              : parts[p].first;
    if (status == sim::StageStatus::loading && math_label_size(t + " landing").x + 8 * scale <= pw) t += " landing";
    const ImVec2 tz = math_label_size(t);
    if (tz.x + 8 * scale <= pw) math_label(dl, ImVec2(a + (pw - tz.x) / 2, y + (h - tz.y) / 2), t, IM_COL32(235, 235, 235, 255));
  }
}

// The backward's CTA (fa3_hopper_bwd, one per K_j, V_j): the producer's copies,
// the tensor cores, the CUDA cores and exponential units (softmax backward,
// dS_ijᵀ to shared memory), the load/store path (each warpgroup's block of dQ_i
// to its shared-memory buffer — or, without the writer, its reductions — and
// dK_j, dV_j) and, with the writer, the writer's TMA reductions of those blocks
// into the L2 (coloured by the warpgroup whose block they add). Each lane is
// split in one row per warpgroup, so that the lockstep shows as two bars side by
// side; the dS barrier of every step as a line; the ring of Q_i, dO_i, L_i, D_i
// stages and K_j, V_j at the cursor's moment.
void draw_bwd_pipeline(const AppState& s, const AlgoView& v, const PipelineAtCursor& pa) {
  const sim::HopperBwdPipeline& h = *v.bwd_pipeline;
  const sim::HopperBwdConfig& c = h.config;
  const float scale = static_cast<float>(s.view.ui_scale);
  const float width = ImGui::GetContentRegionAvail().x;
  const std::string head = "The Hopper backward inside one CTA (fa3_hopper_bwd, d = " + std::to_string(c.head_dim) +
                           ": B_r × B_c = " + std::to_string(c.Br) + " × " + std::to_string(c.Bc) + ", " +
                           std::to_string(c.consumers()) + " consumer warpgroups of 64 keys, " + std::to_string(c.stages) +
                           "-stage ring of Q_i, dO_i, L_i, D_i)";
  schedule_heading(head, "fa3_hopper_bwd's schedule in one CTA", pa.caption, width);
  const float line = math_line_height();

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const bool writer = c.dq_buffers > 0;
  const sim::PipeUnit units[] = {sim::PipeUnit::copy_engine, sim::PipeUnit::tensor_cores, sim::PipeUnit::softmax_units,
                                 sim::PipeUnit::load_store, sim::PipeUnit::dq_writer};
  const char* lanes[] = {"TMA (producer)", "tensor cores", "softmax, dS", writer ? "LSU → SMEM" : "LSU → L2",
                         "TMA (writer) → L2"};
  const int lane_count = writer ? 5 : 4;
  float label_w = ImGui::CalcTextSize("ring (SMEM)").x;
  for (int k = 0; k < lane_count; ++k) label_w = std::max(label_w, ImGui::CalcTextSize(lanes[k]).x);
  label_w += 10 * scale;
  const float x0 = o.x + label_w, x1 = o.x + avail.x - 4 * scale;
  if (x1 - x0 < 40 * scale || avail.y < line * 4) return;
  // The lanes, the ring and the legend.
  const float gap = 2 * scale;
  const float lane_h =
      std::min(line * 1.1f, (avail.y - ImGui::GetTextLineHeight() - 16 * scale) / static_cast<float>(lane_count + 1));
  auto lane_y = [&](int k) { return o.y + k * (lane_h + gap); };
  const float lanes_bottom = lane_y(lane_count) - gap;

  // The window: a few steps around the cursor's moment.
  const TimeWindow window = window_of_steps(pa.t_ns, h.end_ns, h.visits, c.stages + 1.5, x0, x1);
  const double t0 = window.t0, t1 = window.t1;
  const auto x_of = [&](double t) { return window.x_of(t); };

  draw_lanes(dl, o, lanes, lane_count, lane_h, gap, x0, x1);
  const int W = c.consumers();
  dl->PushClipRect(ImVec2(x0, o.y), ImVec2(x1, lanes_bottom), true);
  for (const sim::PipeInterval& iv : h.intervals) {
    const double b = iv.start_ns, e = iv.start_ns + iv.busy_ns;
    if (e < t0 || b > t1) continue;
    const int k = static_cast<int>(std::find(std::begin(units), std::end(units), iv.unit) - std::begin(units));
    const float y = lane_y(k);
    // The consumers' lanes: one row per warpgroup; the producer's: the whole lane.
    const float ry0 = iv.warpgroup < 0 ? y : y + lane_h * static_cast<float>(iv.warpgroup) / static_cast<float>(W);
    const float ry1 = iv.warpgroup < 0 ? y + lane_h : ry0 + lane_h / static_cast<float>(W);
    const float bx = x_of(b), ex = std::max(x_of(e), bx + 1);
    dl->AddRectFilled(ImVec2(bx, ry0 + 1), ImVec2(ex, ry1 - 1), fill_of(iv), 2);
    dl->AddRect(ImVec2(bx, ry0 + 1), ImVec2(ex, ry1 - 1), IM_COL32(10, 10, 14, 255), 2);
  }
  // Labels over the whole lane, once per op and step: the warpgroups' bars lie side by side.
  for (const sim::PipeInterval& iv : h.intervals) {
    if (iv.warpgroup > 0) continue;
    const double b = iv.start_ns, e = iv.start_ns + iv.busy_ns;
    if (e < t0 || b > t1) continue;
    const int k = static_cast<int>(std::find(std::begin(units), std::end(units), iv.unit) - std::begin(units));
    label_in(dl, bwd_block_label(iv), fill_of(iv), std::max(x_of(b), x0), std::min(x_of(e), x1), lane_y(k), lane_y(k) + lane_h);
  }
  // The dS barrier of every step: both halves of dS_ijᵀ are stored, dQ_i may start.
  for (const double tb : h.barrier_ns) {
    if (tb < t0 || tb > t1) continue;
    const float xb = x_of(tb);
    dl->AddLine(ImVec2(xb, lane_y(1) - gap), ImVec2(xb, lane_y(3) - gap), barrier_color(), 2.5f * scale);
  }
  // The moment of the cursor's event.
  const float xt = x_of(pa.t_ns);
  dl->AddLine(ImVec2(xt, o.y - 2), ImVec2(xt, lanes_bottom), IM_COL32(255, 255, 255, 230), 2 * scale);
  dl->PopClipRect();

  // The ring at that moment: K_j, V_j (held by the CTA), then the stages.
  const float ry = lanes_bottom + 4 * scale;
  dl->AddText(ImVec2(o.x, ry + (lane_h - ImGui::GetTextLineHeight()) / 2), ImGui::GetColorU32(ImGuiCol_TextDisabled),
              "ring (SMEM)");
  const sim::BwdPipelineState& bs = pa.bwd_state;
  const float sgap = 6 * scale;
  const std::string kv = bs.K == sim::StageStatus::full && bs.V == sim::StageStatus::full ? "K_j, V_j"
                         : bs.K == sim::StageStatus::empty                                ? "K_j, V_j empty"
                                                                                          : "K_j, V_j landing";
  const float kv_w = std::min((x1 - x0) * 0.2f, math_label_size("K_j, V_j landing").x + 12 * scale);
  dl->AddRectFilled(ImVec2(x0, ry), ImVec2(x0 + kv_w, ry + lane_h),
                    stage_fill(bs.K == sim::StageStatus::full && bs.V == sim::StageStatus::full ? sim::StageStatus::full
                               : bs.K == sim::StageStatus::empty                               ? sim::StageStatus::empty
                                                                                               : sim::StageStatus::loading),
                    3);
  const ImVec2 kz = math_label_size(kv);
  if (kz.x + 8 * scale <= kv_w)
    math_label(dl, ImVec2(x0 + (kv_w - kz.x) / 2, ry + (lane_h - kz.y) / 2), kv, IM_COL32(235, 235, 235, 255));
  const int n = static_cast<int>(bs.stages.size());
  const float sx0 = x0 + kv_w + sgap;
  const float w = (x1 - sx0 - sgap * static_cast<float>(n - 1)) / static_cast<float>(std::max(1, n));
  for (int k = 0; k < n; ++k)
    draw_bwd_stage(dl, bs.stages[static_cast<size_t>(k)], k, sx0 + k * (w + sgap), w, ry, lane_h, scale);

  // The legend: the producer, the warpgroups (the upper and lower rows), the barrier.
  float lx = x0;
  const float ly = ry + lane_h + 4 * scale;
  if (ly + ImGui::GetTextLineHeight() > o.y + avail.y) return;
  for (int wg = -1; wg <= W; ++wg) {
    const std::string t = wg < 0     ? "producer (TMA)"
                          : wg < W   ? "warpgroup " + std::to_string(wg + 1) + (wg == 0 ? " (upper row)" : " (lower row)")
                                     : "dS barrier";
    const float tw = ImGui::CalcTextSize(t.c_str()).x;
    if (lx + tw + 20 * scale > x1) break;
    const float th = ImGui::GetTextLineHeight();
    if (wg < W)
      dl->AddRectFilled(ImVec2(lx, ly + 3 * scale), ImVec2(lx + 10 * scale, ly + th - 3 * scale), warpgroup_color(wg), 2);
    else
      dl->AddLine(ImVec2(lx + 5 * scale, ly + 1 * scale), ImVec2(lx + 5 * scale, ly + th - 1 * scale), barrier_color(),
                  2.5f * scale);
    dl->AddText(ImVec2(lx + 14 * scale, ly), ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
    lx += tw + 30 * scale;
  }
}

}  // namespace

void draw_pipeline(const AppState& s, const AlgoView& v, float height) {
  const ImVec2 size(0, height);
  const PipelineAtCursor& pa = v.snap.pipeline;
  const float scale = static_cast<float>(s.view.ui_scale);
  ImGui::BeginChild("pipeline", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float width = ImGui::GetContentRegionAvail().x;
  if (pa.backward) {
    if (pa.has && v.bwd_pipeline) draw_bwd_pipeline(s, v, pa);
    else if (!pa.why_not.empty()) math_text(pa.why_not, color_error(), width);
    ImGui::EndChild();
    return;
  }
  if (!pa.has || !v.pipeline) {
    if (!pa.why_not.empty()) math_text(pa.why_not, color_error(), width);
    ImGui::EndChild();
    return;
  }
  const sim::HopperPipeline& h = *v.pipeline;
  const sim::HopperConfig& c = h.config;
  // The heading: what is drawn, then where the cursor is in it.
  const std::string head = std::string(c.persistent ? "fa3_hopper, one tile of a persistent block" : "fa3_hopper in one CTA") +
                           " (d = " + std::to_string(c.head_dim) + ", B_r × B_c = " +
                           std::to_string(c.Br) + " × " + std::to_string(c.Bc) + "): " + std::to_string(c.consumers()) +
                           " consumer warpgroups, " + std::to_string(c.stages) + "-stage ring" +
                           (c.overlap ? ", softmax under its own P·V" : "");
  schedule_heading(head, "fa3_hopper's schedule in one CTA", pa.caption, width);
  const float line = math_line_height();

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
  const TimeWindow window = window_of_steps(pa.t_ns, h.end_ns, h.visits, c.stages + 3, x0, x1);
  const double t0 = window.t0, t1 = window.t1;
  const auto x_of = [&](double t) { return window.x_of(t); };

  draw_lanes(dl, o, lanes, 3, lane_h, 2 * scale, x0, x1);
  dl->PushClipRect(ImVec2(x0, o.y), ImVec2(x1, o.y + 3 * (lane_h + 2 * scale)), true);
  for (const sim::PipeInterval& iv : h.intervals) {
    const double b = iv.start_ns, e = iv.start_ns + iv.busy_ns;
    if (e < t0 || b > t1) continue;
    const int k = static_cast<int>(std::find(std::begin(units), std::end(units), iv.unit) - std::begin(units));
    const float y = o.y + k * (lane_h + 2 * scale);
    const float bx = x_of(b), ex = std::max(x_of(e), bx + 1);
    dl->AddRectFilled(ImVec2(bx, y + 1), ImVec2(ex, y + lane_h - 1), fill_of(iv), 2);
    dl->AddRect(ImVec2(bx, y + 1), ImVec2(ex, y + lane_h - 1), IM_COL32(10, 10, 14, 255), 2);
    label_in(dl, block_label(iv), fill_of(iv), std::max(bx, x0), std::min(ex, x1), y, y + lane_h);
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
                  ImGui::GetColorU32(ImGuiCol_Text), name.c_str());
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
