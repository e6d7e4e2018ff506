// Counters: for every algorithm shown, three quantities side by side —
// requests to global memory (the paper's HBM accesses), the DRAM bytes the L2
// model lets through, and the DRAM bytes measured by the GPU's counters in a
// run of this problem — then requests per tensor (bars: to the cursor over
// the total), SRAM traffic, FLOPs, arithmetic intensity on DRAM and on
// requests, and the roofline bound. All numbers come from SimResult, the
// cursor's snapshot and analysis (roofline, measured_dram, dram_check).
#include <imgui.h>

#include <algorithm>
#include <filesystem>
#include <functional>
#include <vector>

#include "flashlab/analysis/placement/measured_checks.hpp"
#include "flashlab/analysis/placement/placement.hpp"
#include "state/format.hpp"
#include "model/model.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

using sim::Level;
using sim::Tensor;

// Every tensor that may live in global memory, forward's and backward's (rows
// with no traffic for the algorithm shown are left out).
const Tensor kHbmTensors[] = {Tensor::Q,  Tensor::K,  Tensor::V,  Tensor::S,  Tensor::P,  Tensor::O,
                              Tensor::l,  Tensor::m,  Tensor::LSE, Tensor::dO, Tensor::dQ, Tensor::dK,
                              Tensor::dV, Tensor::dS, Tensor::dP, Tensor::D,  Tensor::dQaccum, Tensor::dKaccum,
                              Tensor::dVaccum};
static_assert(sizeof(kHbmTensors) / sizeof(kHbmTensors[0]) == sim::kGlobalTensorCount, "every global tensor");

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

void cell(const std::string& text, bool dim = false) {
  ImGui::TableNextColumn();
  if (dim) ImGui::TextColored(color_dim(), "%s", text.c_str());
  else ImGui::TextUnformatted(text.c_str());
}

std::string gb(double bytes) { return fmt_bytes(bytes, "dram"); }

// Why the measured column is empty for this algorithm ("" when it is not).
std::string measured_why_none(const AppState& s, const analysis::MeasuredLookup& m) {
  if (!s.bench.have_results)
    return "no results file with counters open (Benchmarks tab)" + (s.bench.run_note.empty() ? "" : "; " + s.bench.run_note);
  if (!m.why_none.empty()) return m.why_none;
  for (const analysis::MeasuredDram& r : m.runs)
    if (!r.why_not.empty()) return r.kernel + ": " + r.why_not;
  return "no run of this problem with counters";
}

// The three quantities side by side: requests to global memory (the paper's
// HBM accesses), the DRAM bytes the L2 model lets through, and the DRAM bytes
// the GPU's counters measured for this problem.
void three_quantities(const AppState& s, const AlgoView& v) {
  const sim::SimResult& r = v.result;
  const sim::L2Result& l2 = r.l2;
  const sim::Traffic req = r.total.level(Level::HBM), req_now = v.snap.cumulative.level(Level::HBM);
  const analysis::MeasuredLookup measured =
      s.bench.have_results ? analysis::measured_dram(s.bench.results, s.bench.source, s.model.problem, v.algo)
                           : analysis::MeasuredLookup{};
  const analysis::MeasuredDram* m = analysis::first_measured(measured);
  const std::string why_none = measured_why_none(s, measured);

  if (ImGui::BeginTable("three", 4, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 5.2f);
    // Each column as wide as its heading or a number, whichever is wider: widths
    // taken from the content would be zero in a table's first frame, its numbers
    // cut to a glyph.
    const auto column = [](const char* name) {
      const float w = std::max(ImGui::CalcTextSize(name).x, ImGui::CalcTextSize("00.0 GB").x);
      ImGui::TableSetupColumn(name, ImGuiTableColumnFlags_WidthStretch, w);
    };
    column("requests");
    column(l2.modelled ? "DRAM (L2 model)" : "DRAM (no L2)");
    column("DRAM measured");
    ImGui::TableHeadersRow();
    const double mr = m ? static_cast<double>(m->read_bytes) : 0, mw = m ? static_cast<double>(m->write_bytes) : 0;
    ImGui::TableNextRow();
    cell("read", true);
    cell(gb(bytes_d(req.read_bytes)));
    cell(gb(bytes_d(r.dram_read_bytes())));
    cell(m ? gb(mr) : "—", !m);
    ImGui::TableNextRow();
    cell("write", true);
    cell(gb(bytes_d(req.write_bytes)));
    cell(gb(bytes_d(r.dram_write_bytes())));
    cell(m ? gb(mw) : "—", !m);
    ImGui::TableNextRow();
    cell("total", true);
    cell(gb(bytes_d(req.bytes())));
    cell(gb(bytes_d(r.dram_bytes())));
    cell(m ? gb(mr + mw) : "—", !m);
    if (l2.modelled) {
      ImGui::TableNextRow();
      cell("L2 hits", true);
      cell("");
      cell(fmt_fixed(100.0 * l2.read_hit_rate(), 1, "hit rate") + "% of reads");
      cell("");
    }
    ImGui::TableNextRow();
    cell("reads so far", true);
    cell(gb(bytes_d(req_now.read_bytes)));
    cell(v.snap.l2.has_reads ? gb(v.snap.l2.dram_read_bytes) : "totals only", !v.snap.l2.has_reads);
    if (!v.snap.l2.has_reads && ImGui::IsItemHovered()) ImGui::SetTooltip("%s", v.snap.l2.reads_why_not.c_str());
    cell("");
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(0);
  if (!l2.modelled) ImGui::TextColored(color_warning(), "L2 not modelled: %s", l2.why_not.c_str());
  if (!m) {
    ImGui::TextColored(color_note(), "measured: %s", why_none.c_str());
  } else {
    size_t with_counters = 0;
    for (const analysis::MeasuredDram& row : measured.runs) {
      if (!row.measured) {
        ImGui::TextColored(color_dim(), "%s: %s", row.kernel.c_str(), row.why_not.c_str());
        continue;
      }
      ++with_counters;
      const double got = static_cast<double>(row.read_bytes + row.write_bytes);
      if (row.has_error) {
        const double predicted = static_cast<double>(row.predicted_read_bytes + row.predicted_write_bytes);
        const double target = analysis::dram_target(v.algo);
        ImGui::TextColored(std::abs(row.error) <= target ? color_good() : color_warning(),
                           "%s: %s measured, %s predicted for its launch (%s%%, target ±%s%%)", row.kernel.c_str(),
                           gb(got).c_str(), gb(predicted).c_str(), fmt_fixed(100 * row.error, 1, "dram error").c_str(),
                           fmt_fixed(100 * target, 0, "dram target").c_str());
      } else {
        ImGui::TextColored(color_note(), "%s: %s measured", row.kernel.c_str(), gb(got).c_str());
      }
    }
    if (with_counters > 1)
      ImGui::TextColored(color_dim(), "the column shows %s, the first of %zu kernels modelled as %s", m->kernel.c_str(),
                         with_counters, std::string(sim::to_string(v.algo)).c_str());
  }
  ImGui::PopTextWrapPos();
}

void algo_counters(const AppState& s, const AlgoView& v, double bar_max, const AlgoView* reference) {
  const sim::Counters& cum = v.snap.cumulative;
  const sim::Counters& tot = v.result.total;
  const sim::HardwareModel& hw = s.model.hw;
  if (v.snap.cumulative_overflow)
    ImGui::TextColored(color_error(), "cumulative counts overflow 64 bits for all heads: showing one head");

  three_quantities(s, v);

  ImGui::TextColored(color_dim(), "requests per tensor (bar: to the cursor, of the total)");
  if (ImGui::BeginTable("hbm", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 2.2f);
    ImGui::TableSetupColumn("read", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("write", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    for (Tensor t : kHbmTensors) {
      const sim::Traffic& a = cum.at(Level::HBM, t);
      const sim::Traffic& b = tot.at(Level::HBM, t);
      if (b.bytes() == 0) continue;
      ImGui::TableNextRow();
      ImGui::TableNextColumn();
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(tensor_ink(t)), "%s", std::string(sim::display_name(t)).c_str());
      ImGui::TableNextColumn();
      bar(bytes_d(a.read_bytes), bytes_d(b.read_bytes), bar_max, tensor_color(t));
      ImGui::TableNextColumn();
      bar(bytes_d(a.write_bytes), bytes_d(b.write_bytes), bar_max, tensor_color(t));
    }
    ImGui::EndTable();
  }

  const sim::Traffic sc = cum.level(Level::SRAM), st = tot.level(Level::SRAM);
  const sim::Traffic lc = cum.level(Level::L2), lt = tot.level(Level::L2);
  if (ImGui::BeginTable("sums", 3, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH)) {
    ImGui::TableSetupColumn("", ImGuiTableColumnFlags_WidthFixed, ImGui::GetFontSize() * 7.5f);
    ImGui::TableSetupColumn("to the cursor", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("total", ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableHeadersRow();
    if (lt.bytes() > 0) row_text("GEMM re-reads (L2)", fmt_bytes(bytes_d(lc.bytes()), "l2"), fmt_bytes(bytes_d(lt.bytes()), "l2"));
    row_text("SRAM r+w", fmt_bytes(bytes_d(sc.bytes()), "sram"), fmt_bytes(bytes_d(st.bytes()), "sram"));
    row_text("FLOPs", fmt_si(static_cast<double>(cum.flops()), "FLOP", "flops"), fmt_si(static_cast<double>(tot.flops()), "FLOP", "flops"));
    row_text("  matmul", fmt_si(static_cast<double>(cum.matmul_flops), "FLOP", "flops"),
             fmt_si(static_cast<double>(tot.matmul_flops), "FLOP", "flops"));
    row_text("  softmax", fmt_si(static_cast<double>(cum.softmax_flops), "FLOP", "flops"),
             fmt_si(static_cast<double>(tot.softmax_flops), "FLOP", "flops"));
    row_text("AI on DRAM", "—", fmt_fixed(v.roof.ai, 1, "ai"));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("FLOPs per DRAM byte (after the L2): what the bound uses");
    row_text("AI on requests", fmt_fixed(v.snap.ai_now, 1, "ai"), fmt_fixed(v.roof.ai_requests, 1, "ai"));
    if (ImGui::IsItemHovered()) ImGui::SetTooltip("FLOPs per byte requested from global memory: the paper's intensity");
    row_text("time ≥ (DRAM)", "—", fmt_ms(v.roof.time_s * 1e3, "time"));
    ImGui::EndTable();
  }
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(v.roof.memory_bound ? color_warning() : color_good(), "%s-bound on %s (AI on DRAM): %s of %s peak",
                     v.roof.memory_bound ? "memory" : "compute", hw.name.c_str(),
                     fmt_si(v.roof.attainable, "FLOP/s", "attainable").c_str(), fmt_si(v.roof.peak_flops, "FLOP/s", "peak").c_str());
  if (reference && reference != &v) {
    const double r = bytes_d(tot.level(Level::HBM).bytes()) / std::max(1.0, bytes_d(reference->result.total.level(Level::HBM).bytes()));
    const double d = bytes_d(v.result.dram_bytes()) / std::max(1.0, bytes_d(reference->result.dram_bytes()));
    ImGui::TextColored(color_note(), "requests %s, DRAM %s those of %s", fmt_ratio(r, "ratio", 3).c_str(),
                       fmt_ratio(d, "ratio", 3).c_str(), std::string(sim::to_string(reference->algo)).c_str());
  }
  ImGui::PopTextWrapPos();
}

}  // namespace

void counters_side_by_side(AppState& s) {
  if (!s.model.valid || s.model.algos.empty()) {
    ImGui::TextColored(color_error(), "No counters: %s", s.model.errors.empty() ? "invalid inputs" : s.model.errors.front().c_str());
    return;
  }
  const AlgoView& a = s.model.algos[0];
  const AlgoView* b = s.model.algos.size() > 1 ? &s.model.algos[1] : nullptr;
  const int columns = b ? 4 : 2;
  if (!ImGui::BeginTable("side_by_side", columns, ImGuiTableFlags_SizingStretchProp | ImGuiTableFlags_BordersInnerH |
                                                      ImGuiTableFlags_RowBg))
    return;
  ImGui::TableSetupColumn("all B·H heads", ImGuiTableColumnFlags_WidthStretch, 1.4f);
  const std::string ta = short_title(a.algo), tb = b ? short_title(b->algo) : "";
  ImGui::TableSetupColumn(ta.c_str(), ImGuiTableColumnFlags_WidthStretch, 1.0f);
  if (b) {
    ImGui::TableSetupColumn(tb.c_str(), ImGuiTableColumnFlags_WidthStretch, 1.0f);
    ImGui::TableSetupColumn("ratio", ImGuiTableColumnFlags_WidthStretch, 0.6f);
  }
  ImGui::TableHeadersRow();
  // One quantity: its value for each algorithm and the second over the first.
  auto row = [&](const char* name, double va, double vb, const std::function<std::string(double)>& fmt) {
    ImGui::TableNextRow();
    cell(name, true);
    cell(fmt(va));
    if (!b) return;
    cell(fmt(vb));
    cell(va > 0 && vb >= 0 ? fmt_ratio(vb / va, "counter ratio") : "—", true);
  };
  auto bytes = [](double v) { return gb(v); };
  auto flops = [](double v) { return fmt_si(v, "FLOP", "flops"); };
  const sim::SimResult& ra = a.result;
  const sim::SimResult* rb = b ? &b->result : nullptr;
  auto level = [](const sim::SimResult* r, Level l) { return r ? r->total.level(l) : sim::Traffic{}; };
  // The totals first — requests, DRAM, SRAM, FLOPs, intensity, the bound: what
  // a lecture's point names — then each tensor's requests, as many as the stage
  // has room for (the rest said in one row).
  row("requests", bytes_d(level(&ra, Level::HBM).bytes()), bytes_d(level(rb, Level::HBM).bytes()), bytes);
  row("  read", bytes_d(level(&ra, Level::HBM).read_bytes), bytes_d(level(rb, Level::HBM).read_bytes), bytes);
  row("  write", bytes_d(level(&ra, Level::HBM).write_bytes), bytes_d(level(rb, Level::HBM).write_bytes), bytes);
  row("DRAM (L2 model)", bytes_d(ra.dram_bytes()), rb ? bytes_d(rb->dram_bytes()) : 0, bytes);
  // With a results file open, what its counters measured for this problem,
  // beside the model: a lecture that says "measured" shows it.
  std::string measured_note;
  if (s.bench.have_results) {
    // Each algorithm's first run with counters: its bytes, and the model's
    // bytes for the launch that ran (its CTAs per SM may differ from the
    // model's own launch above, and the L2 sees more heads at once).
    struct Measured {
      double bytes = -1, launch_model = -1;
      std::string kernel, why;
    };
    const auto measured_of = [&](const AlgoView& v) {
      Measured out;
      const analysis::MeasuredLookup m = analysis::measured_dram(s.bench.results, s.bench.source, s.model.problem, v.algo);
      if (const analysis::MeasuredDram* d = analysis::first_measured(m)) {
        out.bytes = static_cast<double>(d->read_bytes + d->write_bytes);
        out.kernel = d->kernel;
        if (d->has_error) out.launch_model = static_cast<double>(d->predicted_read_bytes + d->predicted_write_bytes);
      } else {
        out.why = measured_why_none(s, m);
      }
      return out;
    };
    const Measured ma = measured_of(a), mb = b ? measured_of(*b) : Measured{};
    ImGui::TableNextRow();
    cell("DRAM measured", true);
    cell(ma.bytes >= 0 ? bytes(ma.bytes) : "—", ma.bytes < 0);
    if (b) {
      cell(mb.bytes >= 0 ? bytes(mb.bytes) : "—", mb.bytes < 0);
      cell(ma.bytes > 0 && mb.bytes >= 0 ? fmt_ratio(mb.bytes / ma.bytes, "counter ratio") : "—",
           true);
    }
    if (ma.bytes < 0 || (b && mb.bytes < 0)) {
      measured_note = "DRAM measured: " + (ma.bytes < 0 ? ma.why : mb.why);
    } else {
      std::string launch;
      for (const Measured* m : {&ma, b ? &mb : nullptr})
        if (m && m->launch_model >= 0) launch += (launch.empty() ? "" : ", ") + m->kernel + " " + bytes(m->launch_model);
      measured_note = "DRAM measured: the GPU's counters, " + std::filesystem::path(s.bench.source).filename().string() +
                      (launch.empty() ? "" : "; the model for each kernel's own launch: " + launch);
    }
  }
  row("SRAM r+w", bytes_d(level(&ra, Level::SRAM).bytes()), bytes_d(level(rb, Level::SRAM).bytes()), bytes);
  row("FLOPs (exact)", static_cast<double>(ra.total.flops()), rb ? static_cast<double>(rb->total.flops()) : 0, flops);
  row("AI (FLOP/B)", a.roof.ai, b ? b->roof.ai : 0, [](double v) { return fmt_fixed(v, 1, "ai"); });
  row("lower bound", a.roof.time_s * 1e3, b ? b->roof.time_s * 1e3 : 0, [](double v) { return fmt_ms(v, "bound"); });
  row("to the cursor", bytes_d(a.snap.cumulative.level(Level::HBM).bytes()),
      b ? bytes_d(b->snap.cumulative.level(Level::HBM).bytes()) : 0, bytes);
  // The tensors that move the most bytes first (S and P of standard attention,
  // K and V re-read by FlashAttention-2): when the stage has room for only a
  // few rows, those are the ones a point is about.
  std::vector<Tensor> tensors;
  for (Tensor t : kHbmTensors)
    if (ra.total.at(Level::HBM, t).bytes() > 0 || (rb && rb->total.at(Level::HBM, t).bytes() > 0)) tensors.push_back(t);
  const auto most = [&](Tensor t) {
    return std::max(ra.total.at(Level::HBM, t).bytes(), rb ? rb->total.at(Level::HBM, t).bytes() : 0);
  };
  std::stable_sort(tensors.begin(), tensors.end(), [&](Tensor x, Tensor y) { return most(x) > most(y); });
  const float row_h = ImGui::GetTextLineHeight() + 2 * ImGui::GetStyle().CellPadding.y;
  const float bottom = ImGui::GetWindowPos().y + ImGui::GetWindowHeight() - ImGui::GetStyle().WindowPadding.y;
  // Room for the rows left, the footnote under the table, and a row saying what was left out.
  const float room = bottom - ImGui::GetCursorScreenPos().y - row_h -
                     ImGui::GetTextLineHeightWithSpacing() * (measured_note.empty() ? 1 : 3);
  // `room` keeps a row for "+ N more": that row is free for a tensor when all of them fit.
  const size_t fit = room <= 0 ? 0 : static_cast<size_t>(room / row_h);
  const size_t fit_all = room + row_h <= 0 ? 0 : static_cast<size_t>((room + row_h) / row_h);
  const size_t shown = tensors.size() <= fit_all ? tensors.size() : fit;
  for (size_t k = 0; k < shown; ++k) {
    const Tensor t = tensors[k];
    const double xa = bytes_d(ra.total.at(Level::HBM, t).bytes()), xb = rb ? bytes_d(rb->total.at(Level::HBM, t).bytes()) : 0;
    const std::string name = "  " + std::string(sim::display_name(t));
    row(name.c_str(), xa, xb, bytes);
  }
  if (shown < tensors.size()) {
    ImGui::TableNextRow();
    cell("  + " + std::to_string(tensors.size() - shown) + " more tensors", true);
  }
  ImGui::EndTable();
  ImGui::TextColored(color_dim(), "%s", b ? "ratio: the second algorithm over the first" : "one algorithm shown");
  if (!measured_note.empty()) {
    ImGui::PushTextWrapPos(0);
    ImGui::TextColored(color_dim(), "%s", measured_note.c_str());
    ImGui::PopTextWrapPos();
  }
}

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
  // What the three columns of each algorithm are, once.
  ImGui::PushTextWrapPos(0);
  ImGui::TextColored(color_dim(), "requests: the paper's HBM accesses, every tile load and store the loop nest issues.");
  ImGui::TextColored(color_dim(), "DRAM (L2 model): what the L2 model lets through, misses and written-back lines.");
  ImGui::TextColored(color_dim(), "DRAM measured: counted by the GPU's DRAM counters (CUPTI) in a run of this problem.");
  ImGui::TextColored(color_dim(), "reads so far: to the cursor; DRAM from the first head's L2 trace × B·H. Writes leave "
                                  "the L2 when it evicts them: totals only.");
  ImGui::PopTextWrapPos();
  // One bar scale for every algorithm, so their bars compare.
  double bar_max = 0;
  for (const AlgoView& v : s.model.algos)
    for (Tensor t : kHbmTensors) {
      const sim::Traffic& b = v.result.total.at(Level::HBM, t);
      bar_max = std::max({bar_max, bytes_d(b.read_bytes), bytes_d(b.write_bytes)});
    }
  // Two algorithms: their totals side by side first, with the ratio, so that
  // comparing them needs no scrolling; each one's detail below.
  if (s.model.algos.size() > 1 && ImGui::CollapsingHeader("Side by side##counters", ImGuiTreeNodeFlags_DefaultOpen))
    counters_side_by_side(s);
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
