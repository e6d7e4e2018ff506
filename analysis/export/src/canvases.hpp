// Internal: the two Canvas implementations of the exporters.
#pragma once

#include <string>
#include <vector>

#include "flashlab/analysis/charts/chart_render.hpp"

typedef struct _cairo cairo_t;

namespace flashlab::analysis::detail {

// Draws with cairo (image or PDF surface). Text in DejaVu Sans via fontconfig.
class CairoCanvas : public Canvas {
 public:
  explicit CairoCanvas(cairo_t* cr) : cr_(cr) {}
  void line(Point a, Point b, Color c, double width, Dash dash) override;
  void polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) override;
  void rect_filled(Rect r, Color c) override;
  void rect_outline(Rect r, Color c, double width) override;
  void polygon_filled(const std::vector<Point>& pts, Color c) override;
  void circle_filled(Point center, double radius, Color c) override;
  void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical) override;
  Point measure(const std::string& s, double size_px) override;
  void push_clip(Rect r) override;
  void pop_clip() override;

 private:
  void stroke_style(Color c, double width, Dash dash);
  cairo_t* cr_;
};

// Writes SVG elements as text; text stays <text> so labels can be searched,
// selected and edited (cairo's own SVG surface turns glyphs into outlines).
class SvgCanvas : public Canvas {
 public:
  SvgCanvas(double width, double height);
  void line(Point a, Point b, Color c, double width, Dash dash) override;
  void polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) override;
  void rect_filled(Rect r, Color c) override;
  void rect_outline(Rect r, Color c, double width) override;
  void polygon_filled(const std::vector<Point>& pts, Color c) override;
  void circle_filled(Point center, double radius, Color c) override;
  void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical) override;
  Point measure(const std::string& s, double size_px) override;
  void push_clip(Rect r) override;
  void pop_clip() override;
  void begin_group(const std::string& name) override;
  void end_group() override;
  std::string finish();  // the whole document

 private:
  std::string body_;
  double width_, height_;
  int clip_id_ = 0;
};

// Font metrics shared by both canvases: DejaVu Sans through cairo when
// available, else the font's average advance (0.6 em).
Point measure_dejavu(const std::string& s, double size_px);
double dejavu_ascent(double size_px);
double dejavu_descent(double size_px);
std::string xml_escape(const std::string& s);

}  // namespace flashlab::analysis::detail
