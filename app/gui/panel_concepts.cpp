// The Concepts window, as Dear ImGui's demo is its documentation: one small
// function per idea, each with the current problem's numbers (from the model)
// and the docs page that explains it.
#include <imgui.h>

#include "format.hpp"
#include "model.hpp"
#include "panels.hpp"
#include "theme.hpp"

namespace flashlab::gui {

namespace {

void docs_link(const char* page) { ImGui::TextColored(ImVec4(0.5f, 0.75f, 1.0f, 1.0f), "→ read more: %s", page); }

bool shown(const AppState& s, sim::Algorithm a) {
  for (const AlgoView& v : s.model.algos)
    if (v.algo == a) return true;
  return false;
}

void concept_online_softmax(const AppState& s) {
  ImGui::TextWrapped("softmax(x)_k = e^{x_k − m} / ℓ with m = max x and ℓ = Σ e^{x − m}. FlashAttention never holds "
                     "a whole row of S: it keeps a running max m_i and a running sum ℓ_i per row, and when a new key "
                     "block raises the max it rescales what it has by e^{m_old − m_new}. The result is exact, not "
                     "an approximation.");
  for (const AlgoView& v : s.model.algos)
    if (v.snap.has_softmax && !v.snap.softmax.rows.empty()) {
      const auto& r = v.snap.softmax.rows.front();
      ImGui::Bullet();
      ImGui::TextWrapped("%s now: row %lld has m = %s, ℓ = %s after %lld of %lld key blocks", std::string(sim::to_string(v.algo)).c_str(),
                        static_cast<long long>(r.row), fmt_stat(r.m, "concept m").c_str(), fmt_stat(r.l, "concept l").c_str(),
                        static_cast<long long>(v.snap.softmax.visits), static_cast<long long>(v.snap.softmax_visits_total));
    }
  ImGui::TextColored(color_dim(), "Watch the rescale column of the tiling view turn orange when the max moves.");
  docs_link("docs/user-guide.md#online-softmax");
}

void concept_tiling(const AppState& s) {
  ImGui::TextWrapped("Q is cut into T_r = ⌈N/B_r⌉ row blocks Q_i, K and V into T_c = ⌈N/B_c⌉ blocks K_j, V_j, so that "
                     "the tiles of one step fit in SRAM of size M. The paper's rule is B_c = ⌈M/4d⌉, "
                     "B_r = min(B_c, d) with M counted in elements. FA1 loops over K_j outside and Q_i inside; "
                     "FA2 swaps the loops so O_i stays on chip.");
  if (s.model.valid) {
    const sim::SimResult& r = s.model.algos[0].result;
    ImGui::Bullet();
    ImGui::TextWrapped("now: B_r × B_c = %lld × %lld, T_r × T_c = %s × %s, SRAM peak %s of %s",
                      static_cast<long long>(r.tiles.Br), static_cast<long long>(r.tiles.Bc), fmt_count(r.T_r).c_str(),
                      fmt_count(r.T_c).c_str(), sim::bytes_iec(static_cast<double>(r.sram_peak_bytes)).c_str(),
                      sim::bytes_iec(static_cast<double>(r.sram_capacity_bytes)).c_str());
  }
  docs_link("docs/user-guide.md#tiling and docs/model.md (block-size rule)");
}

void concept_io_complexity(const AppState& s) {
  ImGui::TextWrapped("Standard attention reads and writes S and P: Θ(Nd + N²) HBM accesses. FlashAttention needs "
                     "Θ(N²d²/M) (Theorem 2): for d² much smaller than M, many times fewer. Counts here are exact "
                     "for the loop nests as written, beside the Θ curves in the HBM vs N / M / d tabs.");
  const sim::Algorithm standard = analysis::standard_attention();
  if (s.model.valid) {
    const double theta_std = s.model.theta_standard_bytes, theta_fl = s.model.theta_flash_bytes;
    ImGui::Bullet();
    ImGui::TextWrapped("now: Nd + N² → %s, N²d²/M → %s (constant 1)", fmt_bytes(theta_std, "concept theta").c_str(),
                      fmt_bytes(theta_fl, "concept theta").c_str());
    for (const AlgoView& v : s.model.algos) {
      ImGui::Bullet();
      ImGui::TextWrapped("%s: %s of HBM traffic (exact)", std::string(sim::to_string(v.algo)).c_str(),
                         fmt_bytes(static_cast<double>(v.result.total.level(sim::Level::HBM).bytes()), "concept hbm").c_str());
    }
  }
  if (!shown(s, standard))
    ImGui::TextColored(color_dim(), "Choose '%s' as one of the pair to compare directly.",
                       short_title(standard).c_str());
  docs_link("docs/user-guide.md#io-complexity and docs/model.md (counts per algorithm line)");
}

void concept_roofline(const AppState& s) {
  ImGui::TextWrapped("A kernel can go no faster than min(peak FLOP/s, AI × bandwidth), where AI is its FLOPs per byte "
                     "of HBM traffic. Left of the ridge point (peak / bandwidth) it is memory-bound. Attention with "
                     "materialised S has low AI; FlashAttention raises it by not writing S and P.");
  if (s.model.valid) {
    const analysis::RooflineEstimate& r = s.model.algos[0].roof;
    ImGui::Bullet();
    ImGui::TextWrapped("%s: ridge %s FLOP/B (%s over %s)", s.model.hw.name.c_str(), fmt_fixed(r.ridge, 0, "concept ridge").c_str(),
                      fmt_si(r.peak_flops, "FLOP/s", "concept peak").c_str(), fmt_si(r.bandwidth, "B/s", "concept bw").c_str());
    for (const AlgoView& v : s.model.algos) {
      ImGui::Bullet();
      ImGui::TextWrapped("%s: AI %s FLOP/B → %s-bound", std::string(sim::to_string(v.algo)).c_str(),
                         fmt_fixed(v.roof.ai, 1, "concept ai").c_str(), v.roof.memory_bound ? "memory" : "compute");
    }
  }
  docs_link("docs/user-guide.md#roofline");
}

}  // namespace

void panel_concepts(AppState& s) {
  ImGui::PushTextWrapPos(0);  // bullets and links wrap with the window
  ImGui::TextColored(color_dim(), "One idea per section, with the numbers of the problem on screen.");
  if (ImGui::CollapsingHeader("Online softmax", ImGuiTreeNodeFlags_DefaultOpen)) concept_online_softmax(s);
  if (ImGui::CollapsingHeader("Tiling", ImGuiTreeNodeFlags_DefaultOpen)) concept_tiling(s);
  if (ImGui::CollapsingHeader("IO complexity", ImGuiTreeNodeFlags_DefaultOpen)) concept_io_complexity(s);
  if (ImGui::CollapsingHeader("Roofline", ImGuiTreeNodeFlags_DefaultOpen)) concept_roofline(s);
  ImGui::PopTextWrapPos();
}

}  // namespace flashlab::gui
