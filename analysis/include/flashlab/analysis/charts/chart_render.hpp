// One layout and drawing routine for a ChartSpec, over an abstract Canvas: the
// ImGui draw list (app/gui) and cairo/SVG (analysis/export) implement Canvas,
// so the on-screen chart and the exported file are drawn by the same code.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart.hpp"

namespace flashlab::analysis {

struct Point {
  double x = 0, y = 0;
};
struct Rect {
  double x = 0, y = 0, w = 0, h = 0;
  double right() const { return x + w; }
  double bottom() const { return y + h; }
  bool contains(Point p) const { return p.x >= x && p.x <= x + w && p.y >= y && p.y <= y + h; }
};

enum class HAlign { left, center, right };
enum class VAlign { top, middle, bottom };

// Pixel coordinates, y down. Text sizes are in pixels.
class Canvas {
 public:
  virtual ~Canvas() = default;
  virtual void line(Point a, Point b, Color c, double width, Dash dash) = 0;
  virtual void polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) = 0;
  virtual void rect_filled(Rect r, Color c) = 0;
  virtual void rect_outline(Rect r, Color c, double width) = 0;
  virtual void polygon_filled(const std::vector<Point>& pts, Color c) = 0;
  virtual void circle_filled(Point center, double radius, Color c) = 0;
  // Text anchored at p; `vertical` rotates it 90° counter-clockwise (y-axis labels).
  virtual void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v,
                    bool vertical = false) = 0;
  virtual Point measure(const std::string& s, double size_px) = 0;  // (width, height)
  virtual void push_clip(Rect r) = 0;
  virtual void pop_clip() = 0;
  // Structure for formats that keep it (SVG groups named after series).
  virtual void begin_group(const std::string& /*name*/) {}
  virtual void end_group() {}
  // The box of a data mark just drawn (a point's marker, an OOM ✕): nothing
  // to draw; the layout check records it (LayoutRecorder).
  virtual void data_mark(Rect /*box*/) {}
  // A bar just drawn (its value may stand inside it) and the legend's box:
  // nothing to draw; the layout check records both (no legend covers a bar).
  virtual void data_bar(Rect /*box*/) {}
  virtual void legend_area(Rect /*box*/) {}
  // A series' line just drawn through these points: nothing to draw; the
  // layout check records it (no legend covers a line).
  virtual void data_line(const std::vector<Point>& /*pts*/) {}
};

// A canvas that passes every call to another: the base of the canvases that
// change one thing about a drawing (keep what went where, hold text back) and
// leave the rest to the canvas they wrap.
class ForwardingCanvas : public Canvas {
 public:
  explicit ForwardingCanvas(Canvas& inner) : inner_(inner) {}
  void line(Point a, Point b, Color c, double width, Dash dash) override { inner_.line(a, b, c, width, dash); }
  void polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) override {
    inner_.polyline(pts, c, width, dash);
  }
  void rect_filled(Rect r, Color c) override { inner_.rect_filled(r, c); }
  void rect_outline(Rect r, Color c, double width) override { inner_.rect_outline(r, c, width); }
  void polygon_filled(const std::vector<Point>& pts, Color c) override { inner_.polygon_filled(pts, c); }
  void circle_filled(Point center, double radius, Color c) override { inner_.circle_filled(center, radius, c); }
  void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical = false) override {
    inner_.text(p, s, size_px, c, h, v, vertical);
  }
  Point measure(const std::string& s, double size_px) override { return inner_.measure(s, size_px); }
  void push_clip(Rect r) override { inner_.push_clip(r); }
  void pop_clip() override { inner_.pop_clip(); }
  void begin_group(const std::string& name) override { inner_.begin_group(name); }
  void end_group() override { inner_.end_group(); }
  void data_mark(Rect box) override { inner_.data_mark(box); }
  void data_bar(Rect box) override { inner_.data_bar(box); }
  void legend_area(Rect box) override { inner_.legend_area(box); }
  void data_line(const std::vector<Point>& pts) override { inner_.data_line(pts); }

 protected:
  Canvas& inner_;
};

// A canvas that draws nothing: layouts measured without a surface. Text is
// measured as 0.6 em per byte (the average advance of DejaVu Sans), enough
// for a layout and a hit test without a font; a canvas that knows the font
// measures with it instead.
class NullCanvas : public Canvas {
 public:
  void line(Point, Point, Color, double, Dash) override {}
  void polyline(const std::vector<Point>&, Color, double, Dash) override {}
  void rect_filled(Rect, Color) override {}
  void rect_outline(Rect, Color, double) override {}
  void polygon_filled(const std::vector<Point>&, Color) override {}
  void circle_filled(Point, double, Color) override {}
  void text(Point, const std::string&, double, Color, HAlign, VAlign, bool) override {}
  Point measure(const std::string& s, double px) override { return {0.6 * px * static_cast<double>(s.size()), px * 1.2}; }
  void push_clip(Rect) override {}
  void pop_clip() override {}
};

// A canvas that draws through another and keeps what the renderer put where:
// the box of every text and of every data mark. The layout check of the tests
// and of flashlab report reads it.
struct DrawnText {
  Rect box;
  std::string text;
};
class LayoutRecorder : public ForwardingCanvas {
 public:
  using ForwardingCanvas::ForwardingCanvas;
  void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical = false) override;
  void data_mark(Rect box) override { marks.push_back(box); }
  void data_bar(Rect box) override { bars.push_back(box); }
  void legend_area(Rect box) override { legends.push_back(box); }
  void data_line(const std::vector<Point>& pts) override { lines.push_back(pts); }

  std::vector<DrawnText> texts;
  std::vector<Rect> marks;
  std::vector<Rect> bars;
  std::vector<Rect> legends;
  std::vector<std::vector<Point>> lines;  // each series' polylines, point by point
};

// Whether the segment from a to b passes through r (its ends inside count).
bool segment_crosses(Point a, Point b, Rect r);

// What reads wrong in a drawing on `canvas`: a text over another text, a text
// over a data mark, a text outside the canvas, a text cut short ("…"), a
// legend over a bar or over a segment of a series' line. One line each, quoting the texts; empty when the chart
// reads.
std::vector<std::string> layout_problems(const LayoutRecorder& drawn, Rect canvas);

struct ChartStyle {
  double scale = 1.0;        // UI scale: fonts, lines, margins
  double font_px = 13;       // at scale 1
  double title_px = 16;
  Color background{255, 255, 255, 255};
  Color plot_background{255, 255, 255, 255};
  Color text{30, 30, 30, 255};
  Color axis{60, 60, 60, 255};
  Color grid{225, 225, 225, 255};
  Color grid_minor{242, 242, 242, 255};
  bool draw_background = true;
  bool draw_title = true;
  bool draw_notes = true;
};
ChartStyle dark_chart_style(double scale);  // the GUI's dark theme

// Where everything goes: the plot area inside `outer`, and the axis ranges.
struct ChartLayout {
  Rect outer, plot;
  Range x, y;
  Scale sx = Scale::linear, sy = Scale::linear;
  double notes_top = 0;  // first footnote baseline
  // What fits: a short chart drops its notes, then subtitle, then title, so
  // that the plot itself keeps a readable height.
  bool show_title = true, show_subtitle = true, show_notes = true;
  // The texts around the plot as drawn: a title, subtitle or footnote too
  // wide for the chart goes on more lines, never cut; the y axis's label on
  // up to two lines along the plot.
  std::vector<std::string> title_lines, subtitle_lines, note_lines, y_label_lines;
  // A legend that would cover much of a short plot goes right of it instead.
  bool legend_outside = false;
  Rect legend;
  // Bars whose category labels are wider than their slot: each label on two
  // lines, broken at a space, under the plot.
  bool two_line_categories = false;
  Point to_px(double vx, double vy) const;
  double px_x(double vx) const;
  double px_y(double vy) const;
  Point to_data(Point px) const;
};

// Ranges: the view's when given (zoom), else auto_fit.
ChartLayout layout_chart(const ChartSpec& c, Canvas& canvas, Rect outer, const ChartStyle& style,
                         const std::optional<Range>& x_view = std::nullopt,
                         const std::optional<Range>& y_view = std::nullopt);

// Extra series drawn over the chart's own (the GUI's cursor marker); not exported.
struct RenderExtras {
  std::vector<const Series*> series;
  int highlight_series = -1;  // drawn thicker (hovered legend entry)
  // Texts whose labels (a reference line's name, a point's) take their places
  // before all others, compared without spaces: what a lecture's scene says
  // its chart shows stays on a crowded chart.
  std::vector<std::string> named_first;
};

void render_chart(const ChartSpec& c, Canvas& canvas, const ChartLayout& layout, const ChartStyle& style,
                  const RenderExtras* extras = nullptr);

// What is under a pixel: the nearest point of a series within `radius_px`, a
// bar, or a heatmap cell; a one-line read-out in the axes' formats.
struct ChartHit {
  int series = -1;    // index into c.series (-1: none)
  int point = -1;
  int row = -1, col = -1;  // heatmap cell
  Point at;           // pixel position of the point
  std::string text;   // "fa2: N = 4K, HBM = 1.2 GB"
  bool hit() const { return series >= 0 || row >= 0; }
};
ChartHit hit_test(const ChartSpec& c, const ChartLayout& layout, Point px, double radius_px);

}  // namespace flashlab::analysis
