// The ring's timeline: one row per GPU, its compute on the upper part of the
// row and the K, V (dK, dV) it receives on the lower part, the waits for data
// (exposed communication) in red, idle time hatched; a lane per simulation
// (the layout chosen, the other layout) and the measured run under them on the
// same time axis; the totals beside. Every number comes from the ring's model
// (ring_model.cpp); this file only places it.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart.hpp"
#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "panels/panels.hpp"
#include "model/ring_model.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

constexpr ImU32 kComputeFwd = IM_COL32(70, 140, 235, 255);
constexpr ImU32 kComputeBwd = IM_COL32(60, 195, 150, 255);
constexpr ImU32 kTransferKV = IM_COL32(180, 125, 240, 255);
constexpr ImU32 kTransferGrad = IM_COL32(240, 130, 185, 255);
constexpr ImU32 kPosted = IM_COL32(150, 120, 180, 110);
constexpr ImU32 kWait = IM_COL32(230, 70, 55, 255);
constexpr ImU32 kIdle = IM_COL32(88, 90, 100, 255);
constexpr ImU32 kNodeLine = IM_COL32(235, 180, 70, 170);

ImU32 bar_color(const RingBar& b) {
  switch (b.kind) {
    case RingBarKind::compute: return b.pass == sim::Pass::fwd ? kComputeFwd : kComputeBwd;
    case RingBarKind::transfer: return b.gradients ? kTransferGrad : kTransferKV;
    case RingBarKind::posted: return kPosted;
    case RingBarKind::wait: return kWait;
    case RingBarKind::idle: return kIdle;
  }
  return kIdle;
}

struct TimeAxis {
  double per_s = 1e3;        // axis units per second
  const char* unit = "ms";
  std::vector<analysis::Tick> ticks;
};

TimeAxis time_axis(double end_s, float width_px) {
  TimeAxis a;
  if (end_s < 2e-3) a.per_s = 1e6, a.unit = "µs";
  else if (end_s < 2) a.per_s = 1e3, a.unit = "ms";
  else a.per_s = 1, a.unit = "s";
  const float label_w = ImGui::CalcTextSize("000.0 ms").x;
  const int max_major = std::clamp(static_cast<int>(width_px / (label_w * 1.8f)), 2, 10);
  a.ticks = analysis::make_ticks({0, std::max(end_s, 1e-12) * a.per_s}, analysis::Scale::linear, analysis::TickFormat::plain,
                                 max_major);
  return a;
}

// Text that fits `width`, else the shorter one, else nothing.
std::string fit(const std::string& text, const std::string& shorter, float width) {
  if (ImGui::CalcTextSize(text.c_str()).x <= width) return text;
  if (ImGui::CalcTextSize(shorter.c_str()).x <= width) return shorter;
  return {};
}

// A duration in the totals: "0" when nothing, else as fmt_ms writes it.
std::string dur(double ms) { return ms == 0 ? std::string("0") : fmt_ms(ms, "ring totals"); }

std::string pct(double f, const char* where) {
  return std::isfinite(f) ? fmt_fixed(100.0 * f, 0, where) + "%" : std::string("—");
}

std::string signed_pct(double f) {
  if (!std::isfinite(f)) return "—";
  return (f >= 0 ? "+" : "−") + fmt_fixed(100.0 * std::fabs(f), 1, "ring error") + "%";
}

std::string link_name(const RingModel& m, bool crosses) {
  const sim::InterconnectModel& l = crosses ? m.topology.inter : m.topology.intra;
  return l.id;
}

void bar_tooltip(const RingModel& m, const RingLane& lane, const RingBar& b) {
  const int P = lane.gpus;
  const char* pass = b.pass == sim::Pass::fwd ? "forward" : "backward";
  ImGui::BeginTooltip();
  ImGui::PushTextWrapPos(ImGui::GetFontSize() * 34);
  const std::string when = fmt_ms(b.start_s * 1e3, "ring tip") + " – " + fmt_ms(b.end_s * 1e3, "ring tip") + " (" +
                           fmt_ms((b.end_s - b.start_s) * 1e3, "ring tip") + ")";
  switch (b.kind) {
    case RingBarKind::compute:
      ImGui::Text("GPU %d, %s step %d: its queries against K, V of GPU %d", b.gpu, pass, b.step, b.kv_owner);
      if (b.pairs > 0) ImGui::TextColored(color_dim(), "%s visible (query, key) pairs", fmt_count(b.pairs).c_str());
      break;
    case RingBarKind::transfer:
      if (lane.measured)
        ImGui::Text("GPU %d, %s step %d: its send and receive (one NCCL group)", b.gpu, pass, b.step);
      else if (b.step >= P)
        ImGui::Text("GPU %d receives the dK, dV of GPU %d's chunks from GPU %d: they come home", b.gpu, b.kv_owner, b.peer);
      else
        ImGui::Text("GPU %d receives %s of GPU %d's chunks from GPU %d (%s step %d)", b.gpu, b.gradients ? "dK, dV" : "K, V",
                    b.kv_owner, b.peer, pass, b.step);
      if (b.bytes > 0)
        ImGui::TextColored(color_dim(), "%s received%s", sim::bytes_iec(static_cast<double>(b.bytes)).c_str(),
                           lane.measured ? "" : (" over " + link_name(m, b.crosses_nodes)).c_str());
      break;
    case RingBarKind::posted:
      ImGui::Text("GPU %d has posted its receive of %s from GPU %d, which has not sent yet", b.gpu,
                  b.gradients ? "dK, dV" : "K, V", b.peer);
      ImGui::TextColored(color_dim(), "the wait for the peer's matching call: a GPU's events count it in its "
                                      "transfer, as in the measured lane");
      break;
    case RingBarKind::wait:
      ImGui::Text("GPU %d waits for data before its %s step %d: exposed communication", b.gpu, pass,
                  lane.measured ? b.step : b.step + 1);
      break;
    case RingBarKind::idle:
      ImGui::Text("GPU %d idle: nothing to compute and no data it waits for in flight", b.gpu);
      ImGui::TextColored(color_dim(), "a neighbour has not started the step yet, or the pass goes on on other GPUs");
      break;
  }
  ImGui::TextColored(color_dim(), "%s", when.c_str());
  if (lane.measured && std::isfinite(b.predicted_s))
    ImGui::TextColored(color_note(), "predicted %s%s", fmt_ms(b.predicted_s * 1e3, "ring tip").c_str(),
                       std::isfinite(b.error) ? (", error " + signed_pct(b.error)).c_str() : "");
  ImGui::PopTextWrapPos();
  ImGui::EndTooltip();
}

struct LaneGeometry {
  float x0 = 0, x1 = 0;          // the time axis' pixels
  float label_x = 0;             // GPU labels start here
  float title_y = 0;             // the lane's title row
  float rows_top = 0, row_h = 0;
  double t_end = 1;
  float to_x(double t) const { return x0 + static_cast<float>((x1 - x0) * (t / t_end)); }
  double to_t(float x) const { return (x - x0) / std::max(1.0f, x1 - x0) * t_end; }
};

// The lane's title and the passes' times on its title row, what fits.
void lane_title(ImDrawList* dl, const RingLane& lane, const LaneGeometry& g, float right) {
  const float lh = ImGui::GetTextLineHeight();
  // A run that is not GPUs over links (an example, or virtual GPUs on one device) in the warning's colour.
  const bool caveat = lane.example || lane.title.find("ONE device") != std::string::npos;
  const ImU32 col = caveat ? IM_COL32(255, 170, 80, 255) : ImGui::GetColorU32(ImGuiCol_Text);
  const std::string title = fit(lane.title, lane.measured ? lane.title.substr(0, lane.title.find(':')) : "simulated",
                                right - g.label_x);
  dl->AddText(ImVec2(g.label_x, g.title_y), col, title.c_str());
  float used = g.label_x + ImGui::CalcTextSize(title.c_str()).x;
  // "backward →" right of the pass boundary, where it leaves the title alone.
  if (lane.backward_start_s > 0) {
    const float bx = g.to_x(lane.backward_start_s) + 4;
    const char* t = "backward →";
    const float tw = ImGui::CalcTextSize(t).x;
    if (bx > used + 8 && bx + tw <= right) dl->AddText(ImVec2(bx, g.title_y), ImGui::GetColorU32(ImGuiCol_TextDisabled), t);
  }
  (void)lh;
}

// One lane's rows; returns the bar under the pointer, if any.
const RingBar* draw_lane(ImDrawList* dl, const AppState& s, const RingLane& lane, const LaneGeometry& g) {
  const float scale = static_cast<float>(s.view.ui_scale);
  const RingModel& m = s.ring.model;
  const int P = lane.gpus;
  const float lh = ImGui::GetTextLineHeight();
  const float rows_bottom = g.rows_top + g.row_h * static_cast<float>(P);
  dl->AddRectFilled(ImVec2(g.x0, g.rows_top), ImVec2(g.x1, rows_bottom), IM_COL32(28, 30, 36, 255));
  // GPU labels: every k-th row, so that none covers another.
  const int every = std::max(1, static_cast<int>(std::ceil(lh / std::max(0.5f, g.row_h))));
  for (int r = 0; r < P; r += every) {
    const std::string t = "GPU " + std::to_string(r);
    const float cy = g.rows_top + (static_cast<float>(r) + 0.5f) * g.row_h;
    const float y = std::clamp(cy - lh / 2, g.rows_top, rows_bottom - lh);
    if (rows_bottom - g.rows_top < lh) break;
    dl->AddText(ImVec2(g.label_x, y), ImGui::GetColorU32(ImGuiCol_TextDisabled), t.c_str());
  }
  // Node boundaries.
  const int per_node = m.topology.gpus_per_node;
  if (per_node > 0 && per_node < P)
    for (int r = per_node; r < P; r += per_node) {
      const float y = g.rows_top + static_cast<float>(r) * g.row_h;
      dl->AddLine(ImVec2(g.x0 - 4 * scale, y), ImVec2(g.x1, y), kNodeLine, std::max(1.0f, scale));
    }
  const bool split = g.row_h >= 7 * scale;
  const float pad = g.row_h >= 5 * scale ? std::max(1.0f, 0.08f * g.row_h) : 0.0f;
  const int step = m.step.step;
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hover_rows = ImGui::IsWindowHovered(ImGuiHoveredFlags_AllowWhenBlockedByActiveItem) && mouse.x >= g.x0 &&
                          mouse.x <= g.x1 && mouse.y >= g.rows_top && mouse.y < rows_bottom;
  const int hover_gpu = hover_rows ? std::clamp(static_cast<int>((mouse.y - g.rows_top) / g.row_h), 0, P - 1) : -1;
  const RingBar* hovered = nullptr;
  dl->PushClipRect(ImVec2(g.x0, g.rows_top), ImVec2(g.x1, rows_bottom), true);
  for (int r = 0; r < P; ++r) {
    const float y0 = g.rows_top + static_cast<float>(r) * g.row_h + pad;
    const float y1 = g.rows_top + static_cast<float>(r + 1) * g.row_h - pad;
    // The compute part takes 62% of the row, more when that lets a label fit and leaves the transfers 5 px.
    const float cy1 = split ? y0 + std::max((y1 - y0) * 0.62f, std::min(lh + 2, (y1 - y0) - 7 * scale)) : y1;
    const float ty0 = split ? cy1 + std::max(1.0f, 0.06f * g.row_h) : y1;
    // Bars thinner than a few pixels are merged with their neighbours of the same colour.
    struct Pending {
      float a = 0, b = -1;
      ImU32 c = 0;
    } main, xfer;
    auto flush = [&](Pending& p, float ya, float yb) {
      if (p.b >= p.a && p.c) dl->AddRectFilled(ImVec2(p.a, ya), ImVec2(std::max(p.b, p.a + 1), yb), p.c);
      p = Pending{};
    };
    const size_t first = lane.first_bar[static_cast<size_t>(r)], last = lane.first_bar[static_cast<size_t>(r) + 1];
    for (size_t k = first; k < last; ++k) {
      const RingBar& b = lane.bars[k];
      const bool transfer = b.kind == RingBarKind::transfer || b.kind == RingBarKind::posted;
      if (transfer && !split) continue;
      const float ya = transfer ? ty0 : y0, yb = transfer ? y1 : cy1;
      const float a = g.to_x(b.start_s), e = g.to_x(b.end_s);
      const ImU32 c = bar_color(b);
      Pending& pend = transfer ? xfer : main;
      if (r == hover_gpu && !hovered && mouse.x >= a - 1 && mouse.x <= e + 1 &&
          (!split || (transfer ? mouse.y >= ty0 - 1 : mouse.y < ty0)))
        hovered = &b;
      if (e - a < 3 * scale) {
        if (pend.c == c && a <= pend.b + 1) {
          pend.b = std::max(pend.b, e);
        } else {
          flush(pend, ya, yb);
          pend = {a, e, c};
        }
        continue;
      }
      flush(pend, ya, yb);
      dl->AddRectFilled(ImVec2(a + 1, ya), ImVec2(e, yb), c);
      if (b.kind == RingBarKind::idle && e - a >= 10 * scale) {
        // Hatched: the bubbles of an unbalanced layout.
        dl->PushClipRect(ImVec2(a + 1, ya), ImVec2(e, yb), true);
        const float h = yb - ya, gap = 6 * scale;
        for (float x = a - h; x < e; x += gap)
          dl->AddLine(ImVec2(x, yb), ImVec2(x + h, ya), IM_COL32(140, 142, 155, 255), std::max(1.0f, scale));
        dl->PopClipRect();
      }
      if (b.kind == RingBarKind::compute && b.pass == sim::Pass::fwd && b.step == step)
        dl->AddRect(ImVec2(a + 1, ya), ImVec2(e, yb), IM_COL32(255, 255, 255, 255), 0, 0, std::max(1.5f, 1.5f * scale));
      if (b.kind == RingBarKind::transfer && b.crosses_nodes)
        dl->AddRect(ImVec2(a + 1, ya), ImVec2(e, yb), kNodeLine, 0, 0, std::max(1.0f, scale));
      // Which K, V a compute bar works on, where it fits.
      if (b.kind == RingBarKind::compute && yb - ya >= lh) {
        const std::string t = "K,V " + std::to_string(b.kv_owner);
        const std::string t2 = std::to_string(b.kv_owner);
        const float tw = ImGui::CalcTextSize(t.c_str()).x, tw2 = ImGui::CalcTextSize(t2.c_str()).x;
        const std::string& shown = tw + 6 * scale <= e - a ? t : t2;
        const float sw = &shown == &t ? tw : tw2;
        if (sw + 6 * scale <= e - a)
          dl->AddText(ImVec2((a + e - sw) / 2, (ya + yb - lh) / 2), IM_COL32(12, 14, 20, 255), shown.c_str());
      }
    }
    flush(main, y0, cy1);
    flush(xfer, ty0, y1);
  }
  // The backward's start.
  if (lane.backward_start_s > 0) {
    const float bx = g.to_x(lane.backward_start_s);
    dl->AddLine(ImVec2(bx, g.rows_top), ImVec2(bx, rows_bottom), IM_COL32(255, 255, 255, 150), std::max(1.0f, scale));
  }
  dl->PopClipRect();
  return hovered;
}

// Too many GPUs for a row each: rows of `group` GPUs, each pixel column
// stacked by the share of the group's GPUs computing, waiting for data and
// idle then, with the share receiving data in a strip under it.
void draw_lane_grouped(ImDrawList* dl, const AppState& s, const RingLane& lane, const LaneGeometry& g, int group) {
  const float scale = static_cast<float>(s.view.ui_scale);
  const RingModel& m = s.ring.model;
  const int P = lane.gpus;
  const int rows = (P + group - 1) / group;
  const float lh = ImGui::GetTextLineHeight();
  const float row_h = g.row_h * static_cast<float>(group);
  const float rows_bottom = g.rows_top + g.row_h * static_cast<float>(P);
  dl->AddRectFilled(ImVec2(g.x0, g.rows_top), ImVec2(g.x1, rows_bottom), IM_COL32(28, 30, 36, 255));
  const int every = std::max(1, static_cast<int>(std::ceil(lh / std::max(0.5f, row_h))));
  for (int k = 0; k < rows; k += every) {
    if (rows_bottom - g.rows_top < lh) break;
    const int a = k * group, b = std::min(P, a + group) - 1;
    const std::string t = std::to_string(a) + "–" + std::to_string(b);
    const float cy = g.rows_top + (static_cast<float>(k) + 0.5f) * row_h;
    dl->AddText(ImVec2(g.label_x, std::clamp(cy - lh / 2, g.rows_top, rows_bottom - lh)),
                ImGui::GetColorU32(ImGuiCol_TextDisabled), t.c_str());
  }
  // Shares per bin of a few pixels: computing (forward, backward), waiting, idle; receiving.
  const float bin_px = std::max(3.0f, 3 * scale);
  const int bins = std::max(1, static_cast<int>((g.x1 - g.x0) / bin_px));
  const double bin_s = g.t_end / bins;
  constexpr int kStates = 5;
  std::vector<float> acc(static_cast<size_t>(bins) * kStates);
  const ImU32 colors[kStates] = {kComputeFwd, kComputeBwd, kWait, kIdle, kTransferKV};
  for (int k = 0; k < rows; ++k) {
    std::fill(acc.begin(), acc.end(), 0.0f);
    const int a = k * group, b = std::min(P, a + group);
    for (int r = a; r < b; ++r)
      for (size_t i = lane.first_bar[static_cast<size_t>(r)]; i < lane.first_bar[static_cast<size_t>(r) + 1]; ++i) {
        const RingBar& bar = lane.bars[i];
        if (bar.kind == RingBarKind::posted) continue;  // not receiving yet
        const int st = bar.kind == RingBarKind::compute ? (bar.pass == sim::Pass::fwd ? 0 : 1)
                       : bar.kind == RingBarKind::wait  ? 2
                       : bar.kind == RingBarKind::idle  ? 3
                                                        : 4;
        const int b0 = std::clamp(static_cast<int>(bar.start_s / bin_s), 0, bins - 1);
        const int b1 = std::clamp(static_cast<int>(bar.end_s / bin_s), 0, bins - 1);
        for (int x = b0; x <= b1; ++x) {
          const double lo = std::max(bar.start_s, x * bin_s), hi = std::min(bar.end_s, (x + 1) * bin_s);
          if (hi > lo) acc[static_cast<size_t>(x) * kStates + static_cast<size_t>(st)] += static_cast<float>((hi - lo) / bin_s);
        }
      }
    const float y0 = g.rows_top + static_cast<float>(k) * row_h + 1, y1 = g.rows_top + static_cast<float>(k + 1) * row_h - 1;
    const float split = y0 + (y1 - y0) * 0.8f;
    const float n = static_cast<float>(b - a);
    // Quantised to whole pixels, equal neighbours merged: one rectangle per run.
    auto heights = [&](int x, int out[kStates]) {
      for (int st = 0; st < kStates; ++st) {
        const float share = std::clamp(acc[static_cast<size_t>(x) * kStates + static_cast<size_t>(st)] / n, 0.0f, 1.0f);
        out[st] = static_cast<int>(std::lround(share * (st == 4 ? y1 - split : split - y0)));
      }
    };
    int run_start = 0, cur[kStates], next[kStates];
    heights(0, cur);
    for (int x = 1; x <= bins; ++x) {
      bool same = false;
      if (x < bins) {
        heights(x, next);
        same = std::equal(cur, cur + kStates, next);
      }
      if (same) continue;
      const float xa = g.x0 + static_cast<float>(run_start) * (g.x1 - g.x0) / static_cast<float>(bins);
      const float xb = g.x0 + static_cast<float>(x) * (g.x1 - g.x0) / static_cast<float>(bins);
      float y = y0;
      for (int st = 0; st < 4; ++st)
        if (cur[st] > 0) {
          dl->AddRectFilled(ImVec2(xa, y), ImVec2(xb, y + static_cast<float>(cur[st])), colors[st]);
          y += static_cast<float>(cur[st]);
        }
      if (cur[4] > 0) dl->AddRectFilled(ImVec2(xa, y1 - static_cast<float>(cur[4])), ImVec2(xb, y1), colors[4]);
      run_start = x;
      if (x < bins) std::copy(next, next + kStates, cur);
    }
  }
  const int per_node = m.topology.gpus_per_node;
  if (per_node > 0 && per_node < P && per_node % group == 0)
    for (int r = per_node; r < P; r += per_node) {
      const float y = g.rows_top + static_cast<float>(r) * g.row_h;
      dl->AddLine(ImVec2(g.x0 - 4 * scale, y), ImVec2(g.x1, y), kNodeLine, std::max(1.0f, scale));
    }
  if (lane.backward_start_s > 0) {
    const float bx = g.to_x(lane.backward_start_s);
    dl->AddLine(ImVec2(bx, g.rows_top), ImVec2(bx, rows_bottom), IM_COL32(255, 255, 255, 150), std::max(1.0f, scale));
  }
  // Hover: the group and the moment.
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (ImGui::IsWindowHovered() && mouse.x >= g.x0 && mouse.x <= g.x1 && mouse.y >= g.rows_top && mouse.y < rows_bottom) {
    const int k = std::clamp(static_cast<int>((mouse.y - g.rows_top) / row_h), 0, rows - 1);
    ImGui::SetTooltip("GPUs %d–%d at %s: each pixel column stacks the share of them computing, waiting for data and idle;\n"
                      "the strip under it, the share receiving data. Fewer GPUs, or a taller window, show a row per GPU.",
                      k * group, std::min(P, (k + 1) * group) - 1, fmt_ms(g.to_t(mouse.x) * 1e3, "ring tip").c_str());
  }
}

struct LegendItem {
  ImU32 color;
  const char* text;
  bool hatch = false;
};

// The legend on as many lines as it needs; returns the height it took (0: it
// did not fit). With no draw list, only measures.
float draw_legend(ImDrawList* dl, ImVec2 at, float width, float budget, bool backward, float scale) {
  std::vector<LegendItem> items{{kComputeFwd, "compute (forward)"}};
  if (backward) items.push_back({kComputeBwd, "compute (backward)"});
  items.push_back({kTransferKV, "K, V received"});
  if (backward) items.push_back({kTransferGrad, "dK, dV received"});
  items.push_back({kPosted, "receive posted, sender not ready"});
  items.push_back({kWait, "waiting for data (exposed)"});
  items.push_back({kIdle, "idle", true});
  items.push_back({kNodeLine, "node boundary"});
  const float lh = ImGui::GetTextLineHeight(), sw = lh * 0.9f, gap = 14 * scale;
  // Lay out first, draw only if it fits whole.
  std::vector<ImVec2> pos;
  float x = 0, y = 0;
  for (const LegendItem& it : items) {
    const float w = sw + 4 * scale + ImGui::CalcTextSize(it.text).x;
    if (w > width) return 0;
    if (x > 0 && x + w > width) {
      x = 0;
      y += lh + 2 * scale;
    }
    pos.push_back(ImVec2(x, y));
    x += w + gap;
  }
  const float h = y + lh;
  if (h > budget) return 0;
  if (!dl) return h;
  for (size_t k = 0; k < items.size(); ++k) {
    const ImVec2 p(at.x + pos[k].x, at.y + pos[k].y);
    dl->AddRectFilled(ImVec2(p.x, p.y + lh * 0.15f), ImVec2(p.x + sw, p.y + lh * 0.85f), items[k].color, 2);
    dl->AddText(ImVec2(p.x + sw + 4 * scale, p.y), ImGui::GetColorU32(ImGuiCol_Text), items[k].text);
  }
  return h;
}

}  // namespace

float ring_timeline_wanted_height(const AppState& s, float width) {
  const RingModel& m = s.ring.model;
  if (!m.valid) return 0;
  const float scale = static_cast<float>(s.view.ui_scale), lh = ImGui::GetTextLineHeight();
  const float legend = draw_legend(nullptr, ImVec2(0, 0), width, 1e9f, m.simulation.backward.has_value(), scale);
  const float lanes = static_cast<float>(m.lanes.size());
  const float rows = static_cast<float>(m.simulation.problem.gpus()) * 1.5f * lh;
  return legend + 4 * scale + lanes * (lh + 2 * scale + rows) + (lanes - 1) * 6 * scale + lh + 6 * scale +
         2 * ImGui::GetStyle().WindowPadding.y;
}

float ring_totals_wanted_height(const AppState& s) {
  const RingModel& m = s.ring.model;
  if (!m.valid) return 0;
  const float lh = ImGui::GetTextLineHeight(), row = lh + 2 * ImGui::GetStyle().CellPadding.y;
  const float rows = (m.simulation.backward ? 12.0f : 6.0f) + 4.0f;
  const float text_lines = m.measured.placement ? 12.0f : 3.0f;  // the label, the warning, the errors; the note
  return rows * row + text_lines * lh + 2 * ImGui::GetStyle().WindowPadding.y;
}

void draw_ring_timeline(AppState& s, ImVec2 size) {
  const RingModel& m = s.ring.model;
  const float scale = static_cast<float>(s.view.ui_scale);
  ImGui::BeginChild("ring_timeline", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const ImVec2 o = ImGui::GetCursorScreenPos();
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  if (!m.valid) {
    for (const std::string& e : m.errors) math_text("✕ " + e, color_error(), avail.x);
    ImGui::EndChild();
    return;
  }
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float lh = ImGui::GetTextLineHeight();
  const int P = m.simulation.problem.gpus();
  const bool backward = m.simulation.backward.has_value();
  float y = o.y;
  const float legend_h = draw_legend(dl, ImVec2(o.x, y), avail.x, avail.y * 0.25f, backward, scale);
  if (legend_h > 0) y += legend_h + 4 * scale;
  const float label_w = ImGui::CalcTextSize("GPU 00").x + 8 * scale;
  LaneGeometry g;
  g.label_x = o.x;
  g.x0 = o.x + label_w;
  g.x1 = o.x + avail.x - 6 * scale;
  g.t_end = std::max(m.axis_end_s, 1e-12);
  const float axis_h = lh + 6 * scale;
  const float bottom = o.y + avail.y - axis_h;
  const int lanes = static_cast<int>(m.lanes.size());
  const float title_h = lh + 2 * scale, lane_gap = 6 * scale;
  const float rows_h = (bottom - y - lanes * title_h - (lanes - 1) * lane_gap) / std::max(1, lanes);
  if (g.x1 - g.x0 < 60 * scale || rows_h < lh) {
    math_text("Too little room for " + std::to_string(P) + " rows: enlarge the window or hide the controls (F9).",
              color_dim(), avail.x);
    ImGui::EndChild();
    return;
  }
  g.row_h = rows_h / static_cast<float>(P);
  const TimeAxis axis = time_axis(g.t_end, g.x1 - g.x0);
  // Faint vertical grid at the ticks, through every lane.
  for (const analysis::Tick& t : axis.ticks)
    if (t.major) {
      const float x = g.to_x(t.value / axis.per_s);
      dl->AddLine(ImVec2(x, y), ImVec2(x, bottom), IM_COL32(255, 255, 255, 22));
    }
  const RingLane* hover_lane = nullptr;
  const RingBar* hovered = nullptr;
  // Rows thinner than half a line: GPUs in groups (a power of two, so that nodes of 8 stay whole).
  int group = 1;
  while (group < P && g.row_h * static_cast<float>(group) < 0.5f * lh) group *= 2;
  if (group > 1) g.row_h = rows_h / static_cast<float>(P);
  for (const RingLane& lane : m.lanes) {
    g.title_y = y;
    g.rows_top = y + title_h;
    lane_title(dl, lane, g, g.x1);
    if (group > 1) {
      draw_lane_grouped(dl, s, lane, g, group);
    } else if (const RingBar* b = draw_lane(dl, s, lane, g)) {
      hovered = b;
      hover_lane = &lane;
    }
    y = g.rows_top + rows_h + lane_gap;
  }
  // The axis: ticks and labels under the last lane, the unit after the last label that fits.
  const float ay = bottom + 2 * scale;
  dl->AddLine(ImVec2(g.x0, ay), ImVec2(g.x1, ay), IM_COL32(150, 150, 160, 255));
  float last_right = -1e9f;
  std::vector<const analysis::Tick*> majors;
  for (const analysis::Tick& t : axis.ticks)
    if (t.major) majors.push_back(&t);
  for (size_t k = 0; k < majors.size(); ++k) {
    const analysis::Tick& t = *majors[k];
    const float x = g.to_x(t.value / axis.per_s);
    dl->AddLine(ImVec2(x, ay), ImVec2(x, ay + 3 * scale), IM_COL32(150, 150, 160, 255));
    const std::string label = t.label + (k + 1 == majors.size() ? std::string(" ") + axis.unit : std::string());
    const float w = ImGui::CalcTextSize(label.c_str()).x;
    float lx = std::clamp(x - w / 2, g.x0 - label_w + 2, o.x + avail.x - w);
    if (lx < last_right + 8 * scale) continue;
    dl->AddText(ImVec2(lx, ay + 3 * scale), ImGui::GetColorU32(ImGuiCol_TextDisabled), label.c_str());
    last_right = lx + w;
  }
  if (majors.empty() || last_right < g.x1 - 200 * scale) {
    const std::string u = std::string("time, ") + axis.unit;
    const float w = ImGui::CalcTextSize(u.c_str()).x;
    if (g.x1 - w > last_right + 8 * scale)
      dl->AddText(ImVec2(g.x1 - w, ay + 3 * scale), ImGui::GetColorU32(ImGuiCol_TextDisabled), u.c_str());
  }
  if (hovered && hover_lane) bar_tooltip(m, *hover_lane, *hovered);
  ImGui::EndChild();
}

namespace {

// A grid of text: a first column of names, a column per simulated lane, and
// with a measured run its column and the prediction's error. Drawn as a table
// when every cell fits its column; else, column by column, wrapped lines.
struct TotalsGrid {
  std::vector<std::string> head;               // per column (the first: "")
  std::vector<std::vector<std::string>> rows;  // per row: name, then a cell per column
  std::vector<bool> heading;                   // per row: a pass's heading (its time)
  std::vector<int> priority;                   // per row: 0 kept always, 1 and 2 left out first when short of room
};

struct PassNumbers {  // one pass's totals, simulated or measured, in ms
  double time = 0, compute = 0, comm = 0, exposed = 0, overlap = 1, idle = -1;
};

PassNumbers numbers(const sim::RingPassResult& p) {
  return {p.time_s * 1e3, p.compute_s * 1e3, p.comm_s * 1e3, p.exposed_comm_s * 1e3, p.overlap, p.idle_s * 1e3};
}

PassNumbers numbers(const analysis::RingPassPlacement& p) {
  const double ov = p.measured_comm_ms > 0 ? std::clamp(1.0 - p.measured_exposed_ms / p.measured_comm_ms, 0.0, 1.0) : 1.0;
  return {p.measured_time_ms, p.measured_compute_ms, p.measured_comm_ms, p.measured_exposed_ms, ov, -1};
}

void add_pass_rows(TotalsGrid& t, const std::vector<const sim::RingSimulation*>& sims,
                   const analysis::RingPlacement* pl, sim::Pass pass) {
  std::vector<std::optional<PassNumbers>> cols;
  for (const sim::RingSimulation* sm : sims)
    cols.push_back(sm->backward || pass == sim::Pass::fwd ? std::optional<PassNumbers>(numbers(sm->pass(pass)))
                                                                   : std::nullopt);
  const analysis::RingPassPlacement* pp = nullptr;
  if (pl)
    for (const auto& x : pl->passes)
      if (x.pass == pass) pp = &x;
  if (pl) cols.push_back(pp ? std::optional<PassNumbers>(numbers(*pp)) : std::nullopt);
  auto row = [&](const std::string& label, auto get, auto show, double error, bool heading, int priority) {
    std::vector<std::string> r{label};
    for (const auto& c : cols) r.push_back(c ? show(get(*c)) : "—");
    if (pl) r.push_back(pp && std::isfinite(error) ? signed_pct(error) : "");
    t.rows.push_back(std::move(r));
    t.heading.push_back(heading);
    t.priority.push_back(priority);
  };
  const auto ms = [](double v) { return dur(v); };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  row(pass == sim::Pass::fwd ? "forward" : "backward", [](const PassNumbers& n) { return n.time; }, ms,
      pp ? pp->time_error : nan, true, 0);
  // How much of the communication hides is the ring's point: the overlap is
  // kept with the exposed time when the rows are short of room.
  row("  compute", [](const PassNumbers& n) { return n.compute; }, ms, pp ? pp->compute_error : nan, false, 1);
  row("  comm.", [](const PassNumbers& n) { return n.comm; }, ms, pp ? pp->comm_error : nan, false, 1);
  row("  exposed", [](const PassNumbers& n) { return n.exposed; }, ms, nan, false, 0);
  row("  overlap", [](const PassNumbers& n) { return n.overlap; }, [](double v) { return pct(v, "ring overlap"); }, nan, false, 0);
  row("  idle", [](const PassNumbers& n) { return n.idle; },
      [](double v) { return v < 0 ? std::string("—") : dur(v); }, nan, false, 2);
}

}  // namespace

void draw_ring_totals(AppState& s, ImVec2 size) {
  const RingModel& m = s.ring.model;
  ImGui::BeginChild("ring_totals", size, false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float width = ImGui::GetContentRegionAvail().x;
  auto room = [] {
    return ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y - ImGui::GetCursorScreenPos().y;
  };
  // A paragraph only when it fits whole in what is left.
  auto para = [&](const std::string& text, const ImVec4& col) {
    if (math_text_size(text, width).y + ImGui::GetStyle().ItemSpacing.y > room()) return false;
    math_text(text, col, width);
    return true;
  };
  if (!m.valid) {
    ImGui::EndChild();
    return;
  }
  const analysis::RingPlacement* pl = m.measured.placement ? &*m.measured.placement : nullptr;
  std::vector<const sim::RingSimulation*> sims{&m.simulation};
  if (m.other_layout) sims.push_back(&*m.other_layout);
  TotalsGrid t;
  t.head.push_back("");
  for (const sim::RingSimulation* sm : sims)
    t.head.push_back(pl && sm == sims.front() ? "predicted"
                     : std::string(sim::ring_layout_info(sm->problem.layout()).words));
  if (pl) {
    t.head.push_back(m.lanes.back().example ? "example" : "measured");
    t.head.push_back("error");
  }
  add_pass_rows(t, sims, pl, sim::Pass::fwd);
  if (m.simulation.backward) add_pass_rows(t, sims, pl, sim::Pass::bwd);
  {
    std::vector<std::string> one{"one GPU"}, eff{"scaling"}, mem{"peak / GPU"};
    for (const sim::RingSimulation* sm : sims) {
      one.push_back(dur(sm->single_gpu_s * 1e3));
      eff.push_back(pct(sm->scaling_efficiency, "ring scaling"));
      const sim::i64 peak = *std::max_element(sm->peak_bytes_per_gpu.begin(), sm->peak_bytes_per_gpu.end());
      mem.push_back(sim::bytes_iec(static_cast<double>(peak)));
    }
    if (pl) {
      sim::i64 peak = 0;
      for (sim::i64 b : pl->run.parallel_part().peak_allocated_bytes) peak = std::max(peak, b);
      const sim::i64 predicted = *std::max_element(m.simulation.peak_bytes_per_gpu.begin(), m.simulation.peak_bytes_per_gpu.end());
      const RingMeasuredView& mv = m.measured;
      one.insert(one.end(), {mv.single_gpu_ms > 0 ? dur(mv.single_gpu_ms) : "—", ""});
      eff.insert(eff.end(), {mv.scaling_efficiency > 0 ? pct(mv.scaling_efficiency, "ring scaling") : "—", ""});
      mem.push_back(peak > 0 ? sim::bytes_iec(static_cast<double>(peak)) : std::string("—"));
      mem.push_back(peak > 0 ? signed_pct((static_cast<double>(predicted) - static_cast<double>(peak)) / static_cast<double>(peak)) : "");
    }
    for (auto* x : {&one, &eff, &mem}) {
      t.rows.push_back(*x);
      t.heading.push_back(x == &eff);
      t.priority.push_back(x == &eff ? 0 : 2);
    }
  }
  // As a table when it fits, the least needed rows left out first when short of height.
  const float pad = ImGui::GetStyle().CellPadding.x * 2 + 6;
  std::vector<float> col_w(t.head.size(), 0);
  for (size_t c = 0; c < t.head.size(); ++c) col_w[c] = ImGui::CalcTextSize(t.head[c].c_str()).x;
  for (const auto& r : t.rows)
    for (size_t c = 0; c < r.size() && c < col_w.size(); ++c) col_w[c] = std::max(col_w[c], ImGui::CalcTextSize(r[c].c_str()).x);
  float total = 0;
  for (float w : col_w) total += w + pad;
  const float row_h = ImGui::GetTextLineHeight() + ImGui::GetStyle().CellPadding.y * 2;
  int keep = -1;  // the highest priority shown
  for (int pr = 2; pr >= 0 && keep < 0; --pr) {
    const auto rows = std::count_if(t.priority.begin(), t.priority.end(), [&](int x) { return x <= pr; });
    if ((static_cast<float>(rows) + 1) * row_h + 4 <= room()) keep = pr;
  }
  if (total <= width && keep >= 0) {
    if (ImGui::BeginTable("ring_totals_table", static_cast<int>(t.head.size()), ImGuiTableFlags_SizingFixedFit | ImGuiTableFlags_NoClip)) {
      for (size_t c = 0; c < t.head.size(); ++c) ImGui::TableSetupColumn(t.head[c].c_str(), ImGuiTableColumnFlags_WidthFixed, col_w[c] + 6);
      ImGui::TableHeadersRow();
      for (size_t k = 0; k < t.rows.size(); ++k) {
        if (t.priority[k] > keep) continue;
        ImGui::TableNextRow();
        for (size_t c = 0; c < t.rows[k].size(); ++c) {
          ImGui::TableSetColumnIndex(static_cast<int>(c));
          const bool error_col = pl && c + 1 == t.head.size();
          const ImVec4 col = error_col ? color_note() : t.heading[k] ? ImGui::GetStyleColorVec4(ImGuiCol_Text) : ImVec4(0.78f, 0.8f, 0.85f, 1);
          ImGui::TextColored(col, "%s", t.rows[k][c].c_str());
        }
      }
      ImGui::EndTable();
    }
  } else {
    // Column by column: "zig-zag: forward 12.3 ms, compute …".
    for (size_t c = 1; c < t.head.size(); ++c) {
      std::string line = t.head[c] + ":";
      for (const auto& r : t.rows) {
        if (c >= r.size() || r[c].empty()) continue;
        std::string name = r[0];
        name.erase(0, name.find_first_not_of(' '));
        line += " " + name + " " + r[c] + ";";
      }
      line.pop_back();
      if (!para(line, ImGui::GetStyleColorVec4(ImGuiCol_Text))) break;
    }
  }
  ImGui::Spacing();
  if (pl) {
    if (!m.measured.warning.empty() && !para("▲ " + m.measured.warning, ImVec4(1.0f, 0.67f, 0.3f, 1))) {
      ImGui::EndChild();
      return;
    }
    para("measured: " + m.measured.label + " (run " + std::to_string(m.measured.run + 1) + " of the file)", color_dim());
    // The model's score on every run of the file, when there is room for it.
    if (!s.ring.results.score_text.empty()) para(s.ring.results.score_text, color_note());
    for (const RingMeasuredView::PassErrors& e : m.measured.errors) {
      if (e.placed_steps == 0) continue;
      const char* pass = e.pass == sim::Pass::fwd ? "forward" : "backward";
      std::string line = std::string(pass) + " per step: compute error median " + signed_pct(e.median_compute_error);
      if (e.worst_compute_gpu >= 0)
        line += ", worst " + signed_pct(e.worst_compute_error) + " (GPU " + std::to_string(e.worst_compute_gpu) + ", step " +
                std::to_string(e.worst_compute_step) + ")";
      if (e.worst_transfer_gpu >= 0)
        line += "; transfer median " + signed_pct(e.median_transfer_error) + ", worst " + signed_pct(e.worst_transfer_error) +
                " (GPU " + std::to_string(e.worst_transfer_gpu) + ", step " + std::to_string(e.worst_transfer_step) + ")";
      if (!para(line, color_note())) break;
    }
  } else if (s.ring.results.have && !m.measured.why_none.empty()) {
    para(m.measured.why_none, color_dim());
  }
  para(m.efficiency_note + "; links " + m.topology.intra.id + " in a node, " + m.topology.inter.id + " between nodes", color_dim());
  ImGui::EndChild();
}

}  // namespace flashlab::gui
