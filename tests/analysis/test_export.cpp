// The exporters: SVG parses (expat) and holds the series and labels as text;
// PNG has the asked size and is not blank; PDF has a valid structure (header,
// cross-reference table whose offsets point at objects, trailer, a page); CSV
// round-trips; failures leave no file behind.
#include <catch2/catch.hpp>

#include <cairo.h>
#include <expat.h>

#include <cstdio>
#include <cstring>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "chart_fixtures.hpp"
#include "flashlab/analysis/charts/chart_builders.hpp"
#include "flashlab/analysis/charts/chart_render.hpp"
#include "flashlab/analysis/charts/chart_table.hpp"
#include "flashlab/analysis/results/bench_filter.hpp"
#include "flashlab/export/chart_export.hpp"
#include "flashlab/sim.hpp"

using namespace flashlab;
using namespace flashlab::analysis;
namespace fs = std::filesystem;

namespace {

ChartSpec io_chart_for_test() {
  ChartContext ctx;
  ctx.problem.seq_q = 1024;
  ctx.problem.head_dim = 64;
  ctx.hw = sim::load_hardware("A100-PCIe-80GB");
  return io_chart(ctx, SweepAxis::seq);
}

struct SvgScan {
  std::string text;                    // all character data
  std::set<std::string> group_names;   // data-name of <g class="series">
  int elements = 0;
  std::string root;
};

void XMLCALL on_start(void* d, const XML_Char* name, const XML_Char** atts) {
  auto* s = static_cast<SvgScan*>(d);
  if (s->elements++ == 0) s->root = name;
  for (int k = 0; atts[k]; k += 2)
    if (std::string(atts[k]) == "data-name") s->group_names.insert(atts[k + 1]);
}
void XMLCALL on_end(void*, const XML_Char*) {}
void XMLCALL on_text(void* d, const XML_Char* t, int len) { static_cast<SvgScan*>(d)->text.append(t, static_cast<size_t>(len)); }

SvgScan parse_svg(const std::string& doc) {
  SvgScan scan;
  XML_Parser p = XML_ParserCreate("UTF-8");
  XML_SetUserData(p, &scan);
  XML_SetElementHandler(p, on_start, on_end);
  XML_SetCharacterDataHandler(p, on_text);
  const bool ok = XML_Parse(p, doc.data(), static_cast<int>(doc.size()), 1) == XML_STATUS_OK;
  const std::string err = ok ? "" : XML_ErrorString(XML_GetErrorCode(p));
  const long line = static_cast<long>(XML_GetCurrentLineNumber(p));
  XML_ParserFree(p);
  if (!ok) FAIL("SVG does not parse: " << err << " at line " << line);
  return scan;
}

std::string read_file(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("flashlab-test-export-" + name + "-" + std::to_string(::getpid()));
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST_CASE("SVG parses and holds every series and the axis labels as text", "[export][svg]") {
  const ChartSpec c = io_chart_for_test();
  const SvgScan scan = parse_svg(render_svg(c));
  CHECK(scan.root == "svg");
  CHECK(scan.elements > 50);
  for (const Series& s : c.series) CHECK(scan.group_names.count(s.name) == 1);
  CHECK(scan.text.find(c.title) != std::string::npos);
  CHECK(scan.text.find("sequence length N") != std::string::npos);
  CHECK(scan.text.find("64K") != std::string::npos);  // a tick label
  CHECK(scan.text.find("Θ(Nd + N²)") != std::string::npos);  // UTF-8 survives
}

TEST_CASE("SVG escapes markup in labels", "[export][svg]") {
  ChartSpec c;
  c.title = "a < b & \"c\" > 'd'";
  Series s;
  s.name = "<script>";
  s.x = {1, 2};
  s.y = {1, 2};
  c.series.push_back(s);
  const SvgScan scan = parse_svg(render_svg(c));
  CHECK(scan.text.find("a < b & \"c\" > 'd'") != std::string::npos);
  CHECK(scan.group_names.count("<script>") == 1);
}

TEST_CASE("PNG has the asked size and is not blank", "[export][png]") {
  if (!have_cairo()) {
    WARN("built without cairo: PNG export not tested");
    return;
  }
  const fs::path dir = temp_dir("png");
  const fs::path out = dir / "io.png";
  ExportOptions o;
  o.width_px = 900;
  o.height_px = 600;
  export_chart(io_chart_for_test(), out.string(), o);
  cairo_surface_t* s = cairo_image_surface_create_from_png(out.c_str());
  REQUIRE(cairo_surface_status(s) == CAIRO_STATUS_SUCCESS);
  CHECK(cairo_image_surface_get_width(s) == 900);
  CHECK(cairo_image_surface_get_height(s) == 600);
  // Not blank: many distinct colours, and the series' colours among them.
  cairo_surface_flush(s);
  const unsigned char* data = cairo_image_surface_get_data(s);
  const int stride = cairo_image_surface_get_stride(s);
  std::set<std::uint32_t> colours;
  size_t non_white = 0;
  for (int y = 0; y < 600; ++y)
    for (int x = 0; x < 900; ++x) {
      std::uint32_t px;
      std::memcpy(&px, data + y * stride + x * 4, 4);
      colours.insert(px);
      if ((px & 0xFFFFFF) != 0xFFFFFF) ++non_white;
    }
  cairo_surface_destroy(s);
  CHECK(colours.size() > 50);
  CHECK(non_white > 900 * 600 / 50);
  fs::remove_all(dir);
}

TEST_CASE("PDF opens: header, a cross-reference table that points at its objects, a page, a trailer", "[export][pdf]") {
  if (!have_cairo()) {
    WARN("built without cairo: PDF export not tested");
    return;
  }
  const std::string pdf = render_pdf(io_chart_for_test());
  REQUIRE(pdf.rfind("%PDF-1.", 0) == 0);
  const size_t eof = pdf.rfind("%%EOF");
  REQUIRE(eof != std::string::npos);
  CHECK(eof + 6 >= pdf.size());
  const size_t sx = pdf.rfind("startxref");
  REQUIRE(sx != std::string::npos);
  const size_t xref_at = std::stoul(pdf.substr(sx + 9));
  REQUIRE(xref_at < pdf.size());
  REQUIRE(pdf.compare(xref_at, 4, "xref") == 0);
  // Every in-use entry "OFFSET 00000 n" points at "K 0 obj".
  std::istringstream xr(pdf.substr(xref_at + 4));
  size_t first = 0, count = 0;
  xr >> first >> count;
  REQUIRE(count > 3);
  int checked = 0;
  for (size_t k = 0; k < count; ++k) {
    std::string off, gen, kind;
    xr >> off >> gen >> kind;
    if (kind != "n") continue;
    const size_t at = std::stoul(off);
    REQUIRE(at < pdf.size());
    const std::string expect = std::to_string(first + k) + " 0 obj";
    CHECK(pdf.compare(at, expect.size(), expect) == 0);
    ++checked;
  }
  CHECK(checked == static_cast<int>(count) - 1);
  CHECK(pdf.find("trailer") != std::string::npos);
  CHECK(std::regex_search(pdf, std::regex("/Type\\s*/Page[^s]")));
  CHECK(std::regex_search(pdf, std::regex("/MediaBox\\s*\\[\\s*0 0 900 600")));  // 1200×800 px at 0.75 pt/px
}

TEST_CASE("CSV export round-trips through the file", "[export][csv]") {
  const fs::path dir = temp_dir("csv");
  const ChartSpec c = io_chart_for_test();
  export_chart(c, (dir / "io.CSV").string());
  const auto back = chart_series_from_csv(read_file(dir / "io.CSV"));
  REQUIRE(back.size() == c.series.size());
  for (size_t k = 0; k < back.size(); ++k) {
    CHECK(back[k].name == c.series[k].name);
    CHECK(back[k].x == c.series[k].x);
    CHECK(back[k].y == c.series[k].y);
  }
  fs::remove_all(dir);
}

TEST_CASE("export failures name the problem and leave no file", "[export]") {
  const fs::path dir = temp_dir("fail");
  const ChartSpec c = io_chart_for_test();
  CHECK_THROWS_WITH(export_chart(c, (dir / "chart.gif").string()), Catch::Contains("extension"));
  CHECK_THROWS_WITH(export_chart(c, (dir / "no" / "such" / "chart.svg").string()), Catch::Contains("does not exist"));
  ExportOptions huge;
  huge.width_px = 100000;
  CHECK_THROWS_WITH(export_chart(c, (dir / "chart.png").string(), huge), Catch::Contains("out of range"));
  CHECK(fs::is_empty(dir));  // no partial or temporary file
  CHECK(export_format_of("a.b/c") == std::nullopt);
  CHECK(export_format_of("x.Svg") == ExportFormat::svg);
  fs::remove_all(dir);
}

namespace {
// The sizes every chart must read at: the export's default, the lab figures', a small window.
constexpr std::pair<int, int> kExportSizes[] = {{1200, 800}, {900, 560}, {640, 420}};

// The layout check's findings for `c` exported at w × h; `text`: them, one a line, for INFO.
std::vector<std::string> layout_problems_at(const ChartSpec& c, int w, int h, std::string& text) {
  ExportOptions o;
  o.width_px = w;
  o.height_px = h;
  std::vector<std::string> p = chart_layout_problems(c, o);
  text.clear();
  for (const std::string& x : p) text += "\n  " + x;
  return p;
}

// Every chart of the chart table over `r` laid out at the three export sizes,
// as the file's first choice shows it and with `other` (named `other_name`):
// no text over text or a point, none cut. `model_charts`: the charts that need
// no results too (without a filter).
void check_export_layouts(const ChartContext& ctx, const BenchResults& r, const BenchFilter& other,
                          const char* other_name, bool model_charts) {
  for (const ChartEntry& e : chart_table())
    for (const BenchFilter* filter : {static_cast<const BenchFilter*>(nullptr), &other})
      for (const auto& [w, h] : kExportSizes) {
        if (!e.needs_results && (filter || !model_charts)) continue;
        const ChartSpec c = build_chart(std::string(e.id), ctx, &r, "", "", filter);
        std::string all_problems;
        const std::vector<std::string> p = layout_problems_at(c, w, h, all_problems);
        INFO(e.id << (filter ? std::string(" (") + other_name + ")" : std::string()) << " at " << w << "×" << h
                  << all_problems);
        CHECK(p.empty());
      }
}
}  // namespace

TEST_CASE("every chart of the chart table reads at every export size: no text over text or a point, none cut",
          "[export][layout]") {
  BenchFilter all;  // every configuration: the most crowded each bench chart gets
  check_export_layouts(test::lecture_context(), test::lab_grid(), all, "every configuration", true);
}

TEST_CASE("a constant-token grid's charts read at every export size, one N alone too", "[export][layout]") {
  BenchFilter one_n;  // one batch: one N, the axis from N/2 to 2N with ticks on its edges
  one_n.batch = 16;
  one_n.heads = 32;
  one_n.causal = false;
  check_export_layouts(test::lecture_context(), test::token_grid(), one_n, "one N", false);
}

TEST_CASE("the speed-up legend stands clear of every bar, and the layout check names a legend over one",
          "[export][layout]") {
  // One configuration, four bars: three under 0.6×, one at 3.81× (the H200's N 1K row).
  BenchResults r;
  r.meta.gpu = "test GPU";
  for (const auto& [kernel, ms] : std::vector<std::pair<std::string, double>>{
           {"naive", 1.736}, {"naive_cublas", 1.0}, {"fa1", 4.065}, {"fa2", 3.378}, {"fa2_tc", 0.2625}})
    r.rows.push_back(test::row(kernel, 16, 1024, ms));
  const ChartSpec c = bench_speedup_chart(r);
  REQUIRE(c.series.size() == 4);
  for (const auto& [w, h] : kExportSizes) {
    std::string all_problems;
    const std::vector<std::string> p = layout_problems_at(c, w, h, all_problems);
    INFO(w << "×" << h << all_problems);
    CHECK(p.empty());
  }
  // The check itself: a legend's box over a bar is a finding.
  NullCanvas base;
  LayoutRecorder drawn(base);
  drawn.data_bar({100, 100, 50, 300});
  drawn.legend_area({120, 300, 200, 80});
  drawn.data_bar({400, 350, 50, 50});  // clear of it
  const std::vector<std::string> p = layout_problems(drawn, {0, 0, 800, 500});
  REQUIRE(p.size() == 1);
  CHECK(p.front() == "the legend covers 1 bar(s)");
}

TEST_CASE("the legend stands clear of every line, between its points too, and the layout check names a legend over one",
          "[export][layout]") {
  // A steep line crosses both left corners between its points (its ends far
  // above and below the plot, its middle on the frame's edges); the right
  // corners hold the points of another. No corner is clear.
  ChartSpec c;
  c.id = "legend-over-lines";
  c.x = {"x", Scale::linear, TickFormat::plain, 0.0, 100.0, false, ""};
  c.y = {"y", Scale::linear, TickFormat::plain, 0.0, 100.0, false, ""};
  Series steep;
  steep.name = "a steep line";
  steep.x = {10, 10.4};
  steep.y = {-100, 300};
  Series right;
  right.name = "points on the right";
  right.x = {97, 97, 97};
  right.y = {3, 50, 97};
  right.color = palette(1);
  c.series = {steep, right};
  for (const auto& [w, h] : kExportSizes) {
    std::string all_problems;
    const std::vector<std::string> p = layout_problems_at(c, w, h, all_problems);
    INFO(w << "×" << h << all_problems);
    CHECK(std::none_of(p.begin(), p.end(), [](const std::string& x) { return x.rfind("the legend covers", 0) == 0; }));
  }
  // The check itself: a legend's box over a segment of a line is a finding,
  // though no point of the line lies under it.
  NullCanvas base;
  LayoutRecorder drawn(base);
  drawn.legend_area({120, 300, 200, 80});
  drawn.data_line({{100, 250}, {400, 450}});  // through the box, both ends outside it
  drawn.data_line({{100, 100}, {400, 120}, {500, 200}});  // clear of it
  const std::vector<std::string> p = layout_problems(drawn, {0, 0, 800, 500});
  REQUIRE(p.size() == 1);
  CHECK(p.front() == "the legend covers 1 line segment(s)");
  CHECK(segment_crosses({0, 0}, {10, 10}, {4, 4, 1, 1}));
  CHECK_FALSE(segment_crosses({0, 10}, {10, 20}, {4, 4, 1, 1}));
  CHECK(segment_crosses({5, 0}, {5, 10}, {4, 4, 2, 2}));  // vertical, through
  CHECK_FALSE(segment_crosses({8, 0}, {8, 10}, {4, 4, 2, 2}));  // vertical, beside
}
