#include "sim/support.hpp"
#include "flashlab/sim/ring/ring_problem.hpp"

using namespace flashlab::sim;

TEST_CASE("valid problems have no findings", "[sim][problem]") {
  AttentionProblem p;
  CHECK(validate(p).empty());
  p.seq_kv = 77;
  CHECK(validate(p).empty());
  CHECK(describe(p) == "B=1 H=1 N=1024 N_kv=77 d=64 fp16");
}

TEST_CASE("each invalid problem gets one sentence naming the value", "[sim][problem]") {
  auto first = [](AttentionProblem p) {
    const auto e = validate(p);
    return e.empty() ? std::string() : e.front().message;
  };
  // Each case: a default problem made wrong, and what its first sentence says.
  const std::vector<std::pair<void (*)(AttentionProblem&), std::string>> cases = {
      {[](AttentionProblem& p) { p.batch = 0; }, "batch B must be at least 1 (got 0)"},
      {[](AttentionProblem& p) { p.heads = -3; }, "heads H"},
      {[](AttentionProblem& p) { p.seq_q = 0; }, "sequence length N"},
      {[](AttentionProblem& p) { p.head_dim = 0; }, "head dim d"},
      {[](AttentionProblem& p) { p.seq_kv = -1; }, "key/value length"},
      {[](AttentionProblem& p) { p.causal = true; p.seq_kv = 512; }, "causal attention needs seq_kv = seq_q"},
      {[](AttentionProblem& p) { p.seq_q = i64{1} << 31; p.batch = 1 << 20; }, "too large for 64-bit counters"},
      {[](AttentionProblem& p) { p.seq_q = i64{1} << 40; }, "too large"},
  };
  for (const auto& [make_wrong, message] : cases) {
    AttentionProblem p;
    make_wrong(p);
    CHECK_THAT(first(p), Catch::Contains(message));
  }
}

TEST_CASE("the largest problem that validates simulates without overflow", "[sim][problem]") {
  HardwareModel hw;
  hw.name = "big";
  hw.sram_bytes_per_sm = 192 * 1024;
  AttentionProblem p;
  p.seq_q = i64{1} << 22;  // 4M tokens
  p.head_dim = 128;
  p.batch = 4;
  p.heads = 32;
  REQUIRE(validate(p).empty());
  for (Algorithm a : all_algorithms()) {
    const SimResult r = simulate(a, p, hw);
    INFO(to_string(a));
    CHECK(r.ok());
    CHECK(r.method == "closed form");
    // Two GEMMs of 2·N²·d forward; four (materialising) or five (recomputing S) backward.
    const AlgorithmInfo& info = algorithm_info(a);
    const i64 gemms = info.pass == Pass::fwd ? 2 : info.materializes_scores ? 4 : 5;
    CHECK(r.total.matmul_flops == gemms * 2 * p.batch * p.heads * p.seq_q * p.seq_q * p.head_dim);
  }
}

TEST_CASE("one problem type: grouped K/V heads and the parallel part in ==, validate and describe", "[sim][problem]") {
  AttentionProblem p;
  p.heads = 32;
  AttentionProblem q = p;
  q.kv_heads = 32;  // 0 and H are one problem
  CHECK(p == q);
  q.kv_heads = 8;
  CHECK(p != q);
  CHECK(describe(q) == "B=1 H=32 H_kv=8 N=1024 d=64 fp16");
  CHECK(q.h_kv() == 8);
  CHECK(validate(q).empty());
  // The parallel part: absent is one GPU; present, it is part of the problem.
  CHECK(p.gpus() == 1);
  CHECK(!p.backward());
  AttentionProblem r = p;
  r.parallel_part().gpus = 4;
  CHECK(r != p);
  CHECK(same_attention(r, p));
  CHECK(r.gpus() == 4);
  CHECK(r.layout() == RingLayout::zigzag);
  // Each error names its fields.
  AttentionProblem bad = p;
  bad.kv_heads = 64;
  auto e = validate(bad);
  REQUIRE(e.size() == 1);
  CHECK(e[0].message == "H_kv = 64 key/value heads exceed the H = 32 query heads");
  CHECK(e[0].about(ProblemField::kv_heads));
  bad = r;
  bad.parallel_part().gpus = 0;
  e = validate(bad);
  REQUIRE(!e.empty());
  CHECK(e[0].fields == std::vector<ProblemField>{ProblemField::gpus});
  CHECK(e[0].message == "the ring needs 1 to 4096 GPUs, not 0");
  bad = r;
  bad.seq_kv = 512;  // the ring cuts one sequence
  e = validate(bad);
  REQUIRE(e.size() == 1);
  CHECK(e[0].fields == std::vector<ProblemField>{ProblemField::seq_kv});
  bad = r;
  bad.seq_q = 7;  // 8 zig-zag chunks
  e = validate(bad);
  REQUIRE(e.size() == 1);
  CHECK(e[0].about(ProblemField::seq));
  CHECK(e[0].about(ProblemField::gpus));
  // Grouped heads that do not divide do not hide the other reasons.
  bad = r;
  bad.kv_heads = 5;
  bad.seq_q = 7;
  e = validate(bad);
  REQUIRE(e.size() == 2);
  CHECK(e[0].about(ProblemField::kv_heads));
  CHECK(e[1].about(ProblemField::gpus));
  CHECK(problem_field_key(ProblemField::kv_heads) == "kv_heads");
}

TEST_CASE("one pass vocabulary: parsed once, printed once, the ring's passes in its parallel part", "[sim][problem]") {
  for (PassSelection s : {PassSelection::fwd, PassSelection::bwd, PassSelection::fwd_bwd})
    CHECK(parse_pass_selection(to_string(s)) == s);
  CHECK(parse_pass_selection("training") == PassSelection::fwd_bwd);
  CHECK_FALSE(parse_pass_selection("fwd+"));
  CHECK(includes(PassSelection::fwd_bwd, Pass::bwd));
  CHECK_FALSE(includes(PassSelection::fwd, Pass::bwd));
  CHECK(includes(selection_of(Pass::bwd), Pass::bwd));
  AttentionProblem r = default_ring_problem();
  CHECK(r.passes() == PassSelection::fwd);
  CHECK_FALSE(r.backward());
  r.parallel_part().passes = PassSelection::fwd_bwd;
  CHECK(r.backward());
  CHECK(describe(r).substr(describe(r).size() - 9) == ", fwd+bwd");
  CHECK(on_one_gpu(r).passes() == PassSelection::fwd_bwd);
  // The ring's backward needs its forward's O and logsumexp: bwd alone is refused.
  r.parallel_part().passes = PassSelection::bwd;
  const auto e = validate(r);
  REQUIRE(e.size() == 1);
  CHECK(e[0].message == "the ring's backward follows its forward (it needs O and the logsumexp): its passes are fwd or fwd+bwd");
  // One GPU has no passes of its own: its front ends ask for them.
  CHECK(AttentionProblem{}.passes() == PassSelection::fwd);
}
