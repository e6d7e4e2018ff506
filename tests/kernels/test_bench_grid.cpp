// The benchmark grid: flags and sweep files into problems, and every named
// sweep in assets/sweeps valid.
#include <catch2/catch.hpp>

#include <algorithm>

#include "flashlab/kernels/runner/bench_grid.hpp"

using namespace flashlab;
using namespace flashlab::kernels;

TEST_CASE("an empty grid is one default problem", "[kernels][grid]") {
  const auto ps = expand_axes({});
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].batch == 16);
  CHECK(ps[0].heads == 16);
  CHECK(ps[0].seq_q == 1024);
  CHECK(ps[0].n_kv() == 1024);
  CHECK(ps[0].head_dim == 64);
  CHECK_FALSE(ps[0].causal);
  CHECK(ps[0].dtype == sim::DType::fp16);
}

TEST_CASE("axes expand with the sequence length varying fastest", "[kernels][grid]") {
  BenchAxes a;
  a.batch = {16, 32};
  a.seq = {512, 1024, 2048};
  a.causal = {false, true};
  const auto ps = expand_axes(a);
  REQUIRE(ps.size() == 12);
  CHECK(ps[0].batch == 16);
  CHECK(ps[0].seq_q == 512);
  CHECK(ps[1].seq_q == 1024);
  CHECK(ps[3].batch == 32);
  CHECK_FALSE(ps[5].causal);
  CHECK(ps[6].causal);
}

TEST_CASE("grouped K/V heads are an axis of the one-GPU grid, after heads and head dim", "[kernels][grid]") {
  BenchAxes a;
  a.heads = {8, 16};
  a.kv_heads = {2, 8};
  a.seq = {512, 1024};
  const auto ps = expand_axes(a);
  REQUIRE(ps.size() == 8);
  CHECK(ps[0].heads == 8);
  CHECK(ps[0].h_kv() == 2);
  CHECK(ps[1].seq_q == 1024);
  CHECK(ps[2].h_kv() == 8);  // H_kv = H: no groups
  CHECK(ps[4].heads == 16);
  CHECK(ps[4].h_kv() == 2);
  CHECK_FALSE(ps[0].parallel);

  a.kv_heads = {3};  // 8 heads do not split into groups of 3
  CHECK_THROWS_WITH(expand_axes(a), Catch::Contains("H_kv = 3"));
  CHECK(expand_axes(BenchAxes{}).front().h_kv() == expand_axes(BenchAxes{}).front().heads);

  const SweepFile s = parse_sweep(
      R"({"format": "flashlab-sweep/1", "name": "gqa", "axes": {"heads": [32], "kv_heads": [8], "seq": [2048]}})",
      "gqa.json");
  REQUIRE(expand_axes(s.axes).size() == 1);
  CHECK(expand_axes(s.axes).front().h_kv() == 8);
}

TEST_CASE("embedding dim = heads · head dim, from either side", "[kernels][grid]") {
  BenchAxes a;
  a.emb_dim = {1024, 2048, 4096};
  a.heads = {16};
  auto ps = expand_axes(a);
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].head_dim == 64);
  CHECK(ps[2].head_dim == 256);
  for (const auto& p : ps) CHECK(p.heads == 16);

  BenchAxes b;
  b.emb_dim = {2048};
  b.head_dim = {64, 128};
  ps = expand_axes(b);
  REQUIRE(ps.size() == 2);
  CHECK(ps[0].heads == 32);
  CHECK(ps[1].heads == 16);

  BenchAxes agree;  // all three, consistent (the lab report's `--heads 32 --head-dim 64 --emb-dim 2048`)
  agree.heads = {32};
  agree.head_dim = {64};
  agree.emb_dim = {2048};
  ps = expand_axes(agree);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].heads == 32);
  CHECK(ps[0].head_dim == 64);

  BenchAxes c;  // neither: d defaults to 64
  c.emb_dim = {2048};
  ps = expand_axes(c);
  REQUIRE(ps.size() == 1);
  CHECK(ps[0].heads == 32);
}

TEST_CASE("tokens fix the batch per sequence length (the FlashAttention-2 grid)", "[kernels][grid]") {
  BenchAxes a;
  a.tokens = {16384};
  a.seq = {512, 4096, 16384};
  const auto ps = expand_axes(a);
  REQUIRE(ps.size() == 3);
  CHECK(ps[0].batch == 32);
  CHECK(ps[1].batch == 4);
  CHECK(ps[2].batch == 1);
}

TEST_CASE("a grid that cannot expand says which axis", "[kernels][grid]") {
  BenchAxes a;
  a.emb_dim = {1000};
  a.heads = {3};
  CHECK_THROWS_WITH(expand_axes(a), Catch::Contains("1000") && Catch::Contains("heads 3"));
  a.head_dim = {64};
  CHECK_THROWS_WITH(expand_axes(a), Catch::Contains("3 × head dim 64 = 192") && Catch::Contains("at most two"));

  BenchAxes b;
  b.tokens = {1000};
  b.seq = {3};
  CHECK_THROWS_WITH(expand_axes(b), Catch::Contains("1000 tokens") && Catch::Contains("N=3"));
  b.batch = {2};
  CHECK_THROWS_WITH(expand_axes(b), Catch::Contains("not both"));

  BenchAxes c;
  c.seq = {64};
  c.seq_kv = {32};
  c.causal = {true};
  CHECK_THROWS_WITH(expand_axes(c), Catch::Contains("causal") && Catch::Contains("seq_kv"));
}

TEST_CASE("kernel selection keeps the order given and rejects unknown ids", "[kernels][grid]") {
  // Nothing named: the rungs of the pass, the forward ladder by default.
  const auto all = select_kernels({});
  CHECK(all == kernels_of(sim::PassSelection::fwd));
  for (const KernelInfo* k : all) CHECK(k->pass() == sim::Pass::fwd);
  const auto bwd = select_kernels({}, sim::PassSelection::bwd);
  REQUIRE_FALSE(bwd.empty());
  for (const KernelInfo* k : bwd) CHECK(k->pass() == sim::Pass::bwd);
  CHECK(select_kernels({}, sim::PassSelection::fwd_bwd).size() == registry().size());
  CHECK(all.size() + bwd.size() == registry().size());
  // Named: as named, whatever their pass.
  const auto mixed = select_kernels({"naive_bwd", "fa2"}, sim::PassSelection::fwd);
  REQUIRE(mixed.size() == 2);
  CHECK(mixed[0]->id == "naive_bwd");
  const auto two = select_kernels({"fa2", "naive", "fa2"});
  REQUIRE(two.size() == 2);
  CHECK(two[0]->id == "fa2");
  CHECK(two[1]->id == "naive");
  CHECK_THROWS_WITH(select_kernels({"fa3"}), Catch::Contains("unknown kernel 'fa3'") && Catch::Contains("naive_cublas"));
}

TEST_CASE("every named sweep parses and expands", "[kernels][grid][assets]") {
  const auto names = list_sweeps();
  REQUIRE(names.size() >= 8);
  for (const std::string& n : names) {
    INFO(n);
    const SweepFile s = load_sweep(n);
    CHECK(s.name == n);
    CHECK_FALSE(s.title.empty());
    CHECK_FALSE(s.source.empty());
    if (s.ring) CHECK_FALSE(expand_ring_axes(s.axes).empty());
    else CHECK_FALSE(expand_axes(s.axes).empty());
  }
}

TEST_CASE("the ring sweeps: the seed project's models, 8K-128K tokens, both layouts, forward and backward",
          "[kernels][grid][assets][ring]") {
  struct Want {
    const char* sweep;
    i64 heads, kv_heads, head_dim;
  };
  for (const Want& w : {Want{"ring-llama2-7b", 32, 32, 128}, Want{"ring-llama3.2-3b", 24, 8, 128},
                        Want{"ring-llama3.2-1b", 32, 8, 64}}) {
    INFO(w.sweep);
    const SweepFile s = load_sweep(w.sweep);
    REQUIRE(s.ring);
    const std::vector<sim::AttentionProblem> g = expand_ring_axes(s.axes);
    REQUIRE(g.size() == 10u);  // 2 layouts × 5 lengths
    std::vector<i64> seqs;
    for (const sim::AttentionProblem& p : g) {
      CHECK(p.heads == w.heads);
      CHECK(p.h_kv() == w.kv_heads);
      CHECK(p.head_dim == w.head_dim);
      CHECK(p.causal);
      CHECK(p.backward());
      CHECK(p.dtype == sim::DType::bf16);
      CHECK(p.gpus() == 2);
      seqs.push_back(p.seq_q);
    }
    CHECK(seqs.front() == 8192);
    CHECK(*std::max_element(seqs.begin(), seqs.end()) == 131072);
    CHECK(g.front().layout() == sim::RingLayout::zigzag);
    CHECK(g.back().layout() == sim::RingLayout::contiguous);
  }
}

TEST_CASE("ring axes: GPU counts vary fastest, and what cannot expand says which axis", "[kernels][grid][ring]") {
  BenchAxes a;
  a.heads = {8};
  a.kv_heads = {2, 8};
  a.head_dim = {64};
  a.seq = {1000, 4096};
  a.gpus = {1, 3};
  const std::vector<sim::AttentionProblem> g = expand_ring_axes(a);
  REQUIRE(g.size() == 8u);
  CHECK(g[0].gpus() == 1);
  CHECK(g[1].gpus() == 3);
  CHECK(g[0].seq_q == 1000);
  CHECK(g[2].seq_q == 4096);
  CHECK(g[0].kv_heads == 2);
  CHECK(g[4].kv_heads == 8);

  BenchAxes both = a;
  both.models = {"llama2-7b"};
  CHECK_THROWS_WITH(expand_ring_axes(both), Catch::Contains("not both"));
  BenchAxes unknown;
  unknown.models = {"gpt-5"};
  CHECK_THROWS_WITH(expand_ring_axes(unknown), Catch::Contains("unknown model 'gpt-5'") && Catch::Contains("llama2-7b"));
  BenchAxes groups = a;
  groups.kv_heads = {3};  // 8 heads do not split into groups of 3
  CHECK_THROWS(expand_ring_axes(groups));
  BenchAxes short_seq = a;
  short_seq.seq = {5};
  short_seq.gpus = {4};  // zig-zag: 8 chunks for 5 tokens
  CHECK_THROWS(expand_ring_axes(short_seq));
}

TEST_CASE("a bad ring sweep fails at load, naming the key", "[kernels][grid][ring]") {
  auto parse = [](const std::string& axes) {
    return parse_sweep(R"({"format": "flashlab-ring-sweep/1", "name": "x", "title": "t", "source": "s", "axes": )" +
                           axes + "}",
                       "x.json");
  };
  CHECK(parse(R"({"model": "llama3.2-1b", "seq": ["16K"], "gpus": 4})").ring);
  CHECK_THROWS_WITH(parse(R"({"modle": "llama3.2-1b"})"), Catch::Contains("x.json") && Catch::Contains("modle"));
  CHECK_THROWS_WITH(parse(R"({"layout": "diagonal"})"), Catch::Contains("axes.layout"));
  CHECK_THROWS_WITH(parse(R"({"dtype": "fp32"})"), Catch::Contains("axes.dtype"));
  CHECK_THROWS_WITH(parse(R"({"pass": "bwd"})"), Catch::Contains("axes.pass"));
  CHECK_THROWS_WITH(parse(R"({"gpus": 5000})"), Catch::Contains("axes.gpus"));
  // One table of axes: a one-GPU axis is no ring axis, a ring axis no one-GPU axis.
  CHECK_THROWS_WITH(parse(R"({"tokens": [16384]})"), Catch::Contains("unknown axis \"tokens\""));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-sweep/1", "name": "x", "axes": {"gpus": [2]}})", "x.json"),
                    Catch::Contains("unknown axis \"gpus\""));
  BenchAxes one_gpu;
  one_gpu.gpus = {2};
  CHECK_THROWS_WITH(expand_axes(one_gpu), Catch::Contains("the ring's axes"));
  BenchAxes ring;
  ring.emb_dim = {2048};
  CHECK_THROWS_WITH(expand_ring_axes(ring), Catch::Contains("one GPU's"));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-ring-sweep/1", "name": "x", "kernels": ["fa2"], "axes": {}})",
                                "x.json"),
                    Catch::Contains("names no kernels"));
}

TEST_CASE("the lab-report sweeps reproduce the reports' grids", "[kernels][grid][assets]") {
  auto bs = expand_axes(load_sweep("lab-batch-seq").axes);
  REQUIRE(bs.size() == 9);
  for (const auto& p : bs) {
    CHECK(p.heads * p.head_dim == 2048);
    CHECK((p.batch == 16 || p.batch == 32 || p.batch == 64));
    CHECK((p.seq_q == 512 || p.seq_q == 1024 || p.seq_q == 2048));
  }
  const SweepFile t4 = load_sweep("lab-batch-seq-t4");
  REQUIRE(t4.mem_limit_bytes);
  CHECK(*t4.mem_limit_bytes == 15ll << 30);

  const auto heads = expand_axes(load_sweep("lab-heads").axes);
  REQUIRE(heads.size() == 4);
  for (const auto& p : heads) CHECK(p.heads * p.head_dim == 2048);

  const auto emb = expand_axes(load_sweep("lab-emb-dim").axes);
  REQUIRE(emb.size() == 3);
  CHECK(emb[0].head_dim == 64);
  CHECK(emb[2].head_dim == 256);

  const auto causal = expand_axes(load_sweep("lab-causal").axes);
  REQUIRE(causal.size() == 6);
  CHECK(std::count_if(causal.begin(), causal.end(), [](const auto& p) { return p.causal; }) == 3);
}

TEST_CASE("the FlashAttention-2 paper grid: 16k tokens, hidden 2048, d 64 and 128", "[kernels][grid][assets]") {
  for (const char* name : {"fa2-paper", "perf"}) {
    INFO(name);
    const auto ps = expand_axes(load_sweep(name).axes);
    CHECK(ps.size() == (std::string(name) == "perf" ? 12u : 24u));
    for (const auto& p : ps) {
      CHECK(p.batch * p.seq_q == 16384);
      CHECK(p.heads * p.head_dim == 2048);
      CHECK((p.head_dim == 64 || p.head_dim == 128));
    }
  }
}

TEST_CASE("a bad sweep file fails at load, naming the file and the key", "[kernels][grid]") {
  const std::string ok = R"({"format": "flashlab-sweep/1", "name": "x", "axes": {"seq": [64]}})";
  CHECK(expand_axes(parse_sweep(ok, "ok.json").axes).size() == 1);
  CHECK_THROWS_WITH(parse_sweep("{", "a.json"), Catch::StartsWith("a.json: not valid JSON"));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "x", "name": "x", "axes": {}})", "b.json"),
                    Catch::StartsWith("b.json:") && Catch::Contains("format"));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-sweep/1", "name": "x", "axes": {"sequence": [1]}})", "c.json"),
                    Catch::Contains("unknown axis \"sequence\""));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-sweep/1", "name": "x", "axes": {"dtype": ["fp8"]}})", "d.json"),
                    Catch::Contains("axes.dtype") && Catch::Contains("fp8"));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-sweep/1", "name": "x", "kernels": ["fa9"], "axes": {}})", "e.json"),
                    Catch::Contains("fa9"));
  CHECK_THROWS_WITH(parse_sweep(R"({"format": "flashlab-sweep/1", "name": "x", "axes": {"seq": [0]}})", "f.json"),
                    Catch::Contains("axes.seq[0]") && Catch::Contains("at least 1"));
  CHECK_THROWS_WITH(load_sweep("no-such-sweep"), Catch::Contains("unknown sweep") && Catch::Contains("lab-batch-seq"));
}
