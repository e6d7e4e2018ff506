#include <cmath>

#include "canvases.hpp"

#ifdef FLASHLAB_HAVE_CAIRO
#include <cairo.h>
#endif

namespace flashlab::analysis::detail {

namespace {
constexpr const char* kFont = "DejaVu Sans";
// DejaVu Sans' vertical metrics (units per em 2048: ascent 1901, descent 483).
constexpr double kAscent = 0.928, kDescent = 0.236;
}  // namespace

double dejavu_ascent(double size_px) { return kAscent * size_px; }
double dejavu_descent(double size_px) { return kDescent * size_px; }

#ifdef FLASHLAB_HAVE_CAIRO

namespace {

void set_color(cairo_t* cr, Color c) { cairo_set_source_rgba(cr, c.r / 255.0, c.g / 255.0, c.b / 255.0, c.a / 255.0); }

// A 1×1 surface to measure text on, one per thread.
cairo_t* scratch() {
  struct Scratch {
    cairo_surface_t* s = cairo_image_surface_create(CAIRO_FORMAT_ARGB32, 1, 1);
    cairo_t* cr = cairo_create(s);
    Scratch() { cairo_select_font_face(cr, kFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL); }
    ~Scratch() {
      cairo_destroy(cr);
      cairo_surface_destroy(s);
    }
  };
  thread_local Scratch sc;
  return sc.cr;
}

}  // namespace

Point measure_dejavu(const std::string& s, double size_px) {
  cairo_t* cr = scratch();
  cairo_set_font_size(cr, size_px);
  cairo_text_extents_t e;
  cairo_text_extents(cr, s.c_str(), &e);
  return {e.x_advance, (kAscent + kDescent) * size_px};
}

void CairoCanvas::stroke_style(Color c, double width, Dash dash) {
  set_color(cr_, c);
  cairo_set_line_width(cr_, width);
  cairo_set_line_join(cr_, CAIRO_LINE_JOIN_ROUND);
  if (dash == Dash::dashed) {
    const double d[] = {6 * width, 4 * width};
    cairo_set_dash(cr_, d, 2, 0);
    cairo_set_line_cap(cr_, CAIRO_LINE_CAP_BUTT);
  } else if (dash == Dash::dotted) {
    const double d[] = {0.1, 2.5 * width};
    cairo_set_dash(cr_, d, 2, 0);
    cairo_set_line_cap(cr_, CAIRO_LINE_CAP_ROUND);
  } else {
    cairo_set_dash(cr_, nullptr, 0, 0);
    cairo_set_line_cap(cr_, CAIRO_LINE_CAP_BUTT);
  }
}

void CairoCanvas::line(Point a, Point b, Color c, double width, Dash dash) {
  stroke_style(c, width, dash);
  cairo_move_to(cr_, a.x, a.y);
  cairo_line_to(cr_, b.x, b.y);
  cairo_stroke(cr_);
}

void CairoCanvas::polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) {
  if (pts.size() < 2) return;
  stroke_style(c, width, dash);
  cairo_move_to(cr_, pts[0].x, pts[0].y);
  for (size_t k = 1; k < pts.size(); ++k) cairo_line_to(cr_, pts[k].x, pts[k].y);
  cairo_stroke(cr_);
}

void CairoCanvas::rect_filled(Rect r, Color c) {
  set_color(cr_, c);
  cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
  cairo_fill(cr_);
}

void CairoCanvas::rect_outline(Rect r, Color c, double width) {
  stroke_style(c, width, Dash::solid);
  cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
  cairo_stroke(cr_);
}

void CairoCanvas::polygon_filled(const std::vector<Point>& pts, Color c) {
  if (pts.size() < 3) return;
  set_color(cr_, c);
  cairo_move_to(cr_, pts[0].x, pts[0].y);
  for (size_t k = 1; k < pts.size(); ++k) cairo_line_to(cr_, pts[k].x, pts[k].y);
  cairo_close_path(cr_);
  cairo_fill(cr_);
}

void CairoCanvas::circle_filled(Point p, double radius, Color c) {
  set_color(cr_, c);
  cairo_new_sub_path(cr_);
  cairo_arc(cr_, p.x, p.y, radius, 0, 2 * M_PI);
  cairo_fill(cr_);
}

void CairoCanvas::text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical) {
  if (s.empty()) return;
  cairo_save(cr_);
  cairo_select_font_face(cr_, kFont, CAIRO_FONT_SLANT_NORMAL, CAIRO_FONT_WEIGHT_NORMAL);
  cairo_set_font_size(cr_, size_px);
  cairo_text_extents_t e;
  cairo_text_extents(cr_, s.c_str(), &e);
  double dx = h == HAlign::left ? 0 : h == HAlign::center ? -e.x_advance / 2 : -e.x_advance;
  double dy = v == VAlign::top ? kAscent * size_px : v == VAlign::middle ? (kAscent - kDescent) * size_px / 2 : -kDescent * size_px;
  cairo_translate(cr_, p.x, p.y);
  if (vertical) cairo_rotate(cr_, -M_PI / 2);
  set_color(cr_, c);
  cairo_move_to(cr_, dx, dy);
  cairo_show_text(cr_, s.c_str());
  cairo_restore(cr_);
}

Point CairoCanvas::measure(const std::string& s, double size_px) { return measure_dejavu(s, size_px); }

void CairoCanvas::push_clip(Rect r) {
  cairo_save(cr_);
  cairo_rectangle(cr_, r.x, r.y, r.w, r.h);
  cairo_clip(cr_);
}

void CairoCanvas::pop_clip() { cairo_restore(cr_); }

#else  // no cairo: only the metrics the SVG writer needs

Point measure_dejavu(const std::string& s, double size_px) {
  // Count code points, not bytes.
  double n = 0;
  for (unsigned char ch : s)
    if ((ch & 0xC0) != 0x80) n += 1;
  return {n * 0.6 * size_px, (kAscent + kDescent) * size_px};
}

void CairoCanvas::stroke_style(Color, double, Dash) {}
void CairoCanvas::line(Point, Point, Color, double, Dash) {}
void CairoCanvas::polyline(const std::vector<Point>&, Color, double, Dash) {}
void CairoCanvas::rect_filled(Rect, Color) {}
void CairoCanvas::rect_outline(Rect, Color, double) {}
void CairoCanvas::polygon_filled(const std::vector<Point>&, Color) {}
void CairoCanvas::circle_filled(Point, double, Color) {}
void CairoCanvas::text(Point, const std::string&, double, Color, HAlign, VAlign, bool) {}
Point CairoCanvas::measure(const std::string& s, double size_px) { return measure_dejavu(s, size_px); }
void CairoCanvas::push_clip(Rect) {}
void CairoCanvas::pop_clip() {}

#endif

}  // namespace flashlab::analysis::detail
