// What lies under the pointer on a drawn chart: a heatmap cell, a bar or a
// stacked segment, or the nearest point of a series within a radius.
#include "flashlab/analysis/charts/chart_render.hpp"

#include <algorithm>
#include <cmath>

namespace flashlab::analysis {

ChartHit hit_test(const ChartSpec& c, const ChartLayout& L, Point px, double radius) {
  ChartHit hit;
  if (!L.plot.contains(px)) return hit;
  if (c.kind == ChartKind::heatmap) {
    const Heatmap& h = c.heatmap;
    const size_t nr = h.row_labels.size(), nc = h.col_labels.size();
    if (nr == 0 || nc == 0) return hit;
    const size_t k = std::min(nc - 1, static_cast<size_t>((px.x - L.plot.x) / L.plot.w * static_cast<double>(nc)));
    const size_t r = std::min(nr - 1, static_cast<size_t>((px.y - L.plot.y) / L.plot.h * static_cast<double>(nr)));
    hit.row = static_cast<int>(r);
    hit.col = static_cast<int>(k);
    hit.at = px;
    const size_t idx = r * nc + k;
    const double v = idx < h.values.size() ? h.values[idx] : NAN;
    const std::string cell = idx < h.cell_text.size() && !h.cell_text[idx].empty() ? h.cell_text[idx]
                             : std::isfinite(v) ? format_tick(v, h.value_format) : "no value";
    hit.text = c.y.label + " " + h.row_labels[r] + ", " + c.x.label + " " + h.col_labels[k] + ": " + h.value_label +
               " = " + cell;
    return hit;
  }
  if (c.kind == ChartKind::bars && c.stacked) {
    // The category under the pointer, then the segment its height falls in.
    const double x = L.to_data(px).x, y = L.to_data(px).y;
    const double cat = std::round(x);
    if (std::fabs(x - cat) > 0.35) return hit;
    double below = 0;
    for (size_t si = 0; si < c.series.size(); ++si) {
      const Series& s = c.series[si];
      for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
        if (s.x[k] != cat || !std::isfinite(s.y[k]) || s.y[k] <= 0) continue;
        if (y >= below && y <= below + s.y[k]) {
          hit.series = static_cast<int>(si);
          hit.point = static_cast<int>(k);
          hit.at = px;
          const auto ci = static_cast<size_t>(cat);
          const std::string label = k < s.point_labels.size() && !s.point_labels[k].empty()
                                        ? format_tick(s.y[k], c.y.format) + " (" + s.point_labels[k] + ")"
                                        : format_tick(s.y[k], c.y.format);
          hit.text = s.name + " @ " + (ci < c.categories.size() ? c.categories[ci] : "?") + ": " + label;
          return hit;
        }
        below += s.y[k];
      }
    }
    return hit;
  }
  if (c.kind == ChartKind::bars) {
    const size_t ns = c.series.size();
    for (size_t si = 0; si < ns; ++si) {
      const Series& s = c.series[si];
      const double bw = 0.8 / static_cast<double>(ns);
      for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
        const double x0 = L.px_x(s.x[k] - 0.4 + bw * static_cast<double>(si)), x1 = L.px_x(s.x[k] - 0.4 + bw * (static_cast<double>(si) + 1));
        if (px.x < x0 || px.x > x1) continue;
        hit.series = static_cast<int>(si);
        hit.point = static_cast<int>(k);
        hit.at = px;
        const size_t cat = static_cast<size_t>(std::max(0.0, s.x[k]));
        const std::string label = k < s.point_labels.size() && !s.point_labels[k].empty() ? s.point_labels[k]
                                                                                           : format_tick(s.y[k], c.y.format);
        hit.text = s.name + " @ " + (cat < c.categories.size() ? c.categories[cat] : "?") + ": " + label;
        return hit;
      }
    }
    return hit;
  }
  double best = radius * radius;
  for (size_t si = 0; si < c.series.size(); ++si) {
    const Series& s = c.series[si];
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!plottable(s.x[k], L.sx) || !plottable(s.y[k], L.sy)) continue;
      const Point p = L.to_px(s.x[k], s.y[k]);
      const double d2 = (p.x - px.x) * (p.x - px.x) + (p.y - px.y) * (p.y - px.y);
      if (d2 <= best) {
        best = d2;
        hit.series = static_cast<int>(si);
        hit.point = static_cast<int>(k);
        hit.at = p;
      }
    }
  }
  if (hit.series >= 0) {
    const Series& s = c.series[static_cast<size_t>(hit.series)];
    const size_t k = static_cast<size_t>(hit.point);
    hit.text = s.name + ": " + (c.x.label.empty() ? "x" : c.x.label) + " = " + format_tick(s.x[k], c.x.format) + ", " +
               (c.y.label.empty() ? "y" : c.y.label) + " = " + format_tick(s.y[k], c.y.format);
    if (k < s.point_labels.size() && !s.point_labels[k].empty()) hit.text += " (" + s.point_labels[k] + ")";
  }
  return hit;
}

}  // namespace flashlab::analysis
