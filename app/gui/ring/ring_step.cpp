// The ring's step-through at step s: the GPUs on a ring with the K, V chunks
// each holds now (arrows: where they go next, amber between nodes); the
// chunk-pair matrix (query chunks × key chunks) with the pairs each GPU
// computes at this step, those it computed before, the diagonal ones the mask
// runs through and the skipped ones it hides; the work each GPU has done so
// far. Every number comes from the ring's model (RingStepState, derived when
// the step moves); this file only places it.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "panels/panels.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

constexpr float kPi = 3.14159265f;

// GPU r's colour: hues around the wheel, so neighbours differ.
ImU32 gpu_color(int r, int P, int alpha = 255) {
  const float h = std::fmod(static_cast<float>(r) / static_cast<float>(std::max(1, P)) + 0.02f, 1.0f);
  float cr, cg, cb;
  ImGui::ColorConvertHSVtoRGB(h, 0.55f, 0.95f, cr, cg, cb);
  return IM_COL32(static_cast<int>(cr * 255), static_cast<int>(cg * 255), static_cast<int>(cb * 255), alpha);
}

// Near-black or near-white, whichever reads better on `fill`.
ImU32 text_on(ImU32 fill) {
  const ImU32 dark = IM_COL32(12, 14, 20, 255), light = IM_COL32(245, 245, 245, 255);
  return contrast_ratio(dark, fill) >= contrast_ratio(light, fill) ? dark : light;
}

// The matrix's pairs still to come, and those the mask skips (never loaded).
constexpr ImU32 kToCome = IM_COL32(66, 70, 84, 255);
constexpr ImU32 kSkipped = IM_COL32(14, 15, 18, 255);

// Text centred in a box, only when it fits whole.
bool centred(ImDrawList* dl, const std::string& t, ImVec2 a, ImVec2 b, ImU32 col) {
  const ImVec2 sz = ImGui::CalcTextSize(t.c_str());
  if (sz.x + 4 > b.x - a.x || sz.y > b.y - a.y + 1) return false;
  dl->AddText(ImVec2((a.x + b.x - sz.x) / 2, (a.y + b.y - sz.y) / 2), col, t.c_str());
  return true;
}

std::string chunk_list(const std::vector<int>& chunks) {
  std::string s;
  for (int c : chunks) s += (s.empty() ? "" : ",") + std::to_string(c);
  return s;
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float thick, float head) {
  const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
  if (len < 1) return;
  const float ux = dx / len, uy = dy / len;
  const ImVec2 base(b.x - ux * head, b.y - uy * head);
  dl->AddLine(a, base, col, thick);
  dl->AddTriangleFilled(b, ImVec2(base.x - uy * head * 0.5f, base.y + ux * head * 0.5f),
                        ImVec2(base.x + uy * head * 0.5f, base.y - ux * head * 0.5f), col);
}

// The GPUs on a ring: each holds its own Q chunks and, at step s, the K, V
// chunks of GPU (r − s) mod P; they move to r + 1 for the next step.
void draw_ring_picture(ImDrawList* dl, const AppState& s, ImVec2 o, float side) {
  const RingModel& m = s.ring.model;
  const float scale = static_cast<float>(s.view.ui_scale);
  const sim::RingPartition& part = m.simulation.partition;
  const int P = part.gpus;
  const RingStepState& st = m.step;
  const float lh = ImGui::GetTextLineHeight();
  const ImVec2 c(o.x + side / 2, o.y + side / 2);
  // Boxes as large as the circle allows; two lines of text when they fit.
  const float R0 = side * 0.5f;
  float box_w = P == 1 ? side * 0.5f : std::min(side * 0.3f, 2 * kPi * R0 / static_cast<float>(P) * 0.5f);
  float box_h = std::min(box_w * 0.8f, 2.3f * lh);
  const float R = P == 1 ? 0 : R0 - std::max(box_w, box_h) * 0.55f - 2 * scale;
  auto centre_of = [&](int r) {
    const float a = -kPi / 2 + 2 * kPi * static_cast<float>(r) / static_cast<float>(P);
    return ImVec2(c.x + R * std::cos(a), c.y + R * std::sin(a));
  };
  // Arrows first, under the boxes: r → r + 1, from box edge to box edge.
  if (P > 1) {
    const float hw = box_w / 2 + 3 * scale, hh = box_h / 2 + 3 * scale;
    auto to_edge = [&](float ux, float uy) {  // centre to the box's edge along (ux, uy)
      const float tx = std::fabs(ux) > 1e-4f ? hw / std::fabs(ux) : 1e9f, ty = std::fabs(uy) > 1e-4f ? hh / std::fabs(uy) : 1e9f;
      return std::min(tx, ty);
    };
    for (int r = 0; r < P; ++r) {
      const int n = (r + 1) % P;
      const ImVec2 a = centre_of(r), b = centre_of(n);
      // Two GPUs: the arrows each way, side by side.
      const float off = P == 2 ? 0.25f * box_w : 0;
      const float dx = b.x - a.x, dy = b.y - a.y, len = std::sqrt(dx * dx + dy * dy);
      if (len < 1) continue;
      const float ux = dx / len, uy = dy / len;
      const ImVec2 a2(a.x - uy * off, a.y + ux * off), b2(b.x - uy * off, b.y + ux * off);
      const float e = to_edge(ux, uy);
      if (len - 2 * e < 6 * scale) continue;
      const bool crosses = m.topology.crosses_nodes(r, n);
      arrow(dl, ImVec2(a2.x + ux * e, a2.y + uy * e), ImVec2(b2.x - ux * e, b2.y - uy * e),
            crosses ? IM_COL32(235, 180, 70, 255) : IM_COL32(150, 160, 185, 255), (crosses ? 2.5f : 1.5f) * scale,
            std::min(8 * scale, (len - 2 * e) * 0.5f));
    }
  }
  for (int r = 0; r < P; ++r) {
    const ImVec2 p = centre_of(r);
    const int owner = st.view.kv_owner.empty() ? r : st.view.kv_owner[static_cast<size_t>(r)];
    const ImVec2 a(p.x - box_w / 2, p.y - box_h / 2), b(p.x + box_w / 2, p.y + box_h / 2);
    // Upper half: the GPU (its colour: its own Q chunks); lower half: the K, V it holds (the owner's colour).
    const float mid = (a.y + b.y) / 2;
    dl->AddRectFilled(a, ImVec2(b.x, mid), gpu_color(r, P), 4, ImDrawFlags_RoundCornersTop);
    dl->AddRectFilled(ImVec2(a.x, mid), b, gpu_color(owner, P), 4, ImDrawFlags_RoundCornersBottom);
    dl->AddRect(a, b, IM_COL32(20, 22, 28, 255), 4, 0, 1.5f * scale);
    const std::string q = "GPU " + std::to_string(r);
    const std::string kv = "K,V " + chunk_list(part.held[static_cast<size_t>(owner)]);
    const ImU32 top = text_on(gpu_color(r, P)), bottom = text_on(gpu_color(owner, P));
    if (!centred(dl, q, a, ImVec2(b.x, mid), top)) centred(dl, std::to_string(r), a, ImVec2(b.x, mid), top);
    if (!centred(dl, kv, ImVec2(a.x, mid), b, bottom))
      centred(dl, chunk_list(part.held[static_cast<size_t>(owner)]), ImVec2(a.x, mid), b, bottom);
  }
  // The step in the middle, when the ring leaves room for it.
  if (P > 2) {
    const std::string t = "step " + std::to_string(st.step);
    const float inner = R - std::max(box_w, box_h) * 0.6f;
    if (inner > 0) centred(dl, t, ImVec2(c.x - inner, c.y - lh), ImVec2(c.x + inner, c.y + lh), ImGui::GetColorU32(ImGuiCol_Text));
  }
}

// Query chunks (rows) × key chunks (columns): who computes each pair and when.
void draw_matrix(ImDrawList* dl, const AppState& s, ImVec2 o, float side) {
  const RingModel& m = s.ring.model;
  const float scale = static_cast<float>(s.view.ui_scale);
  const int P = m.simulation.problem.gpus();
  const int C = m.chunks;
  const int step = m.step.step;
  const float lh = ImGui::GetTextLineHeight();
  // A strip of the holders' colours left of the rows (its queries) and over the columns (its K, V at step 0).
  const float strip = std::max(4.0f, 6 * scale), gap = 2 * scale;
  const float cell = (side - strip - gap) / static_cast<float>(std::max(1, C));
  const ImVec2 M0(o.x + strip + gap, o.y + strip + gap);
  auto holder = [&](int chunk) {
    for (int r = 0; r < P; ++r)
      for (int c : m.simulation.partition.held[static_cast<size_t>(r)])
        if (c == chunk) return r;
    return 0;
  };
  for (int k = 0; k < C; ++k) {
    const int h = holder(k);
    const float a = static_cast<float>(k) * cell;
    dl->AddRectFilled(ImVec2(o.x, M0.y + a), ImVec2(o.x + strip, M0.y + a + cell), gpu_color(h, P));
    dl->AddRectFilled(ImVec2(M0.x + a, o.y), ImVec2(M0.x + a + cell, o.y + strip), gpu_color(h, P));
  }
  dl->AddRectFilled(M0, ImVec2(M0.x + cell * C, M0.y + cell * C), kToCome);
  const bool labels = cell >= lh * 1.05f;
  if (cell < 5 * scale) {
    // Cells of a few pixels: runs of one colour per row, one rectangle each (llvmpipe pays per vertex).
    for (int q = 0; q < C; ++q) {
      int run = 0;
      ImU32 run_col = 0;
      for (int k = 0; k <= C; ++k) {
        ImU32 col = 0;
        if (k < C) {
          const RingPairCell& pc = m.cells[static_cast<size_t>(q) * static_cast<size_t>(C) + static_cast<size_t>(k)];
          col = pc.visibility == sim::ChunkVisibility::none ? kSkipped
                : pc.step == step                           ? gpu_color(pc.gpu, P)
                : pc.step < step                            ? gpu_color(pc.gpu, P, 95)
                                                            : kToCome;
        }
        if (k < C && col == run_col) continue;
        if (k > 0)
          dl->AddRectFilled(ImVec2(M0.x + static_cast<float>(run) * cell, M0.y + static_cast<float>(q) * cell),
                            ImVec2(M0.x + static_cast<float>(k) * cell, M0.y + static_cast<float>(q + 1) * cell), run_col);
        run = k;
        run_col = col;
      }
    }
    return;
  }
  for (int q = 0; q < C; ++q)
    for (int k = 0; k < C; ++k) {
      const RingPairCell& pc = m.cells[static_cast<size_t>(q) * static_cast<size_t>(C) + static_cast<size_t>(k)];
      const ImVec2 a(M0.x + k * cell, M0.y + q * cell), b(a.x + cell, a.y + cell);
      ImU32 col = 0;
      if (pc.visibility == sim::ChunkVisibility::none) col = kSkipped;
      else if (pc.step == step) col = gpu_color(pc.gpu, P);
      else if (pc.step < step) col = gpu_color(pc.gpu, P, 95);
      if (pc.visibility == sim::ChunkVisibility::diagonal) {
        // The mask runs through it: the keys at or before each query are computed, the others never.
        dl->AddTriangleFilled(a, ImVec2(b.x, a.y), b, kSkipped);
        if (col) dl->AddTriangleFilled(a, ImVec2(a.x, b.y), b, col);
        dl->AddLine(a, b, IM_COL32(230, 70, 55, 255), std::max(1.0f, scale));
      } else if (col) {
        dl->AddRectFilled(a, b, col);
      }
      if (pc.step == step && pc.visibility == sim::ChunkVisibility::none && cell >= 4 * scale) {
        // Met at this step and skipped: the mask hides every pair of it.
        const float in = std::max(1.0f, 0.12f * cell);
        dl->AddRect(ImVec2(a.x + in, a.y + in), ImVec2(b.x - in, b.y - in), gpu_color(pc.gpu, P, 150), 0, 0, std::max(1.0f, scale));
      }
      if (pc.step == step && pc.visibility != sim::ChunkVisibility::none) {
        dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0, 0, std::max(1.0f, 1.5f * scale));
        if (labels && pc.visibility == sim::ChunkVisibility::full) centred(dl, std::to_string(pc.gpu), a, b, text_on(col));
      }
    }
  if (cell >= 5 * scale) {
    for (int k = 1; k < C; ++k) {
      const float a = static_cast<float>(k) * cell;
      dl->AddLine(ImVec2(M0.x + a, M0.y), ImVec2(M0.x + a, M0.y + cell * C), IM_COL32(20, 22, 28, 255));
      dl->AddLine(ImVec2(M0.x, M0.y + a), ImVec2(M0.x + cell * C, M0.y + a), IM_COL32(20, 22, 28, 255));
    }
  }
}

// Each GPU's visible pairs computed in steps 0 … s, against its whole forward.
void draw_work(ImDrawList* dl, const AppState& s, ImVec2 o, ImVec2 size) {
  const RingModel& m = s.ring.model;
  const float scale = static_cast<float>(s.view.ui_scale);
  const int P = m.simulation.problem.gpus();
  const RingStepState& st = m.step;
  const float lh = ImGui::GetTextLineHeight();
  sim::i64 most = 1;
  for (sim::i64 t : m.pairs_total) most = std::max(most, t);
  const float row = size.y / static_cast<float>(P);
  const float label_w = ImGui::CalcTextSize("GPU 00").x + 6 * scale;
  const bool labelled = row >= lh * 0.95f;
  const float x0 = o.x + (labelled ? label_w : 0), x1 = o.x + size.x;
  const float pct_w = ImGui::CalcTextSize("100%").x + 6 * scale;
  const bool with_pct = labelled && x1 - x0 > pct_w * 3;
  const float bar_x1 = with_pct ? x1 - pct_w : x1;
  const float pad = row >= 6 * scale ? std::max(1.0f, row * 0.12f) : 0.0f;
  for (int r = 0; r < P; ++r) {
    const float y0 = o.y + r * row + pad, y1 = o.y + (r + 1) * row - pad;
    const sim::i64 total = m.pairs_total[static_cast<size_t>(r)], done = st.pairs_so_far[static_cast<size_t>(r)];
    const float wt = (bar_x1 - x0) * static_cast<float>(static_cast<double>(total) / static_cast<double>(most));
    const float wd = (bar_x1 - x0) * static_cast<float>(static_cast<double>(done) / static_cast<double>(most));
    dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + std::max(wt, 1.0f), std::max(y1, y0 + 1)), gpu_color(r, P, 70));
    if (done > 0) dl->AddRectFilled(ImVec2(x0, y0), ImVec2(x0 + std::max(wd, 1.0f), std::max(y1, y0 + 1)), gpu_color(r, P));
    if (labelled) {
      const float ty = (y0 + y1 - lh) / 2;
      dl->AddText(ImVec2(o.x, ty), ImGui::GetColorU32(ImGuiCol_TextDisabled), ("GPU " + std::to_string(r)).c_str());
      if (with_pct) {
        const std::string t = total > 0 ? fmt_fixed(100.0 * static_cast<double>(done) / static_cast<double>(total), 0, "ring work") + "%"
                                        : std::string("—");
        dl->AddText(ImVec2(bar_x1 + 6 * scale, ty), ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
      }
    }
  }
}

// A title over a pane, only when it fits on one line.
void pane_title(ImDrawList* dl, ImVec2 at, float width, const std::string& text, const std::string& shorter) {
  const std::string t = ImGui::CalcTextSize(text.c_str()).x <= width ? text
                        : ImGui::CalcTextSize(shorter.c_str()).x <= width ? shorter
                                                                          : std::string();
  if (!t.empty()) dl->AddText(at, ImGui::GetColorU32(ImGuiCol_Text), t.c_str());
}

}  // namespace

void ring_transport(AppState& s) {
  RingModel& m = s.ring.model;
  if (!m.valid) return;
  const int P = m.simulation.problem.gpus();
  if (ImGui::Button("|◀##ring")) ring_seek_step(s, 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the first step (Home)");
  ImGui::SameLine();
  if (ImGui::Button("◀##ring")) ring_step_by(s, -1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the step before (←)");
  ImGui::SameLine();
  if (ImGui::Button("▶##ring")) ring_step_by(s, 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the next step (→)");
  ImGui::SameLine();
  if (ImGui::Button("▶|##ring")) ring_seek_step(s, P - 1);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("the last step (End)");
  ImGui::SameLine();
  int step = m.step.step;
  ImGui::SetNextItemWidth(-1);
  const std::string fmt = "step " + std::to_string(step) + " of 0 … " + std::to_string(P - 1);
  if (ImGui::SliderInt("##ring_step", &step, 0, P - 1, fmt.c_str(), ImGuiSliderFlags_AlwaysClamp)) ring_seek_step(s, step);
}

void draw_ring_step(AppState& s, ImVec2 size) {
  const RingModel& m = s.ring.model;
  const float scale = static_cast<float>(s.view.ui_scale);
  ImGui::BeginChild("ring_step", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  {
    const ImVec2 p = ImGui::GetWindowPos(), z = ImGui::GetWindowSize();
    s.rect_ring_step = {p.x, p.y, z.x, z.y};
  }
  if (!m.valid) {
    ImGui::EndChild();
    return;
  }
  ring_transport(s);
  const RingStepState& st = m.step;
  const int P = m.simulation.problem.gpus();
  const sim::AttentionProblem& p = m.simulation.problem;
  const float width = ImGui::GetContentRegionAvail().x;
  // What happens at this step, in one sentence when it fits.
  {
    const int computing = static_cast<int>(std::count_if(st.view.blocks.begin(), st.view.blocks.end(), [](const auto& bl) {
      return std::any_of(bl.begin(), bl.end(), [](const sim::RingPairView& v) { return v.visibility != sim::ChunkVisibility::none; });
    }));
    std::string t = "Step " + std::to_string(st.step) + ": each GPU computes its queries against the K, V it holds";
    t += st.step + 1 < P ? ", while they travel on to the next GPU" : " (the last step: nothing travels on)";
    t += "; " + std::to_string(computing) + " of " + std::to_string(P) + " GPUs have pairs to compute; done at " +
         fmt_ms(st.time_s * 1e3, "ring step") + " (simulated forward).";
    // Only when the pictures keep a useful size under it.
    const float lh = ImGui::GetTextLineHeight();
    const float h = math_text_size(t, width).y;
    if (room_left() - h >= 3 * lh + 150 * scale) math_text(t, color_note(), width);
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 avail(width, room_left());
  const float lh = ImGui::GetTextLineHeight();
  const float title_h = lh + 4 * scale, gap = 16 * scale;
  // The matrix's legend on one line when it fits under the matrix, else two.
  const float legend_w = ImGui::CalcTextSize("now done to come skipped: masked").x + 4 * (lh * 0.8f + 14 * scale);
  float side = std::min(avail.y - title_h - (lh + 4 * scale), (avail.x - 2 * gap) * 0.36f);
  if (side < legend_w) side = std::min(avail.y - title_h - (2 * lh + 6 * scale), (avail.x - 2 * gap) * 0.36f);
  if (side < 40 * scale) {
    ImGui::EndChild();
    return;
  }
  const float work_w = avail.x - 2 * side - 2 * gap;
  // The ring.
  pane_title(dl, o, side, "The ring: K, V held now", "K, V held now");
  draw_ring_picture(dl, s, ImVec2(o.x, o.y + title_h), side);
  // The matrix and its legend.
  const float mx = o.x + side + gap;
  pane_title(dl, ImVec2(mx, o.y), side, "Query chunks × key chunks", "Q × K chunks");
  draw_matrix(dl, s, ImVec2(mx, o.y + title_h), side);
  {
    struct Item {
      ImU32 c;
      const char* t;
    };
    const Item items[] = {{IM_COL32(230, 230, 235, 255), "now"}, {IM_COL32(130, 135, 150, 255), "done"},
                          {kToCome, "to come"}, {kSkipped, "skipped: masked"}};
    // On one line, or two when the matrix is narrow.
    float x = mx, y = o.y + title_h + side + 2 * scale;
    for (const Item& it : items) {
      const float w = lh * 0.8f + 4 * scale + ImGui::CalcTextSize(it.t).x;
      if (x + w > mx + side && x > mx) {
        x = mx;
        y += lh + 2 * scale;
      }
      if (x + w > mx + side || y + lh > o.y + avail.y) break;
      dl->AddRectFilled(ImVec2(x, y + lh * 0.15f), ImVec2(x + lh * 0.8f, y + lh * 0.85f), it.c, 2);
      dl->AddRect(ImVec2(x, y + lh * 0.15f), ImVec2(x + lh * 0.8f, y + lh * 0.85f), IM_COL32(120, 125, 135, 255), 2);
      dl->AddText(ImVec2(x + lh * 0.8f + 4 * scale, y), ImGui::GetColorU32(ImGuiCol_Text), it.t);
      x += w + 10 * scale;
    }
  }
  // The work so far.
  if (work_w >= 60 * scale) {
    const float wx = mx + side + gap;
    pane_title(dl, ImVec2(wx, o.y), work_w, "Visible pairs so far, per GPU", "Work so far");
    const float bottom = o.y + avail.y;
    // A line under the bars: the busiest and the least busy GPU at the end of the pass.
    const auto mm = std::minmax_element(m.pairs_total.begin(), m.pairs_total.end());
    const std::string spread = "whole pass: busiest GPU " + sim::si(static_cast<double>(*mm.second)) + " pairs, least " +
                               sim::si(static_cast<double>(*mm.first)) +
                               (p.causal && !sim::ring_layout_info(p.layout()).balances_causal && P > 1
                                    ? " (" + std::string(sim::ring_layout_info(p.layout()).words) + ": unbalanced)"
                                    : std::string());
    const float spread_h = math_text_size(spread, work_w).y;
    const bool with_spread = bottom - (o.y + title_h) - spread_h > P * 3.0f && spread_h < 3 * lh;
    const float bars_h = bottom - (o.y + title_h) - (with_spread ? spread_h + 4 * scale : 0);
    draw_work(dl, s, ImVec2(wx, o.y + title_h), ImVec2(work_w, bars_h));
    if (with_spread) {
      ImGui::SetCursorScreenPos(ImVec2(wx, bottom - spread_h));
      math_text(spread, color_dim(), work_w);
    }
  }
  // Hover: the GPU and the K, V it holds.
  ImGui::EndChild();
}

}  // namespace flashlab::gui
