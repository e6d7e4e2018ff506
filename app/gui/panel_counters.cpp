// Counters: HBM reads and writes per tensor (bars: to the cursor over the
// total), SRAM and L2 traffic, FLOPs, arithmetic intensity and the roofline
// bound, for every algorithm shown. All numbers come from the simulator's
// counters and analysis::roofline.
#include <imgui.h>

#include <algorithm>

#include "format.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

using sim::Level;
using sim::Tensor;

const Tensor kHbmTensors[] = {Tensor::Q, Tensor::K, Tensor::V, Tensor::S, Tensor::P, Tensor::O, Tensor::l, Tensor::m, Tensor::LSE};

// A bar of `total` (ghost) with `now` filled, on a shared scale `max`.
void bar(double now, double total, double max, ImU32 col) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImVec2 p = ImGui::GetCursorScreenPos();
  const float w = std::max(10.0f, ImGui::GetContentRegionAvail().x), h = ImGui::GetTextLineHeight();
  const float wt = max > 0 ? static_cast<float>(total / max) * w : 0, wn = max > 0 ? static_cast<float>(now / max) * w : 0;
  dl->AddRectFilled(p, ImVec2(p.x + w, p.y + h), IM_COL32(28, 31, 37, 255));
  if (total > 0) dl->AddRectFilled(p, ImVec2(p.x + std::max(wt, 1.0f), p.y + h), (col & 0x00FFFFFF) | 0x50000000);
  if (now > 0) dl->AddRectFilled(p, ImVec2(p.x + std::max(wn, 1.0f), p.y + h), col);
  // The bar shows progress; the text the total (the cursor's sums are in the table below).
  const std::string text = total > 0 ? fmt_bytes(total, "counter bar") : "—";
  dl->AddText(ImVec2(p.x + 3, p.y), IM_COL32(240, 240, 240, 255), text.c_str());
  ImGui::Dummy(ImVec2(w, h));
  if (ImGui::IsItemHovered() && total > 0)
    ImGui::SetTooltip("%s to the cursor of %s in total", fmt_bytes(now, "counter bar").c_str(), fmt_bytes(total, "counter bar").c_str());
}

double bytes_d(i64 b) { return static_cast<double>(b); }

void row_text(const char* name, const std::string& now, const std::string& total) {
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  ImGui::TextColored(color_dim(), "%s", name);
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(now.c_str());
  ImGui::TableNextColumn();
  ImGui::TextUnformatted(total.c_str());
}

void algo_counters(const AppState& s, const AlgoView& v, double bar_max, const AlgoView* reference) {
  const sim::Counters& cum = v.snap.cumulative;
  const sim::Counters& tot = v.result.total;
  const sim::HardwareModel& hw = s.model.hw;
  if (v.snap.cumulative_overflow)
    ImGui::TextColored(color_error(), "cumulative counts overflow 64 bits for all heads: showing one head");

  if (ImGui::BeginTable("hbm", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) {
    ImGui::TableSetupColumn("HBM", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 2.2f);
    ImGui::TableSetupColumn("read");
    ImGui::TableSetupColumn("write");
    ImGui::TableHeadersRow();
    for (Tensor t : kHbmTensors) {
      const sim::Traffic& a = cum.at(Level::HBM, t);
      const sim::Traffic& b = tot.at(Level::HBM, t);
      if (b.bytes() == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(tensor_color(t)), "%s", std::string(sim::display_name(t)).c_str());
      ImGui::TableNextColumn();
      bar(bytes_d(a.read_bytes), bytes_d(b.read_bytes), bar_max, tensor_color(t));
      ImGui::TableNextColumn();
      bar(bytes_d(a.write_bytes), bytes_d(b.write_bytes), bar_max, tensor_color(t));
    }
    ImGui::EndTable();
  }

  const sim::Traffic hc = cum.level(Level::HBM), ht = tot.level(Level::HBM);
  const sim::Traffic sc = cum.level(Level::SRAM), st = tot.level(Level::SRAM);
  const sim::Traffic lc = cum.level(Level::L2), lt = tot.level(Level::L2);
  const double ai_now = v.snap.ai_now, t_now = v.snap.time_bound_now_s;
  if (ImGui::BeginTable("sums", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 6.5f);
    ImGui::TableSetupColumn("to the cursor");
    ImGui::TableSetupColumn("total");
    ImGui::TableHeadersRow();
    row_text("HBM read", fmt_bytes(bytes_d(hc.read_bytes), "hbm"), fmt_bytes(bytes_d(ht.read_bytes), "hbm"));
    row_text("HBM write", fmt_bytes(bytes_d(hc.write_bytes), "hbm"), fmt_bytes(bytes_d(ht.write_bytes), "hbm"));
    if (lt.bytes() > 0) row_text("L2 hits", fmt_bytes(bytes_d(lc.bytes()), "l2"), fmt_bytes(bytes_d(lt.bytes()), "l2"));
    row_text("SRAM r+w", fmt_bytes(bytes_d(sc.bytes()), "sram"), fmt_bytes(bytes_d(st.bytes()), "sram"));
    row_text("FLOPs", fmt_si(static_cast<double>(cum.flops()), "FLOP", "flops"), fmt_si(static_cast<double>(tot.flops()), "FLOP", "flops"));
    row_text("  matmul", fmt_si(static_cast<double>(cum.matmul_flops), "FLOP", "flops"),
             fmt_si(static_cast<double>(tot.matmul_flops), "FLOP", "flops"));
    row_text("  softmax", fmt_si(static_cast<double>(cum.softmax_flops), "FLOP", "flops"),
             fmt_si(static_cast<double>(tot.softmax_flops), "FLOP", "flops"));
    row_text("AI (FLOP/B)", fmt_fixed(ai_now, 1, "ai"), fmt_fixed(v.roof.ai, 1, "ai"));
    row_text("time ≥", fmt_ms(t_now * 1e3, "time"), fmt_ms(v.roof.time_s * 1e3, "time"));
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(v.roof.memory_bound ? ImVec4(1.0f, 0.7f, 0.35f, 1) : color_good(), "%s-bound on %s: %s of %s peak",
                     v.roof.memory_bound ? "memory" : "compute", hw.name.c_str(),
                     fmt_si(v.roof.attainable, "FLOP/s", "attainable").c_str(), fmt_si(v.roof.peak_flops, "FLOP/s", "peak").c_str());
  if (reference && reference != &v) {
    const double r = bytes_d(ht.bytes()) / std::max(1.0, bytes_d(reference->result.total.level(Level::HBM).bytes()));
    ImGui::TextColored(color_note(), "HBM traffic %s× that of %s", fmt_fixed(r, 3, "ratio").c_str(),
                       std::string(sim::to_string(reference->algo)).c_str());
  }
  ImGui::PopTextWrapPos();
}

}  // namespace

void panel_counters(AppState& s) {
  if (!s.model.valid) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_error(), "No counters: %s", s.model.errors.empty() ? "invalid inputs" : s.model.errors.front().c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::TextColored(color_dim(), "B·H = %s heads · 4·B·H·N²·d%s = %s",
                     fmt_count(s.model.problem.head_count()).c_str(), s.model.problem.causal ? "/2" : "",
                     fmt_si(static_cast<double>(analysis::convention_flops(s.model.problem)), "FLOP", "convention").c_str());
  // One bar scale for every algorithm, so their bars compare.
  double bar_max = 0;
  for (const AlgoView& v : s.model.algos)
    for (Tensor t : kHbmTensors) {
      const sim::Traffic& b = v.result.total.at(Level::HBM, t);
      bar_max = std::max({bar_max, bytes_d(b.read_bytes), bytes_d(b.write_bytes)});
    }
  for (size_t k = 0; k < s.model.algos.size(); ++k) {
    const AlgoView& v = s.model.algos[k];
    ImGui::PushID(static_cast<int>(k));
    const std::string title = std::string(sim::algorithm_info(v.algo).title) + "##counters";
    if (ImGui::CollapsingHeader(title.c_str(), ImGuiTreeNodeFlags_DefaultOpen))
      algo_counters(s, v, bar_max, k > 0 ? &s.model.algos[0] : nullptr);
    ImGui::PopID();
  }
}

}  // namespace flashlab::gui
