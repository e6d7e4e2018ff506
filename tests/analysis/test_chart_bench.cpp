// The bench charts: measured runs as series, filters, OOM cells, speed-ups and heatmaps.
// ChartSpec: tick labels and positions, log ranges, auto-fit, the CSV round
// trip, hit testing, and the chart builders against the simulator's numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>

#include "flashlab/analysis.hpp"
#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/chart_render.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/charts/implementations.hpp"
#include "flashlab/sim.hpp"
#include "chart_fixtures.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using namespace flashlab::analysis::test;

TEST_CASE("bench charts: series per kernel, OOM cells marked, default filter", "[chart][bench]") {
  const BenchResults r = lab_grid();
  CHECK(bench_x_axis(r) == BenchAxis::seq);
  const BenchFilter f = default_bench_filter(r);
  CHECK(f.batch == sim::i64{16});
  const ChartSpec t = bench_metric_chart(r, BenchMetric::time);
  REQUIRE(t.series.size() == 2);
  CHECK(t.series[0].name == "PyTorch eager");  // as a student names it, not the results' id
  CHECK(t.series[0].color == implementation_colour("torch_eager"));
  REQUIRE(t.series[0].y.size() == 3);
  CHECK(t.series[0].y[0] == Approx(0.01 * 16 * 512));
  CHECK(t.series[0].y[2] == Approx(0.01 * 16 * 2048));
  CHECK(t.markers.empty());  // batch 16 never runs out of memory here
  BenchFilter b64;
  b64.batch = 64;
  const ChartSpec t64 = bench_metric_chart(r, BenchMetric::time, &b64);
  REQUIRE(t64.markers.size() == 2);  // torch_eager at N = 1K and 2K
  CHECK(t64.markers[0].label == "OOM");  // one batch shown: no configuration to name
  CHECK(t64.markers[0].x == 1024);
  CHECK(std::isnan(t64.series[0].y[1]));
  CHECK(std::any_of(t64.notes.begin(), t64.notes.end(), [](const std::string& n) { return n.find("OOM") != std::string::npos; }));
  BenchFilter all;
  const ChartSpec every = bench_metric_chart(r, BenchMetric::time, &all);
  CHECK(every.series.size() == 6);  // kernel × batch when nothing is fixed
}

TEST_CASE("default filter of merged sweeps: a combination that exists, the one with the most rows", "[chart][bench]") {
  // Two lab sweeps in one file: batch × N at 32 heads, and a heads sweep at
  // batch 8. The first values (batch 8, 16 heads) never occur together.
  BenchResults r;
  for (sim::i64 b : {16, 32})
    for (sim::i64 n : {512, 1024}) r.rows.push_back(row("fa2", b, n, 1.0));
  for (sim::i64 h : {16, 64}) {
    BenchRow x = row("fa2", 8, 512, 1.0);
    x.problem.heads = h;
    r.rows.push_back(x);
  }
  const BenchFilter f = default_bench_filter(r);
  CHECK(f.batch == sim::i64{16});
  CHECK(f.heads == sim::i64{32});
  const ChartSpec t = bench_metric_chart(r, BenchMetric::time);
  REQUIRE(t.series.size() == 1);
  CHECK(t.series[0].y.size() == 2);
}

TEST_CASE("speed-up bars divide the baseline's time", "[chart][bench]") {
  const BenchResults r = lab_grid();
  BenchFilter b32;
  b32.batch = 32;
  const ChartSpec c = bench_speedup_chart(r, "", &b32);
  CHECK(c.kind == ChartKind::bars);
  CHECK(c.title == "Speed-up over PyTorch eager");
  REQUIRE(c.series.size() == 1);
  // The baseline ran out of memory at N = 2K: the group keeps its name and no
  // bar, the reason in the bar's place (drawn once over the group) and in the CSV.
  CHECK(c.categories == std::vector<std::string>{"N=512", "N=1K", "N=2K"});
  CHECK(c.series[0].y[0] == Approx(5.0));
  CHECK(std::isnan(c.series[0].y[2]));
  CHECK(c.series[0].point_labels[2] == "PyTorch eager OOM");
  CHECK(c.series[0].point_notes[2] == "baseline OOM");
  CHECK_THAT(chart_to_csv(c), Catch::Contains(",2,,N=2K,baseline OOM,configuration,,"));
  CHECK(bench_speedup_chart(r, "nope", &b32).empty());
}

TEST_CASE("batch × seq heatmap marks OOM cells", "[chart][bench]") {
  const ChartSpec c = bench_heatmap_chart(lab_grid(), "torch_eager");
  REQUIRE(c.heatmap.row_labels == std::vector<std::string>{"16", "32", "64"});
  REQUIRE(c.heatmap.col_labels == std::vector<std::string>{"512", "1K", "2K"});
  CHECK(c.heatmap.value(0, 0) == Approx(0.01 * 16 * 512));
  CHECK(std::isnan(c.heatmap.value(2, 2)));
  CHECK(c.heatmap.cell_text[2 * 3 + 2] == "OOM");
  CHECK(c.heatmap.cell_text[0].empty());
  BenchResults one_axis;
  one_axis.rows = {row("fa2", 16, 512, 1), row("fa2", 16, 1024, 2)};
  CHECK(bench_heatmap_chart(one_axis).empty());
}

TEST_CASE("bench filters parse and say what they fix", "[chart][bench]") {
  const BenchFilter f = parse_bench_filter("batch=32,causal=yes,head-dim=64,dtype=bf16");
  CHECK(f.batch == sim::i64{32});
  CHECK(f.causal == true);
  CHECK(f.head_dim == sim::i64{64});
  CHECK(f.dtype == sim::DType::bf16);
  CHECK(describe(f) == "batch 32, d 64, causal, bf16");
  CHECK(!parse_bench_filter("").any());
  CHECK_THROWS_AS(parse_bench_filter("batch"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bench_filter("batch=0"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bench_filter("causal=maybe"), std::invalid_argument);
  CHECK_THROWS_AS(parse_bench_filter("color=red"), std::invalid_argument);
  const BenchFilter e = parse_bench_filter("emb-dim=2048,kv-heads=8");
  CHECK(e.emb_dim == sim::i64{2048});
  CHECK(e.kv_heads == sim::i64{8});
  CHECK(describe(e) == "emb dim 2048, 8 K/V heads");
}

TEST_CASE("the heads sweep at one embedding dim is one line per kernel along H, d = E / H", "[chart][bench]") {
  BenchResults r;  // the labs' heads sweep: H 8..64 at emb dim 2048
  for (const char* k : {"torch_eager", "fa2"})
    for (sim::i64 h : {8, 16, 32, 64}) {
      BenchRow row = test::row(k, 32, 1024, 1.0 + static_cast<double>(h) / 64);
      row.problem.heads = h;
      row.problem.head_dim = 2048 / h;
      r.rows.push_back(row);
    }
  REQUIRE(shared_emb_dim(r) == sim::i64{2048});
  CHECK_FALSE(default_bench_filter(r).head_dim);  // d is not pinned: it follows H
  const ChartSpec c = bench_metric_chart(r, BenchMetric::time, nullptr);
  CHECK(c.x.label == "heads H (d = 2048 / H)");
  REQUIRE(c.series.size() == 2);
  for (const Series& s : c.series) CHECK(s.x == std::vector<double>{8, 16, 32, 64});

  // The same rows among others (a merged lab file): a filter finds them, and
  // the x axis is what varies among the rows it selects.
  BenchResults merged = test::lab_grid();  // batch 16-64 × N 512-2048 at H 32, d 64
  merged.rows.insert(merged.rows.end(), r.rows.begin(), r.rows.end());
  const BenchFilter f = parse_bench_filter("seq=1024,batch=32,emb-dim=2048");
  const ChartSpec m = bench_metric_chart(merged, BenchMetric::time, &f);
  CHECK(m.x.label == "heads H (d = 2048 / H)");
  REQUIRE(m.series.size() == 2);
  // H 32, d 64 at batch 32, N 1024 is in both sweeps: drawn once, and said.
  for (const Series& s : m.series) CHECK(s.x == std::vector<double>{8, 16, 32, 64});
  CHECK(std::any_of(m.notes.begin(), m.notes.end(), [](const std::string& n) {
    return n.rfind("2 run(s) measured again", 0) == 0;
  }));
}

TEST_CASE("causal and non-causal runs of a rung differ in marker, passes in line, rungs in colour", "[chart][bench]") {
  BenchResults r = test::lab_grid();
  const std::size_t n = r.rows.size();
  for (std::size_t i = 0; i < n; ++i) {
    BenchRow c = r.rows[i];
    c.problem.causal = true;
    c.time_ms_median *= 0.5;
    r.rows.push_back(c);
  }
  const BenchFilter f = parse_bench_filter("batch=16");
  const ChartSpec t = bench_metric_chart(r, BenchMetric::time, &f);
  REQUIRE(t.series.size() == 4);  // two rungs × two masks
  for (const Series& s : t.series) {
    INFO(s.name);
    const bool causal = s.name.find(" causal") != std::string::npos;
    CHECK(s.marker == (causal ? MarkerShape::triangle : MarkerShape::circle));
    CHECK(s.dash == Dash::solid);
  }
  for (const Series& a : t.series)  // one rung, one colour; two rungs, two
    for (const Series& b : t.series)
      CHECK((a.color == b.color) == (a.name.substr(0, a.name.find(' ')) == b.name.substr(0, b.name.find(' '))));
  CHECK(std::any_of(t.notes.begin(), t.notes.end(), [](const std::string& s) { return s.find("▲ causal") != std::string::npos; }));
}

TEST_CASE("a filter that selects no run says which key and what the results hold", "[chart][bench]") {
  const BenchResults r = test::lab_grid();  // batch 16, 32, 64; H 32, d 64; non-causal; torch_eager and fa2
  CHECK(filter_misses(r, parse_bench_filter("batch=32,emb-dim=2048")).empty());
  CHECK(filter_misses(r, parse_bench_filter("batch=48")) == "no run has batch 48 (batch in the results: 16, 32, 64)");
  CHECK(filter_misses(r, parse_bench_filter("heads=16")) == "no run has heads 16 (heads in the results: 32)");
  CHECK(filter_misses(r, parse_bench_filter("causal=yes")) == "no run has causal yes (only non-causal runs)");
  CHECK(filter_misses(r, parse_bench_filter("dtype=bf16")) == "no run has dtype bf16 (dtype in the results: fp16)");
  BenchResults two = r;
  two.rows.back().problem.batch = 48;  // fa2 at batch 48 and N 2048 only
  two.rows.back().problem.causal = true;
  CHECK(filter_misses(two, parse_bench_filter("batch=48,causal=no")) ==
        "no run has batch=48, causal=no together (each alone matches some run)");
  CHECK(filter_misses(BenchResults{}, BenchFilter{}) == "the results hold no run");
}

TEST_CASE("kernel files in one chart: each its own colour, in the order they first appear, in every chart", "[chart][bench]") {
  BenchResults r;
  r.meta.gpu = "test GPU";
  // Names chosen so that a colour by name alone would give two of them the same one.
  const std::vector<std::string> files{"user:fa1", "user:fa1_swapped", "user:fa2"};
  for (sim::i64 n : {1024, 2048}) {
    r.rows.push_back(test::row("fa2", 1, n, 0.1 * static_cast<double>(n)));
    r.rows.back().model = "fa2";
    for (const std::string& f : files) {
      r.rows.push_back(test::row(f, 1, n, 0.3 * static_cast<double>(n)));
      r.rows.back().model = "fa2";
    }
  }
  ChartContext ctx;
  for (const char* id : {"bench-time", "bench-tflops"}) {
    INFO(id);
    const ChartSpec c = build_chart(id, ctx, &r);
    std::vector<Color> seen;
    for (const Series& s : c.series) {
      if (s.name.find(" (your kernel)") == std::string::npos) {
        CHECK(s.color == implementation_colour("fa2"));  // the rungs keep the table's colours
        continue;
      }
      seen.push_back(s.color);
    }
    REQUIRE(seen.size() == files.size());
    for (size_t k = 0; k < seen.size(); ++k) {
      CHECK(seen[k] == user_kernel_colour(k));
      for (size_t j = 0; j < k; ++j) CHECK_FALSE(seen[j] == seen[k]);
    }
  }
}

TEST_CASE("a constant-token grid is drawn along N with the batch following it, and says so", "[chart][bench]") {
  const BenchResults r = token_grid();
  REQUIRE(shared_tokens(r) == sim::i64{16384});
  CHECK_FALSE(shared_tokens(lab_grid()));  // a batch × N grid is not one
  const BenchFilter f = default_bench_filter(r);
  CHECK_FALSE(f.batch);  // the batch is not fixed: it follows N
  CHECK(f.heads);
  CHECK(f.causal);
  for (BenchMetric m : {BenchMetric::time, BenchMetric::tflops, BenchMetric::memory}) {
    const ChartSpec c = bench_metric_chart(r, m);
    INFO(c.id);
    CHECK(c.kind == ChartKind::xy);
    CHECK(c.x.label == "sequence length N (batch B = 16K / N)");
    CHECK_THAT(c.title, Catch::Contains("vs sequence length N (batch B = 16K / N)"));
    CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) {
      return n == "the batch follows N: every run holds B·N = 16K tokens (B 16 at N 1K, 4 at 4K, 1 at 16K)";
    }));
    const auto drawn = std::count_if(c.series.begin(), c.series.end(), [](const Series& s) { return s.in_legend; });
    CHECK(drawn == 5);  // one line per rung, not per batch
    for (const Series& s : c.series) CHECK(s.x == std::vector<double>{1024, 4096, 16384});
  }
  // Bars name the batch beside each N.
  const ChartSpec sp = bench_speedup_chart(r);
  CHECK(sp.categories == std::vector<std::string>{"N=1K b=16", "N=4K b=4", "N=16K b=1"});
  // A batch × N heatmap of a diagonal says why it draws none, and where the runs are.
  for (BenchMetric m : {BenchMetric::time, BenchMetric::tflops}) {
    const ChartSpec h = bench_heatmap_chart(r, "", nullptr, m);
    CHECK(h.empty());
    REQUIRE_FALSE(h.notes.empty());
    CHECK_THAT(h.notes.front(), Catch::StartsWith("not a batch × N grid: the batch follows N: every run holds B·N = 16K"));
    CHECK_THAT(h.notes.front(), Catch::Contains("bench-time and bench-tflops draw these runs along N"));
  }
  // A filter that leaves the batch free: along N too, the batch following.
  const BenchFilter f16 = parse_bench_filter("heads=16,causal=yes");
  const ChartSpec c16 = bench_metric_chart(r, BenchMetric::time, &f16);
  CHECK(c16.x.label == "sequence length N (batch B = 16K / N)");
  REQUIRE(c16.series.size() == 5);
  for (const Series& s : c16.series) CHECK(s.x == std::vector<double>{1024, 4096, 16384});
}

TEST_CASE("a bench chart claims how repeats were timed only of measured results that record it", "[analysis][charts]") {
  BenchResults r;
  r.meta.gpu = "NVIDIA H200";
  r.meta.l2_flush = true;
  BenchRow row;
  row.kernel = "fa2_tc";
  row.problem.batch = 16;
  row.time_ms_median = 1.0;
  r.rows = {row};
  CHECK_THAT(bench_metric_chart(r, BenchMetric::time).subtitle, Catch::Contains("L2 flushed between repeats"));
  r.meta.l2_flush = false;
  CHECK_THAT(bench_metric_chart(r, BenchMetric::time).subtitle, Catch::Contains("no L2 flush"));
  // Nothing measured (every case failed, or a machine without a GPU): no claim.
  r.meta.l2_flush = true;
  r.rows.front().status = RunStatus::failed;
  r.rows.front().time_ms_median = 0;
  CHECK_THAT(bench_metric_chart(r, BenchMetric::time).subtitle, !Catch::Contains("L2"));
  // Runs whose file records nothing of how they were made: no claim either.
  BenchResults plain;
  plain.rows = {row};
  CHECK_THAT(bench_metric_chart(plain, BenchMetric::time).subtitle, !Catch::Contains("L2"));
}

namespace {
bool filter_note_has(const ChartSpec& c, const std::string& part) {
  return std::any_of(c.notes.begin(), c.notes.end(), [&](const std::string& n) { return n.find(part) != std::string::npos; });
}
std::string filter_note_with(const ChartSpec& c, const std::string& part) {
  for (const std::string& n : c.notes)
    if (n.find(part) != std::string::npos) return n;
  return "";
}
}  // namespace

TEST_CASE("a filtered chart's note names the other values of what the filter fixed, never the plotted axis", "[chart][bench]") {
  const BenchResults r = lab_grid();  // batch 16/32/64 × N 512/1K/2K
  BenchFilter seq;
  seq.seq = 1024;  // batch along x
  for (const BenchMetric m : {BenchMetric::time, BenchMetric::tflops, BenchMetric::memory}) {
    const ChartSpec c = bench_metric_chart(r, m, &seq);
    CHECK(c.x.label == "batch size B");
    const std::string n = filter_note_with(c, "showing N 1024");
    CHECK_THAT(n, Catch::Contains("the results hold 3 sequence lengths"));
    CHECK_THAT(n, !Catch::Contains("batch sizes"));
  }
  BenchFilter batch;
  batch.batch = 32;  // N along x
  const ChartSpec along_n = bench_metric_chart(r, BenchMetric::time, &batch);
  CHECK_THAT(filter_note_with(along_n, "showing batch 32"), Catch::Contains("3 batch sizes") && !Catch::Contains("sequence lengths"));
  // Both fixed (the bars of one configuration): both named.
  BenchFilter both = batch;
  both.seq = 512;
  CHECK_THAT(filter_note_with(bench_metric_chart(r, BenchMetric::time, &both), "showing"),
             Catch::Contains("3 batch sizes, 3 sequence lengths"));
  // A fixed value the results hold alone leaves nothing to pick: no note.
  BenchFilter heads;
  heads.heads = 32;
  CHECK_FALSE(filter_note_has(bench_metric_chart(r, BenchMetric::time, &heads), "the results hold"));
  // No runs at all: nothing said about what they hold beyond that.
  const ChartSpec none = bench_metric_chart(BenchResults{}, BenchMetric::time, &seq);
  CHECK(filter_note_has(none, "the results hold no rows"));
  CHECK_FALSE(filter_note_has(none, "pick others"));
  CHECK_FALSE(filter_note_has(bench_speedup_chart(BenchResults{}, "", &seq), "pick others"));
  CHECK_FALSE(filter_note_has(bench_passes_chart(BenchResults{}, BenchMetric::time, &seq), "pick others"));
}

TEST_CASE("the memory chart's dotted note names the predictions drawn, and only where drawn", "[chart][bench]") {
  BenchResults r = lab_grid();
  for (BenchRow& x : r.rows)
    if (x.kernel == "fa2") x.predicted_memory_bytes = x.peak_memory_bytes;  // PyTorch's rows carry none
  BenchFilter batch;
  batch.batch = 16;
  const ChartSpec flash_only = bench_metric_chart(r, BenchMetric::memory, &batch);
  CHECK(std::count_if(flash_only.series.begin(), flash_only.series.end(),
                      [](const Series& s) { return s.dash == Dash::dotted; }) == 1);
  const std::string n = filter_note_with(flash_only, "dotted");
  CHECK_THAT(n, Catch::Contains(implementation_name("fa2")));
  CHECK_THAT(n, !Catch::Contains(implementation_name("torch_eager")) && !Catch::Contains("S and P") && !Catch::Contains("S/P"));
  // Standard attention's prediction drawn: its S and P named.
  for (BenchRow& x : r.rows)
    if (x.kernel == "torch_eager") x.predicted_memory_bytes = x.peak_memory_bytes + 1;
  const ChartSpec both = bench_metric_chart(r, BenchMetric::memory, &batch);
  CHECK_THAT(filter_note_with(both, "dotted"), Catch::Contains(implementation_name("torch_eager")) && Catch::Contains("S and P"));
  // Bars of one configuration draw no prediction: no dotted note.
  BenchFilter one = batch;
  one.seq = 512;
  const ChartSpec bars = bench_metric_chart(r, BenchMetric::memory, &one);
  REQUIRE(bars.kind == ChartKind::bars);
  CHECK(std::none_of(bars.series.begin(), bars.series.end(), [](const Series& s) { return s.dash == Dash::dotted; }));
  CHECK_FALSE(filter_note_has(bars, "dotted"));
  // No prediction in the results: none drawn, none named.
  CHECK_FALSE(filter_note_has(bench_metric_chart(lab_grid(), BenchMetric::memory, &batch), "dotted"));
}

TEST_CASE("a quantity proportional to the swept value draws as a straight line", "[chart][bench]") {
  // lab_grid's memory is B·N·1000 bytes and FlashAttention-2's time 0.002·B·N:
  // proportional to the batch along it, and to N along N.
  const BenchResults r = lab_grid();
  BenchFilter seq, batch;
  seq.seq = 1024;
  batch.batch = 16;
  auto straight = [](const ChartSpec& c, const Series& s) {
    const Range rx = auto_fit(c, true), ry = auto_fit(c, false);
    std::vector<std::pair<double, double>> at;
    for (size_t k = 0; k < s.x.size(); ++k)
      at.emplace_back(axis_fraction(s.x[k], rx, c.x.scale), axis_fraction(s.y[k], ry, c.y.scale));
    REQUIRE(at.size() == 3);
    const double first = (at[1].second - at[0].second) / (at[1].first - at[0].first);
    const double second = (at[2].second - at[1].second) / (at[2].first - at[1].first);
    return std::fabs(first - second) < 1e-9 * std::fabs(first);
  };
  for (const BenchMetric m : {BenchMetric::time, BenchMetric::memory}) {
    const ChartSpec along_b = bench_metric_chart(r, m, &seq);
    REQUIRE(along_b.x.label == "batch size B");
    CHECK(along_b.x.scale == Scale::linear);
    CHECK(along_b.y.scale == Scale::linear);
    CHECK(straight(along_b, along_b.series.at(1)));  // fa2
    const ChartSpec along_n = bench_metric_chart(r, m, &batch);
    REQUIRE(along_n.x.label == "sequence length N");
    CHECK(along_n.x.scale != Scale::linear);
    CHECK(along_n.y.scale != Scale::linear);  // N and N² both straight, slopes 1 and 2
    CHECK(straight(along_n, along_n.series.at(1)));
  }
  // A rate along N that stays within a small span keeps a linear axis.
  CHECK(bench_metric_chart(r, BenchMetric::tflops, &batch).y.scale == Scale::linear);
}
