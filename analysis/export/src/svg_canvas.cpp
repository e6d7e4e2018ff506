#include <cstdio>

#include "canvases.hpp"

namespace flashlab::analysis::detail {

namespace {

std::string n(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", v);
  std::string s = buf;
  while (s.size() > 1 && s.back() == '0') s.pop_back();
  if (s.back() == '.') s.pop_back();
  return s == "-0" ? "0" : s;
}

std::string rgb(Color c) {
  return "rgb(" + std::to_string(c.r) + "," + std::to_string(c.g) + "," + std::to_string(c.b) + ")";
}

std::string paint(const char* what, Color c) {
  std::string s = std::string(" ") + what + "=\"" + rgb(c) + "\"";
  if (c.a != 255) s += std::string(" ") + what + "-opacity=\"" + n(c.a / 255.0) + "\"";
  return s;
}

std::string stroke(Color c, double width, Dash dash) {
  std::string s = paint("stroke", c) + " stroke-width=\"" + n(width) + "\"";
  if (dash == Dash::dashed) s += " stroke-dasharray=\"" + n(6 * width) + " " + n(4 * width) + "\"";
  if (dash == Dash::dotted) s += " stroke-dasharray=\"0.1 " + n(2.5 * width) + "\" stroke-linecap=\"round\"";
  return s;
}

}  // namespace

std::string xml_escape(const std::string& s) {
  std::string out;
  out.reserve(s.size());
  for (char ch : s) {
    switch (ch) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // Control characters are not allowed in XML 1.0.
        if (static_cast<unsigned char>(ch) < 0x20 && ch != '\t' && ch != '\n') out += ' ';
        else out += ch;
    }
  }
  return out;
}

SvgCanvas::SvgCanvas(double width, double height) : width_(width), height_(height) {}

void SvgCanvas::line(Point a, Point b, Color c, double width, Dash dash) {
  body_ += "<line x1=\"" + n(a.x) + "\" y1=\"" + n(a.y) + "\" x2=\"" + n(b.x) + "\" y2=\"" + n(b.y) + "\"" +
           stroke(c, width, dash) + "/>\n";
}

void SvgCanvas::polyline(const std::vector<Point>& pts, Color c, double width, Dash dash) {
  if (pts.size() < 2) return;
  body_ += "<polyline fill=\"none\" stroke-linejoin=\"round\"" + stroke(c, width, dash) + " points=\"";
  for (size_t k = 0; k < pts.size(); ++k) body_ += (k ? " " : "") + n(pts[k].x) + "," + n(pts[k].y);
  body_ += "\"/>\n";
}

void SvgCanvas::rect_filled(Rect r, Color c) {
  body_ += "<rect x=\"" + n(r.x) + "\" y=\"" + n(r.y) + "\" width=\"" + n(r.w) + "\" height=\"" + n(r.h) + "\"" +
           paint("fill", c) + "/>\n";
}

void SvgCanvas::rect_outline(Rect r, Color c, double width) {
  body_ += "<rect x=\"" + n(r.x) + "\" y=\"" + n(r.y) + "\" width=\"" + n(r.w) + "\" height=\"" + n(r.h) +
           "\" fill=\"none\"" + stroke(c, width, Dash::solid) + "/>\n";
}

void SvgCanvas::polygon_filled(const std::vector<Point>& pts, Color c) {
  if (pts.size() < 3) return;
  body_ += "<polygon" + paint("fill", c) + " points=\"";
  for (size_t k = 0; k < pts.size(); ++k) body_ += (k ? " " : "") + n(pts[k].x) + "," + n(pts[k].y);
  body_ += "\"/>\n";
}

void SvgCanvas::circle_filled(Point p, double radius, Color c) {
  body_ += "<circle cx=\"" + n(p.x) + "\" cy=\"" + n(p.y) + "\" r=\"" + n(radius) + "\"" + paint("fill", c) + "/>\n";
}

void SvgCanvas::text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical) {
  if (s.empty()) return;
  // Baselines from the font's metrics, so every renderer places text alike
  // (dominant-baseline is read differently by browsers and editors).
  const double dy = v == VAlign::top      ? dejavu_ascent(size_px)
                    : v == VAlign::middle ? (dejavu_ascent(size_px) - dejavu_descent(size_px)) / 2
                                          : -dejavu_descent(size_px);
  const char* anchor = h == HAlign::left ? "start" : h == HAlign::center ? "middle" : "end";
  body_ += "<text x=\"" + n(vertical ? p.x + dy : p.x) + "\" y=\"" + n(vertical ? p.y : p.y + dy) +
           "\" font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"" + n(size_px) + "\" text-anchor=\"" +
           anchor + "\"" + paint("fill", c);
  if (vertical) body_ += " transform=\"rotate(-90 " + n(p.x + dy) + " " + n(p.y) + ")\"";
  body_ += ">" + xml_escape(s) + "</text>\n";
}

Point SvgCanvas::measure(const std::string& s, double size_px) { return measure_dejavu(s, size_px); }

void SvgCanvas::push_clip(Rect r) {
  const std::string id = "clip" + std::to_string(++clip_id_);
  body_ += "<clipPath id=\"" + id + "\"><rect x=\"" + n(r.x) + "\" y=\"" + n(r.y) + "\" width=\"" + n(r.w) +
           "\" height=\"" + n(r.h) + "\"/></clipPath>\n<g clip-path=\"url(#" + id + ")\">\n";
}

void SvgCanvas::pop_clip() { body_ += "</g>\n"; }

void SvgCanvas::begin_group(const std::string& name) {
  body_ += "<g class=\"series\" data-name=\"" + xml_escape(name) + "\">\n";
}

void SvgCanvas::end_group() { body_ += "</g>\n"; }

std::string SvgCanvas::finish() {
  return "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + n(width_) +
         "\" height=\"" + n(height_) + "\" viewBox=\"0 0 " + n(width_) + " " + n(height_) + "\">\n" + body_ + "</svg>\n";
}

}  // namespace flashlab::analysis::detail
