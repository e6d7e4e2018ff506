// A problem as typed: the one parser behind the window's fields and the
// command line's flags — values, every message in field order, the field's
// name in each, the tiles and SRAM given or not.
#include <catch2/catch.hpp>

#include "flashlab/sim/input/problem_text.hpp"

using namespace flashlab::sim;

namespace {

const ProblemFieldNames kNames{"--batch", "--heads", "--seq", "--seq-kv", "--head-dim", "--dtype", "--sram", "--br", "--bc"};

ProblemText text(const char* batch, const char* heads, const char* seq, const char* head_dim) {
  ProblemText t;
  t.batch = batch;
  t.heads = heads;
  t.seq = seq;
  t.head_dim = head_dim;
  return t;
}

}  // namespace

TEST_CASE("problem text: sizes with suffixes become the problem and the options", "[sim][problem-text]") {
  ProblemText t = text("4", "16", "16K", "128");
  t.dtype = "bf16";
  t.causal = true;
  t.sram = "100KiB";
  t.br = "64";
  t.bc = "32";
  const ParsedProblem r = parse_problem(t, kNames);
  REQUIRE(r.ok());
  CHECK(r.problem.batch == 4);
  CHECK(r.problem.heads == 16);
  CHECK(r.problem.seq_q == 16384);
  CHECK(r.problem.n_kv() == 16384);
  CHECK(r.problem.head_dim == 128);
  CHECK(r.problem.dtype == DType::bf16);
  CHECK(r.problem.causal);
  CHECK(r.options.sram_bytes == 102400);
  REQUIRE(r.options.tiles.has_value());
  CHECK(*r.options.tiles == TileShape{64, 32});
  // Nothing given: the hardware's SRAM and the paper's tile rule.
  const ParsedProblem bare = parse_problem(text("1", "1", "1000", "64"), kNames);
  REQUIRE(bare.ok());
  CHECK(bare.options.sram_bytes == 0);
  CHECK(!bare.options.tiles.has_value());
  ProblemText kv = text("1", "1", "1000", "64");
  kv.seq_kv = "77";
  CHECK(parse_problem(kv, kNames).problem.n_kv() == 77);
}

TEST_CASE("problem text: a whole number past a 64-bit count is too large, not 'not a whole number'", "[sim][problem-text]") {
  const ParsedProblem r = parse_problem(text("1", "1", "99999999999999999999", "9000000T"), kNames);
  REQUIRE(r.errors.size() == 2);
  CHECK(r.errors[0].message == "--seq: '99999999999999999999' is too large (at most 9.2 × 10^18)");
  CHECK(r.errors[1].message == "--head-dim: '9000000T' is too large (at most 9.2 × 10^18)");
  CHECK(parse_problem(text("1", "1", "1.5", "64"), kNames).errors[0].message.find("not a whole number") != std::string::npos);
}

TEST_CASE("problem text: every problem is reported, in field order, naming the field", "[sim][problem-text]") {
  ProblemText t = text("abc", "0", "1.5", "64");
  t.dtype = "fp8";
  t.sram = "-1";
  const ParsedProblem r = parse_problem(t, kNames);
  REQUIRE(r.errors.size() == 5);
  CHECK(r.errors[0].message == "--batch: 'abc' is not a whole number (examples: 1024, 16K, 100KiB)");
  CHECK(r.errors[1].message == "--heads: must be at least 1 (got '0')");
  CHECK(r.errors[2].message == "--seq: '1.5' is not a whole number (examples: 1024, 16K, 100KiB)");
  CHECK(r.errors[3].message == "--dtype: unknown dtype 'fp8' (expected fp16, bf16 or fp32)");
  CHECK(r.errors[4].message == "--sram: must be at least 1 (got '-1')");  // a number, only not a positive one
  // Each parse error says which field it is about; the SRAM's is no problem field.
  CHECK(r.errors[0].fields == std::vector<ProblemField>{ProblemField::batch});
  CHECK(r.errors[1].fields == std::vector<ProblemField>{ProblemField::heads});
  CHECK(r.errors[2].fields == std::vector<ProblemField>{ProblemField::seq});
  CHECK(r.errors[3].fields == std::vector<ProblemField>{ProblemField::dtype});
  CHECK(r.errors[4].fields.empty());
  // The window's names for the same fields.
  const ProblemFieldNames gui{"batch B", "heads H", "sequence length N", "key/value length", "head dim d",
                              "dtype",   "SRAM size M", "B_r", "B_c"};
  const ParsedProblem g = parse_problem(text("1", "1", "12abc", ""), gui);
  REQUIRE(g.errors.size() == 2);
  CHECK(g.errors[0].message == "sequence length N: '12abc' is not a whole number (examples: 1024, 16K, 100KiB)");
  CHECK(g.errors[1].message.rfind("head dim d: ''", 0) == 0);
}

TEST_CASE("problem text: the problem is validated once its fields parse, and tiles go in pairs", "[sim][problem-text]") {
  ProblemText causal = text("1", "1", "1000", "64");
  causal.causal = true;
  causal.seq_kv = "77";
  const ParsedProblem c = parse_problem(causal, kNames);
  REQUIRE(!c.ok());
  CHECK_THAT(c.first(), Catch::Contains("causal attention needs seq_kv = seq_q"));
  const ParsedProblem big = parse_problem(text("1M", "1", "4G", "64"), kNames);
  REQUIRE(!big.ok());
  CHECK_THAT(big.first(), Catch::Contains("64-bit"));
  // Too large: the sizes whose reduction to 1 alone makes it fit. N = 4G
  // alone overflows N²; B = 1M does not with N = 1.
  CHECK(big.errors.front().about(ProblemField::seq));
  CHECK(!big.errors.front().about(ProblemField::batch));
  CHECK(!big.errors.front().about(ProblemField::head_dim));
  ProblemText half = text("1", "1", "1000", "64");
  half.br = "64";
  const ParsedProblem h = parse_problem(half, kNames);
  REQUIRE(h.errors.size() == 1);
  CHECK(h.first() == "--br and --bc go together (give both or neither)");
  CHECK(!h.options.tiles.has_value());
  ProblemText zero = text("1", "1", "1000", "64");
  zero.br = "64";
  zero.bc = "0";
  const ParsedProblem z = parse_problem(zero, kNames);
  REQUIRE(z.errors.size() == 1);
  CHECK(z.first() == "--bc: must be at least 1 (got '0')");
  CHECK(!z.options.tiles.has_value());
}

TEST_CASE("problem text: one positive size, the message appended", "[sim][problem-text]") {
  std::vector<std::string> errors;
  CHECK(parse_positive("M", "192KiB", errors) == 196608);
  CHECK(errors.empty());
  CHECK(!parse_positive("M", "0", errors).has_value());
  CHECK(!parse_positive("M", "", errors).has_value());
  REQUIRE(errors.size() == 2);
  CHECK(errors[0] == "M: must be at least 1 (got '0')");
  CHECK(errors[1] == "M: '' is not a whole number (examples: 1024, 16K, 100KiB)");
}

TEST_CASE("problem text: grouped K/V heads and a ring's GPUs parse into the one problem", "[sim][problem-text]") {
  ProblemText t = text("1", "32", "32K", "128");
  t.kv_heads = "8";
  t.gpus = "4";
  t.layout = RingLayout::contiguous;
  t.passes = PassSelection::fwd_bwd;
  t.causal = true;
  const ParsedProblem r = parse_problem(t, kNames);
  REQUIRE(r.ok());
  CHECK(r.problem.h_kv() == 8);
  REQUIRE(r.problem.parallel.has_value());
  CHECK(r.problem.gpus() == 4);
  CHECK(r.problem.layout() == RingLayout::contiguous);
  CHECK(r.problem.backward());
  CHECK(describe(r.problem) == "B=1 H=32 H_kv=8 N=32768 d=128 fp16 causal, 4 GPUs contiguous, fwd+bwd");
  // No GPUs given: one GPU, no parallel part.
  CHECK(!parse_problem(text("1", "32", "32K", "128"), kNames).problem.parallel.has_value());

  // The errors name the fields: H_kv against H, N against the GPUs' chunks, P itself.
  // `t` with one field changed: exactly one error.
  auto one_error = [&](void (*change)(ProblemText&)) {
    ProblemText bad = t;
    change(bad);
    ParsedProblem parsed = parse_problem(bad, kNames);
    REQUIRE(parsed.errors.size() == 1);
    return parsed;
  };
  const ParsedProblem k = one_error([](ProblemText& b) { b.kv_heads = "5"; });
  CHECK(k.first() == "H = 32 is not a multiple of H_kv = 5 (each key/value head serves H / H_kv query heads)");
  CHECK(k.errors[0].about(ProblemField::kv_heads));
  CHECK(k.errors[0].about(ProblemField::heads));
  const ParsedProblem n = one_error([](ProblemText& b) { b.seq = "3"; });
  CHECK(n.errors[0].about(ProblemField::seq));
  CHECK(n.errors[0].about(ProblemField::gpus));
  const ParsedProblem p = one_error([](ProblemText& b) { b.gpus = "5000"; });
  CHECK(p.first() == "the ring needs 1 to 4096 GPUs, not 5000");
  CHECK(p.errors[0].fields == std::vector<ProblemField>{ProblemField::gpus});
  const ParsedProblem x = one_error([](ProblemText& b) { b.kv_heads = "x"; });
  CHECK(x.first() == "key/value heads H_kv: 'x' is not a whole number (examples: 1024, 16K, 100KiB)");
  CHECK(x.errors[0].fields == std::vector<ProblemField>{ProblemField::kv_heads});
}
