// The description record says what the loop nest does: the properties the
// front ends read are checked against the emitted events, not restated.
#include <algorithm>
#include <string>
#include <vector>

#include "sim/support.hpp"

using namespace flashlab::sim;

namespace {
// The first event whose result is the row statistic m_i^new (or m_i^(j)).
std::optional<TileEvent> first_max_update(const Schedule& s) {
  struct Find : EventSink {
    std::optional<TileEvent> hit;
    void on_event(const TileEvent& e) override {
      if (!hit && e.kind == EventKind::compute && e.target.tensor == Tensor::m_new) hit = e;
    }
  } f;
  s.emit(f);
  return f.hit;
}
}  // namespace

TEST_CASE("each algorithm's record agrees with its loop nest", "[sim][algorithm]") {
  AttentionProblem p;
  p.seq_q = 200;
  p.head_dim = 32;
  for (bool causal : {false, true}) {
    p.causal = causal;
    for (Algorithm a : all_algorithms()) {
      const AlgorithmInfo& info = algorithm_info(a);
      INFO(info.key << (causal ? " causal" : ""));
      const Schedule s(a, p, {64, 48});
      const Counters c = s.closed_form();
      // Score-sized tensors (S, P forward; P, dP, dS backward) in HBM.
      bool scores_in_hbm = false;
      for (Tensor t : {Tensor::S, Tensor::P, Tensor::dS, Tensor::dP})
        scores_in_hbm = scores_in_hbm || c.at(Level::HBM, t).elements() > 0;
      CHECK(info.materializes_scores == scores_in_hbm);
      const auto update = first_max_update(s);
      CHECK(info.keeps_running_statistics == update.has_value());
      if (update) CHECK(info.statistics_update_line == update->line);
      CHECK(info.statistics_update_line <= static_cast<int>(info.pseudocode.size()));
      // The skipped blocks are exactly the ones wholly above the diagonal: fewer
      // FLOPs than the same algorithm without the mask.
      AttentionProblem full = p;
      full.causal = false;
      const i64 all_blocks = Schedule(a, full, {64, 48}).closed_form().matmul_flops;
      CHECK((c.matmul_flops < all_blocks) == (causal && info.skips_masked_blocks));
      for (int ph = 0; ph < s.phases(); ++ph) CHECK_FALSE(s.phase_title(ph).empty());
      // Every event names a line of the pseudocode.
      struct Lines : EventSink {
        int lo = 1 << 30, hi = 0;
        void on_event(const TileEvent& e) override {
          lo = std::min(lo, e.line);
          hi = std::max(hi, e.line);
        }
      } lines;
      s.emit(lines);
      CHECK(lines.lo >= 1);
      CHECK(lines.hi <= static_cast<int>(info.pseudocode.size()));
      // The record's loop order is the main loop's: most visits run under it.
      i64 under_rows = 0, under_cols = 0;
      for (int ph = 0; ph < s.phases(); ++ph)
        for (i64 o = s.phase_begin(ph); o < s.phase_begin(ph) + s.phase_outer_count(ph); ++o)
          (s.outer_over_rows(ph) ? under_rows : under_cols) += s.visit_count(o);
      CHECK((under_rows > under_cols) == info.outer_over_rows);
      // The pair: a backward algorithm names its forward, and the forward finds it.
      CHECK(forward_of(a) == (info.pass == Pass::fwd ? a : info.forward));
      CHECK(algorithm_info(forward_of(a)).pass == Pass::fwd);
      CHECK(backward_of(a).has_value());
      CHECK(with_pass(a, info.pass) == a);
    }
  }
}

TEST_CASE("algorithms parse by key and by alias, case-insensitively", "[sim][algorithm]") {
  for (Algorithm a : all_algorithms()) {
    const AlgorithmInfo& info = algorithm_info(a);
    CHECK(parse_algorithm(info.key) == a);
    for (std::string_view alias : info.aliases) CHECK(parse_algorithm(alias) == a);
  }
  CHECK(parse_algorithm("FA2") == Algorithm::fa2);
  CHECK(parse_algorithm("flash2") == Algorithm::fa2);
  CHECK(parse_algorithm("naive") == Algorithm::standard);
  CHECK(parse_algorithm("fa2_bwd") == Algorithm::fa2_bwd);
  CHECK(parse_algorithm("flash1-bwd") == Algorithm::fa1_bwd);
  CHECK_FALSE(parse_algorithm("fa3").has_value());
}

TEST_CASE("forward algorithms come first, each with its backward", "[sim][algorithm]") {
  const std::vector<Algorithm>& all = all_algorithms();
  const std::vector<Algorithm>& fwd = algorithms_of(Pass::fwd);
  const std::vector<Algorithm>& bwd = algorithms_of(Pass::bwd);
  REQUIRE(!fwd.empty());
  REQUIRE(bwd.size() == fwd.size());  // a backward for every forward
  CHECK(std::equal(fwd.begin(), fwd.end(), all.begin()));
  CHECK(std::equal(bwd.begin(), bwd.end(), all.begin() + static_cast<std::ptrdiff_t>(fwd.size())));
  for (Algorithm f : fwd) {
    const auto b = backward_of(f);
    REQUIRE(b.has_value());
    CHECK(algorithm_info(*b).pass == Pass::bwd);
    CHECK(forward_of(*b) == f);
    CHECK(with_pass(*b, Pass::fwd) == f);
  }
  CHECK(backward_of(Algorithm::fa2) == Algorithm::fa2_bwd);
  CHECK(backward_of(Algorithm::pytorch) == Algorithm::pytorch_bwd);
}

TEST_CASE("the Hopper rungs run FlashAttention-2's loop nests, the forward and its backward", "[sim][algorithm]") {
  std::vector<Algorithm> runs;
  for (Algorithm a : all_algorithms())
    if (algorithm_info(a).hopper_rung_runs_it) runs.push_back(a);
  REQUIRE(runs.size() == 2);
  CHECK(runs[0] == Algorithm::fa2);
  CHECK(algorithm_info(runs[0]).pass == Pass::fwd);
  CHECK(runs[1] == Algorithm::fa2_bwd);
  CHECK(algorithm_info(runs[1]).pass == Pass::bwd);
  CHECK(forward_of(Algorithm::fa2_bwd) == Algorithm::fa2);
}

// The step-through titles each pass of a materialising algorithm with its
// place: "pass k/n" for the papers' algorithms, eager PyTorch's kernels in
// launch order, where a causal problem's mask kernel moves the later ones up.
TEST_CASE("the materialising algorithms' passes are titled in order", "[sim][algorithm]") {
  struct Titled {
    Algorithm algorithm;
    bool causal;
    std::vector<std::string> titles;
  };
  const Titled t = GENERATE(values<Titled>({
      {Algorithm::standard, true,
       {"pass 1/3: S = QKᵀ, written to HBM", "pass 2/3: P = softmax(S), S read, P written",
        "pass 3/3: O = PV, P read from HBM"}},
      {Algorithm::pytorch, false,
       {"kernel 1: S = Q @ Kᵀ", "kernel 2: S = S·τ", "kernel 3: P = softmax(S)", "kernel 4: O = P @ V"}},
      {Algorithm::pytorch, true,
       {"kernel 1: S = Q @ Kᵀ", "kernel 2: S = S·τ", "kernel 3: mask", "kernel 4: P = softmax(S)",
        "kernel 5: O = P @ V"}},
      {Algorithm::standard_bwd, false,
       {"pass 1/5: dV = Pᵀ dO (outer loop over K_j, V_j), P read from HBM", "pass 2/5: dP = dO Vᵀ, written to HBM",
        "pass 3/5: dS = τ P ∘ (dP − rowsum(P ∘ dP)), P and dP read, dS written",
        "pass 4/5: dQ = dS K, dS read from HBM", "pass 5/5: dK = dSᵀ Q (outer loop over K_j, V_j), dS read from HBM"}},
      {Algorithm::pytorch_bwd, false,
       {"kernel 1: dP = dO @ Vᵀ", "kernel 2: dV = Pᵀ @ dO (outer loop over K_j, V_j)",
        "kernel 3: dS = softmax_backward(dP, P)", "kernel 4: dS = dS·τ", "kernel 5: dQ = dS @ K",
        "kernel 6: dK = dSᵀ @ Q (outer loop over K_j, V_j)"}},
      {Algorithm::pytorch_bwd, true,
       {"kernel 1: dP = dO @ Vᵀ", "kernel 2: dV = Pᵀ @ dO (outer loop over K_j, V_j)",
        "kernel 3: dS = softmax_backward(dP, P)", "kernel 4: dS = dS.masked_fill(mask, 0)", "kernel 5: dS = dS·τ",
        "kernel 6: dQ = dS @ K", "kernel 7: dK = dSᵀ @ Q (outer loop over K_j, V_j)"}},
  }));
  AttentionProblem p;
  p.seq_q = 200;
  p.head_dim = 32;
  p.causal = t.causal;
  const Schedule s(t.algorithm, p, {64, 48});
  INFO(algorithm_info(t.algorithm).key << (t.causal ? " causal" : ""));
  std::vector<std::string> titles;
  for (int ph = 0; ph < s.phases(); ++ph) titles.emplace_back(s.phase_title(ph));
  CHECK(titles == t.titles);
}
