// The tiling view: Q, Kᵀ, S/P, Vᵀ and O drawn as tile grids around S, the
// SRAM box, the transfers as they happen, the online-softmax state and the
// pseudocode with the current line — one strip per algorithm, in lockstep.
#include <imgui.h>

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "draw/drawn_marks.hpp"
#include "draw/imgui_canvas.hpp"
#include "model/model.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

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

// The height wrapped text takes in the current column, with the spacing after it.
float text_height(const std::string& text, float width) {
  return ImGui::CalcTextSize(text.c_str(), nullptr, false, width).y + ImGui::GetStyle().ItemSpacing.y;
}

// Where the current visit's reads came from and which CTAs share them, from
// the L2 model's trace of the first head (the snapshot's L2AtCursor). Drawn
// only when it fits in `budget` pixels of height; returns whether it was.
bool draw_l2_caption(const AlgoView& v, float budget) {
  const L2AtCursor& l2 = v.snap.l2;
  const float width = ImGui::GetContentRegionAvail().x, box = ImGui::GetTextLineHeight() + ImGui::GetStyle().ItemSpacing.x;
  float need = 0;
  if (!v.result.l2.modelled) need = math_text_size("L2 not modelled: " + v.result.l2.why_not, width).y;
  else if (!l2.has_visit) need = math_text_size("L2 (first head): step into a visit to see where its reads come from", width).y;
  else {
    need = math_text_size("L2: " + l2.visit_caption, width).y;
    if (!l2.wave_caption.empty()) need += math_text_size(l2.wave_caption, width - box).y;
  }
  need += 2 * ImGui::GetStyle().ItemSpacing.y;
  if (need > budget) return false;
  if (!v.result.l2.modelled) {
    math_text("L2 not modelled: " + v.result.l2.why_not, color_dim(), width);
  } else if (!l2.has_visit) {
    math_text("L2 (first head): step into a visit to see where its reads come from", color_dim(), width);
  } else {
    const float f = l2.dram_fraction;
    const ImVec4 col = f <= 0.05f ? color_good() : f >= 0.5f ? color_warning() : color_note();
    math_text("L2: " + l2.visit_caption, col, width);
    if (!l2.wave_caption.empty()) {
      const ImVec2 p = ImGui::GetCursorScreenPos();
      const float h = ImGui::GetTextLineHeight();
      ImGui::GetWindowDrawList()->AddRect(ImVec2(p.x + 1, p.y + 2), ImVec2(p.x + h - 3, p.y + h - 2), kWaveColor, 0, 0, 1.5f);
      ImGui::SetCursorScreenPos(ImVec2(p.x + box, p.y));
      math_text(l2.wave_caption, color_dim(), width - box);
    }
  }
  return true;
}

void label(ImDrawList* dl, ImVec2 p, const char* text, ImU32 col) {
  const ImVec2 sz = math_label_size(text);
  dl->AddRectFilled(ImVec2(p.x - 2, p.y - 1), ImVec2(p.x + sz.x + 2, p.y + sz.y + 1), IM_COL32(0, 0, 0, 170), 3);
  math_label(dl, p, text, col);
}

// The matrices around S, to scale where the window allows.
void draw_tiling(const AppState& s, const AlgoView& v, ImVec2 origin, ImVec2 avail) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const sim::TileGrid& g = v.schedule->grid();
  const TilingSnapshot& snap = v.snap;
  const float scale = static_cast<float>(s.view.ui_scale);
  const float gap = 5 * scale, tmin = 13 * scale;
  // Two lines of text go under the grid: its size, and the transfer in progress.
  // (Lines of the notation: a subscript reaches below a plain line.)
  const float side = std::max(40.0f, std::min(avail.x, avail.y - 2 * math_line_height() - 4));
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
      // The block the loop is at: outlined in the tensor's colour; a tile in
      // SRAM: filled with it.
      auto seg = [&](i64 e0, i64 e1, ImU32 col, bool outline, const char* what) {
        const i64 n = rows ? g.n_q : g.n_kv;
        const int first = dl->VtxBuffer.Size;
        ImVec2 p0, p1;
        if (!rows) {
          const Span sp = span_of(e0, e1, n, a.x, b.x - a.x);
          const float ya = a.y + (b.y - a.y) * f0, yb = a.y + (b.y - a.y) * f1;
          p0 = ImVec2(sp.a, ya), p1 = ImVec2(std::max(sp.b, sp.a + 2), yb);
        } else {
          const Span sp = span_of(e0, e1, n, a.y, b.y - a.y);
          const float xa = a.x + (b.x - a.x) * f0, xb = a.x + (b.x - a.x) * f1;
          p0 = ImVec2(xa, sp.a), p1 = ImVec2(xb, std::max(sp.b, sp.a + 2));
        }
        if (outline) {
          const float w = std::min(2 * scale, std::min(p1.x - p0.x, p1.y - p0.y) / 3);
          dl->AddRect(ImVec2(p0.x + w / 2, p0.y + w / 2), ImVec2(p1.x - w / 2, p1.y - w / 2), col, 0, 0, w);
        } else {
          dl->AddRectFilled(p0, p1, col);
        }
        mark_area(dl, first, ImVec4(p0.x, p0.y, p1.x, p1.y), what);
      };
      if (rows && snap.cur_i >= 0)
        seg(snap.cur_i * g.Br, snap.cur_i * g.Br + g.rows(snap.cur_i), tensor_color(t_), true, "the current block on a strip");
      if (!rows && snap.cur_j >= 0)
        seg(snap.cur_j * g.Bc, snap.cur_j * g.Bc + g.cols(snap.cur_j), tensor_color(t_), true, "the current block on a strip");
      for (const sim::TileRef& r : v.cursor->sram()) {
        if (r.tensor != t_) continue;  // ℓ, m and the statistics show in the SRAM bar
        if (r.ti < 0 && r.tj < 0)
          seg(0, rows ? g.n_q : g.n_kv, tensor_color(r.tensor), false, "a whole tensor in SRAM on its strip");
        else if (rows && r.ti >= 0)
          seg(r.ti * g.Br, r.ti * g.Br + g.rows(r.ti), tensor_color(r.tensor), false, "a tile in SRAM on its strip");
        else if (!rows && r.tj >= 0)
          seg(r.tj * g.Bc, r.tj * g.Bc + g.cols(r.tj), tensor_color(r.tensor), false, "a tile in SRAM on its strip");
      }
    }
  };
  using Lanes = std::vector<Tensor>;
  strip(Q0, Q1, backward ? Lanes{Tensor::Q, Tensor::dQ, Tensor::dQaccum} : Lanes{Tensor::Q}, true);
  strip(K0, K1, backward ? Lanes{Tensor::K, Tensor::dK, Tensor::dKaccum} : Lanes{Tensor::K}, false);
  strip(O0, O1, backward ? Lanes{Tensor::O, Tensor::dO} : Lanes{Tensor::O}, true);
  strip(V0, V1, backward ? Lanes{Tensor::V, Tensor::dV, Tensor::dVaccum} : Lanes{Tensor::V}, false);

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
  const ImU32 done_col = finished_block_color();  // no tensor's colour: the strips' Q, K, V, O keep theirs
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
    const int first = dl->VtxBuffer.Size;
    dl->AddLine(S0, S1, causal_diagonal_color(), 1.5f * scale);
    const ImVec2 diagonal[2] = {S0, S1};
    mark_line(dl, first, diagonal, 2, 1.5f * scale, "the causal diagonal");
    if (skips_masked) label(dl, ImVec2(S0.x + sw * 0.55f, S0.y + sw * 0.12f), "skipped", IM_COL32(200, 200, 200, 255));
  }
  ImVec4 current_block(0, 0, 0, 0);  // where the current block is drawn: the labels keep off it
  if (snap.cur_i >= 0 && snap.cur_j >= 0) {
    const Span sy = span_of(snap.cur_i * g.Br, snap.cur_i * g.Br + g.rows(snap.cur_i), g.n_q, S0.y, sw);
    const Span sx = span_of(snap.cur_j * g.Bc, snap.cur_j * g.Bc + g.cols(snap.cur_j), g.n_kv, S0.x, sw);
    const ImVec2 p0(sx.a, sy.a), p1(std::max(sx.b, sx.a + 3), std::max(sy.b, sy.a + 3));
    current_block = ImVec4(p0.x - 2, p0.y - 2, p1.x + 2, p1.y + 2);
    const int first = dl->VtxBuffer.Size;
    dl->AddRectFilled(p0, p1, IM_COL32(255, 215, 70, 200));
    dl->AddRect(ImVec2(p0.x - 2, p0.y - 2), ImVec2(p1.x + 2, p1.y + 2), current_block_outline(), 0, 0, 2 * scale);
    mark_area(dl, first, current_block, "the current block");
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

  // Names in the four corners around S, where no tile is drawn; the longer
  // backward names only where they fit inside the view.
  const ImU32 name_col = IM_COL32(235, 235, 235, 255);
  const float lh = ImGui::GetTextLineHeight();
  const float right_edge = x0 + side;
  auto fitting = [&](const char* longer, const char* shorter, float room) {
    return backward && ImGui::CalcTextSize(longer).x <= room ? longer : shorter;
  };
  // Above the Q strip, left of the Kᵀ strip.
  label(dl, ImVec2(Q0.x, Q0.y - lh - 2), fitting("Q dQ", "Q", K0.x - Q0.x - 4), name_col);
  const char* kname = fitting("Kᵀ dKᵀ", "Kᵀ", right_edge - K1.x - 5);
  if (ImGui::CalcTextSize(kname).x <= right_edge - K1.x - 5) label(dl, ImVec2(K1.x + 3, K0.y + (t - lh) / 2), kname, name_col);
  const char* oname = fitting("O dO", "O", right_edge - O0.x - 2);
  label(dl, ImVec2(std::min(O0.x, right_edge - ImGui::CalcTextSize(oname).x - 2), O1.y + 2), oname, name_col);
  const char* vname = fitting("Vᵀ dVᵀ", "Vᵀ", V0.x - x0 - 5);
  if (ImGui::CalcTextSize(vname).x <= V0.x - x0 - 5)
    label(dl, ImVec2(V0.x - ImGui::CalcTextSize(vname).x - 5, V0.y + (t - lh) / 2), vname, name_col);
  const char* sname = backward ? (algo.materializes_scores ? "P, dP, dS (in HBM)" : "P_ij, dS_ij recomputed (on chip)")
                      : algo.materializes_scores ? (snap.phase >= 1 ? "P (in HBM)" : "S (in HBM)")
                                                 : "S_ij / P̃_ij (on chip)";
  // S's name at its bottom-left corner, or its top-left when the current
  // block is under the bottom one; never over the current block.
  if (const ImVec2 sz = math_label_size(sname); sz.x + 12 < sw) {
    const auto covers = [&](ImVec2 at) {
      return current_block.z > current_block.x && at.x < current_block.z && at.x + sz.x > current_block.x &&
             at.y < current_block.w && at.y + sz.y > current_block.y;
    };
    const ImVec2 bottom(S0.x + 4, S1.y - ImGui::GetTextLineHeight() - 3), top(S0.x + 4, S0.y + 3);
    if (!covers(bottom)) label(dl, bottom, sname, name_col);
    else if (!covers(top)) label(dl, top, sname, name_col);
  }
  // Under the grid, each line as long as the view is wide: the longest of
  // its forms that fits, or nothing (never cut off at the edge).
  auto line = [&](float y, const std::vector<std::string>& forms, ImU32 col) {
    for (const std::string& f : forms)
      if (!f.empty() && math_label_size(f).x <= side) {
        math_label(dl, ImVec2(x0, y), f, col);
        return math_label_size(f).x;
      }
    return 0.0f;
  };
  const std::string blocks = fmt_count(g.T_r) + "×" + fmt_count(g.T_c) + " blocks";
  const std::string of = " of " + std::to_string(g.Br) + "×" + std::to_string(g.Bc);
  const std::string drawn = aggregated ? ", drawn as " + std::to_string(cr) + "×" + std::to_string(cc) + " cells" : "";
  line(V1.y + 3, {blocks + of + drawn, blocks + of, blocks}, IM_COL32(170, 175, 185, 255));
  const float line2 = V1.y + 3 + math_line_height();
  float used = 0;
  if (!transfer.empty()) {
    const sim::TileEvent& e = snap.recent.back().event;
    used = line(line2, {transfer, (e.kind == sim::EventKind::load ? "→ SRAM " : "→ HBM ") + sim::tile_label(e.target)},
                tensor_ink(e.target.tensor));
  }
  if (!to_scale) {
    const char* ns = "d strips not to scale";
    const float nw = ImGui::CalcTextSize(ns).x;
    if (used + nw + 8 < side) dl->AddText(ImVec2(x0 + side - nw, line2), IM_COL32(140, 140, 150, 255), ns);
  }
  ImGui::Dummy(ImVec2(side, side + 2 * ImGui::GetTextLineHeight()));
}

bool draw_sram(const AlgoView& v, float scale, float budget) {
  const ImGuiStyle& style = ImGui::GetStyle();
  const sim::Cursor& c = *v.cursor;
  const i64 cap = std::max<i64>(1, c.sram_capacity());
  const i64 used = c.sram_bytes();
  char head[160];
  // With a kernel's tiles the capacity may be the SM's SRAM and registers (the note says why).
  const char* of = v.result.registers_on_chip ? "SRAM  %s of M + registers = %s (%.0f%%)" : "SRAM  %s of M = %s (%.0f%%)";
  std::snprintf(head, sizeof head, of, sim::bytes_iec(static_cast<double>(used)).c_str(),
                sim::bytes_iec(static_cast<double>(cap)).c_str(), 100.0 * static_cast<double>(used) / static_cast<double>(cap));
  if (text_height(head, ImGui::GetContentRegionAvail().x) + style.ItemSpacing.y + ImGui::GetTextLineHeight() * 1.6f + 2 > budget)
    return false;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(used > cap ? color_error() : color_dim(), "%s", head);
  ImGui::PopTextWrapPos();
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
    ImGui::Text(v.result.registers_on_chip ? "peak %s (white line) of M + registers = %s" : "peak %s (white line) of M = %s", sim::bytes_iec(static_cast<double>(v.result.sram_peak_bytes)).c_str(),
                sim::bytes_iec(static_cast<double>(cap)).c_str());
    for (const sim::TileRef& t : c.sram())
      ImGui::Text("%s  %lld×%lld  %s", sim::tile_label(t).c_str(), static_cast<long long>(t.rows),
                  static_cast<long long>(t.cols), sim::bytes_iec(static_cast<double>(t.bytes)).c_str());
    ImGui::EndTooltip();
  }
  return true;
}

// The last events, as many of the last four as fit whole in `budget` (the
// newest kept), under a heading that names the colours where that leaves as
// many lines as a short one; a heading is never drawn without a line under it.
void draw_events(const AlgoView& v, float budget) {
  const float width = ImGui::GetContentRegionAvail().x;
  const auto& recent = v.snap.recent;
  const std::string at_start = "  (at the start: press → or Space)";
  struct Fit {
    std::string head;
    std::vector<size_t> shown;  // newest first
    bool start_line = false;
    size_t lines() const { return shown.size() + (start_line ? 1 : 0); }
  };
  const auto fit = [&](const std::string& head) {
    Fit f{head, {}, false};
    float used = text_height(head, width);
    if (used > budget) return f;
    for (size_t k = recent.size(); k-- > 0 && f.shown.size() < 4;) {
      const float h = text_height("▶ " + event_text(recent[k].event), width);
      if (used + h > budget) break;
      used += h;
      f.shown.push_back(k);
    }
    f.start_line = recent.empty() && used + text_height(at_start, width) <= budget;
    return f;
  };
  const Fit full = fit("last events (HBM ↔ SRAM transfers in colour)"), short_head = fit("last events");
  const Fit& f = full.lines() >= short_head.lines() ? full : short_head;
  if (f.lines() == 0) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(color_dim(), "%s", f.head.c_str());
  for (auto it = f.shown.rbegin(); it != f.shown.rend(); ++it) {
    const sim::TileEvent& e = recent[*it].event;
    const bool now = *it + 1 == recent.size();
    const ImVec4 col = is_transfer(e) ? ImGui::ColorConvertU32ToFloat4(tensor_ink(e.target.tensor)) : color_dim();
    ImGui::TextColored(col, "%s %s", now ? "▶" : " ", event_text(e).c_str());
  }
  if (f.start_line) ImGui::TextColored(color_dim(), "%s", at_start.c_str());
  ImGui::PopTextWrapPos();
}

// A paragraph of the notation, drawn when it fits in `budget`.
bool math_paragraph(const std::string& text, const ImVec4& color, float budget) {
  if (math_text_size(text).y + ImGui::GetStyle().ItemSpacing.y > budget) return false;
  math_text(text, color);
  return true;
}

// The online softmax of the current row block: a table of m_i, ℓ_i and the
// rescale, when it fits in `budget` (else its one-line summary, or nothing).
bool draw_softmax(const AlgoView& v, float budget) {
  const TilingSnapshot& sn = v.snap;
  if (!shows_online_softmax(v.algo)) {
    const sim::AlgorithmInfo& info = sim::algorithm_info(v.algo);
    if (info.pass == sim::Pass::bwd && !info.materializes_scores)
      // The backward recomputes P_ij from what the forward kept: no running statistics to watch.
      return math_paragraph("No running statistics: " + title_in_sentence(v.algo) +
                                " recomputes P_ij = exp(S_ij − L_i) from the forward's logsumexp (FlashAttention-1: from "
                                "ℓ_i and m_i), so each block's softmax is final at once; dK_j and dV_j add up on chip, dQ_i "
                                "in global memory.",
                            color_dim(), budget);
    if (info.pass == sim::Pass::bwd)
      // The standard backward reads P from HBM: the forward's softmax is already final.
      return math_paragraph("No running statistics: " + title_in_sentence(v.algo) +
                                " reads P, which the forward wrote to HBM, and its row sums Σ_l P_il dP_il come from "
                                "whole rows of P and dP read back from HBM: each of its passes is a matrix product "
                                "through HBM.",
                            color_dim(), budget);
    return math_paragraph("No running statistics: " + title_in_sentence(v.algo) +
                              " writes S to HBM and softmax reads whole rows back (two passes over HBM instead of online "
                              "rescaling).",
                          color_dim(), budget);
  }
  if (!sn.has_softmax) {
    const bool ended = v.cursor && v.cursor->position() >= v.cursor->size() && v.cursor->size() > 0;
    return math_paragraph(ended ? "Online softmax: the schedule has ended; every row block's m_i and ℓ_i are final"
                                : "Online softmax: no row block active yet",
                          color_dim(), budget);
  }
  const auto& st = sn.softmax;
  if (!st.complete()) {
    // Numbers of a half-folded row would be wrong for this position: say what is being computed instead.
    return math_paragraph("Online softmax, row block i = " + std::to_string(st.i) + ": computing " +
                              std::to_string(st.visits) + " of " + std::to_string(st.target) + " key blocks…",
                          color_dim(), budget);
  }
  const std::string head = "Online softmax, row block i = " + std::to_string(st.i) + ": " + std::to_string(st.visits) +
                           " of " + std::to_string(sn.softmax_visits_total) + " key blocks folded in";
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float table_h = row_h * static_cast<float>(1 + st.rows.size()) + ImGui::GetStyle().ItemSpacing.y;
  if (text_height(head, ImGui::GetContentRegionAvail().x) + table_h > budget)
    return math_paragraph(head, ImGui::GetStyle().Colors[ImGuiCol_Text], budget);
  ImGui::PushTextWrapPos(0);
  ImGui::TextUnformatted(head.c_str());
  ImGui::PopTextWrapPos();
  if (ImGui::BeginTable("softmax", 4, ImGuiTableFlags_BordersInnerH | ImGuiTableFlags_SizingStretchSame)) {
    ImGui::TableSetupColumn("row");
    ImGui::TableSetupColumn("mᵢ");
    ImGui::TableSetupColumn("ℓᵢ");
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
      ImGui::TextColored(rescaled ? color_warning() : color_dim(), "%s", fmt_stat(r.rescale, "softmax rescale").c_str());
    }
    ImGui::EndTable();
  }
  return true;
}

// The listing, as many whole lines as the column holds, the current line
// among them (with two lines before it where there is room): no line is ever
// cut at the column's edge, and none scrolls out under the pointer.
void draw_pseudocode(const AlgoView& v, int index) {
  const sim::AlgorithmInfo& info = sim::algorithm_info(v.algo);
  const int line = v.snap.where.line;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float number_w = ImGui::CalcTextSize("00 ").x;
  const float text_w = std::max(20.0f, ImGui::GetContentRegionAvail().x - number_w);
  const float gap = ImGui::GetStyle().ItemSpacing.y;
  const int n = static_cast<int>(info.pseudocode.size());
  std::vector<float> h(static_cast<size_t>(n));
  for (int k = 0; k < n; ++k) h[static_cast<size_t>(k)] = math_text_size(info.pseudocode[static_cast<size_t>(k)], text_w).y + gap;
  const float room = room_left();
  const int cur = std::clamp(line - 1, 0, std::max(0, n - 1));
  int first = cur, last = cur;  // lines [first, last)
  float used = 0;
  auto take = [&](int k) { used += h[static_cast<size_t>(k)]; };
  if (n > 0 && h[static_cast<size_t>(cur)] <= room) {
    take(cur);
    last = cur + 1;
    while (first > 0 && first > cur - 2 && used + h[static_cast<size_t>(first - 1)] <= room) take(--first);
    while (last < n && used + h[static_cast<size_t>(last)] <= room) take(last++);
    while (first > 0 && used + h[static_cast<size_t>(first - 1)] <= room) take(--first);
  }
  for (int k = first; k < last; ++k) {
    const bool is_cur = k + 1 == line;
    const ImVec2 p = ImGui::GetCursorScreenPos();
    if (is_cur)
      dl->AddRectFilled(ImVec2(p.x - 2, p.y - 1), ImVec2(p.x + ImGui::GetContentRegionAvail().x, p.y + h[static_cast<size_t>(k)] - gap + 1),
                        light_theme() ? IM_COL32(240, 214, 130, 255) : IM_COL32(120, 95, 20, 255));
    const std::string number = std::to_string(k + 1);
    dl->AddText(ImVec2(p.x + number_w - ImGui::CalcTextSize((number + " ").c_str()).x,
                       p.y + (math_line_height() - ImGui::GetTextLineHeight()) * 0.5f),
                is_cur ? IM_COL32(255, 255, 255, 255) : ImGui::GetColorU32(color_dim()), number.c_str());
    ImGui::SetCursorScreenPos(ImVec2(p.x + number_w, p.y));
    math_text(info.pseudocode[static_cast<size_t>(k)], is_cur ? ImVec4(1, 0.95f, 0.7f, 1) : ImVec4(0.82f, 0.84f, 0.88f, 1), text_w);
    ImGui::SetCursorScreenPos(ImVec2(p.x, p.y + h[static_cast<size_t>(k)]));
  }
  ImGui::Dummy(ImVec2(1, 0));
  (void)index;
}

// The text beside (or under) the grid: the title, where the cursor is, the
// current line of the pseudocode (compact strips), the pass, SRAM, the online
// softmax, the L2 at the visit and the last events — each only when it fits
// whole in what is left of the column, so nothing is ever cut off.
void draw_info(AppState& s, AlgoView& v, bool compact) {
  const float scale = static_cast<float>(s.view.ui_scale);
  const bool l2_first = s.view.l2_first;
  const sim::Cursor& c = *v.cursor;
  const sim::Cursor::Where& w = v.snap.where;
  const float width = std::max(20.0f, ImGui::GetContentRegionAvail().x);
  const sim::AlgorithmInfo& info = sim::algorithm_info(v.algo);
  // The title: the paper named when it fits on two lines, else the short name.
  ImGui::PushFont(fonts().big);
  std::string title(info.title);
  if (math_text_size(title, width).y > 2 * math_line_height()) title = short_title(v.algo);
  if (math_text_size(title, width).y <= room_left()) math_text(title, ImGui::GetStyle().Colors[ImGuiCol_Text], width);
  ImGui::PopFont();
  char pos[200];
  if (w.part == sim::Cursor::Part::visit)
    std::snprintf(pos, sizeof pos, "event %s of %s · block i=%lld, j=%lld · line %d", fmt_count(c.position()).c_str(),
                  fmt_count(c.size()).c_str(), static_cast<long long>(w.i), static_cast<long long>(w.j), w.line);
  else
    std::snprintf(pos, sizeof pos, "event %s of %s · line %d", fmt_count(c.position()).c_str(), fmt_count(c.size()).c_str(),
                  w.line);
  if (text_height(pos, width) > room_left()) return;
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(color_dim(), "%s", pos);
  ImGui::PopTextWrapPos();
  if (compact) {
    // The current line in as many lines as the longest line of the listing
    // takes, so that nothing under it moves while it changes; where that
    // would leave no room for the pass the algorithm is in (a backward's main
    // loop, on a small projector), in only as many as it takes itself.
    const std::vector<std::string>& code = info.pseudocode;
    const bool has_line = w.line > 0 && static_cast<size_t>(w.line) <= code.size();
    const std::string current = has_line ? std::to_string(w.line) + " " + code[static_cast<size_t>(w.line - 1)] : "";
    float tallest = math_line_height();
    for (const std::string& l : code) tallest = std::max(tallest, math_text_size("00 " + l, width).y);
    const float pass_h = shows_online_softmax(v.algo) ? 0.0f : text_height(pass_title(*v.schedule, v.snap.phase), width);
    if (tallest + pass_h > room_left() && has_line) tallest = std::max(math_line_height(), math_text_size(current, width).y);
    if (tallest > room_left()) return;
    const ImVec2 at = ImGui::GetCursorScreenPos();
    if (has_line) math_text(current, ImVec4(1, 0.9f, 0.55f, 1), width);
    ImGui::SetCursorScreenPos(ImVec2(at.x, at.y + tallest));
    ImGui::Dummy(ImVec2(1, 0));
  }
  if (!shows_online_softmax(v.algo)) {  // which pass the algorithm is in
    const std::string pass = pass_title(*v.schedule, v.snap.phase);
    if (text_height(pass, width) > room_left()) return;
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_note(), "%s", pass.c_str());
    ImGui::PopTextWrapPos();
  }
  // What the step-through is for comes first: SRAM's contents and the online
  // softmax's m_i, ℓ_i and rescale; then where the L2 served the reads from.
  if (!draw_sram(v, scale, room_left())) return;
  if (l2_first) {  // a scene about the L2: its caption before the softmax
    if (!draw_l2_caption(v, room_left())) return;
    if (!draw_softmax(v, room_left())) return;
  } else {
    if (!draw_softmax(v, room_left())) return;
    if (!draw_l2_caption(v, room_left())) return;
  }
  ImGui::Spacing();
  draw_events(v, room_left());
}

void algo_strip(AppState& s, AlgoView& v, int index, ImVec2 size) {
  ImGui::PushID(index);
  ImGui::BeginChild("strip", size, true, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  const float scale = static_cast<float>(s.view.ui_scale);
  ImVec2 avail = ImGui::GetContentRegionAvail();
  const float spacing = ImGui::GetStyle().ItemSpacing.x;
  // The Hopper schedule takes the bottom of the strip, when the view has one:
  // its full height (heading, three units, the ring, the legend) up to 60% of
  // the strip, so that a small projector still shows the units' lanes.
  const float pipe_h = v.hopper ? std::min(avail.y * 0.6f, math_line_height() * 7.6f)
                       : v.hopper_bwd ? std::min(avail.y * 0.5f, math_line_height() * 9.0f)
                                      : 0.0f;
  const float full_h = avail.y;
  if (pipe_h > 0) avail.y -= pipe_h + ImGui::GetStyle().ItemSpacing.y;
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
  ImGui::BeginChild("info", ImVec2(info_w, avail.y), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
  draw_info(s, v, compact);
  ImGui::EndChild();
  if (!compact) {
    ImGui::SameLine();
    ImGui::BeginChild("code", ImVec2(0, avail.y), false, ImGuiWindowFlags_NoScrollbar | ImGuiWindowFlags_NoScrollWithMouse);
    draw_pseudocode(v, index);
    ImGui::EndChild();
  }
  if (pipe_h > 0) {
    ImGui::SetCursorScreenPos(ImVec2(ImGui::GetWindowPos().x + ImGui::GetStyle().WindowPadding.x,
                                     ImGui::GetWindowPos().y + ImGui::GetStyle().WindowPadding.y + full_h - pipe_h));
    draw_pipeline(s, v, pipe_h);
  }

  ImGui::EndChild();
  ImGui::PopID();
}

}  // namespace

void transport_bar(AppState& s) {
  if (ImGui::Button(controls_shown(s) ? "☰" : "☰ controls")) toggle_controls(s);
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
  // The counter is printed over the handle: a see-through handle keeps the digit under it readable.
  ImVec4 grab = ImGui::GetStyleColorVec4(ImGuiCol_SliderGrab), grab_active = ImGui::GetStyleColorVec4(ImGuiCol_SliderGrabActive);
  grab.w *= 0.45f;
  grab_active.w *= 0.6f;
  ImGui::PushStyleColor(ImGuiCol_SliderGrab, grab);
  ImGui::PushStyleColor(ImGuiCol_SliderGrabActive, grab_active);
  const bool moved = ImGui::SliderScalar("##scrub", ImGuiDataType_S64, &pos, &lo, &hi, fmt.c_str(), ImGuiSliderFlags_AlwaysClamp);
  ImGui::PopStyleColor(2);
  if (moved) {
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
  if ((s.presenter.on || s.view.hall_layout) && n == 2) {
    // On the stage (and in the hall layout, where the view is the stage) two
    // algorithms stand side by side: each strip as tall as the stage, so the
    // grids are as large as the height allows.
    const float w = (avail.x - ImGui::GetStyle().ItemSpacing.x) / 2;
    algo_strip(s, s.model.algos[0], 0, ImVec2(w, avail.y));
    ImGui::SameLine();
    algo_strip(s, s.model.algos[1], 1, ImVec2(w, avail.y));
    return;
  }
  const float h = (avail.y - ImGui::GetStyle().ItemSpacing.y * static_cast<float>(n - 1)) / static_cast<float>(n);
  for (int k = 0; k < n; ++k) algo_strip(s, s.model.algos[static_cast<size_t>(k)], k, ImVec2(avail.x, std::max(h, 40.0f)));
}

float room_left() {
  return ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y - ImGui::GetCursorScreenPos().y;
}

}  // namespace flashlab::gui
