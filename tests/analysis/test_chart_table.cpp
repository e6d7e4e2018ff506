// The chart table: every id builds, with and without measured results where
// it may; bench charts refuse to build without them; the table is what
// build_chart, chart_ids and is_bench_chart answer from.
#include <catch2/catch.hpp>

#include <algorithm>
#include <fstream>
#include <sstream>
#include <set>
#include <stdexcept>

#include "chart_fixtures.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
using namespace flashlab::analysis::test;

TEST_CASE("build_chart knows every CLI chart and refuses bench charts without results", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const BenchResults r = lab_grid();
  for (const std::string& id : chart_ids()) {
    const ChartSpec c = build_chart(id, ctx, &r);
    CHECK(c.id == id);
    CHECK(!c.empty());
    if (is_bench_chart(id)) CHECK_THROWS_AS(build_chart(id, ctx, nullptr), std::invalid_argument);
  }
  CHECK_THROWS_AS(build_chart("pie", ctx, nullptr), std::invalid_argument);
}

TEST_CASE("roofline-hier through build_chart: ceilings alone, then the runs placed on them", "[chart][builders]") {
  const ChartContext ctx = lecture_context();
  const BenchResults r = lab_grid();
  const ChartSpec bare = build_chart("roofline-hier", ctx, nullptr);
  const ChartSpec placed = build_chart("roofline-hier", ctx, &r);
  CHECK(bare.id == "roofline-hier");
  CHECK(placed.series.size() > bare.series.size());  // the runs (and the model's crosses) join the ceilings
  CHECK(placed.title == bare.title);
}

TEST_CASE("the chart table: one entry per id, each built with and without results as it allows", "[chart][table]") {
  const ChartContext ctx = lecture_context();
  const BenchResults r = lab_grid();
  std::set<std::string> ids;
  for (const ChartEntry& e : chart_table()) {
    const std::string id(e.id);
    INFO(id);
    CHECK(ids.insert(id).second);
    CHECK(!e.tab.empty());
    CHECK(!e.title.empty());
    REQUIRE(e.build != nullptr);
    CHECK(find_chart(id) == &e);
    CHECK(is_bench_chart(id) == e.needs_results);
    const ChartSpec with = build_chart(id, ctx, &r);
    CHECK(with.id == id);
    CHECK(!with.empty());
    if (e.needs_results) {
      CHECK_THROWS_WITH(build_chart(id, ctx, nullptr), Catch::Contains("--results"));
    } else {
      const ChartSpec without = build_chart(id, ctx, nullptr);
      CHECK(without.id == id);
      CHECK(!without.empty());
    }
  }
  // chart_ids() and the id list of messages are the table, in its order.
  std::vector<std::string> in_order;
  for (const ChartEntry& e : chart_table()) in_order.emplace_back(e.id);
  CHECK(chart_ids() == in_order);
  std::string listed;
  for (const std::string& id : in_order) listed += (listed.empty() ? "" : "|") + id;
  CHECK(chart_id_list("|") == listed);
  CHECK(find_chart("pie") == nullptr);
  CHECK(!is_bench_chart("bench-pie"));
  CHECK_THROWS_WITH(build_chart("pie", ctx, &r), Catch::Contains(chart_id_list()));
}

TEST_CASE("the chart table: the bench choices an entry says it reads reach its chart", "[chart][table]") {
  const ChartContext ctx = lecture_context();
  const BenchResults r = lab_grid();
  for (const ChartEntry& e : chart_table()) {
    INFO(std::string(e.id));
    if (e.picks_kernel) {
      CHECK_THAT(build_chart(std::string(e.id), ctx, &r, "fa2").title, Catch::Contains("FlashAttention-2 (CUDA cores)"));
      CHECK_THAT(build_chart(std::string(e.id), ctx, &r, "torch_eager").title, Catch::Contains("PyTorch eager"));
    }
    if (e.picks_baseline) {
      CHECK_THAT(build_chart(std::string(e.id), ctx, &r, "", "fa2").title, Catch::Contains("FlashAttention-2 (CUDA cores)"));
      CHECK_THAT(build_chart(std::string(e.id), ctx, &r, "", "torch_eager").title, Catch::Contains("PyTorch eager"));
    }
    if (e.needs_results) {
      // A filter that matches no row empties every bench chart, whatever it reads.
      BenchFilter none;
      none.heads = 7;
      const ChartSpec c = build_chart(std::string(e.id), ctx, &r, "", "", &none);
      CHECK(c.id == std::string(e.id));
      if (!e.batch_is_axis) CHECK(c.series.empty());
    }
  }
  // The entries that read a choice are the ones the GUI shows a picker for.
  CHECK(std::count_if(chart_table().begin(), chart_table().end(), [](const ChartEntry& e) { return e.picks_kernel; }) == 2);  // the two heatmaps
  CHECK(std::count_if(chart_table().begin(), chart_table().end(), [](const ChartEntry& e) { return e.picks_baseline; }) == 1);
}

TEST_CASE("the user guide lists the chart table's ids, in its order", "[chart][table][docs]") {
  std::ifstream in(FLASHLAB_USER_GUIDE);
  REQUIRE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  CHECK_THAT(doc.str(), Catch::Contains("Charts: `" + chart_id_list(" | ") + "`"));
}

TEST_CASE("the user guide names the filter's keys as the parser's one list does", "[chart][table][docs]") {
  std::ifstream in(FLASHLAB_USER_GUIDE);
  REQUIRE(in.good());
  std::stringstream doc;
  doc << in.rdbuf();
  std::string text = doc.str();
  std::replace(text.begin(), text.end(), '\n', ' ');  // the guide's lines break anywhere
  CHECK_THAT(text, Catch::Contains("keys " + bench_filter_key_list() + ")"));
}
