// The layout check: what the renderer drew where (LayoutRecorder), and every
// text over another, over a data mark, outside the chart or cut short.
#include "flashlab/analysis/charts/chart_render.hpp"

#include <algorithm>
#include <utility>

namespace flashlab::analysis {

void LayoutRecorder::text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical) {
  inner_.text(p, s, size_px, c, h, v, vertical);
  if (s.empty()) return;
  const Point size = inner_.measure(s, size_px);
  // The box along the text's own direction, from its anchor...
  const double x0 = h == HAlign::left ? 0 : h == HAlign::center ? -size.x / 2 : -size.x;
  const double y0 = v == VAlign::top ? 0 : v == VAlign::middle ? -size.y / 2 : -size.y;
  // ...turned a quarter counter-clockwise for a vertical text: (x, y) -> (y, -x).
  const Rect box = vertical ? Rect{p.x + y0, p.y - x0 - size.x, size.y, size.x} : Rect{p.x + x0, p.y + y0, size.x, size.y};
  texts.push_back({box, s});
}

bool segment_crosses(Point a, Point b, Rect r) {
  // Liang–Barsky: the part of a + t·(b − a), 0 ≤ t ≤ 1, inside each of r's four edges.
  double t0 = 0, t1 = 1;
  const double dx = b.x - a.x, dy = b.y - a.y;
  for (const auto& [p, q] : {std::pair{-dx, a.x - r.x}, std::pair{dx, r.right() - a.x}, std::pair{-dy, a.y - r.y},
                             std::pair{dy, r.bottom() - a.y}}) {
    if (p == 0) {
      if (q < 0) return false;  // parallel to this edge and outside it
      continue;
    }
    const double t = q / p;
    if (p < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

std::vector<std::string> layout_problems(const LayoutRecorder& d, Rect canvas) {
  constexpr double kSlack = 1.0;  // px: glyph boxes hold the font's whole ascent and descent
  auto overlap = [&](const Rect& a, const Rect& b) {
    return a.x + kSlack < b.right() && b.x + kSlack < a.right() && a.y + kSlack < b.bottom() && b.y + kSlack < a.bottom();
  };
  auto quoted = [](const std::string& s) { return "'" + s + "'"; };
  std::vector<std::string> out;
  for (size_t k = 0; k < d.texts.size(); ++k) {
    const DrawnText& t = d.texts[k];
    if (t.text.size() >= 3 && t.text.compare(t.text.size() - 3, 3, "…") == 0)
      out.push_back(quoted(t.text) + " is cut short");
    if (t.box.x < canvas.x - kSlack || t.box.right() > canvas.right() + kSlack || t.box.y < canvas.y - kSlack ||
        t.box.bottom() > canvas.bottom() + kSlack)
      out.push_back(quoted(t.text) + " reaches outside the chart");
    for (size_t j = k + 1; j < d.texts.size(); ++j)
      if (overlap(t.box, d.texts[j].box)) out.push_back(quoted(t.text) + " overlaps " + quoted(d.texts[j].text));
    for (const Rect& mark : d.marks)
      if (overlap(t.box, mark)) {
        out.push_back(quoted(t.text) + " covers a data point");
        break;
      }
  }
  for (const Rect& legend : d.legends) {
    size_t covered = 0;
    for (const Rect& bar : d.bars) covered += overlap(legend, bar) ? 1 : 0;
    if (covered > 0) out.push_back("the legend covers " + std::to_string(covered) + " bar(s)");
    // The legend's box less the slack: a line that grazes its frame hides nothing.
    const Rect inner{legend.x + kSlack, legend.y + kSlack, legend.w - 2 * kSlack, legend.h - 2 * kSlack};
    size_t segments = 0;
    for (const std::vector<Point>& line : d.lines)
      for (size_t k = 0; k + 1 < line.size(); ++k) segments += segment_crosses(line[k], line[k + 1], inner) ? 1 : 0;
    if (segments > 0) out.push_back("the legend covers " + std::to_string(segments) + " line segment(s)");
  }
  return out;
}

}  // namespace flashlab::analysis
