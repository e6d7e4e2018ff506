// A chart as a value: axes (linear or log, with readable ticks such as 1K, 1M,
// 1G), series, reference lines, markers, annotations and a legend. The GUI's
// plot widget, the SVG/PNG/PDF exporters and the CSV writer all render the
// same ChartSpec, so what a student exports is what the lecture showed.
// Plain data; no drawing here (see chart_render.hpp).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace flashlab::analysis {

struct Color {
  std::uint8_t r = 0, g = 0, b = 0, a = 255;
  bool operator==(const Color& o) const { return r == o.r && g == o.g && b == o.b && a == o.a; }
};
// Okabe–Ito colours: distinguishable for colour-blind students and on a
// washed-out projector, then four more (dark yellow, wine, indigo, brown) and
// a violet. k wraps around.
Color palette(int k);
Color with_alpha(Color c, std::uint8_t a);

enum class Scale { linear, log10, log2 };
// How tick labels read: si = powers of 1000 (1K = 1000, 1M, 1G, 1T);
// binary = powers of 1024 (1K = 1024: sequence lengths, SRAM sizes);
// bytes = si with a unit ("1 GB": traffic, bandwidth); bytes_iec = powers of
// 1024 with a unit ("1 GiB": memory held, as the report's tables write it);
// plain = up to 3 significant digits.
enum class TickFormat { si, binary, bytes, bytes_iec, plain };

struct Range {
  double lo = 0, hi = 1;
  bool valid() const;  // finite, lo < hi
};

struct Axis {
  std::string label;
  Scale scale = Scale::linear;
  TickFormat format = TickFormat::plain;
  std::optional<double> min, max;  // fixed limits; auto-fit where unset
  bool include_zero = false;       // linear auto-fit includes 0 (bars, memory)
  // What one step along it counts, for the CSV: "ms", "TFLOP/s", "FLOP/byte";
  // "" where the format says it (bytes) or the axis counts things (N, batch).
  std::string unit;
};
// The axis's unit: its own, else "bytes" for a bytes format, else "".
std::string axis_unit(const Axis& a);

struct Tick {
  double value = 0;
  std::string label;  // empty for a minor tick
  bool major = true;
};

// One number as an axis or read-out would print it: 1536 binary -> "1.5K",
// 2.5e12 si -> "2.5T", 3e9 bytes -> "3 GB", 0.125 plain -> "0.125".
std::string format_tick(double v, TickFormat f);
// Ticks inside [range.lo, range.hi], about max_major labelled ones. Log axes
// tick at powers (log10: 1-2-5 within a decade when the range is short; log2:
// every power of 2, thinned to fit; bytes_iec on either: powers of 2, "512 MiB",
// "1 GiB"). Linear bytes_iec ticks are 1-2-5 steps of one unit, all labelled in it.
std::vector<Tick> make_ticks(Range range, Scale s, TickFormat f, int max_major = 8);

enum class SeriesStyle { line, points, line_points, bars };
enum class MarkerShape { none, circle, square, diamond, triangle, cross };
enum class Dash { solid, dashed, dotted };

struct Series {
  std::string name;             // legend and CSV
  std::vector<double> x, y;     // bars: x is the category index
  std::vector<std::string> point_labels;  // empty, or one per point (drawn beside the point)
  // Every label drawn: one that finds no room beside its point (or its group's)
  // goes to the nearest free spot with a thin leader to its marker — for points
  // that must each be named (a check's flagged rows). Otherwise a label with no
  // room is left out, and the chart's points speak for themselves.
  bool label_every_point = false;
  // Points too close together for a label each share one beside them: the
  // labels' words after the first, after this word ("lines" + "line 3",
  // "line 6" -> "lines 3, 6"); empty: the labels joined whole ("a, b").
  std::string grouped_label;
  // Empty, or one per point: why a point has no value ("OOM", "skipped",
  // "baseline OOM"); the CSV's note column. Not drawn (markers and labels say it).
  std::vector<std::string> point_notes;
  SeriesStyle style = SeriesStyle::line_points;
  MarkerShape marker = MarkerShape::circle;
  bool open_marker = false;     // the marker's outline only: a backward pass beside its forward, in one colour
  Dash dash = Dash::solid;
  Color color;
  double width = 2;             // line width in points at scale 1
  bool in_legend = true;
};

// A horizontal (y = value) or vertical (x = value) line across the plot:
// a ceiling, the ridge point, the current N.
struct RefLine {
  bool vertical = false;
  double value = 0;
  std::string label;
  Color color{90, 90, 90, 255};
  Dash dash = Dash::dashed;
  double width = 1.5;
  // Horizontal lines only: draw from x = from_x (e.g. a ceiling starting at its ridge).
  std::optional<double> from_x;
};

// A point of note: an OOM cell (y unset: drawn on the bottom edge of the plot),
// the ridge point, a measured run.
struct Marker {
  double x = 0;
  std::optional<double> y;
  std::string label;
  MarkerShape shape = MarkerShape::cross;
  Color color{213, 94, 0, 255};
  double size = 7;
};

struct Annotation {
  double x = 0, y = 0;  // data coordinates
  std::string text;
  Color color{40, 40, 40, 255};
  enum class Anchor { left, right, above, below } anchor = Anchor::right;
};

// Rows × columns of values (NaN: no value) with optional per-cell text ("OOM").
struct Heatmap {
  std::vector<std::string> row_labels, col_labels;
  std::vector<double> values;          // row-major
  std::vector<std::string> cell_text;  // empty, or one per cell; replaces the value's text
  std::string value_label;             // what a cell holds, e.g. "time (ms)"
  std::string value_unit;              // its unit for the CSV: "ms"
  std::vector<double> col_values;      // empty, or the x value of each column (N for the bench heatmap)
  TickFormat value_format = TickFormat::plain;
  bool log_color = true;
  double value(size_t r, size_t c) const { return values[r * col_labels.size() + c]; }
};

enum class ChartKind { xy, bars, heatmap };
// best: the corner that covers the fewest data points and labels.
enum class LegendPos { none, best, top_left, top_right, bottom_left, bottom_right };

struct ChartSpec {
  std::string id;  // "roofline", "io-vs-n", ...: file names and the CLI's --chart
  std::string title, subtitle;
  ChartKind kind = ChartKind::xy;
  Axis x, y;
  std::vector<Series> series;
  std::vector<RefLine> ref_lines;
  std::vector<Marker> markers;
  std::vector<Annotation> annotations;
  std::vector<std::string> categories;  // bars: one label per category (x = 0, 1, ...)
  // Bars: a category's series drawn one on another, in series order from the
  // axis up (the parts of one whole), instead of side by side. A segment's
  // point label is written inside it where it fits.
  bool stacked = false;
  Heatmap heatmap;
  LegendPos legend = LegendPos::best;
  // Footnotes (assumptions, skipped points, OOM cells). When the chart has no
  // data at all, notes.front() says why and the renderers show it in the plot.
  std::vector<std::string> notes;

  bool empty() const;  // nothing to plot
};

// The data range of an axis over every finite point (positive only on log
// axes), reference line, marker and annotation, padded so nothing sits on the
// frame; fixed limits win. Empty data gives [0, 1] (linear) or [1, 10] (log).
Range auto_fit(const ChartSpec& c, bool x_axis);

// Series drawn on another: for each series of an xy chart, the index of the
// first earlier series whose every plottable point it lies on (each x and y
// within 0.4 % of the auto-fitted axis: two roofline dots at nearly the same
// intensity and rate too), else -1. The
// renderer draws such a series so that both show and its legend says so.
std::vector<int> coinciding_series(const ChartSpec& c);
// The two series hold the same points to 9 significant digits ("=", not "≈").
bool same_points(const Series& a, const Series& b);

// Stacked bars: per category (index = x), the sum of its finite positive
// segments, the height of its stack.
std::vector<double> stack_tops(const ChartSpec& c);

// Data <-> [0, 1] along an axis (log axes map log values linearly).
double axis_fraction(double v, Range r, Scale s);
double axis_value(double fraction, Range r, Scale s);
bool plottable(double v, Scale s);  // finite, and > 0 on log axes

// The chart's data as CSV: header
// "chart,series,x,y,label,note,x_name,x_unit,y_name,y_unit", then one row per
// point (bars: x is the category index, label the category and note the
// bar's own label; heatmaps: series is the row label, x the column's value
// (its index where the chart has none), y the cell's value, label the column
// label, note the cell text), then reference lines and markers as series
// "ref: …" / "marker: …". The last four columns name the axes as drawn and
// their units (a heatmap's y: what its cells hold), the same on every row. Numbers are written with
// round-trip precision. A point without a value (NaN) has an empty y, and its
// note says why where the chart knows it ("OOM", "skipped", "failed",
// "baseline OOM").
std::string chart_to_csv(const ChartSpec& c);
// Reads the series back (points only, in order): the round trip of chart_to_csv.
// Throws std::runtime_error on a malformed document.
std::vector<Series> chart_series_from_csv(const std::string& text);

}  // namespace flashlab::analysis
