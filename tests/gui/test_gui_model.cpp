// The GUI's model layer, without a display: inputs -> model (and invalid
// inputs -> no stale numbers), the tiling snapshot against a brute-force
// replay, lockstep, playback, scenarios, and the plot tabs, scenario names and
// chart slots that follow the chart table.
#include <catch2/catch.hpp>

#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <memory>
#include <fstream>
#include <random>
#include <thread>
#include <system_error>
#include <vector>

#include "../analysis/chart_fixtures.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "state/format.hpp"
#include "model/chart_cache.hpp"
#include "model/model.hpp"
#include "panels/panels.hpp"
#include "draw/plot_tabs.hpp"
#include "presenter/scenario.hpp"
#include "shipped_scenarios.hpp"
#include "draw/theme.hpp"

using namespace flashlab;
using namespace flashlab::gui;
namespace fs = std::filesystem;

namespace {

// AppState owns cursors, a worker thread and a mutex: built in place, never copied.
std::unique_ptr<AppState> make_state(const std::string& seq, sim::Algorithm a, sim::Algorithm b) {
  auto s = std::make_unique<AppState>();
  s->inputs.seq = seq;
  s->inputs.algo_a = a;
  s->inputs.algo_b = b;
  s->inputs.compare = a != b;
  recompute(*s);
  return s;
}

// Visits of the cursor's current pass that finished before the last applied
// event, counted per row block, by walking the schedule's structure.
std::vector<sim::i64> brute_done(const sim::Schedule& sch, const sim::Cursor& c) {
  const sim::TileGrid& g = sch.grid();
  std::vector<sim::i64> done(static_cast<size_t>(g.T_r), 0);
  const auto& w = c.where();
  using P = sim::Cursor::Part;
  if (w.part == P::start || w.part == P::prologue) return done;
  const bool skips_masked = sch.info().skips_masked_blocks;
  if (w.part == P::epilogue) {
    for (sim::i64 i = 0; i < g.T_r; ++i) done[static_cast<size_t>(i)] = skips_masked && g.causal ? g.last_col(i) + 1 : g.T_c;
    return done;
  }
  const int phase = sch.phase_of(w.outer);
  const sim::i64 last = c.position() - 1;  // index of the last applied event
  for (sim::i64 o = 0; o < sch.outer_count(); ++o) {
    if (sch.phase_of(o) != phase) continue;
    const sim::i64 nv = sch.events_per_visit(o);
    const sim::i64 first = c.outer_start(o) + sch.events_outer_begin(o);
    for (sim::i64 k = 0; k < sch.visit_count(o); ++k) {
      const sim::i64 end = first + (k + 1) * nv - 1;  // its last event
      if (end < last) done[static_cast<size_t>(sch.visit_block(o, k).first)] += 1;
    }
  }
  return done;
}

// Scratch files of this process, removed when it exits.
struct TempFiles {
  std::vector<fs::path> paths;
  ~TempFiles() {
    std::error_code ec;
    for (const fs::path& p : paths) fs::remove(p, ec);
  }
};

std::string write_temp(const std::string& name, const std::string& text) {
  static TempFiles files;
  const fs::path p = fs::temp_directory_path() / ("flashlab-test-gui-" + std::to_string(::getpid()) + "-" + name);
  std::ofstream(p) << text;
  files.paths.push_back(p);
  return p.string();
}

}  // namespace

TEST_CASE("valid inputs give a model: both algorithms, cursors, every chart", "[gui][model]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  REQUIRE(s.model.valid);
  REQUIRE(s.model.algos.size() == 2);
  CHECK(s.model.errors.empty());
  for (const AlgoView& v : s.model.algos) {
    CHECK(v.cursor->size() > 0);
    CHECK(v.cursor->position() == 0);
    // The totals are the simulator's, for all B·H heads.
    CHECK(v.result.total == v.result.per_head.scaled(s.model.problem.head_count()));
  }
  build_all_charts(s);
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (!e.needs_results) CHECK(!s.model.charts.of(e).empty());
  CHECK(s.applied == s.inputs);
}

// A model chart is built when a view shows it, and kept by what it was built
// from: the same inputs and results give it back without building it again.
TEST_CASE("model charts are built when shown, and the chart cache gives them back", "[gui][model][charts]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  const analysis::ChartEntry& io = *analysis::find_chart("io-vs-n");
  CHECK(s.model.charts.of(io).empty());  // a placeholder until shown
  CHECK(need_chart(s, io));
  CHECK_FALSE(need_chart(s, io));  // built for this model
  const analysis::ChartSpec first = s.model.charts.of(io);
  REQUIRE(!first.empty());
  const int built = chart_cache(s).built();
  s.inputs.seq = "2048";
  recompute(s);
  CHECK(s.model.charts.of(io).empty());
  CHECK(need_chart(s, io));
  CHECK(chart_cache(s).built() == built + 1);
  CHECK(s.model.charts.of(io).subtitle != first.subtitle);
  s.inputs.seq = "1024";  // back: from the cache, not built again
  recompute(s);
  CHECK(need_chart(s, io));
  CHECK(chart_cache(s).built() == built + 1);
  CHECK(s.model.charts.of(io).subtitle == first.subtitle);
  CHECK(s.model.charts.of(io).series.size() == first.series.size());
  // Built ahead by the worker, then taken without building it here.
  const analysis::ChartEntry& ai = *analysis::find_chart("ai-vs-n");
  chart_ahead(s, ai);
  while (!chart_cache(s).idle()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  CHECK(chart_cache(s).built() == built + 2);
  CHECK(need_chart(s, ai));
  CHECK(chart_cache(s).built() == built + 2);
  CHECK(!s.model.charts.of(ai).empty());
}

TEST_CASE("invalid inputs clear the model and say why: nothing stale", "[gui][model]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  const Inputs good = ps->inputs;
  REQUIRE(ps->model.valid);
  struct Case {
    const char* what;
    std::function<void(Inputs&)> edit;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"junk N", [](Inputs& in) { in.seq = "12abc"; }, "not a whole number"},
      {"zero N", [](Inputs& in) { in.seq = "0"; }, "at least 1"},
      {"empty d", [](Inputs& in) { in.head_dim = ""; }, "head dim d"},
      {"huge problem", [](Inputs& in) { in.seq = "4G"; in.batch = "1024"; }, "64-bit"},
      {"d too large for M", [](Inputs& in) { in.head_dim = "100000"; }, ""},
      {"tiles too large", [](Inputs& in) { in.manual_tiles = true; in.br = "4096"; in.bc = "4096"; }, ""},
      {"tiny SRAM", [](Inputs& in) { in.sram_override = true; in.sram = "1"; }, ""},
      {"unknown preset", [](Inputs& in) { in.hw_preset = "no-such-gpu"; }, "hardware"},
      {"missing profile", [](Inputs& in) { in.use_hw_file = true; in.hw_file = "/nonexistent/p.json"; }, "hardware"},
      {"not JSON", [](Inputs& in) { in.use_hw_file = true; in.hw_file = "/etc/hostname"; }, "hardware"},
      {"grouped heads that do not divide", [](Inputs& in) { in.heads = "32"; in.kv_heads = "5"; }, "H_kv = 5"},
      {"more K/V heads than heads", [](Inputs& in) { in.heads = "4"; in.kv_heads = "8"; }, "exceed"},
      {"junk H_kv", [](Inputs& in) { in.kv_heads = "many"; }, "key/value heads"},
  };
  for (const Case& c : cases) {
    INFO(c.what);
    auto pt = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
    AppState& t = *pt;
    c.edit(t.inputs);
    recompute(t);
    CHECK(!t.model.valid);
    REQUIRE(!t.model.errors.empty());
    CHECK(t.model.errors.front().find(c.message) != std::string::npos);
    CHECK(t.model.algos.empty());
    // The charts carry the reason instead of old data.
    CHECK(t.model.charts["io-vs-n"].empty());
    CHECK(t.model.charts["io-vs-n"].notes.front().find("no chart") == 0);
    // And a valid value brings everything back.
    t.inputs = good;
    recompute(t);
    CHECK(t.model.valid);
  }
}

TEST_CASE("grouped K/V heads: the window's H_kv reaches the model, and empty means as many as H", "[gui][model]") {
  auto ps = make_state("4096", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  s.inputs.heads = "32";
  s.inputs.batch = "2";
  recompute(s);
  REQUIRE(s.model.valid);
  CHECK(s.model.bad_fields.empty());  // the empty H_kv field is not an error
  const double plain_k = s.model.algos.at(1).result.l2.tensors[static_cast<std::size_t>(sim::Tensor::K)].dram_read_bytes;
  s.inputs.kv_heads = "8";
  recompute(s);
  REQUIRE(s.model.valid);
  CHECK(s.model.problem.h_kv() == 8);
  // Four query heads share each K/V head: the L2 model reads fewer K bytes from DRAM.
  CHECK(s.model.algos.at(1).result.l2.tensors[static_cast<std::size_t>(sim::Tensor::K)].dram_read_bytes < plain_k);
  s.inputs.kv_heads = "5";
  recompute(s);
  CHECK_FALSE(s.model.valid);
  CHECK(std::find(s.model.bad_fields.begin(), s.model.bad_fields.end(), "kv_heads") != s.model.bad_fields.end());
  CHECK(std::find(s.model.bad_fields.begin(), s.model.bad_fields.end(), "heads") != s.model.bad_fields.end());
}

TEST_CASE("the tiling snapshot's finished blocks equal a brute-force walk of the schedule", "[gui][model]") {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 60; ++trial) {
    const sim::Algorithm a = sim::all_algorithms()[rng() % 4];
    // Every N up to 300 and every tile from 1 to 48, but not a grid beyond 4,096
    // blocks (N = 300 in tiles of 1 × 1 is 90,000): each block costs the window's L2
    // model far more than it adds to the walk, and no rule of the snapshot
    // changes with the grid's size below kMaxPrefixRows (4,096 row blocks).
    sim::i64 n = 0, br = 0, bc = 0;
    do {
      n = 1 + static_cast<sim::i64>(rng() % 300);
      br = 1 + static_cast<sim::i64>(rng() % 48);
      bc = 1 + static_cast<sim::i64>(rng() % 48);
    } while (((n + br - 1) / br) * ((n + bc - 1) / bc) > 4096);
    auto ps = std::make_unique<AppState>();
    AppState& s = *ps;
    s.inputs.seq = std::to_string(n);
    s.inputs.head_dim = std::to_string(8 << (rng() % 4));
    s.inputs.algo_a = a;
    s.inputs.compare = false;
    s.inputs.causal = rng() % 2 == 0;
    s.inputs.manual_tiles = true;
    s.inputs.br = std::to_string(br);
    s.inputs.bc = std::to_string(bc);
    recompute(s);
    REQUIRE(s.model.valid);
    AlgoView& v = s.model.algos[0];
    for (int k = 0; k < 12; ++k) {
      const sim::i64 p = static_cast<sim::i64>(rng() % static_cast<std::uint64_t>(v.cursor->size() + 1));
      seek_primary(s, p);
      INFO("algo " << sim::to_string(a) << " N=" << n << " tiles " << v.result.tiles.Br << "×" << v.result.tiles.Bc
                   << " causal " << s.inputs.causal << " position " << p);
      CHECK(v.snap.done_cols == brute_done(*v.schedule, *v.cursor));
      CHECK(v.snap.position == p);
    }
  }
}

TEST_CASE("the tiling view's finished blocks take no tensor's colour: done never reads as Q", "[gui][model]") {
  auto channel = [](ImU32 c, int shift) { return static_cast<int>((c >> shift) & 0xFF); };
  auto rgb = [&](ImU32 c) {
    return std::array<int, 3>{channel(c, IM_COL32_R_SHIFT), channel(c, IM_COL32_G_SHIFT), channel(c, IM_COL32_B_SHIFT)};
  };
  // How far from grey: the spread of the channels.
  auto chroma = [&](ImU32 c) {
    const auto x = rgb(c);
    return *std::max_element(x.begin(), x.end()) - *std::min_element(x.begin(), x.end());
  };
  auto distance = [&](ImU32 a, ImU32 b) {
    const auto x = rgb(a), y = rgb(b);
    double d2 = 0;
    for (int k = 0; k < 3; ++k) d2 += static_cast<double>((x[k] - y[k]) * (x[k] - y[k]));
    return std::sqrt(d2);
  };
  const ImU32 done = finished_block_color();
  CHECK(chroma(done) <= 16);  // grey
  for (int k = 0; k < sim::kTensorCount; ++k) {
    const auto t = static_cast<sim::Tensor>(k);
    INFO(sim::to_string(t));
    CHECK(chroma(tensor_color(t)) >= 60);  // a hue
    // Far apart, not merely unequal: a projector washes out near neighbours.
    CHECK(distance(done, tensor_color(t)) >= 60);
  }
}

TEST_CASE("lockstep: same fraction of each schedule, or the same block", "[gui][model]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  s.inputs.manual_tiles = true;
  s.inputs.br = s.inputs.bc = "128";
  recompute(s);
  const sim::Cursor& a = *s.model.algos[0].cursor;
  const sim::Cursor& b = *s.model.algos[1].cursor;
  seek_primary(s, a.size() / 3);
  CHECK(std::fabs(static_cast<double>(b.position()) / static_cast<double>(b.size()) -
                  static_cast<double>(a.position()) / static_cast<double>(a.size())) < 1e-3);
  s.inputs.lockstep = Lockstep::block;
  recompute(s);
  const sim::Cursor& a2 = *s.model.algos[0].cursor;
  const sim::Cursor& b2 = *s.model.algos[1].cursor;
  for (sim::i64 p : {a2.size() / 5, a2.size() / 2, a2.size() - 3}) {
    seek_primary(s, p);
    if (a2.where().part != sim::Cursor::Part::visit) continue;
    CHECK(b2.where().i == a2.where().i);
    CHECK(b2.where().j == a2.where().j);
  }
  // A new N keeps the cursor's place as a fraction.
  seek_primary(s, a2.size() / 2);
  s.inputs.seq = "2048";
  recompute(s);
  const sim::Cursor& a3 = *s.model.algos[0].cursor;
  CHECK(std::fabs(static_cast<double>(a3.position()) / static_cast<double>(a3.size()) - 0.5) < 0.01);
}

TEST_CASE("playback advances by speed × time and stops at the end", "[gui][model]") {
  auto ps = make_state("256", sim::Algorithm::fa2, sim::Algorithm::fa2);
  AppState& s = *ps;
  s.playback.playing = true;
  s.playback.events_per_s = 100;
  advance_playback(s, 0.05);
  CHECK(s.model.algos[0].cursor->position() == 5);
  advance_playback(s, 0.005);  // half an event: owed, not lost
  advance_playback(s, 0.005);
  CHECK(s.model.algos[0].cursor->position() == 6);
  s.playback.events_per_s = 1e6;
  for (int k = 0; k < 10; ++k) advance_playback(s, 0.25);
  CHECK(s.model.algos[0].cursor->position() == s.model.algos[0].cursor->size());
  CHECK(!s.playback.playing);
  step_primary(s, std::numeric_limits<sim::i64>::max());  // saturates, no overflow
  CHECK(s.model.algos[0].cursor->position() == s.model.algos[0].cursor->size());
}

TEST_CASE("the online-softmax panel follows the cursor's row block", "[gui][model]") {
  auto ps = make_state("512", sim::Algorithm::fa2, sim::Algorithm::fa2);
  AppState& s = *ps;
  s.inputs.manual_tiles = true;
  s.inputs.br = s.inputs.bc = "64";
  recompute(s);
  AlgoView& v = s.model.algos[0];
  REQUIRE(v.cursor->seek_block(2, 3));
  seek_primary(s, v.cursor->position());
  REQUIRE(v.snap.has_softmax);
  CHECK(v.snap.softmax.i == 2);
  CHECK(v.snap.softmax.visits == 3);  // blocks 0..2 folded; the m_i update of block 3 is later in the visit
  seek_primary(s, v.cursor->position() + 3);  // past line 9 of this visit
  CHECK(v.snap.softmax.visits == 4);
  CHECK(v.snap.softmax_visits_total == 8);
}

TEST_CASE("non-finite numbers never reach the screen: they are shown as — and counted", "[gui][format]") {
  ScreenChecks checks;
  set_screen_checks(&checks);
  CHECK(fmt_bytes(1.5e9, "t") == "1.5 GB");
  CHECK(fmt_bytes(std::nan(""), "where") == "—");
  CHECK(fmt_si(312e12, "FLOP/s", "t") == "312 TFLOP/s");
  CHECK(fmt_stat(-INFINITY, "t") == "−∞");  // a running max before any key is −∞ by definition
  CHECK(fmt_fixed(INFINITY, 2, "t") == "—");
  CHECK(checks.nonfinite == 2);
  CHECK(checks.first_nonfinite == "where");
  set_screen_checks(nullptr);
}

// K and V at N = 1M with 1 × 1 tiles are read 1,048,576 times more by one
// algorithm than the other: the counters' ratio column keeps its width.
TEST_CASE("ratios: two decimals below 10, one below a thousand, three digits and a prefix above", "[gui][format]") {
  CHECK(fmt_ratio(0.1234, "t") == "0.12×");
  CHECK(fmt_ratio(0.1234, "t", 3) == "0.123×");
  CHECK(fmt_ratio(32.0, "t") == "32.0×");
  CHECK(fmt_ratio(999.94, "t") == "999.9×");
  CHECK(fmt_ratio(1048576.0, "t") == "1.05 M×");
  CHECK(fmt_ratio(12345.0, "t") == "12.3 K×");
  CHECK(fmt_ratio(2.5e12, "t") == "2.5 T×");
  for (const double r : {1000.0, 1048576.0, 1e15}) CHECK(fmt_ratio(r, "t").size() <= fmt_ratio(999.9, "t").size() + 2);
  CHECK(fmt_ratio(std::nan(""), "t") == "—");
  // 138 MB over 150 TB is not nothing; 0 B over 8.8 TB is.
  CHECK(fmt_ratio(138e6 / 150e12, "t") == "< 0.01×");
  CHECK(fmt_ratio(138e6 / 150e12, "t", 3) == "< 0.001×");
  CHECK(fmt_ratio(0.0, "t") == "0.00×");
  CHECK(fmt_ratio(0.006, "t") == "0.01×");
}

TEST_CASE("scenarios: every shipped scenario loads and gives a valid model", "[gui][scenario]") {
  int n = 0;
  for (const fs::path& path : test::shipped_scenarios()) {
    INFO(path.string());
    const Scenario sc = load_scenario(path.string());
    auto ps = std::make_unique<AppState>();
    AppState& s = *ps;
    apply_settings(s, sc.settings, sc.base_dir);
    recompute(s);
    apply_cursor_request(s);
    CHECK(s.model.valid);
    CHECK(s.view.status_is_error == false);
    ++n;
  }
  CHECK(n >= 3);
}

TEST_CASE("scenarios: unknown keys and bad values are errors naming the file", "[gui][scenario]") {
  CHECK_THROWS_WITH(load_scenario("/nonexistent.json"), Catch::Contains("cannot open"));
  CHECK_THROWS_WITH(load_scenario(write_temp("a.json", "{\"tabb\": 1}")), Catch::Contains("unknown key 'tabb'"));
  CHECK_THROWS_WITH(load_scenario(write_temp("b.json", "[1, 2")), Catch::Contains("not valid JSON"));
  CHECK_THROWS_WITH(load_scenario(write_temp("c.json", "{\"script\": [{\"tab\": \"roofline\"}]}")),
                    Catch::Contains("integer \"frame\""));
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse("{\"algorithms\": [\"fa3\"]}"), ""), Catch::Contains("fa3"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse("{\"tab\": \"pie\"}"), ""), Catch::Contains("unknown tab"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse("{\"ui_scale\": 9}"), ""), Catch::Contains("1.0 and 3.0"));
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse("{\"problem\": {\"N\": 1}}"), ""), Catch::Contains("problem.N"));
  apply_settings(s, nlohmann::json::parse("{\"problem\": {\"seq\": \"16K\", \"causal\": true}, \"tiles\": {\"Br\": 32, \"Bc\": 64}}"), "");
  CHECK(s.inputs.seq == "16K");
  CHECK(s.inputs.causal);
  CHECK(s.inputs.manual_tiles);
  CHECK(s.inputs.br == "32");
}

TEST_CASE("plot tabs: the chart table's entries, in order, then the window's own panels", "[gui][charts]") {
  const std::vector<PlotTab>& tabs = plot_tabs();
  const auto& table = analysis::chart_table();
  REQUIRE(tabs.size() == table.size() + 2);
  for (size_t k = 0; k < table.size(); ++k) {
    CHECK(tabs[k].id == table[k].id);
    CHECK(tabs[k].label == table[k].tab);
    CHECK(tabs[k].chart == &table[k]);
  }
  CHECK(tabs[table.size()].id == "bench");
  CHECK(tabs[table.size() + 1].id == "counters");
  CHECK(tabs[table.size()].chart == nullptr);
  CHECK(tabs[table.size() + 1].chart == nullptr);
  for (const PlotTab& t : tabs) CHECK(find_plot_tab(t.id) == &t);
  CHECK(find_plot_tab("pie") == nullptr);
}

TEST_CASE("the model holds one chart per table entry, with its id, with and without results", "[gui][charts]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  rebuild_bench_charts(s);
  const auto check_ids = [&](const char* when) {
    INFO(when);
    REQUIRE(s.model.charts.specs.size() == analysis::chart_table().size());
    for (const analysis::ChartEntry& e : analysis::chart_table()) {
      INFO(std::string(e.id));
      CHECK(s.model.charts.of(e).id == std::string(e.id));
      CHECK(&s.model.charts[e.id] == &s.model.charts.of(e));
    }
  };
  check_ids("no results");
  for (const analysis::ChartEntry& e : analysis::chart_table())
    if (e.needs_results) {
      CHECK(s.model.charts.of(e).empty());
      CHECK(s.model.charts.of(e).title == std::string(e.title));  // a placeholder under the table's title
    }
  s.bench.results = analysis::test::lab_grid();
  s.bench.have_results = true;
  s.bench.filter = analysis::default_bench_filter(s.bench.results);
  rebuild_bench_charts(s);
  check_ids("results loaded");
  build_all_charts(s);
  for (const analysis::ChartEntry& e : analysis::chart_table()) CHECK(!s.model.charts.of(e).empty());
  // An invalid input clears the model charts but keeps the bench charts.
  s.inputs.seq = "0";
  recompute(s);
  REQUIRE(!s.model.valid);
  check_ids("invalid inputs");
  for (const analysis::ChartEntry& e : analysis::chart_table())
    CHECK(s.model.charts.of(e).empty() == !e.needs_results);
  CHECK_THROWS_AS(s.model.charts["pie"], std::invalid_argument);
}

TEST_CASE("scenarios take exactly the plot tabs and the chart table's ids", "[gui][scenario][charts]") {
  auto ps = make_state("256", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  const fs::path dir = fs::temp_directory_path() / ("flashlab-test-gui-export-" + std::to_string(::getpid()));
  s.view.export_dir = dir.string();
  for (const PlotTab& t : plot_tabs()) {
    INFO(std::string(t.id));
    apply_settings(s, nlohmann::json{{"tab", std::string(t.id)}}, "");
    CHECK(s.view.tab == t.id);
    CHECK(s.view.force_tab);
  }
  CHECK_THROWS_WITH(apply_settings(s, nlohmann::json::parse("{\"tab\": \"pie\"}"), ""), Catch::Contains(analysis::chart_id_list()));
  for (const analysis::ChartEntry& e : analysis::chart_table()) {
    INFO(std::string(e.id));
    apply_script_step(s, nlohmann::json{{"export", {{"chart", std::string(e.id)}, {"format", "csv"}}}}, "");
    CHECK(!s.view.status_is_error);
    CHECK(fs::exists(dir / (std::string(e.id) + ".csv")));
  }
  CHECK_THROWS_WITH(apply_script_step(s, nlohmann::json::parse("{\"export\": {\"chart\": \"pie\", \"format\": \"csv\"}}"), ""),
                    Catch::Contains("unknown chart 'pie'"));
  fs::remove_all(dir);
}

TEST_CASE("scenarios: the bench and wait_bench keys, and bad values as clear errors", "[gui][scenario]") {
  using nlohmann::json;
  const BenchAction ladder = parse_bench_action(json::parse(R"({"sweep": null, "repeats": 5, "counters": true})"));
  CHECK(ladder.on_current_problem);
  CHECK(ladder.request.sweep.empty());
  CHECK(ladder.request.kernels.empty());
  CHECK(ladder.request.repeats == 5);
  CHECK(ladder.request.counters);
  const BenchAction sweep = parse_bench_action(json::parse(R"({"sweep": "validate", "kernels": ["fa2", "fa2_tc"]})"));
  CHECK_FALSE(sweep.on_current_problem);
  CHECK(sweep.request.sweep == "validate");
  CHECK(sweep.request.kernels == std::vector<std::string>{"fa2", "fa2_tc"});
  CHECK_FALSE(sweep.request.counters);
  CHECK(parse_bench_action(json::object()).on_current_problem);

  CHECK_THROWS_WITH(parse_bench_action(json::parse("true")), Catch::Contains("bench must be"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"sweep": 3})")), Catch::Contains("bench.sweep"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"kernels": "fa2"})")), Catch::Contains("bench.kernels"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"kernels": [2]})")), Catch::Contains("bench.kernels"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"repeats": 0})")), Catch::Contains("bench.repeats"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"repeats": 2.5})")), Catch::Contains("bench.repeats"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"counters": "yes"})")), Catch::Contains("bench.counters"));
  CHECK_THROWS_WITH(parse_bench_action(json::parse(R"({"repeat": 3})")), Catch::Contains("unknown key bench.repeat"));

  CHECK(parse_wait_bench(json(true)) == kDefaultBenchWaitS);
  CHECK(parse_wait_bench(json(30)) == 30);
  CHECK_THROWS_WITH(parse_wait_bench(json(false)), Catch::Contains("wait_bench"));
  CHECK_THROWS_WITH(parse_wait_bench(json(-1)), Catch::Contains("above 0"));
  CHECK_THROWS_WITH(parse_wait_bench(json("long")), Catch::Contains("wait_bench"));

  // Bad values fail when the file loads, naming the file and the step.
  CHECK_THROWS_WITH(load_scenario(write_temp("bench1.json", R"({"script": [{"frame": 3, "bench": {"repeats": -2}}]})")),
                    Catch::Contains("step at frame 3") && Catch::Contains("bench.repeats"));
  CHECK_THROWS_WITH(load_scenario(write_temp("bench2.json", R"({"script": [{"frame": 1, "wait_bench": "soon"}]})")),
                    Catch::Contains("bench2.json") && Catch::Contains("wait_bench"));
  CHECK_THROWS_WITH(load_scenario(write_temp("bench3.json", R"({"bench": {"counter": true}})")),
                    Catch::Contains("bench3.json") && Catch::Contains("unknown key bench.counter"));
  CHECK_THROWS_WITH(load_scenario(write_temp("bench4.json", R"({"wait_bench": true})")),
                    Catch::Contains("unknown key 'wait_bench'"));  // a script step, not a setting
  const Scenario ok = load_scenario(write_temp("bench5.json", R"({"script": [{"frame": 2, "bench": {}, "wait_bench": 60}]})"));
  REQUIRE(ok.script.size() == 1);
}

TEST_CASE("a scenario's bench without a backend: a visible status, nothing pending, nothing to wait for", "[gui][scenario]") {
  auto ps = make_state("1024", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  register_bench_backend(nullptr);
  apply_settings(s, nlohmann::json::parse(R"({"bench": {"sweep": null, "counters": true}})"), "");
  REQUIRE(s.bench.pending.has_value());
  CHECK(s.bench.pending->counters);
  CHECK(bench_busy(s));  // pending: a wait_bench holds until it has started or been refused
  poll_bench_job(s);
  CHECK_FALSE(s.bench.pending.has_value());
  CHECK_FALSE(bench_busy(s));
  CHECK(s.view.status_is_error);
  CHECK_THAT(s.view.status, Catch::Contains("benchmark not run") && Catch::Contains("no kernels library"));
  CHECK_THAT(s.bench.run_note, Catch::Contains("no kernels library"));  // the counters panel says it too
}

TEST_CASE("a scenario's screenshot path is inside the export folder unless absolute", "[gui][scenario]") {
  auto ps = std::make_unique<AppState>();
  AppState& s = *ps;
  const fs::path dir = fs::temp_directory_path() / ("flashlab-test-gui-shots-" + std::to_string(::getpid()));
  s.view.export_dir = dir.string();
  apply_script_step(s, nlohmann::json{{"screenshot", "counters.png"}}, "");
  CHECK(s.view.screenshot_requested);
  CHECK(s.view.screenshot_path == (dir / "counters.png").string());
  CHECK(fs::is_directory(dir));
  apply_script_step(s, nlohmann::json{{"screenshot", "/tmp/elsewhere.png"}}, "");
  CHECK(s.view.screenshot_path == "/tmp/elsewhere.png");
  fs::remove_all(dir);
}

TEST_CASE("the L2 at the cursor: reads so far from the trace, the visit's source and the CTAs of its wave",
          "[gui][model]") {
  auto ps = make_state("4096", sim::Algorithm::fa1, sim::Algorithm::fa2);
  AppState& s = *ps;
  s.inputs.heads = "4";
  s.inputs.hw_preset = "H200-SXM-141GB";
  recompute(s);
  REQUIRE(s.model.valid);
  for (const AlgoView& v : s.model.algos) REQUIRE(v.result.l2.modelled);
  seek_primary(s, 0);
  for (const AlgoView& v : s.model.algos) {
    REQUIRE(v.snap.l2.has_reads);
    CHECK(v.snap.l2.dram_read_bytes == 0);
  }
  // Halfway: every visit lies in its wave, and the reads so far are the trace's, × B·H.
  int visits_seen = 0;
  for (i64 pos = s.model.algos[0].cursor->size() / 2; visits_seen < 20; ++pos) {
    seek_primary(s, pos);
    for (const AlgoView& v : s.model.algos) {
      const L2AtCursor& l2 = v.snap.l2;
      CHECK(l2.dram_read_bytes <= l2.request_read_bytes + 1);
      if (!l2.has_visit) continue;
      ++visits_seen;
      INFO(sim::to_string(v.algo) << " at block " << v.snap.cur_i << ", " << v.snap.cur_j << ": " << l2.wave_caption);
      CHECK_THAT(l2.visit_caption, Catch::Contains("from"));
      CHECK_THAT(l2.wave_caption, Catch::Contains("CTA"));
      bool in_wave = false;
      for (const auto& [a, b] : l2.wave_rows) in_wave = in_wave || (a <= v.snap.cur_i && v.snap.cur_i <= b);
      CHECK(in_wave);
    }
  }
  seek_primary(s, s.model.algos[0].cursor->size());
  for (const AlgoView& v : s.model.algos) {
    const double heads = static_cast<double>(s.model.problem.head_count());
    CHECK(v.snap.l2.dram_read_bytes == Approx(v.traced.total().dram_bytes * heads));
    CHECK(v.snap.l2.request_read_bytes == Approx(v.traced.total().request_bytes * heads));
  }
}
