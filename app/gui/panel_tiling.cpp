// The tiling view: Q, Kᵀ, S/P, Vᵀ and O drawn as tile grids around S, the
// SRAM box, the transfers as they happen, the online-softmax state and the
// pseudocode with the current line — one strip per algorithm, in lockstep.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "format.hpp"
#include "math_view.hpp"
#include "imgui_canvas.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

using sim::Tensor;

struct Span {
  float a = 0, b = 0;  // pixel range along one axis
};

// Pixel range of element range [e0, e1) of a matrix side of `n` elements drawn over [p0, p0 + len).
Span span_of(i64 e0, i64 e1, i64 n, float p0, float len) {
  const double k = len / static_cast<double>(std::max<i64>(1, n));
  return {p0 + static_cast<float>(static_cast<double>(e0) * k), p0 + static_cast<float>(static_cast<double>(e1) * k)};
}

bool is_transfer(const sim::TileEvent& e) {
  return (e.kind == sim::EventKind::load || e.kind == sim::EventKind::store) &&
         (e.from == sim::Level::HBM || e.to == sim::Level::HBM || e.from == sim::Level::L2);
}

std::string event_text(const sim::TileEvent& e) {
  const std::string tile = sim::tile_label(e.target);
  char buf[256];
  switch (e.kind) {
    case sim::EventKind::load:
      std::snprintf(buf, sizeof buf, "load  %s  %s→SRAM  %s", tile.c_str(), std::string(sim::to_string(e.from)).c_str(),
                    sim::bytes_iec(static_cast<double>(e.target.bytes)).c_str());
      break;
    case sim::EventKind::store:
      std::snprintf(buf, sizeof buf, "store %s  %s→%s  %s", tile.c_str(),
                    e.from == sim::Level::none ? "init" : std::string(sim::to_string(e.from)).c_str(),
                    std::string(sim::to_string(e.to)).c_str(), sim::bytes_iec(static_cast<double>(e.target.bytes)).c_str());
      break;
    case sim::EventKind::compute:
      if (e.matmul_flops + e.softmax_flops > 0)
        std::snprintf(buf, sizeof buf, "compute %s  %s", tile.c_str(),
                      fmt_si(static_cast<double>(e.matmul_flops + e.softmax_flops), "FLOP", "event flops").c_str());
      else
        std::snprintf(buf, sizeof buf, "compute %s", tile.c_str());
      break;
    case sim::EventKind::free: {
      std::string names;
      for (int k = 0; k < e.operand_count && k < 4; ++k) names += (k ? ", " : "") + sim::tile_label(e.operands[static_cast<size_t>(k)]);
      if (e.operand_count > 4) names += ", …";
      std::snprintf(buf, sizeof buf, "free  %s", names.c_str());
      break;
    }
  }
  return buf;
}

// What the schedule's current pass does ("pass 2/3: P = softmax(S), ..."); "done" past the last.
std::string pass_title(const sim::Schedule& sch, int phase) {
  return phase >= 0 && phase < sch.phases() ? std::string(sch.phase_title(phase)) : "done";
}

// The outline of the current wave's row blocks in S, and its caption's swatch.
constexpr ImU32 kWaveColor = IM_COL32(90, 220, 235, 255);

// Where the current visit's reads came from and which CTAs share them, from
// the L2 model's trace of the first head (the snapshot's L2AtCursor).
void draw_l2_caption(const AlgoView& v) {
  const L2AtCursor& l2 = v.snap.l2;
  ImGui::PushTextWrapPos(0);
  if (!v.result.l2.modelled) {
    ImGui::TextColored(color_dim(), "L2 not modelled: %s", v.result.l2.why_not.c_str());
  } else if (!l2.has_visit) {
    ImGui::TextColored(color_dim(), "L2 (first head): step into a visit to see where its reads come from");
  } else {
    const float f = l2.dram_fraction;
    const ImVec4 col = f <= 0.05f ? color_good() : f >= 0.5f ? ImVec4(1.0f, 0.7f, 0.35f, 1) : color_note();
    ImGui::TextColored(col, "L2: %s", l2.visit_caption.c_str());
    if (!l2.wave_caption.empty()) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x + 1, p.y + 2), ImVec2(p.x + h - 3, p.y + h - 2), kWaveColor, 0, 0, 1.5f);
      ImGui::Dummy(ImVec2(h, h));
      ImGui::SameLine();
      ImGui::TextColored(color_dim(), "%s", l2.wave_caption.c_str());
    }
  }
  ImGui::PopTextWrapPos();
}

void label(ImDrawList* dl, ImVec2 p, const char* text, ImU32 col) {
  const ImVec2 sz = ImGui::CalcTextSize(text);
  dl->AddRectFilled(ImVec2(p.x - 2, p.y - 1), ImVec2(p.x + sz.x + 2, p.y + sz.y + 1), IM_COL32(0, 0, 0, 170), 3);
  dl->AddText(p, col, text);
}

// The matrices around S, to scale where the window allows.
void draw_tiling(const AppState& s, const AlgoView& v, ImVec2 origin, ImVec2 avail) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const sim::TileGrid& g = v.schedule->grid();
  const TilingSnapshot& snap = v.snap;
  const float scale = static_cast<float>(s.view.ui_scale);
  const float gap = 5 * scale, tmin = 13 * scale;
  const float side = std::max(40.0f, std::min(avail.x, avail.y - ImGui::GetTextLineHeightWithSpacing()));
  // Strip thickness t = S side · d/N, kept readable and not larger than a third of S.
  float sw = side - 2 * (tmin + gap);
  float t = std::clamp(sw * static_cast<float>(g.d) / static_cast<float>(std::max<i64>(1, g.n_kv)), tmin, 0.33f * sw);
  sw = std::max(16.0f, side - 2 * (t + gap));
  const bool to_scale = std::fabs(t - sw * static_cast<float>(g.d) / static_cast<float>(std::max<i64>(1, g.n_kv))) < 0.5f;
  const float x0 = origin.x, y0 = origin.y;
  const ImVec2 S0(x0 + t + gap, y0 + t + gap), S1(S0.x + sw, S0.y + sw);
  const ImVec2 Q0(x0, S0.y), Q1(x0 + t, S1.y);
  const ImVec2 K0(S0.x, y0), K1(S1.x, y0 + t);
  const ImVec2 O0(S1.x + gap, S0.y), O1(S1.x + gap + t, S1.y);
  const ImVec2 V0(S0.x, S1.y + gap), V1(S1.x, S1.y + gap + t);
  const ImU32 frame = IM_COL32(120, 125, 135, 255), idle = IM_COL32(38, 42, 50, 255);

  // Strips: background, current block, resident tiles (in SRAM now). A strip
  // shows a tensor and, in the backward, its gradient beside it (Q | dQ,
  // Kᵀ | dKᵀ, O | dO, Vᵀ | dVᵀ), each in a lane of its own.
  const bool backward = sim::algorithm_info(v.algo).pass == sim::Pass::bwd;
  auto strip = [&](ImVec2 a, ImVec2 b, std::vector<Tensor> tensors, bool rows) {
    dl->AddRectFilled(a, b, IM_COL32(30, 34, 40, 255));
    dl->AddRect(a, b, frame);
    const size_t lanes = tensors.size();
    for (size_t lane = 0; lane < lanes; ++lane) {
      const Tensor t_ = tensors[lane];
      // This lane's share of the strip's thickness.
      const float f0 = static_cast<float>(lane) / static_cast<float>(lanes), f1 = static_cast<float>(lane + 1) / static_cast<float>(lanes);
      auto seg = [&](i64 e0, i64 e1, ImU32 col) {
        const i64 n = rows ? g.n_q : g.n_kv;
        if (!rows) {
          const Span sp = span_of(e0, e1, n, a.x, b.x - a.x);
          const float ya = a.y + (b.y - a.y) * f0, yb = a.y + (b.y - a.y) * f1;
          dl->AddRectFilled(ImVec2(sp.a, ya), ImVec2(std::max(sp.b, sp.a + 2), yb), col);
        } else {
          const Span sp = span_of(e0, e1, n, a.y, b.y - a.y);
          const float xa = a.x + (b.x - a.x) * f0, xb = a.x + (b.x - a.x) * f1;
          dl->AddRectFilled(ImVec2(xa, sp.a), ImVec2(xb, std::max(sp.b, sp.a + 2)), col);
        }
      };
      if (rows && snap.cur_i >= 0) seg(snap.cur_i * g.Br, snap.cur_i * g.Br + g.rows(snap.cur_i), tensor_color(t_, 70));
      if (!rows && snap.cur_j >= 0) seg(snap.cur_j * g.Bc, snap.cur_j * g.Bc + g.cols(snap.cur_j), tensor_color(t_, 70));
      for (const sim::TileRef& r : v.cursor->sram()) {
        if (r.tensor != t_) continue;  // ℓ, m and the statistics show in the SRAM bar
        if (r.ti < 0 && r.tj < 0) seg(0, rows ? g.n_q : g.n_kv, tensor_color(r.tensor, 120));  // a whole tensor
        else if (rows && r.ti >= 0) seg(r.ti * g.Br, r.ti * g.Br + g.rows(r.ti), tensor_color(r.tensor, 230));
        else if (!rows && r.tj >= 0) seg(r.tj * g.Bc, r.tj * g.Bc + g.cols(r.tj), tensor_color(r.tensor, 230));
      }
    }
  };
  using Lanes = std::vector<Tensor>;
  strip(Q0, Q1, backward ? Lanes{Tensor::Q, Tensor::dQ, Tensor::dQaccum} : Lanes{Tensor::Q}, true);
  strip(K0, K1, backward ? Lanes{Tensor::K, Tensor::dK} : Lanes{Tensor::K}, false);
  strip(O0, O1, backward ? Lanes{Tensor::O, Tensor::dO} : Lanes{Tensor::O}, true);
  strip(V0, V1, backward ? Lanes{Tensor::V, Tensor::dV} : Lanes{Tensor::V}, false);

  // S: aggregated cells, each the fraction of its visited blocks already done.
  const int max_cells = std::clamp(static_cast<int>(sw / (6 * scale)), 1, 96);
  const i64 cr = std::min<i64>(g.T_r, max_cells), cc = std::min<i64>(g.T_c, max_cells);
  const bool aggregated = cr < g.T_r || cc < g.T_c;
  const sim::AlgorithmInfo& algo = sim::algorithm_info(v.algo);
  // Blocks wholly above the causal diagonal are never visited: not part of the schedule's work.
  const bool skips_masked = algo.skips_masked_blocks;
  const i64 stride = g.T_r > 0 ? std::max<i64>(1, (g.T_r + static_cast<i64>(snap.done_cols.size()) - 1) /
                                                      std::max<i64>(1, static_cast<i64>(snap.done_cols.size())))
                               : 1;
  const ImU32 done_col = to_imu32(analysis::palette(algo.palette_index));  // the algorithm's colour in every chart
  dl->AddRectFilled(S0, S1, idle);
  // One rectangle per run of equal cells in a row: llvmpipe pays per vertex.
  for (i64 a = 0; a < cr; ++a) {
    const i64 r0 = a * g.T_r / cr, r1 = (a + 1) * g.T_r / cr;
    const Span sy = span_of(r0 * g.Br, std::min(r1 * g.Br, g.n_q), g.n_q, S0.y, sw);
    ImU32 run_col = 0;
    float run_x0 = 0, run_x1 = 0;
    auto flush = [&] {
      if (run_col != 0) dl->AddRectFilled(ImVec2(run_x0, sy.a), ImVec2(std::max(run_x1, run_x0 + 1), std::max(sy.b, sy.a + 1)), run_col);
      run_col = 0;
    };
    for (i64 b = 0; b < cc; ++b) {
      const i64 c0 = b * g.T_c / cc, c1 = (b + 1) * g.T_c / cc;
      double done = 0, visitable = 0;
      for (i64 i = r0 - (r0 % stride); i < r1; i += stride) {
        if (i < r0) continue;
        const size_t k = static_cast<size_t>(i / stride);
        if (k >= snap.done_cols.size()) break;
        const i64 vis = (skips_masked && g.causal) ? g.last_col(i) + 1 : g.T_c;
        visitable += static_cast<double>(std::clamp<i64>(vis - c0, 0, c1 - c0));
        done += static_cast<double>(std::clamp<i64>(snap.done_cols[k] - c0, 0, c1 - c0));
      }
      const Span sx = span_of(c0 * g.Bc, std::min(c1 * g.Bc, g.n_kv), g.n_kv, S0.x, sw);
      ImU32 col = 0;
      if (visitable <= 0) {
        col = IM_COL32(18, 19, 22, 255);  // skipped by FlashAttention (wholly above the causal diagonal)
      } else if (done > 0) {
        const int alpha = static_cast<int>(80 + 175 * std::min(1.0, done / visitable));
        col = (done_col & 0x00FFFFFF) | (static_cast<ImU32>(alpha) << 24);
      }
      if (col != run_col) {
        flush();
        run_col = col;
        run_x0 = sx.a;
      }
      run_x1 = sx.b;
    }
    flush();
  }
  // Block grid lines when blocks are big enough to see.
  if (!aggregated && sw / static_cast<float>(std::max<i64>(g.T_c, g.T_r)) >= 7 * scale) {
    for (i64 j = 1; j < g.T_c; ++j) {
      const float x = span_of(j * g.Bc, j * g.Bc, g.n_kv, S0.x, sw).a;
      dl->AddLine(ImVec2(x, S0.y), ImVec2(x, S1.y), IM_COL32(70, 75, 85, 255));
    }
    for (i64 i = 1; i < g.T_r; ++i) {
      const float y = span_of(i * g.Br, i * g.Br, g.n_q, S0.y, sw).a;
      dl->AddLine(ImVec2(S0.x, y), ImVec2(S1.x, y), IM_COL32(70, 75, 85, 255));
    }
  }
  if (g.causal) {
    // The mask boundary: keys right of the diagonal are masked; blocks it crosses are partially masked.
    dl->AddLine(S0, S1, IM_COL32(230, 90, 80, 220), 1.5f * scale);
    if (skips_masked) label(dl, ImVec2(S0.x + sw * 0.55f, S0.y + sw * 0.12f), "skipped", IM_COL32(200, 200, 200, 255));
  }
  if (snap.cur_i >= 0 && snap.cur_j >= 0) {
    const Span sy = span_of(snap.cur_i * g.Br, snap.cur_i * g.Br + g.rows(snap.cur_i), g.n_q, S0.y, sw);
    const Span sx = span_of(snap.cur_j * g.Bc, snap.cur_j * g.Bc + g.cols(snap.cur_j), g.n_kv, S0.x, sw);
    const ImVec2 p0(sx.a, sy.a), p1(std::max(sx.b, sx.a + 3), std::max(sy.b, sy.a + 3));
    dl->AddRectFilled(p0, p1, IM_COL32(255, 215, 70, 200));
    dl->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), IM_COL32(255, 235, 120, 255), 0, 0, 2 * scale);
    if (g.partially_masked(snap.cur_i, snap.cur_j))
      dl->AddLine(p0, p1, IM_COL32(230, 60, 50, 255), 2 * scale);
  }
  // The CTAs of the current visit's wave (the L2 model's launch): their row
  // blocks walk K_j together, or (an outer loop over K_j) their column blocks walk Q_i.
  for (const auto& [a, b] : snap.l2.wave_rows) {
    if (snap.l2.wave_columns) {
      const Span sx = span_of(a * g.Bc, std::min((b + 1) * g.Bc, g.n_kv), g.n_kv, S0.x, sw);
      dl->AddRect(ImVec2(sx.a, S0.y - 1), ImVec2(std::max(sx.b, sx.a + 2), S1.y + 1), kWaveColor, 0, 0, 1.5f * scale);
    } else {
      const Span sy = span_of(a * g.Br, std::min((b + 1) * g.Br, g.n_q), g.n_q, S0.y, sw);
      dl->AddRect(ImVec2(S0.x - 1, sy.a), ImVec2(S1.x + 1, std::max(sy.b, sy.a + 2)), kWaveColor, 0, 0, 1.5f * scale);
    }
  }
  dl->AddRect(S0, S1, frame);

  // The transfer happening now: its tile lights up on its strip (above); its
  // words go under the grid, on a line of their own, never over the data.
  std::string transfer;
  if (!snap.recent.empty() && is_transfer(snap.recent.back().event)) {
    const sim::TileEvent& e = snap.recent.back().event;
    transfer = (e.kind == sim::EventKind::load ? "→ SRAM " : "→ HBM ") + sim::tile_label(e.target) + " " +
               sim::bytes_iec(static_cast<double>(e.target.bytes));
  }

  // Names in the four corners around S, where no tile is drawn.
  const ImU32 name_col = IM_COL32(235, 235, 235, 255);
  const float lh = ImGui::GetTextLineHeight();
  label(dl, ImVec2(Q0.x, Q0.y - lh - 2), backward ? "Q dQ" : "Q", name_col);
  label(dl, ImVec2(K1.x + 3, K0.y + (t - lh) / 2), backward ? "Kᵀ dKᵀ" : "Kᵀ", name_col);
  label(dl, ImVec2(O0.x, O1.y + 2), backward ? "O dO" : "O", name_col);
  label(dl, ImVec2(V0.x - ImGui::CalcTextSize(backward ? "Vᵀ dVᵀ" : "Vᵀ").x - 5, V0.y + (t - lh) / 2), backward ? "Vᵀ dVᵀ" : "Vᵀ",
        name_col);
  const char* sname = backward ? (algo.materializes_scores ? "P, dP, dS (in HBM)" : "P_ij, dS_ij recomputed (on chip)")
                      : algo.materializes_scores ? (snap.phase >= 1 ? "P (in HBM)" : "S (in HBM)")
                                                 : "S_ij / P̃_ij (on chip)";
  if (ImGui::CalcTextSize(sname).x + 12 < sw) label(dl, ImVec2(S0.x + 4, S1.y - ImGui::GetTextLineHeight() - 3), sname, name_col);
  char info[160];
  std::snprintf(info, sizeof info, "%s×%s blocks of %lld×%lld%s%s", fmt_count(g.T_r).c_str(), fmt_count(g.T_c).c_str(),
                static_cast<long long>(g.Br), static_cast<long long>(g.Bc),
                aggregated ? ", drawn as " : "", aggregated ? (std::to_string(cr) + "×" + std::to_string(cc) + " cells").c_str() : "");
  dl->AddText(ImVec2(x0, V1.y + 3), IM_COL32(170, 175, 185, 255), info);
  const float line2 = V1.y + 3 + ImGui::GetTextLineHeight();
  if (!transfer.empty()) {
    const sim::TileEvent& e = snap.recent.back().event;
    dl->AddText(ImVec2(x0, line2), tensor_color(e.target.tensor), transfer.c_str());
  }
  if (!to_scale) {
    const char* ns = "d strips not to scale";
    const float nw = ImGui::CalcTextSize(ns).x;
    if (transfer.empty() || ImGui::CalcTextSize(transfer.c_str()).x + nw + 8 < side)
      dl->AddText(ImVec2(x0 + side - nw, line2), IM_COL32(140, 140, 150, 255), ns);
  }
  ImGui::Dummy(ImVec2(side, side + 2 * ImGui::GetTextLineHeight()));
}

void draw_sram(const AlgoView& v, float scale) {
  const sim::Cursor& c = *v.cursor;
  const i64 cap = std::max<i64>(1, c.sram_capacity());
  const i64 used = c.sram_bytes();
  ImGui::TextUnformatted("SRAM");
  ImGui::SameLine();
  ImGui::TextColored(used > cap ? color_error() : color_dim(), "%s of M = %s (%.0f%%)",
                     sim::bytes_iec(static_cast<double>(used)).c_str(), sim::bytes_iec(static_cast<double>(cap)).c_str(),
                     100.0 * static_cast<double>(used) / static_cast<double>(cap));
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = std::max(20.0f, ImGui::GetContentRegionAvail().x), h = ImGui::GetTextLineHeight() * 1.6f;
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(30, 34, 40, 255));
  float x = p.x;
  for (const sim::TileRef& t : c.sram()) {
    const float tw = static_cast<float>(static_cast<double>(t.bytes) / static_cast<double>(cap)) * w;
    const float x1 = std::min(p.x + w, x + std::max(tw, 1.0f));
    dl->AddRectFilled(ImVec2(x, p.y), ImVec2(x1, p.y + h), tensor_color(t.tensor, 220));
    dl->AddLine(ImVec2(x1, p.y), ImVec2(x1, p.y + h), IM_COL32(20, 20, 20, 255));
    const std::string name = sim::tile_label(t);
    if (ImGui::CalcTextSize(name.c_str()).x + 4 < x1 - x)
      dl->AddText(ImVec2(x + 2, p.y + (h - ImGui::GetTextLineHeight()) / 2), IM_COL32(10, 10, 10, 255), name.c_str());
    x = x1;
  }
  const float peak_x = p.x + w * static_cast<float>(std::min(1.0, static_cast<double>(v.result.sram_peak_bytes) / static_cast<double>(cap)));
  dl->AddLine(ImVec2(peak_x, p.y - 2), ImVec2(peak_x, p.y + h + 2), IM_COL32(255, 255, 255, 160), 1.5f * scale);
  dl->AddRect(p, ImVec2(p.x + w, p.y + h), IM_COL32(150, 155, 165, 255));
  ImGui::Dummy(ImVec2(w, h + 2));
  if (ImGui::IsItemHovered()) {
    ImGui::BeginTooltip();
    ImGui::Text("peak %s (white line) of M = %s", sim::bytes_iec(static_cast<double>(v.result.sram_peak_bytes)).c_str(),
                sim::bytes_iec(static_cast<double>(cap)).c_str());
    for (const sim::TileRef& t : c.sram())
      ImGui::Text("%s  %lld×%lld  %s", sim::tile_label(t).c_str(), static_cast<long long>(t.rows),
                  static_cast<long long>(t.cols), sim::bytes_iec(static_cast<double>(t.bytes)).c_str());
    ImGui::EndTooltip();
  }
}

void draw_events(const AlgoView& v) {
  ImGui::TextColored(color_dim(), "last events (HBM ↔ SRAM transfers in colour)");
  const auto& recent = v.snap.recent;
  const size_t first = recent.size() > 4 ? recent.size() - 4 : 0;
  for (size_t k = first; k < recent.size(); ++k) {
    const sim::TileEvent& e = recent[k].event;
    const bool now = k + 1 == recent.size();
    const ImVec4 col = is_transfer(e) ? ImGui::ColorConvertU32ToFloat4(tensor_color(e.target.tensor)) : color_dim();
    ImGui::TextColored(col, "%s %s", now ? "▶" : " ", event_text(e).c_str());
  }
  if (recent.empty()) ImGui::TextColored(color_dim(), "  (at the start: press → or Space)");
}

void draw_softmax(const AlgoView& v) {
  const TilingSnapshot& sn = v.snap;
  if (!shows_online_softmax(v.algo)) {
    const sim::AlgorithmInfo& info = sim::algorithm_info(v.algo);
    if (info.pass == sim::Pass::bwd && !info.materializes_scores) {
      // The backward recomputes P_ij from what the forward kept: no running statistics to watch.
      math_text("No running statistics: " + title_in_sentence(v.algo) +
                    " recomputes P_ij = exp(S_ij − L_i) from the forward's logsumexp (FlashAttention-1: from ℓ_i and "
                    "m_i), so each block's softmax is final at once; dK_j and dV_j add up on chip, dQ_i in global memory.",
                color_dim());
      return;
    }
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_dim(), "No running statistics: %s writes S to HBM and softmax reads whole rows back "
                                    "(two passes over HBM instead of online rescaling).",
                       title_in_sentence(v.algo).c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  if (!sn.has_softmax) {
    const bool ended = v.cursor && v.cursor->position() >= v.cursor->size() && v.cursor->size() > 0;
    ImGui::TextColored(color_dim(), "%s", ended ? "Online softmax: the schedule has ended; every row block's m_i and ℓ_i are final"
                                                : "Online softmax: no row block active yet");
    return;
  }
  const auto& st = sn.softmax;
  if (!st.complete()) {
    // Numbers of a half-folded row would be wrong for this position: say what is being computed instead.
    ImGui::TextColored(color_dim(), "Online softmax, row block i = %lld: computing %lld of %lld key blocks…",
                       static_cast<long long>(st.i), static_cast<long long>(st.visits), static_cast<long long>(st.target));
    return;
  }
  ImGui::PushTextWrapPos(0);
  ImGui::Text("Online softmax, row block i = %lld: %lld of %lld key blocks folded in", static_cast<long long>(st.i),
              static_cast<long long>(st.visits), static_cast<long long>(sn.softmax_visits_total));
  ImGui::PopTextWrapPos();
  if (ImGui::BeginTable("softmax", 4, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableSetupColumn("row");
    ImGui::TableSetupColumn("m_i");
    ImGui::TableSetupColumn("ℓ_i");
    ImGui::TableSetupColumn("rescale");
    ImGui::TableHeadersRow();
    for (const auto& r : st.rows) {
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::Text("%lld", static_cast<long long>(r.row));
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(fmt_stat(r.m, "softmax m").c_str());
      ImGui::TableNextColumn();
      ImGui::TextUnformatted(fmt_stat(r.l, "softmax l").c_str());
      ImGui::TableNextColumn();
      // e^(m_old − m_new) with m_old = −∞: the row had nothing yet, so nothing
      // was scaled — say that rather than print a 0 that reads "O scaled to zero".
      if (r.rescale == 0) {
        ImGui::TextColored(color_dim(), "— first block");
        if (ImGui::IsItemHovered())
          ImGui::SetTooltip("m_i was −∞ before this block: O_i and ℓ_i were still empty, there was nothing to rescale");
        continue;
      }
      const bool rescaled = st.visits > 0 && r.rescale < 1;
      ImGui::TextColored(rescaled ? ImVec4(1.0f, 0.7f, 0.3f, 1.0f) : color_dim(), "%s", fmt_stat(r.rescale, "softmax rescale").c_str());
    }
    ImGui::EndTable();
  }
}

void draw_pseudocode(const AlgoView& v, int index) {
  const sim::AlgorithmInfo& info = sim::algorithm_info(v.algo);
  const int line = v.snap.where.line;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float number_w = ImGui::CalcTextSize("00 ").x;
  for (size_t k = 0; k < info.pseudocode.size(); ++k) {
    const bool cur = static_cast<int>(k + 1) == line;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    const float text_w = std::max(20.0f, ImGui::GetContentRegionAvail().x - number_w);
    if (cur) {
      // Measure the wrapped height first, draw the highlight behind it.
      const ImVec2 sz = math_text_size(info.pseudocode[k], text_w);
      dl->AddRectFilled(ImVec2(p.x - 2, p.y - 1), ImVec2(p.x + ImGui::GetContentRegionAvail().x, p.y + sz.y + 1),
                        IM_COL32(120, 95, 20, 255));
    }
    ImGui::AlignTextToFramePadding();
    ImGui::TextColored(cur ? ImVec4(1, 1, 1, 1) : color_dim(), "%2zu", k + 1);
    ImGui::SameLine(0, 0);
    ImGui::SetCursorScreenPos(ImVec2(p.x + number_w, p.y));
    math_text(info.pseudocode[k], cur ? ImVec4(1, 0.95f, 0.7f, 1) : ImVec4(0.82f, 0.84f, 0.88f, 1), text_w);
    if (cur && ImGui::GetStateStorage()->GetInt(ImGui::GetID("last_line"), -1) != line) {
      ImGui::SetScrollHereY(0.3f);
      ImGui::GetStateStorage()->SetInt(ImGui::GetID("last_line"), line);
    }
  }
  (void)index;
}

void algo_strip(AppState& s, AlgoView& v, int index, ImVec2 size) {
  ImGui::PushID(index);
  ImGui::BeginChild("strip", size, true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float scale = static_cast<float>(s.view.ui_scale);
  const sim::Cursor& c = *v.cursor;
  const sim::Cursor::Where& w = v.snap.where;
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  // The grid takes a square as tall as the strip; text columns share the rest.
  // Narrow strips (a projector at 2×) leave the full listing out and show the
  // current line of the pseudocode under the title instead.
  const bool compact = avail.x / scale < 820;
  const float grid_w = std::max(60.0f, std::min(avail.y, avail.x * (compact ? 0.5f : 0.45f)));
  const float code_w = compact ? 0.0f : std::max(100 * scale, (avail.x - grid_w) * 0.44f);
  const float info_w = compact ? 0.0f : std::max(60.0f, avail.x - grid_w - code_w - 2 * spacing);

  ImGui::BeginChild("grid", ImVec2(grid_w, avail.y), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_tiling(s, v, ImGui::GetCursorScreenPos(), ImGui::GetContentRegionAvail());
  ImGui::EndChild();
  ImGui::SameLine();
  ImGui::BeginChild("info", ImVec2(info_w, avail.y), false);
  ImGui::PushTextWrapPos(0);  // a narrow column wraps its lines instead of clipping them
  ImGui::PushFont(fonts().big);
  ImGui::TextUnformatted(std::string(sim::algorithm_info(v.algo).title).c_str());
  ImGui::PopFont();
  char pos[200];
  if (w.part == sim::Cursor::Part::visit)
    std::snprintf(pos, sizeof pos, "event %s of %s · block i=%lld, j=%lld · line %d", fmt_count(c.position()).c_str(),
                  fmt_count(c.size()).c_str(), static_cast<long long>(w.i), static_cast<long long>(w.j), w.line);
  else
    std::snprintf(pos, sizeof pos, "event %s of %s · line %d", fmt_count(c.position()).c_str(), fmt_count(c.size()).c_str(),
                  w.line);
  ImGui::TextColored(color_dim(), "%s", pos);
  ImGui::PopTextWrapPos();
  if (compact) {
    // The current line in as many lines as the longest line of the listing
    // takes, so that nothing under it moves while it changes.
    const std::vector<std::string>& code = sim::algorithm_info(v.algo).pseudocode;
    const float width = std::max(20.0f, ImGui::GetContentRegionAvail().x);
    float tallest = math_line_height();
    for (const std::string& l : code) tallest = std::max(tallest, math_text_size("00 " + l, width).y);
    const ImVec2 at = ImGui::GetCursorScreenPos();
    if (w.line > 0 && static_cast<size_t>(w.line) <= code.size())
      math_text(std::to_string(w.line) + " " + code[static_cast<size_t>(w.line - 1)], ImVec4(1, 0.9f, 0.55f, 1), width);
    ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + tallest));
    ImGui::Dummy(ImVec2(1, 0));
  }
  if (!shows_online_softmax(v.algo)) {  // which pass of the materialising algorithm
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_note(), "%s", pass_title(*v.schedule, v.snap.phase).c_str());
    ImGui::PopTextWrapPos();
  }
  draw_l2_caption(v);
  draw_sram(v, scale);
  draw_softmax(v);
  ImGui::Spacing();
  draw_events(v);
  ImGui::EndChild();
  if (!compact) {
    ImGui::SameLine();
    ImGui::BeginChild("code", ImVec2(0, avail.y), false);
    draw_pseudocode(v, index);
    ImGui::EndChild();
  }

  ImGui::EndChild();
  ImGui::PopID();
}

}  // namespace

void transport_bar(AppState& s) {
  if (ImGui::Button(s.view.hide_controls ? "☰ controls" : "☰")) s.view.hide_controls = !s.view.hide_controls;
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("show or hide the controls (F9)");
  ImGui::SameLine();
  if (!s.model.valid) {
    ImGui::TextColored(color_error(), "Nothing to step through: the inputs are invalid (see the red line).");
    return;
  }
  sim::Cursor& c = *s.model.algos[0].cursor;
  if (ImGui::Button("|◀")) seek_primary(s, 0);
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("start (Home)");
  ImGui::SameLine();
  if (ImGui::Button("◀")) {
    s.playback.playing = false;
    step_primary(s, -1);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("step back (←)");
  ImGui::SameLine();
  if (ImGui::Button(s.playback.playing ? "‖ pause" : "▶ play")) {
    s.playback.playing = !s.playback.playing;
    if (s.playback.playing && c.position() >= c.size()) seek_primary(s, 0);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("play / pause (Space)");
  ImGui::SameLine();
  if (ImGui::Button("▶")) {
    s.playback.playing = false;
    step_primary(s, 1);
  }
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("step (→; Shift: 10)");
  ImGui::SameLine();
  if (ImGui::Button("▶|")) seek_primary(s, c.size());
  if (ImGui::IsItemHovered()) ImGui::SetTooltip("end (End)");
  ImGui::SameLine();
  if (ImGui::Button("−")) s.playback.events_per_s = std::max(0.25, s.playback.events_per_s / 2);
  ImGui::SameLine();
  ImGui::Text("%s ev/s", analysis::format_tick(s.playback.events_per_s, analysis::TickFormat::si).c_str());
  ImGui::SameLine();
  if (ImGui::Button("+")) s.playback.events_per_s = std::min(1e6, s.playback.events_per_s * 2);
  ImGui::SameLine();
  long long pos = static_cast<long long>(c.position());
  const long long lo = 0, hi = static_cast<long long>(c.size());
  ImGui::SetNextItemWidth(-1);
  // The format is the whole label, position grouped like the total (a % in it doubled for ImGui).
  std::string fmt = "event " + fmt_count(c.position()) + " of " + fmt_count(c.size()) + " (one head)";
  if (ImGui::SliderScalar("##scrub", ImGuiDataType_S64, &pos, &lo, &hi, fmt.c_str(), ImGuiSliderFlags_AlwaysClamp)) {
    s.playback.playing = false;
    seek_primary(s, pos);
  }
}

void panel_tiling(AppState& s) {
  transport_bar(s);
  if (!s.model.valid) {
    ImGui::PushTextWrapPos(0);
    for (const std::string& e : s.model.errors) ImGui::TextColored(color_error(), "✕ %s", e.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  const int n = static_cast<int>(s.model.algos.size());
  const float h = (avail.y - ImGui::GetStyle().ItemSpacing.y * static_cast<float>(n - 1)) / static_cast<float>(n);
  for (int k = 0; k < n; ++k) algo_strip(s, s.model.algos[static_cast<size_t>(k)], k, ImVec2(avail.x, std::max(h, 40.0f)));
}

}  // namespace flashlab::gui
