// ChartSpec: tick labels and positions, log ranges, auto-fit, the CSV round
// trip, hit testing, and the chart builders against the simulator's numbers.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <set>

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

namespace {

std::vector<std::string> major_labels(const std::vector<Tick>& ticks) {
  std::vector<std::string> out;
  for (const Tick& t : ticks)
    if (t.major) out.push_back(t.label);
  return out;
}

// The null canvas, keeping the texts drawn and the clips still pushed.
class CountingCanvas : public NullCanvas {
 public:
  void text(Point, const std::string& s, double, Color, HAlign, VAlign, bool) override { texts.push_back(s); }
  void push_clip(Rect) override { ++clips; }
  void pop_clip() override { --clips; }
  std::vector<std::string> texts;
  int clips = 0;
};

// A chart laid out in `box` and drawn on a NullCanvas through a recorder of
// every text and data mark; its layout problems listed, each printed with the
// next check that fails.
struct DrawnChart {
  NullCanvas base;
  LayoutRecorder drawn{base};
  ChartLayout layout;
  std::vector<std::string> problems;
  DrawnChart(const ChartSpec& c, Rect box, const RenderExtras* extras = nullptr)
      : layout(layout_chart(c, drawn, box, ChartStyle{})) {
    render_chart(c, drawn, layout, ChartStyle{}, extras);
    problems = layout_problems(drawn, layout.outer);
    for (const std::string& p : problems) UNSCOPED_INFO(p);
  }
};

// Bars over `categories`: a series "kernel k" for each row of `values`, each
// bar labelled with its value and `suffix`.
ChartSpec bars_of(std::vector<std::string> categories, const std::vector<std::vector<double>>& values,
                  const std::string& suffix) {
  ChartSpec c;
  c.kind = ChartKind::bars;
  c.categories = std::move(categories);
  for (size_t k = 0; k < values.size(); ++k) {
    Series s;
    s.name = "kernel " + std::to_string(k);
    s.style = SeriesStyle::bars;
    s.color = palette(static_cast<int>(k));
    for (size_t cat = 0; cat < values[k].size(); ++cat) {
      s.x.push_back(static_cast<double>(cat));
      s.y.push_back(values[k][cat]);
      s.point_labels.push_back(format_tick(values[k][cat], TickFormat::plain) + suffix);
    }
    c.series.push_back(s);
  }
  return c;
}

// The parts of `text` drawn (the whole, or the lines it was broken into), in
// the order drawn, joined by spaces: `text` itself when it was said once.
std::string said_in(const LayoutRecorder& drawn, const std::string& text) {
  std::string said;
  for (const DrawnText& t : drawn.texts)
    if (!t.text.empty() && text.find(t.text) != std::string::npos) said += (said.empty() ? "" : " ") + t.text;
  return said;
}

}  // namespace

TEST_CASE("tick labels read like the lecture's: 1K, 1M, 1G", "[chart][ticks]") {
  CHECK(format_tick(1024, TickFormat::binary) == "1K");
  CHECK(format_tick(1536, TickFormat::binary) == "1.5K");
  CHECK(format_tick(65536, TickFormat::binary) == "64K");
  CHECK(format_tick(1 << 20, TickFormat::binary) == "1M");
  CHECK(format_tick(512, TickFormat::binary) == "512");
  CHECK(format_tick(1e9, TickFormat::si) == "1G");
  CHECK(format_tick(2.5e12, TickFormat::si) == "2.5T");
  CHECK(format_tick(312e12, TickFormat::si) == "312T");
  CHECK(format_tick(999999, TickFormat::si) == "1M");  // rounding carries to the next prefix
  CHECK(format_tick(3e9, TickFormat::bytes) == "3 GB");
  CHECK(format_tick(512, TickFormat::bytes) == "512 B");
  CHECK(format_tick(0.125, TickFormat::plain) == "0.125");
  CHECK(format_tick(161.24, TickFormat::plain) == "161");
  CHECK(format_tick(0, TickFormat::plain) == "0");
  CHECK(format_tick(std::numeric_limits<double>::quiet_NaN(), TickFormat::plain) == "NaN");
}

TEST_CASE("log2 ticks at every power of two, thinned to fit", "[chart][ticks]") {
  const auto t = make_ticks({256, 65536}, Scale::log2, TickFormat::binary, 10);
  CHECK(major_labels(t) == std::vector<std::string>{"256", "512", "1K", "2K", "4K", "8K", "16K", "32K", "64K"});
  const auto thin = make_ticks({256, 65536}, Scale::log2, TickFormat::binary, 4);
  const auto labels = major_labels(thin);
  CHECK(labels.size() <= 5);
  CHECK(labels.size() >= 3);
  CHECK(thin.size() == 9);  // the others stay as minor ticks
}

TEST_CASE("log10 ticks: decades, and 1-2-5 on short ranges", "[chart][ticks]") {
  const auto wide = major_labels(make_ticks({1e3, 1e12}, Scale::log10, TickFormat::si, 10));
  CHECK(wide == std::vector<std::string>{"1K", "10K", "100K", "1M", "10M", "100M", "1G", "10G", "100G", "1T"});
  const auto short_range = major_labels(make_ticks({1, 100}, Scale::log10, TickFormat::plain, 8));
  CHECK(std::find(short_range.begin(), short_range.end(), "2") != short_range.end());
  CHECK(std::find(short_range.begin(), short_range.end(), "50") != short_range.end());
  // Less than an octave: linear ticks instead, still inside the range.
  const auto narrow = make_ticks({200, 260}, Scale::log10, TickFormat::plain, 6);
  REQUIRE(major_labels(narrow).size() >= 2);
  for (const Tick& t : narrow) CHECK((t.value >= 200 && t.value <= 260));
}

TEST_CASE("linear ticks are nice numbers covering the range", "[chart][ticks]") {
  const auto t = make_ticks({0, 7}, Scale::linear, TickFormat::plain, 8);
  CHECK(major_labels(t) == std::vector<std::string>{"0", "1", "2", "3", "4", "5", "6", "7"});
  const auto big = make_ticks({0, 1e6}, Scale::linear, TickFormat::si, 5);
  CHECK(major_labels(big) == std::vector<std::string>{"0", "200K", "400K", "600K", "800K", "1M"});
  CHECK(make_ticks({1, 1}, Scale::linear, TickFormat::plain).empty());  // an invalid range has no ticks
}

TEST_CASE("auto-fit: log axes keep positive data only, padded, limits win", "[chart][fit]") {
  ChartSpec c;
  c.x.scale = Scale::log2;
  c.y.scale = Scale::log10;
  Series s;
  s.x = {256, 1024, 0, 65536};
  s.y = {10, 1e6, 5, -3};  // x = 0 and y = -3 cannot be drawn on log axes
  c.series.push_back(s);
  const Range x = auto_fit(c, true), y = auto_fit(c, false);
  CHECK(x.lo < 256);
  CHECK(x.lo > 128);
  CHECK(x.hi > 1024);  // 65536 is dropped: its y is not plottable
  CHECK(x.hi < 2048);
  CHECK(y.lo < 10);
  CHECK(y.lo > 1);
  CHECK(y.hi > 1e6);
  c.y.min = 1;
  c.y.max = 1e9;
  CHECK(auto_fit(c, false).lo == 1);
  CHECK(auto_fit(c, false).hi == 1e9);
  ChartSpec empty;
  empty.y.scale = Scale::log10;
  CHECK(auto_fit(empty, false).lo == 1);
  CHECK(auto_fit(empty, false).hi == 10);
  CHECK(auto_fit(empty, true).lo == 0);
  CHECK(empty.empty());
}

TEST_CASE("auto-fit: a single point gets a range around it and bars start at zero", "[chart][fit]") {
  ChartSpec c;
  Series s;
  s.x = {5};
  s.y = {5};
  c.series.push_back(s);
  const Range r = auto_fit(c, false);
  CHECK(r.valid());
  CHECK(r.lo < 5);
  CHECK(r.hi > 5);
  c.kind = ChartKind::bars;
  c.categories = {"a"};
  CHECK(auto_fit(c, false).lo == 0);
  CHECK(auto_fit(c, true).lo == -0.5);
}

TEST_CASE("axis mapping is the inverse of itself on log axes", "[chart][fit]") {
  const Range r{256, 65536};
  for (double v : {256.0, 1000.0, 4096.0, 65536.0})
    CHECK(axis_value(axis_fraction(v, r, Scale::log2), r, Scale::log2) == Approx(v));
  CHECK(axis_fraction(4096, r, Scale::log2) == Approx(0.5));
  CHECK(!plottable(0, Scale::log10));
  CHECK(plottable(0, Scale::linear));
  CHECK(!plottable(std::numeric_limits<double>::infinity(), Scale::linear));
}

TEST_CASE("chart CSV round-trips series, NaN cells and labels", "[chart][csv]") {
  ChartSpec c;
  c.id = "test";
  Series a;
  a.name = "fa2, simulated";  // a comma: quoted
  a.x = {1, 2, 3};
  a.y = {0.1, std::numeric_limits<double>::quiet_NaN(), 1.0 / 3.0};
  a.point_labels = {"", "OOM", "x \"q\""};
  Series b;
  b.name = "standard";
  b.x = {1e-300, 1e300};
  b.y = {-0.0, 12345678.901234567};
  c.series = {a, b};
  c.ref_lines.push_back({true, 1024, "N = 1K", {}, Dash::dotted, 1, std::nullopt});
  c.markers.push_back({2, std::nullopt, "OOM", MarkerShape::cross, {}, 7});
  const std::string csv = chart_to_csv(c);
  CHECK(csv.rfind("chart,series,x,y,label,note,x_name,x_unit,y_name,y_unit\n", 0) == 0);
  const auto back = chart_series_from_csv(csv);
  REQUIRE(back.size() == 2);
  CHECK(back[0].name == a.name);
  CHECK(back[0].x == a.x);
  CHECK(back[0].y[0] == a.y[0]);
  CHECK(std::isnan(back[0].y[1]));
  CHECK(back[0].y[2] == a.y[2]);  // bit-exact: 17 significant digits
  CHECK(back[0].point_labels == a.point_labels);
  CHECK(back[1].x == b.x);
  CHECK(back[1].y[1] == b.y[1]);
  CHECK(back[1].point_labels.empty());
  CHECK(csv.find("ref: N = 1K") != std::string::npos);
  CHECK_THROWS_AS(chart_series_from_csv("a,b\n1,2\n"), std::runtime_error);
  CHECK_THROWS_AS(chart_series_from_csv("chart,series,x,y,label,note\nc,s,abc,1,,\n"), std::runtime_error);
}

TEST_CASE("heatmap and bars CSV name their cells", "[chart][csv]") {
  const BenchResults r = lab_grid();
  const ChartSpec h = bench_heatmap_chart(r, "torch_eager");
  const std::string csv = chart_to_csv(h);
  CHECK(csv.find("torch_eager") == std::string::npos);  // rows are batch values, not kernels
  CHECK(csv.find(",OOM,sequence length N,") != std::string::npos);
  // x is the sequence length itself, not the column's index; the axes named on every row.
  CHECK(csv.find("bench-heatmap,64,2048,,2K,OOM,sequence length N,,time (ms),ms\n") != std::string::npos);
  CHECK(csv.find("bench-heatmap,16,512,") != std::string::npos);
}

TEST_CASE("chart CSV names each axis and its unit on every row, after the columns its readers know", "[chart][csv]") {
  const BenchResults r = lab_grid();
  BenchFilter b16;
  b16.batch = 16;
  const auto rows_of = [](const ChartSpec& c) { return csv_parse(chart_to_csv(c)); };
  struct Expect {
    ChartSpec chart;
    std::vector<std::string> axes;
  };
  const std::vector<Expect> charts{
      {bench_metric_chart(r, BenchMetric::time, &b16), {"sequence length N", "", "time (ms, median)", "ms"}},
      {bench_metric_chart(r, BenchMetric::tflops, &b16), {"sequence length N", "", "TFLOP/s (4·B·H·N²·d, halved when causal)", "TFLOP/s"}},
      {bench_metric_chart(r, BenchMetric::memory, &b16), {"sequence length N", "", "peak device memory", "bytes"}},
      {bench_speedup_chart(r, "", &b16), {"configuration", "", "speed-up (baseline time / kernel time, ×)", "×"}},
      {bench_heatmap_chart(r, "fa2", nullptr, BenchMetric::tflops), {"sequence length N", "", "TFLOP/s", "TFLOP/s"}},
      {roofline_chart(lecture_context()), {"arithmetic intensity (FLOP/byte of DRAM traffic)", "FLOP/byte", "attainable FLOP/s", "FLOP/s"}}};
  for (const Expect& e : charts) {
    INFO(e.chart.id);
    const auto rows = rows_of(e.chart);
    REQUIRE(rows.size() > 1);
    CHECK(rows.front() == std::vector<std::string>{"chart", "series", "x", "y", "label", "note", "x_name", "x_unit", "y_name", "y_unit"});
    for (size_t k = 1; k < rows.size(); ++k) {
      if (rows[k].size() == 1 && rows[k][0].empty()) continue;
      REQUIRE(rows[k].size() == 10);
      CHECK(std::vector<std::string>(rows[k].begin() + 6, rows[k].end()) == e.axes);
    }
    CHECK_NOTHROW(chart_series_from_csv(chart_to_csv(e.chart)));  // the reader of the first six columns reads it still
  }
}

TEST_CASE("roofline chart: the ridge point and each algorithm's predicted point come from analysis", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const ChartSpec c = roofline_chart(ctx);
  CHECK(c.id == "roofline");
  REQUIRE(!c.markers.empty());
  CHECK(c.markers.front().x == Approx(312e12 / 1935e9));
  CHECK(c.markers.front().label == "ridge 161 FLOP/B");
  // A ceiling per distinct peak, the fp16 tensor one labelled with 312 TFLOP/s.
  bool found = false;
  for (const RefLine& l : c.ref_lines)
    if (!l.vertical && l.value == Approx(312e12)) found = l.label.find("312 TFLOP/s") != std::string::npos;
  CHECK(found);
  for (sim::Algorithm a : ctx.algorithms) {
    const sim::SimResult r = sim::simulate(a, ctx.problem, ctx.hw);
    const RooflineEstimate e = roofline(r, ctx.hw);
    const auto it = std::find_if(c.series.begin(), c.series.end(), [&](const Series& s) {
      const std::string_view title = sim::algorithm_info(a).title;
      return s.name.rfind(std::string(title.substr(0, title.find(" ("))) + " — model", 0) == 0;
    });
    REQUIRE(it != c.series.end());
    CHECK(it->x.front() == Approx(e.ai));
    CHECK(it->y.front() == Approx(e.attainable));
  }
}

TEST_CASE("roofline chart: measured points, and one above its roof is flagged", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  BenchResults r;
  // The rate is the model's FLOPs over the measured time (placement.hpp): times chosen for 50 and 5000 TFLOP/s.
  auto exact_flops_of = [&](const BenchRow& b) {
    sim::SimOptions o;
    o.stream_event_limit = 0;
    return static_cast<double>(sim::simulate(sim::Algorithm::fa2, b.problem, ctx.hw, o).total.flops());
  };
  BenchRow ok = row("fa2", 1, 1024, 0.5);
  ok.model = "fa2";
  ok.time_ms_median = exact_flops_of(ok) / 50e12 * 1e3;
  BenchRow above = row("fa2", 1, 2048, 0.5);
  above.model = "fa2";
  above.time_ms_median = exact_flops_of(above) / 5000e12 * 1e3;  // far above 312 TFLOP/s
  r.rows = {ok, above};
  const ChartSpec c = roofline_chart(ctx, &r);
  const auto it = std::find_if(c.series.begin(), c.series.end(), [](const Series& s) { return s.name == "fa2 — measured"; });
  REQUIRE(it != c.series.end());
  CHECK(it->y.size() == 2);
  CHECK(it->y.front() == Approx(50e12));
  CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.find("above the roof") != std::string::npos; }));
}

// A roofline that places no run says what the rows lack: counters-only rows
// are successful, they have no time (h200-validate.json: DRAM bytes counted, nothing timed).
TEST_CASE("roofline chart: results it cannot place say what they lack, not a status they have", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const auto note_of = [&](const BenchResults& r) {
    const ChartSpec c = roofline_chart(ctx, &r);
    const auto it = std::find_if(c.notes.begin(), c.notes.end(),
                                 [](const std::string& n) { return n.rfind(kNoRunPlaced, 0) == 0; });
    return it == c.notes.end() ? std::string() : *it;
  };
  BenchResults counted;
  for (const sim::i64 n : {1024, 2048}) {
    BenchRow x = row("fa2", 1, n, 0);  // ok, no time: the counters' run
    x.model = "fa2";
    x.dram_read_bytes = 1 << 20;
    x.dram_write_bytes = 1 << 18;
    counted.rows.push_back(x);
  }
  const std::string untimed = note_of(counted);
  CHECK_THAT(untimed, Catch::Contains("no timed run") && Catch::Contains("2 successful run(s)") &&
                          Catch::Contains("a dot on the roofline needs a time"));
  CHECK_THAT(untimed, !Catch::Contains("no successful"));
  BenchResults oom = counted;
  oom.rows.push_back(row("naive", 1, 4096, 0, RunStatus::oom));
  CHECK_THAT(note_of(oom), Catch::Contains("2 successful run(s)") && Catch::Contains("the other 1 did not run (1 OOM)"));
  oom.rows = {row("naive", 1, 4096, 0, RunStatus::oom)};
  oom.rows.push_back(row("naive", 1, 8192, 0, RunStatus::failed));
  CHECK_THAT(note_of(oom), Catch::Contains("no timed run: no run succeeded (1 OOM, 1 failed)"));
  BenchResults backward;
  BenchRow b = row("fa2", 1, 1024, 2.0);
  b.model = "fa2";
  b.direction = "bwd";
  backward.rows = {b};
  CHECK_THAT(note_of(backward), Catch::Contains("no timed run has a model, e.g.") && Catch::Contains("backward run"));
  CHECK_THAT(note_of(BenchResults{}), Catch::Contains("the results hold no rows"));
  // A timed run is placed: no such note.
  BenchRow ok = row("fa2", 1, 1024, 0.5);
  ok.model = "fa2";
  counted.rows.push_back(ok);
  CHECK(note_of(counted).empty());
}

TEST_CASE("IO chart: the simulated series equal simulate() at every point", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const ChartSpec c = io_chart(ctx, SweepAxis::seq);
  CHECK(c.id == "io-vs-n");
  CHECK(c.x.scale == Scale::log2);
  const std::vector<sim::i64> ns = default_sweep_values(SweepAxis::seq);
  for (size_t k = 0; k < ctx.algorithms.size(); ++k) {
    const Series& s = c.series[k];
    REQUIRE(s.x.size() == ns.size());
    for (size_t i = 0; i < ns.size(); ++i) {
      sim::AttentionProblem p = ctx.problem;
      p.seq_q = p.seq_kv = ns[i];
      sim::SimOptions opt;
      opt.stream_event_limit = 0;
      const sim::SimResult r = sim::simulate(ctx.algorithms[k], p, ctx.hw, opt);
      CHECK(s.y[i] == static_cast<double>(r.total.level(sim::Level::HBM).bytes()));
    }
  }
  // The Θ curves pass through standard (and FA1) at the largest point.
  const auto theta = std::find_if(c.series.begin(), c.series.end(),
                                  [](const Series& x) { return x.name.rfind("Θ(Nd + N²)", 0) == 0; });
  REQUIRE(theta != c.series.end());
  CHECK(theta->y.back() == Approx(c.series[0].y.back()));
  // The current N is marked.
  CHECK(std::any_of(c.ref_lines.begin(), c.ref_lines.end(), [](const RefLine& l) { return l.vertical && l.value == 1024; }));
}

TEST_CASE("IO chart against N: a dashed DRAM series per algorithm, equal to the sweep's L2 model at a chart's budget",
          "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const ChartSpec c = io_chart(ctx, SweepAxis::seq);
  SweepSpec spec;
  spec.values = default_sweep_values(SweepAxis::seq);
  sim::SimOptions chart_options = ctx.options;
  chart_options.l2_options.access_budget = kChartL2AccessBudget;
  chart_options.l2_options.access_limit = kChartL2AccessLimit;
  const std::vector<SweepRow> rows = run_sweep(ctx.problem, ctx.hw, spec, ctx.algorithms, chart_options);
  const size_t na = ctx.algorithms.size();
  for (size_t k = 0; k < na; ++k) {
    const std::string_view title = sim::algorithm_info(ctx.algorithms[k]).title;
    const std::string name = std::string(title.substr(0, title.find(" ("))) + ", DRAM after the L2";
    const auto s = std::find_if(c.series.begin(), c.series.end(), [&](const Series& x) { return x.name == name; });
    INFO(name);
    REQUIRE(s != c.series.end());
    CHECK(s->dash == Dash::dashed);
    CHECK(s->color == c.series[k].color);  // the algorithm's colour
    REQUIRE(s->y.size() == spec.values.size());
    for (size_t i = 0; i < spec.values.size(); ++i) {
      const sim::SimResult& r = rows[i * na + k].result;
      REQUIRE(r.l2.modelled);
      CHECK(s->y[i] == static_cast<double>(r.dram_bytes()));
      CHECK(s->y[i] <= static_cast<double>(r.l2.request_bytes()));
    }
  }
  // FlashAttention-2's K_j, V_j re-reads hit the L2: far below its requests at the largest N.
  CHECK(c.series[na + 2].y.back() < 0.1 * c.series[2].y.back());
}

TEST_CASE("seq_where_kv_fill_l2: 2·N·d·s = L2", "[chart][l2]") {
  CHECK(sim::seq_where_kv_fill_l2(128, sim::DType::fp16, 62914560) == 122880.0);  // H200: 60 MiB
  CHECK(sim::seq_where_kv_fill_l2(128, sim::DType::fp16, 41943040) == 81920.0);   // A100 40GB: 40 MiB
  CHECK(sim::seq_where_kv_fill_l2(64, sim::DType::fp32, 41943040) == 81920.0);
  CHECK(sim::seq_where_kv_fill_l2(96, sim::DType::bf16, 1000) == Approx(1000.0 / 384));
  CHECK(sim::seq_where_kv_fill_l2(128, sim::DType::fp16, 0) == 0.0);
  CHECK(sim::seq_where_kv_fill_l2(0, sim::DType::fp16, 41943040) == 0.0);
}

TEST_CASE("IO and AI charts mark where K and V of a head fill the L2, only inside the axis", "[chart][builders]") {
  ChartContext ctx = lecture_context();
  ctx.hw = sim::load_hardware("A100-SXM4-40GB");
  ctx.problem.head_dim = 128;
  auto kv_line = [](const ChartSpec& c) {
    return std::find_if(c.ref_lines.begin(), c.ref_lines.end(),
                        [](const RefLine& l) { return l.label.rfind("K, V of a head = L2", 0) == 0; });
  };
  for (const ChartSpec& c : {io_chart(ctx, SweepAxis::seq), ai_vs_n_chart(ctx)}) {
    INFO(c.id);
    const auto l = kv_line(c);
    REQUIRE(l != c.ref_lines.end());
    CHECK(l->vertical);
    CHECK(l->value == 40960.0);  // one of two partitions, 20 MiB / (2 · 128 · 2 B)
    CHECK(l->label == "K, V of a head = L2 of a partition (20 MiB)");
    // The CSV export carries it beside the series.
    CHECK(chart_to_csv(c).find("ref: K, V of a head = L2 of a partition (20 MiB)") != std::string::npos);
  }
  // An L2 of one partition: the whole L2.
  {
    ChartContext one = ctx;
    one.hw.l2_partitions = 1;
    const ChartSpec c = io_chart(one, SweepAxis::seq);
    const auto l = kv_line(c);
    REQUIRE(l != c.ref_lines.end());
    CHECK(l->value == 81920.0);  // 40 MiB / (2 · 128 · 2 B)
    CHECK(l->label == "K, V of a head = L2 (40 MiB)");
  }
  // Off the axis (d = 32: N = 163,840 > 128K): no line.
  ctx.problem.head_dim = 32;
  const ChartSpec d64 = io_chart(ctx, SweepAxis::seq);
  CHECK(kv_line(d64) == d64.ref_lines.end());
  // No L2 size: no line, no DRAM series, and a note says why.
  ctx.problem.head_dim = 128;
  ctx.hw.l2_bytes = 0;
  const ChartSpec bare = io_chart(ctx, SweepAxis::seq);
  CHECK(kv_line(bare) == bare.ref_lines.end());
  CHECK(std::none_of(bare.series.begin(), bare.series.end(),
                     [](const Series& x) { return x.name.find("DRAM after the L2") != std::string::npos; }));
  CHECK(std::any_of(bare.notes.begin(), bare.notes.end(),
                    [](const std::string& n) { return n.find("DRAM after the L2 left out") != std::string::npos; }));
}

TEST_CASE("IO chart vs M leaves out points whose tiles do not fit, with a note", "[chart][builders]") {
  ChartContext ctx = lecture_context();
  ctx.problem.head_dim = 256;
  const std::vector<sim::i64> tiny{1024, 96 * 1024};
  const ChartSpec c = io_chart(ctx, SweepAxis::sram, &tiny);
  CHECK(std::isnan(c.series[1].y[0]));  // FA1 cannot tile d = 256 in 1 KiB
  CHECK(!std::isnan(c.series[1].y[1]));
  CHECK(std::any_of(c.notes.begin(), c.notes.end(), [](const std::string& n) { return n.find("left out") != std::string::npos; }));
}

TEST_CASE("AI vs N chart and the ridge line", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const ChartSpec c = ai_vs_n_chart(ctx);
  // AI on DRAM (solid), then on the requests (dashed), per algorithm.
  REQUIRE(c.series.size() == 2 * ctx.algorithms.size());
  for (size_t k = 0; k < ctx.algorithms.size(); ++k) {
    const Series& dram = c.series[k];
    const Series& req = c.series[ctx.algorithms.size() + k];
    CHECK(req.dash == Dash::dashed);
    CHECK(req.name == std::string(sim::to_string(ctx.algorithms[k])) + ", on the requests");
    REQUIRE(req.y.size() == dram.y.size());
    // The L2 only removes traffic: AI on DRAM is at least AI on the requests.
    // Not for standard attention: its GEMMs' re-reads of K_j, V_j go to the L2
    // outside the paper's count, and the part that misses reaches DRAM.
    if (sim::algorithm_info(ctx.algorithms[k]).materializes_scores) continue;
    for (size_t i = 0; i < req.y.size(); ++i) CHECK(dram.y[i] >= req.y[i] * (1 - 1e-12));
  }
  CHECK(std::any_of(c.ref_lines.begin(), c.ref_lines.end(),
                    [](const RefLine& l) { return !l.vertical && std::fabs(l.value - 161.24) < 0.1; }));
  // FlashAttention's AI grows with N; standard attention's stays low.
  const Series& fa1 = c.series[1];
  CHECK(fa1.y.back() > fa1.y.front());
  CHECK(c.series[0].y.back() < fa1.y.back());
}

TEST_CASE("layout and hit test: the nearest point under the pointer, in the axes' formats", "[chart][render]") {
  ChartSpec c;
  c.x = {"N", Scale::log2, TickFormat::binary, {}, {}, false, ""};
  c.y = {"bytes", Scale::log10, TickFormat::bytes, {}, {}, false, ""};
  Series s;
  s.name = "fa2";
  s.x = {1024, 4096};
  s.y = {1e6, 1e8};
  c.series.push_back(s);
  CountingCanvas cv;
  const ChartLayout L = layout_chart(c, cv, {0, 0, 800, 500}, ChartStyle{});
  CHECK(L.plot.w > 500);
  CHECK(L.plot.h > 300);
  const Point p = L.to_px(4096, 1e8);
  CHECK(L.to_data(p).x == Approx(4096));
  const ChartHit hit = hit_test(c, L, {p.x + 3, p.y - 2}, 10);
  CHECK(hit.series == 0);
  CHECK(hit.point == 1);
  CHECK(hit.text == "fa2: N = 4K, bytes = 100 MB");
  CHECK(!hit_test(c, L, {p.x + 40, p.y + 40}, 10).hit());
  render_chart(c, cv, L, ChartStyle{});
  CHECK(cv.clips == 0);  // every clip pushed was popped
  CHECK(std::find(cv.texts.begin(), cv.texts.end(), "4K") != cv.texts.end());
}

TEST_CASE("a chart too small to draw draws nothing and does not fail", "[chart][render]") {
  const ChartSpec c = roofline_chart(lecture_context());
  CountingCanvas cv;
  for (double w : {0.0, 3.0, 40.0, 120.0}) {
    const ChartLayout L = layout_chart(c, cv, {0, 0, w, w * 0.6}, ChartStyle{});
    render_chart(c, cv, L, ChartStyle{});
    CHECK(cv.clips == 0);
  }
}

TEST_CASE("an empty chart shows its reason instead of axes", "[chart][render]") {
  ChartSpec c;
  c.title = "nothing";
  c.notes.push_back("no results loaded");
  CountingCanvas cv;
  render_chart(c, cv, layout_chart(c, cv, {0, 0, 600, 400}, ChartStyle{}), ChartStyle{});
  CHECK(std::find(cv.texts.begin(), cv.texts.end(), "no results loaded") != cv.texts.end());
  CHECK(std::find(cv.texts.begin(), cv.texts.end(), "0.5") == cv.texts.end());  // no tick labels
}

TEST_CASE("a measured profile draws its mma.sync figure as the Ampere path, dotted, named", "[analysis][chart]") {
  ChartContext ctx = lecture_context();
  const std::string path = sim::assets_dir() + "/hardware/measured/H200-SXM-141GB-2026-11-25.json";
  ctx.hw = sim::load_hardware(path);
  auto ampere = [](const ChartSpec& c) {
    int n = 0;
    for (const RefLine& l : c.ref_lines)
      if (l.label.find("mma.sync") != std::string::npos && l.label.find("Ampere path") != std::string::npos) {
        CHECK(l.dash == Dash::dotted);
        CHECK(l.value == Approx(635.28e12).epsilon(1e-3));  // the H200's fp16 mma.sync, measured
        ++n;
      }
    return n;
  };
  CHECK(ampere(roofline_chart(ctx)) == 0);  // the hardware model alone has only its roofs
  ctx.profile = measured_profile_of(ctx.hw, path);
  REQUIRE(ctx.profile);
  CHECK(ampere(roofline_chart(ctx)) == 1);  // the problem's dtype only
  // A preset name is no profile, nor a preset-format file.
  CHECK_FALSE(measured_profile_of(sim::load_hardware("H200-SXM-141GB"), "H200-SXM-141GB"));
  CHECK(ceilings_of(ctx).compute.size() > hierarchical_ceilings(ctx.hw).compute.size());
}

namespace {

// Records the filled rectangles and the texts drawn, with where they went.
class RecordingCanvas : public NullCanvas {
 public:
  struct Text {
    Point at;
    std::string s;
  };
  void rect_filled(Rect r, Color c) override { rects.push_back({r, c}); }
  void text(Point p, const std::string& s, double, Color, HAlign, VAlign, bool) override { texts.push_back({p, s}); }
  const Text* find(const std::string& s) const {
    for (const Text& t : texts)
      if (t.s == s) return &t;
    return nullptr;
  }
  std::vector<std::pair<Rect, Color>> rects;
  std::vector<Text> texts;
};

}  // namespace

TEST_CASE("stacked bars: segments one on another, the stack's height fitted, the segment under the pointer", "[chart][render]") {
  ChartSpec c;
  c.kind = ChartKind::bars;
  c.stacked = true;
  c.legend = LegendPos::none;
  c.categories = {"a", "b"};
  Series low, high;
  low.name = "low";
  low.style = high.style = SeriesStyle::bars;
  low.x = high.x = {0, 1};
  low.y = {30, 10};
  low.point_labels = {"thirty", ""};
  high.name = "high";
  high.y = {50, 20};
  low.color = palette(0);
  high.color = palette(1);
  c.series = {low, high};
  CHECK(stack_tops(c) == std::vector<double>{80, 30});
  // The y axis reaches the tallest stack, not the tallest segment.
  const Range y = auto_fit(c, false);
  CHECK(y.lo == 0);
  CHECK(y.hi >= 80);
  RecordingCanvas cv;
  const ChartLayout L = layout_chart(c, cv, {0, 0, 800, 500}, ChartStyle{});
  render_chart(c, cv, L, ChartStyle{});
  // Category a: "low" from 0 to 30, "high" from 30 to 80, the same width.
  auto segment = [&](Color col, size_t nth) {
    size_t seen = 0;
    for (const auto& [r, rc] : cv.rects)
      if (rc == col && seen++ == nth) return r;
    FAIL("no segment");
    return Rect{};
  };
  const Rect a_low = segment(palette(0), 0), a_high = segment(palette(1), 0);
  CHECK(a_low.bottom() == Approx(L.px_y(0)));
  CHECK(a_low.y == Approx(L.px_y(30)));
  CHECK(a_high.bottom() == Approx(L.px_y(30)));
  CHECK(a_high.y == Approx(L.px_y(80)));
  CHECK(a_high.x == Approx(a_low.x));
  CHECK(a_high.w == Approx(a_low.w));
  // A segment's label inside it, where it fits.
  const RecordingCanvas::Text* label = cv.find("thirty");
  REQUIRE(label);
  CHECK(a_low.contains(label->at));
  // The pointer over category b at height 20 is in "high" (10 … 30).
  const ChartHit hit = hit_test(c, L, L.to_px(1, 20), 5);
  CHECK(hit.series == 1);
  CHECK(hit.point == 1);
  CHECK(hit.text == "high @ b: 20");
  CHECK(hit_test(c, L, L.to_px(1, 5), 5).series == 0);
  CHECK_FALSE(hit_test(c, L, L.to_px(0.5, 5), 5).hit());  // between the bars
}

TEST_CASE("bar categories too wide for their slot go on two lines, a repeated first line once", "[chart][render]") {
  ChartSpec c;
  c.kind = ChartKind::bars;
  c.legend = LegendPos::none;
  Series s;
  s.name = "t";
  s.style = SeriesStyle::bars;
  for (const char* model : {"Model-Alpha-7B", "Model-Beta-13B"})
    for (const char* n : {"8K", "32K", "128K"}) {
      s.x.push_back(static_cast<double>(c.categories.size()));
      s.y.push_back(1);
      c.categories.push_back(std::string(model) + " " + n);
    }
  c.series = {s};
  RecordingCanvas wide;
  const ChartLayout one = layout_chart(c, wide, {0, 0, 2000, 500}, ChartStyle{});
  CHECK_FALSE(one.two_line_categories);
  render_chart(c, wide, one, ChartStyle{});
  CHECK(wide.find("Model-Alpha-7B 8K"));
  RecordingCanvas narrow;
  const ChartLayout two = layout_chart(c, narrow, {0, 0, 700, 500}, ChartStyle{});
  REQUIRE(two.two_line_categories);
  render_chart(c, narrow, two, ChartStyle{});
  // Every category's second line, its model once over its first bar.
  for (const char* n : {"8K", "32K", "128K"}) {
    int count = 0;
    for (const auto& t : narrow.texts) count += t.s == n;
    CHECK(count == 2);
  }
  for (const char* model : {"Model-Alpha-7B", "Model-Beta-13B"}) {
    int count = 0;
    for (const auto& t : narrow.texts) count += t.s == model;
    CHECK(count == 1);
  }
  CHECK_FALSE(narrow.find("Model-Alpha-7B 8K"));
  CHECK(narrow.find("8K")->at.y > narrow.find("Model-Alpha-7B")->at.y);
  CHECK(narrow.find("Model-Alpha-7B")->at.y >= two.plot.bottom());
}

TEST_CASE("one table of colours: a model algorithm in its rung's colour, a backward in its forward's", "[chart]") {
  // The model's algorithm and the rung that implements it read alike in every chart.
  const std::pair<sim::Algorithm, const char*> pairs[] = {
      {sim::Algorithm::standard, "naive_cublas"}, {sim::Algorithm::standard_bwd, "naive_bwd"},
      {sim::Algorithm::fa1, "fa1"},               {sim::Algorithm::fa2, "fa2"},
      {sim::Algorithm::fa2_bwd, "fa2_bwd"},       {sim::Algorithm::pytorch, "torch_eager"}};
  for (const auto& [a, id] : pairs) {
    INFO(sim::to_string(a) << " and " << id);
    CHECK(algorithm_colour(a) == implementation_colour(id));
  }
  // Every row that names a model gives it its colour; no model is named twice.
  for (const Implementation& i : implementations()) {
    if (i.model.empty()) continue;
    INFO(i.id << " names model " << i.model);
    const std::optional<sim::Algorithm> a = sim::parse_algorithm(i.model);
    REQUIRE(a);
    CHECK(sim::algorithm_info(*a).key == i.model);
    CHECK(implementation_of(*a) == &i);
    CHECK(algorithm_colour(*a) == implementation_colour(std::string(i.id)));
  }
  // Every algorithm has a row, its own or its forward's; a backward shares its forward's colour.
  for (sim::Algorithm a : sim::all_algorithms()) {
    INFO(sim::to_string(a));
    CHECK(implementation_of(a) != nullptr);
    CHECK(algorithm_colour(a) == algorithm_colour(sim::forward_of(a)));
  }
  // The forward algorithms, which one model chart can hold together, are told apart.
  const std::vector<sim::Algorithm>& fwd = sim::algorithms_of(sim::Pass::fwd);
  for (size_t i = 0; i < fwd.size(); ++i)
    for (size_t j = i + 1; j < fwd.size(); ++j) {
      INFO(sim::to_string(fwd[i]) << " and " << sim::to_string(fwd[j]));
      CHECK_FALSE(algorithm_colour(fwd[i]) == algorithm_colour(fwd[j]));
    }
}

TEST_CASE("a model chart tells a backward from its forward by an open marker in the same colour", "[chart][builders]") {
  ChartContext ctx = lecture_context();
  ctx.algorithms = {sim::Algorithm::standard, sim::Algorithm::fa2, sim::Algorithm::standard_bwd, sim::Algorithm::fa2_bwd};
  const ChartSpec c = roofline_chart(ctx);
  for (sim::Algorithm a : ctx.algorithms) {
    const std::string_view title = sim::algorithm_info(a).title;
    const std::string name = std::string(title.substr(0, title.find(" ("))) + " — model";
    const auto it = std::find_if(c.series.begin(), c.series.end(), [&](const Series& s) { return s.name == name; });
    INFO(name);
    REQUIRE(it != c.series.end());
    CHECK(it->color == algorithm_colour(a));
    CHECK(it->open_marker == (sim::algorithm_info(a).pass == sim::Pass::bwd));
  }
}

TEST_CASE("a grid run under an allocation limit names it in every bench chart's title", "[chart][bench]") {
  BenchResults r = lab_grid();
  for (BenchRow& x : r.rows) x.mem_limit_bytes = 15LL << 30;
  BenchFilter b64;
  b64.batch = 64;
  for (const ChartSpec& c : {bench_metric_chart(r, BenchMetric::time, &b64), bench_speedup_chart(r, "", &b64),
                             bench_heatmap_chart(r, "fa2")}) {
    INFO(c.id);
    CHECK_THAT(c.title, Catch::Contains("(allocations capped at 15 GiB per case)"));
  }
  r.rows.front().mem_limit_bytes = 0;  // one run on the whole GPU
  CHECK_THAT(bench_metric_chart(r, BenchMetric::time).title, Catch::Contains("some runs with allocations capped at 15 GiB"));
  CHECK_THAT(bench_metric_chart(lab_grid(), BenchMetric::time).title, !Catch::Contains("capped"));
}

TEST_CASE("the throughput heatmap beside the time heatmap: the same cells, TFLOP/s", "[chart][bench]") {
  const BenchResults r = lab_grid();
  const ChartSpec time = bench_heatmap_chart(r, "fa2");
  const ChartSpec rate = bench_heatmap_chart(r, "fa2", nullptr, BenchMetric::tflops);
  CHECK(rate.id == "bench-heatmap-tflops");
  CHECK_THAT(rate.title, Catch::StartsWith("Forward throughput, batch × N — FlashAttention-2 (CUDA cores)"));
  REQUIRE(rate.heatmap.values.size() == time.heatmap.values.size());
  REQUIRE(rate.heatmap.values.size() == 9);
  for (size_t k = 0; k < 9; ++k) CHECK(rate.heatmap.values[k] == Approx(10.0 / time.heatmap.values[k]));
  CHECK(find_chart("bench-heatmap-tflops") != nullptr);
}

TEST_CASE("implementations keep one colour and one name in every chart", "[chart][bench]") {
  CHECK(implementation_name("sdpa_cudnn") == "PyTorch SDPA (cuDNN)");
  CHECK(implementation_name("sdpa_flash") == "PyTorch SDPA (FlashAttention-2)");
  CHECK(run_name("torch_eager", "bwd") == "PyTorch eager backward");
  CHECK(run_name("fa2_tc_bwd", "bwd") == "FlashAttention-2 backward (tensor cores)");
  CHECK(implementation_name("mystery") == "mystery");
  // A backward rung takes its forward's colour; the families are told apart.
  CHECK(implementation_colour("fa2_tc_bwd") == implementation_colour("fa2_tc"));
  CHECK(implementation_colour("fa2_bwd") == implementation_colour("fa2"));
  CHECK(implementation_colour("naive_bwd") == implementation_colour("naive_cublas"));
  // Every rung of ours and every PyTorch id in a colour of its own: one bench chart holds them all.
  std::vector<std::string> families;
  for (const Implementation& i : implementations())
    if (i.family == i.id) families.emplace_back(i.id);
  for (size_t a = 0; a < families.size(); ++a)
    for (size_t b = a + 1; b < families.size(); ++b) {
      INFO(families[a] << " and " << families[b]);
      CHECK_FALSE(implementation_colour(families[a]) == implementation_colour(families[b]));
    }
  CHECK(implementation_colour("mystery") == implementation_colour("mystery"));
  for (const std::string& f : families) CHECK_FALSE(implementation_colour("mystery") == implementation_colour(f));
}

TEST_CASE("a heatmap needs most of its cells: two runs on a 2 × 2 grid draw none", "[chart][bench]") {
  BenchResults r;
  r.rows = {row("fa2", 16, 512, 1.0), row("fa2", 32, 1024, 2.0)};
  const ChartSpec c = bench_heatmap_chart(r, "fa2");
  CHECK(c.empty());
  CHECK(std::any_of(c.notes.begin(), c.notes.end(),
                    [](const std::string& n) { return n.find("only 2 of the 4 batch × N cells") != std::string::npos; }));
  r.rows.push_back(row("fa2", 16, 1024, 1.5));
  CHECK_FALSE(bench_heatmap_chart(r, "fa2").empty());  // 3 of 4
}

TEST_CASE("a head-dim sweep at fixed heads says its embedding dim on the axis", "[chart][bench]") {
  BenchResults r;
  for (sim::i64 d : {64, 128, 256}) {
    r.rows.push_back(row("fa2", 32, 1024, 1.0));
    r.rows.back().problem.heads = 16;
    r.rows.back().problem.head_dim = d;
  }
  const ChartSpec c = bench_metric_chart(r, BenchMetric::time);
  CHECK(c.x.label == "head dimension d (embedding dim 16·d)");
  REQUIRE(c.series.size() == 1);
  CHECK(c.series[0].x == std::vector<double>{64, 128, 256});
}

TEST_CASE("memory ticks in powers of 1024, as the report's tables write memory", "[chart][ticks]") {
  CHECK(format_tick(1536.0 * 1048576, TickFormat::bytes_iec) == "1.5 GiB");
  CHECK(format_tick(512.0 * 1048576, TickFormat::bytes_iec) == "512 MiB");
  // A linear axis: one unit for every label.
  const auto lin = major_labels(make_ticks({0, 3.2 * 1073741824.0}, Scale::linear, TickFormat::bytes_iec, 6));
  REQUIRE(lin.size() >= 3);
  CHECK(lin.front() == "0");
  for (size_t k = 1; k < lin.size(); ++k) CHECK_THAT(lin[k], Catch::EndsWith(" GiB"));
  // A log axis: powers of two.
  const auto log = major_labels(make_ticks({100.0 * 1048576, 10.0 * 1073741824}, Scale::log10, TickFormat::bytes_iec, 8));
  CHECK(std::find(log.begin(), log.end(), "1 GiB") != log.end());
  CHECK(std::find(log.begin(), log.end(), "256 MiB") != log.end());
}

TEST_CASE("a series on another's points is found, and named '=' only when the numbers are the same", "[chart][render]") {
  ChartSpec c;
  Series a, b, close, other;
  a.name = "fa2_tc";
  a.x = b.x = close.x = other.x = {1, 2, 3};
  a.y = {100, 200, 400};
  b.name = "sdpa";
  b.y = a.y;
  close.name = "sdpa, a byte more";
  close.y = {100, 200, 400.01};
  other.name = "eager";
  other.y = {300, 600, 1200};
  c.series = {a, b, close, other};
  const std::vector<int> on = coinciding_series(c);
  CHECK(on == std::vector<int>{-1, 0, 0, -1});
  CHECK(same_points(a, b));
  CHECK_FALSE(same_points(a, close));
  // Drawn so that both show: the legend says who lies on whom, and no text covers a point.
  const DrawnChart d(c, {0, 0, 800, 500});
  std::vector<std::string> texts;
  for (const DrawnText& t : d.drawn.texts) texts.push_back(t.text);
  CHECK(std::find(texts.begin(), texts.end(), "= sdpa") != texts.end());
  CHECK(std::find(texts.begin(), texts.end(), "≈ sdpa, a byte more") != texts.end());
  // Named once, under the series it lies on: not again as an entry of its own.
  CHECK(std::count(texts.begin(), texts.end(), "sdpa") == 0);
  CHECK(std::count(texts.begin(), texts.end(), "sdpa, a byte more") == 0);
  CHECK(std::count(texts.begin(), texts.end(), "fa2_tc") == 1);
  CHECK(std::count(texts.begin(), texts.end(), "eager") == 1);
  CHECK(d.drawn.marks.size() == 12);  // every point of every series is a data mark
  CHECK(d.problems.empty());
  // Two roofline dots at nearly the same intensity (FA1 and FA2 at 513 and 518
  // FLOP/B on a log axis): one lies on the other; 600 is a marker or more away.
  ChartSpec r;
  r.x.scale = r.y.scale = Scale::log10;
  Series roof, fa1, fa2, far;
  roof.x = {1, 1e4};
  roof.y = {1e12, 3e14};
  fa1.x = {513.2}, fa2.x = {518.2}, far.x = {600};
  fa1.y = fa2.y = far.y = {3.12e14};
  fa1.style = fa2.style = far.style = SeriesStyle::points;
  r.series = {roof, fa1, fa2, far};
  CHECK(coinciding_series(r) == std::vector<int>{-1, -1, 1, -1});
}

TEST_CASE("the HBM-vs-N legend names every series once: one drawn on another only under it", "[chart][render]") {
  ChartContext ctx = lecture_context();
  ctx.problem.batch = 64;
  ctx.problem.heads = 16;
  ctx.problem.seq_q = ctx.problem.seq_kv = 4096;
  const ChartSpec c = io_chart(ctx, SweepAxis::seq);
  const std::vector<int> on = coinciding_series(c);
  REQUIRE(std::count_if(on.begin(), on.end(), [](int k) { return k >= 0; }) >= 2);  // the chart has such series
  const DrawnChart d(c, {0, 0, 1200, 800});
  std::vector<std::string> texts;
  for (const DrawnText& t : d.drawn.texts) texts.push_back(t.text);
  for (size_t k = 0; k < c.series.size(); ++k) {
    const std::string& name = c.series[k].name;
    if (name.empty() || !c.series[k].in_legend) continue;
    const auto as_entry = std::count(texts.begin(), texts.end(), name);
    const auto nested = std::count(texts.begin(), texts.end(), "= " + name) +
                        std::count(texts.begin(), texts.end(), "≈ " + name);
    INFO(name);
    CHECK(as_entry + nested == 1);
    CHECK(nested == (on[k] >= 0 ? 1 : 0));
  }
}

TEST_CASE("the layout check names text over text, over a data point, outside the chart and cut short", "[chart][render]") {
  NullCanvas base;
  LayoutRecorder drawn(base);
  drawn.text({100, 100}, "OOM", 12, {}, HAlign::left, VAlign::top);
  drawn.text({105, 102}, "OOM", 12, {}, HAlign::left, VAlign::top);
  drawn.text({300, 300}, "label", 12, {}, HAlign::left, VAlign::top);
  drawn.data_mark({305, 303, 6, 6});
  drawn.text({790, 10}, "a long footnote", 12, {}, HAlign::left, VAlign::top);
  drawn.text({10, 200}, "GPU 0 has a total capaci…", 12, {}, HAlign::left, VAlign::top);
  drawn.text({50, 450}, "vertical", 12, {}, HAlign::left, VAlign::middle, true);  // runs up from y = 450
  const std::vector<std::string> p = layout_problems(drawn, {0, 0, 800, 500});
  auto has = [&](const std::string& s) {
    return std::any_of(p.begin(), p.end(), [&](const std::string& x) { return x.find(s) != std::string::npos; });
  };
  CHECK(has("'OOM' overlaps 'OOM'"));
  CHECK(has("'label' covers a data point"));
  CHECK(has("'a long footnote' reaches outside the chart"));
  CHECK(has("is cut short"));
  CHECK_FALSE(has("'vertical'"));
  REQUIRE(drawn.texts.size() == 6);
  const Rect v = drawn.texts.back().box;  // a vertical text's box stands up from its anchor
  CHECK(v.w < v.h);
  CHECK(v.bottom() == Approx(450));
}

TEST_CASE("bar values never run together: crowded labels turn or step aside", "[chart][render]") {
  std::vector<std::vector<double>> values(5);
  for (int k = 0; k < 5; ++k)
    for (int cat = 0; cat < 4; ++cat) values[k].push_back(0.3 + 0.01 * k + cat);
  ChartSpec c = bars_of({"N=512 b=16", "N=512 b=8", "N=1K b=16", "N=1K b=8"}, values, "5");
  // A category none of whose bars ran, one reason: said once over the group.
  for (Series& s : c.series) {
    s.y[3] = std::numeric_limits<double>::quiet_NaN();
    s.point_labels[3] = "PyTorch eager OOM";
  }
  const DrawnChart d(c, {0, 0, 640, 420});
  const LayoutRecorder& drawn = d.drawn;
  CHECK(d.problems.empty());
  CHECK(said_in(drawn, "PyTorch eager OOM") == "PyTorch eager OOM");
  // Every category named.
  for (const std::string& cat : c.categories) {
    const bool named = std::any_of(drawn.texts.begin(), drawn.texts.end(), [&](const DrawnText& t) {
      return cat.rfind(t.text, 0) == 0 || cat.find(t.text) != std::string::npos;
    });
    CHECK(named);
  }
}

TEST_CASE("a point without a value says why in the CSV's note, and an OOM cell's ✕ is drawn once per cell and colour",
          "[chart][csv]") {
  const BenchResults r = lab_grid();
  // Two batches out of memory at the same N: one ✕, both named.
  BenchFilter all;
  const ChartSpec c = bench_metric_chart(r, BenchMetric::time, &all);
  const std::string csv = chart_to_csv(c);
  CHECK_THAT(csv, Catch::Contains("PyTorch eager b=64,1024,,,OOM,sequence length N,,\"time (ms, median)\",ms\n"));
  REQUIRE(c.markers.size() == 2);
  for (const Marker& m : c.markers) CHECK(m.label == (m.x == 2048 ? "OOM b=32, b=64" : "OOM b=64"));
}

TEST_CASE("a bar's value is never struck through by a reference line: under \"1×\" it climbs past the line", "[chart][render]") {
  ChartSpec c = bars_of({"N=512", "N=1K"}, {{0.726, 0.647}, {0.96, 0.98}, {6.16, 4.43}}, "×");
  RefLine one;
  one.value = 1;
  one.label = "1× = baseline";
  c.ref_lines.push_back(one);
  const DrawnChart d(c, {0, 0, 640, 420});
  CHECK(d.problems.empty());
  const double y = d.layout.px_y(1.0);
  int values = 0;
  for (const DrawnText& t : d.drawn.texts) {
    if (t.text.empty() || t.text.back() != '\x97' || t.text == one.label) continue;  // "…×" (UTF-8 ends in 0x97)
    INFO(t.text << " at y " << t.box.y << "–" << t.box.bottom() << ", the line at " << y);
    CHECK((t.box.bottom() < y - 0.5 || t.box.y > y + 0.5));
    ++values;
  }
  CHECK(values == 6);  // every value said
}

// The lecture's speed-up at N = 2K, the baseline out of memory there: the
// "1×" line's name stands at the group's base, so the group's reason climbs
// past it (on two lines where one is wider than the group), at the export's
// size, at the hall's (UI scale 2) and on a small window, never struck through by the line.
TEST_CASE("a group whose baseline ran out of memory says so where a reference line's name stands at its base",
          "[chart][render]") {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  ChartSpec c = bars_of({"N=512", "N=1K", "N=2K"}, {{0.726, 0.647, nan}, {0.436, 0.282, nan}, {0.531, 0.339, nan}, {6.16, 4.43, nan}},
                        "×");
  const std::string why = "standard attention (cuBLAS) OOM";
  RefLine one;
  one.value = 1;
  one.label = "1× = standard attention (cuBLAS)";
  one.dash = Dash::dashed;
  c.ref_lines.push_back(one);
  const ChartSpec unsaid = c;  // the same chart with no reason: its texts are the others
  for (Series& s : c.series) s.point_labels[2] = why;
  for (const auto& [box, scale] : {std::pair<Rect, double>{{0, 0, 1200, 800}, 1.0}, {{0, 0, 1400, 560}, 2.0},
                                   {{0, 0, 640, 420}, 1.0}}) {
    INFO(box.w << "×" << box.h << " at scale " << scale);
    ChartStyle st;
    st.scale = scale;
    NullCanvas base;
    LayoutRecorder drawn(base);
    const ChartLayout layout = layout_chart(c, drawn, box, st);
    render_chart(c, drawn, layout, st);
    const std::vector<std::string> problems = layout_problems(drawn, layout.outer);
    for (const std::string& p : problems) UNSCOPED_INFO(p);
    CHECK(problems.empty());
    // Said once, whole or as its two lines one under the other, inside the N=2K
    // group: the texts the chart without the reason does not draw (the 1× line's
    // name, which may stand in the same group in words of the reason, set apart).
    NullCanvas base_unsaid;
    LayoutRecorder others(base_unsaid);
    render_chart(unsaid, others, layout_chart(unsaid, others, box, st), st);
    std::multiset<std::string> other_texts;
    for (const DrawnText& t : others.texts) other_texts.insert(t.text);
    std::vector<DrawnText> reason;
    std::string said;
    for (const DrawnText& t : drawn.texts) {
      if (const auto o = other_texts.find(t.text); o != other_texts.end()) {
        other_texts.erase(o);
        continue;
      }
      if (t.text.empty() || why.find(t.text) == std::string::npos) continue;
      reason.push_back(t);
      said += (said.empty() ? "" : " ") + t.text;
    }
    CHECK(said == why);
    for (const DrawnText& t : reason) {
      CHECK(t.box.x >= layout.px_x(1.5));
      CHECK(t.box.right() <= layout.plot.right());
      CHECK((t.box.bottom() < layout.px_y(1.0) - 0.5 || t.box.y > layout.px_y(1.0) + 0.5));
    }
  }
}

TEST_CASE("on a crowded chart the labels a caller names first keep their places", "[chart][render]") {
  // Twenty labelled points on a 5 × 4 grid with long names: not every label finds a spot.
  ChartSpec c;
  c.kind = ChartKind::xy;
  c.legend = LegendPos::none;
  c.x = {"x", Scale::linear, TickFormat::plain, 0.0, 6.0, false, ""};
  c.y = {"y", Scale::linear, TickFormat::plain, 0.0, 5.0, false, ""};
  for (int k = 0; k < 20; ++k) {
    Series s;
    s.name = "run " + std::to_string(k);
    s.style = SeriesStyle::points;
    s.marker = MarkerShape::cross;
    s.color = palette(k % 6);
    s.x = {1.0 + k % 5};
    s.y = {1.0 + k / 5};
    s.point_labels = {"kernel_" + std::to_string(k) + " " + std::to_string(300 + 7 * k) + " TFLOP/s"};
    c.series.push_back(s);
  }
  const auto drawn_labels = [&](const RenderExtras* extras) {
    const DrawnChart d(c, {0, 0, 480, 300}, extras);
    CHECK(d.problems.empty());
    std::set<std::string> out;
    for (const DrawnText& t : d.drawn.texts) out.insert(t.text);
    return out;
  };
  const std::set<std::string> plain = drawn_labels(nullptr);
  std::vector<std::string> left_out;
  for (const Series& s : c.series)
    if (!plain.count(s.point_labels[0])) left_out.push_back(s.point_labels[0]);
  REQUIRE(!left_out.empty());  // the crowd leaves some out
  // Each of them is drawn when it is named first.
  for (const std::string& label : left_out) {
    INFO(label);
    RenderExtras extras;
    extras.named_first = {label};
    const std::set<std::string> named = drawn_labels(&extras);
    const std::string one = label.substr(0, label.find(' ')), two = label.substr(label.find(' ') + 1);
    CHECK((named.count(label) == 1 || (named.count(one) == 1 && named.count(two) == 1)));
  }
}
