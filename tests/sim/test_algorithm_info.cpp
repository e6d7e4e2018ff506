// The description record says what the loop nest does: the properties the
// front ends read are checked against the emitted events, not restated.
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
      CHECK(info.materializes_scores == (c.at(Level::HBM, Tensor::S).elements() > 0));
      const auto update = first_max_update(s);
      CHECK(info.keeps_running_statistics == update.has_value());
      if (update) CHECK(info.statistics_update_line == update->line);
      CHECK(info.statistics_update_line <= static_cast<int>(info.pseudocode.size()));
      // The skipped blocks are exactly the ones wholly above the diagonal.
      const i64 visits = s.closed_form().matmul_flops;
      CHECK((visits < 4 * 200 * 200 * 32) == (causal && info.skips_masked_blocks));
      for (int ph = 0; ph < s.phases(); ++ph) CHECK_FALSE(s.phase_title(ph).empty());
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
  CHECK_FALSE(parse_algorithm("fa3").has_value());
}
