// The Concepts window, as Dear ImGui's demo is its documentation: one small
// function per idea, each with the current problem's numbers (from the model)
// and the docs page that explains it.
#include <imgui.h>

#include <cmath>

#include "state/format.hpp"
#include "draw/math_view.hpp"
#include "model/model.hpp"
#include "panels.hpp"
#include "draw/theme.hpp"

namespace flashlab::gui {

namespace {

void docs_link(const char* page) { ImGui::TextColored(color_link(), "→ read more: %s", page); }

bool shown(const AppState& s, sim::Algorithm a) {
  for (const AlgoView& v : s.model.algos)
    if (v.algo == a) return true;
  return false;
}

void concept_online_softmax(const AppState& s) {
  math_text("softmax(x)_{k} = e^{x_k − m} / ℓ with m = max x and ℓ = Σ e^{x − m}. FlashAttention never holds "
            "a whole row of S: it keeps a running max m_i and a running sum ℓ_i per row, and when a new key "
            "block raises the max it rescales what it has by e^{m_old − m_new}. The result is exact, not "
            "an approximation.",
            ImGui::GetStyleColorVec4(ImGuiCol_Text));
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
  math_text("Q is cut into T_r = ⌈N/B_r⌉ row blocks Q_i, K and V into T_c = ⌈N/B_c⌉ blocks K_j, V_j, so that "
            "the tiles of one step fit in SRAM of size M. The paper's rule is B_c = ⌈M/4d⌉, "
            "B_r = min(B_c, d) with M counted in elements. FA1 loops over K_j outside and Q_i inside; "
            "FA2 swaps the loops so O_i stays on chip.",
            ImGui::GetStyleColorVec4(ImGuiCol_Text));
  if (s.model.valid) {
    const sim::SimResult& r = s.model.algos[0].result;
    ImGui::Bullet();
    math_textf(ImGui::GetStyleColorVec4(ImGuiCol_Text), "now: B_r × B_c = %lld × %lld, T_r × T_c = %s × %s, SRAM peak %s of %s",
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
      ImGui::TextWrapped("%s: %s of requests to global memory (exact)", std::string(sim::to_string(v.algo)).c_str(),
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
                     "that crosses the DRAM interface (after the L2, as the L2 model predicts it). Left of the ridge "
                     "point (peak / bandwidth) it is memory-bound. Attention with materialised S has low AI; "
                     "FlashAttention raises it by not writing S and P.");
  if (s.model.valid) {
    const analysis::RooflineEstimate& r = s.model.algos[0].roof;
    ImGui::Bullet();
    ImGui::TextWrapped("%s: ridge %s FLOP/B (%s over %s)", s.model.hw.name.c_str(), fmt_fixed(r.ridge, 0, "concept ridge").c_str(),
                      fmt_si(r.peak_flops, "FLOP/s", "concept peak").c_str(), fmt_si(r.bandwidth, "B/s", "concept bw").c_str());
    for (const AlgoView& v : s.model.algos) {
      ImGui::Bullet();
      ImGui::TextWrapped("%s: AI on DRAM %s FLOP/B → %s-bound (on requests, the paper's count: %s FLOP/B)",
                         std::string(sim::to_string(v.algo)).c_str(), fmt_fixed(v.roof.ai, 1, "concept ai").c_str(),
                         v.roof.memory_bound ? "memory" : "compute", fmt_fixed(v.roof.ai_requests, 1, "concept ai").c_str());
    }
  }
  docs_link("docs/user-guide.md#roofline");
}

void concept_l2(const AppState& s) {
  ImGui::TextWrapped("The paper counts two levels, SRAM and HBM: every tile the loop nest loads or stores is an HBM "
                     "access. On a GPU those requests go to the L2 first (60 MB on the H200), and only its misses and "
                     "the dirty lines it writes back reach DRAM. FlashAttention re-reads K_j and V_j once per row "
                     "block Q_i, but the thread blocks (CTAs) of one wave walk K_j together: one brings a tile into "
                     "the L2, the others find it there. So FlashAttention-2 reads little more than Q, K and V from "
                     "DRAM, while the paper's count grows with T_r.");
  ImGui::TextWrapped("That holds while K and V of a head stay small beside the L2. When they approach it (32–64 MiB "
                     "at N = 128K), CTAs that drift apart over thousands of key blocks evict what the laggards still "
                     "need, and DRAM reads climb.");
  if (s.model.valid) {
    for (const AlgoView& v : s.model.algos) {
      ImGui::Bullet();
      if (v.result.l2.modelled)
        ImGui::TextWrapped("%s now: %s requested, %s predicted from DRAM (%s%% of reads hit the L2)",
                           std::string(sim::to_string(v.algo)).c_str(),
                           fmt_bytes(v.roof.request_bytes, "concept l2").c_str(), fmt_bytes(v.roof.dram_bytes, "concept l2").c_str(),
                           fmt_fixed(100.0 * v.result.l2.read_hit_rate(), 1, "concept l2").c_str());
      else
        ImGui::TextWrapped("%s now: L2 not modelled (%s)", std::string(sim::to_string(v.algo)).c_str(),
                           v.result.l2.why_not.c_str());
    }
    if (s.model.hw.l2_bytes > 0) {
      ImGui::Bullet();
      ImGui::TextWrapped("K and V of one head: %s, beside an L2 of %s on %s",
                         sim::bytes_iec(static_cast<double>(s.model.kv_head_bytes)).c_str(),
                         sim::bytes_iec(static_cast<double>(s.model.hw.l2_bytes)).c_str(), s.model.hw.name.c_str());
    }
  }
  ImGui::TextColored(color_note(), "Measured on the H200 (CUPTI DRAM counters, fp16, 128k tokens, hidden 512):");
  ImGui::Bullet();
  ImGui::TextWrapped("fa2_tc, B 32, H 8, N 4096, d 64: 0.403 GB read, as the L2 model predicts (0.403 GB): Q, K and V "
                     "once each.");
  ImGui::Bullet();
  ImGui::TextWrapped("fa2_tc, B 1, H 8, N 128K, d 64: 1.987 GB read measured, 0.581 GB predicted (read + write: −67%%): one head's K "
                     "and V (32 MiB) near the L2, and the CTAs no longer in step.");
  ImGui::Bullet();
  ImGui::TextWrapped("Over the validate sweep the model is within target at 18 of 20 points for fa2_tc (median error "
                     "0.5%%), 20 of 20 for fa1 (0.6%%, counting the O_i its kernel keeps in fp32 between launches) "
                     "and 13 of 14 for naive (0.1%%).");
  docs_link("docs/model.md §7b and docs/results/h200-validate.txt");
}

void concept_backward(const AppState& s) {
  math_text("Training needs dQ, dK and dV from dO. Standard attention's backward reads P back from HBM and writes dP "
            "and dS there: Θ(N²) per head again, and the forward must keep P until then. FlashAttention keeps only "
            "O and the logsumexp L_i, and recomputes S_ij and P_ij = exp(S_ij − L_i) block by block: five matrix "
            "products per block instead of two (S again, dV_j += P_ijᵀ dO_i, dP_ij = dO_i V_jᵀ, dQ_i += dS_ij K_j, "
            "dK_j += dS_ijᵀ Q_i), which is why the benchmark convention counts the backward as 2.5 × the forward. "
            "FlashAttention-2 runs one thread block per K_j, V_j: dK_j and dV_j add up on chip, dQ_i is added to in "
            "global memory from every block.",
            ImGui::GetStyleColorVec4(ImGuiCol_Text));
  if (s.model.valid && !s.model.algos.empty()) {
    const sim::Algorithm a = s.model.algos[0].algo;
    try {
      const sim::TrainingStepMemory m = sim::training_step_memory(a, s.model.problem);
      std::string saved;
      for (const sim::TensorMemory& t : m.saved) saved += (saved.empty() ? "" : ", ") + std::string(sim::display_name(t.tensor));
      ImGui::Bullet();
      math_text(std::string(sim::to_string(sim::forward_of(a))) + " now: the forward keeps " + saved + " (" +
                    sim::bytes_iec(static_cast<double>(m.saved_bytes())) + ") for the backward, whose peak is " +
                    sim::bytes_iec(static_cast<double>(m.backward_peak_bytes)),
                ImGui::GetStyleColorVec4(ImGuiCol_Text));
    } catch (const std::exception&) {
      // an algorithm without a backward pair: nothing to add
    }
  }
  docs_link("docs/model.md §3b and the scenario lecture-backward");
}

void concept_hopper(const AppState& s) {
  math_text("The loop nest is FlashAttention-2's and so is the HBM traffic; what changed is who moves the tiles and "
            "who waits. TMA: one thread of a producer warp asks the tensor memory accelerator to copy a whole K_j or "
            "V_j tile into shared memory, and an mbarrier says when it has landed, so the copies of K_{j+1}, V_{j+1} "
            "run while S_ij is computed, in a ring of stages. wgmma: a warpgroup (four warps, 64 rows of Q_i) issues "
            "S_ij = Q_i K_jᵀ and O_i += P̃_ij V_j straight from shared memory, asynchronously, and waits only when "
            "it needs the result. Warp specialisation: the producer keeps few registers (setmaxnreg) and the "
            "consumer warpgroups take the rest; while one runs its softmax (exp2 on 16 units per SM), another's "
            "products run on the tensor cores.",
            ImGui::GetStyleColorVec4(ImGuiCol_Text));
  bool drawn = false;
  for (const AlgoView& v : s.model.algos)
    if (v.pipeline) {
      const sim::HopperPipeline& h = *v.pipeline;
      ImGui::Bullet();
      math_text("now, d = " + std::to_string(h.config.head_dim) + ": a warpgroup's two products take " +
                    sim::fixed(h.gemm_ns_per_visit * 1e-3, 2) + " µs per K_j, V_j, its softmax " +
                    sim::fixed(h.softmax_ns_per_visit * 1e-3, 2) + " µs (" +
                    std::to_string(static_cast<int>(std::lround(100 * h.softmax_ns_per_visit / h.gemm_ns_per_visit))) +
                    "%); " + std::to_string(h.config.consumers()) + " warpgroups keep the tensor cores busy " +
                    std::to_string(static_cast<int>(std::lround(100 * h.tensor_utilisation()))) +
                    "% of the CTA's time in the model",
                ImGui::GetStyleColorVec4(ImGuiCol_Text));
      drawn = true;
      break;
    }
  if (!drawn)
    ImGui::TextColored(color_dim(), "Choose FlashAttention-2 and the Hopper rung's tiles (d = 64 or 128) to see the schedule.");
  ImGui::TextWrapped("Measured on an H200 (fp16, the 16k-token grid): fa3_hopper 266–602 TFLOP/s, 0.79–1.20× SDPA's "
                     "cuDNN backend; at d = 128 1.48–1.88× fa2_tc on mma.sync. At d = 64 the exponentials take about "
                     "as long as the products, and the overlap decides.");
  docs_link("docs/model.md (the Hopper schedule), kernels/README.md and the scenario lecture-hopper");
}

void concept_ring(const AppState& s) {
  math_text("Sequence-parallel ring attention (Liu et al. 2023): P GPUs each hold a chunk of the sequence, its "
            "Q, K, V and O. At each of P steps a GPU computes its queries against the K, V chunk it holds while "
            "that chunk travels on to the next GPU and the next one arrives; the partial outputs merge through "
            "the logsumexp, as the online softmax merges key blocks on one GPU. Communication hides under compute "
            "while a step's compute takes longer than moving a chunk over the link. Under the causal mask the "
            "contiguous layout leaves GPU 0 idle after its first step while the last GPU computes at every step; "
            "the zig-zag layout (GPU r holds chunks r and 2P − 1 − r) gives every GPU the same work. The backward "
            "is a second ring that carries K, V and the partial dK, dV, which come home after P steps.",
            ImGui::GetStyleColorVec4(ImGuiCol_Text));
  const RingModel& m = s.ring.model;
  if (m.valid) {
    const sim::AttentionProblem& p = m.simulation.problem;
    const sim::RingPassResult& f = m.simulation.forward;
    const sim::RingPartition& part = m.simulation.partition;
    ImGui::Bullet();
    math_text("now: " + std::to_string(p.gpus()) + " GPUs, " +
                  std::string(sim::ring_layout_info(p.layout()).words) + ", " +
                  std::to_string(part.chunks.size()) + " chunks of about " +
                  fmt_count(p.seq_q / static_cast<sim::i64>(std::max<size_t>(1, part.chunks.size()))) +
                  " tokens; a GPU receives up to " + sim::bytes_iec(static_cast<double>(f.bytes_per_step)) +
                  " of K, V per step; the forward takes " + fmt_ms(f.time_s * 1e3, "concept ring") + ", " +
                  fmt_ms(f.exposed_comm_s * 1e3, "concept ring") + " of it waiting for data; scaling efficiency " +
                  fmt_fixed(100 * m.simulation.scaling_efficiency, 0, "concept ring") + "% against one GPU",
              ImGui::GetStyleColorVec4(ImGuiCol_Text));
  } else {
    ImGui::TextColored(color_dim(), "Across GPUs (F6) shows the ring: the timeline per GPU and the step-through.");
  }
  docs_link("docs/multi-gpu.md and the scenario lecture-ring");
}

}  // namespace

void panel_concepts(AppState& s) {
  ImGui::PushTextWrapPos(0);  // bullets and links wrap with the window
  ImGui::TextColored(color_dim(), "One idea per section, with the numbers of the problem on screen.");
  if (ImGui::CollapsingHeader("Online softmax", ImGuiTreeNodeFlags_DefaultOpen)) concept_online_softmax(s);
  if (ImGui::CollapsingHeader("Tiling", ImGuiTreeNodeFlags_DefaultOpen)) concept_tiling(s);
  if (ImGui::CollapsingHeader("IO complexity", ImGuiTreeNodeFlags_DefaultOpen)) concept_io_complexity(s);
  if (ImGui::CollapsingHeader("Roofline", ImGuiTreeNodeFlags_DefaultOpen)) concept_roofline(s);
  if (ImGui::CollapsingHeader("Why the L2 matters", ImGuiTreeNodeFlags_DefaultOpen)) concept_l2(s);
  if (ImGui::CollapsingHeader("The backward pass", ImGuiTreeNodeFlags_DefaultOpen)) concept_backward(s);
  if (ImGui::CollapsingHeader("What Hopper changed: TMA, wgmma, warp specialisation", ImGuiTreeNodeFlags_DefaultOpen))
    concept_hopper(s);
  if (ImGui::CollapsingHeader("Attention across GPUs: the ring", ImGuiTreeNodeFlags_DefaultOpen)) concept_ring(s);
  ImGui::PopTextWrapPos();
}

}  // namespace flashlab::gui
