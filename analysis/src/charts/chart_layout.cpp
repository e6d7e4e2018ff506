// A chart's layout: the plot rectangle, axes' ranges and scales, what fits
// (title, subtitle and notes wrapped, the y label, the legend inside or beside
// the plot, bar labels on one line or two), and the mapping between data and
// pixels.
#include "flashlab/analysis/charts/chart_render.hpp"

#include <algorithm>
#include <cmath>

#include "chart_measure.hpp"

namespace flashlab::analysis {

ChartStyle dark_chart_style(double scale) {
  ChartStyle s;
  s.scale = scale;
  s.background = {30, 32, 36, 255};
  s.plot_background = {22, 24, 28, 255};
  s.text = {230, 230, 230, 255};
  s.axis = {170, 170, 170, 255};
  s.grid = {62, 66, 74, 255};
  s.grid_minor = {40, 43, 49, 255};
  return s;
}

double ChartLayout::px_x(double vx) const { return plot.x + axis_fraction(vx, x, sx) * plot.w; }
double ChartLayout::px_y(double vy) const { return plot.bottom() - axis_fraction(vy, y, sy) * plot.h; }
Point ChartLayout::to_px(double vx, double vy) const { return {px_x(vx), px_y(vy)}; }
Point ChartLayout::to_data(Point p) const {
  return {axis_value((p.x - plot.x) / plot.w, x, sx), axis_value((plot.bottom() - p.y) / plot.h, y, sy)};
}

using namespace chart_detail;  // what layout and drawing both measure

ChartLayout layout_chart(const ChartSpec& c, Canvas& cv, Rect outer, const ChartStyle& st,
                         const std::optional<Range>& x_view, const std::optional<Range>& y_view) {
  const Metrics m = metrics(st);
  ChartLayout L;
  L.outer = outer;
  L.sx = c.kind == ChartKind::xy ? c.x.scale : Scale::linear;
  L.sy = c.kind == ChartKind::heatmap ? Scale::linear : c.y.scale;
  L.x = x_view && x_view->valid() && c.kind == ChartKind::xy ? *x_view : auto_fit(c, true);
  L.y = y_view && y_view->valid() && c.kind != ChartKind::heatmap ? *y_view : auto_fit(c, false);
  if (L.sx != Scale::linear && L.x.lo <= 0) L.x = auto_fit(c, true);
  if (L.sy != Scale::linear && L.y.lo <= 0) L.y = auto_fit(c, false);

  const double text_w = std::max(1.0, outer.w - 2 * m.pad);
  L.title_lines = st.draw_title ? wrap_lines(cv, c.title, m.title, text_w, 2) : std::vector<std::string>{};
  L.subtitle_lines = st.draw_title ? wrap_lines(cv, c.subtitle, m.small, text_w, 2) : std::vector<std::string>{};
  L.note_lines = shown_notes(c, st, cv, m.small, text_w);
  L.show_title = !L.title_lines.empty();
  L.show_subtitle = !L.subtitle_lines.empty();
  L.show_notes = !L.note_lines.empty();
  const double axes_h = m.line_h * (c.x.label.empty() ? 1.2 : 2.3) + 2 * m.pad;
  const double min_plot = 6 * m.line_h;
  auto head_h = [&] {
    return (L.show_title ? m.title * 1.35 * static_cast<double>(L.title_lines.size()) : 0) +
           (L.show_subtitle ? m.small * 1.3 * static_cast<double>(L.subtitle_lines.size()) + m.line_h - m.small * 1.3 : 0);
  };
  auto notes_h = [&] { return L.show_notes ? static_cast<double>(L.note_lines.size()) * m.small * 1.3 : 0; };
  if (outer.h - head_h() - notes_h() - axes_h < min_plot) L.show_notes = false;
  if (outer.h - head_h() - notes_h() - axes_h < min_plot) L.show_subtitle = false;
  if (outer.h - head_h() - notes_h() - axes_h < min_plot) L.show_title = false;
  if (!L.show_notes) L.note_lines.clear();
  if (!L.show_subtitle) L.subtitle_lines.clear();
  if (!L.show_title) L.title_lines.clear();
  double top = outer.y + m.pad + head_h();
  double bottom = outer.bottom() - m.pad - notes_h();
  L.notes_top = bottom + m.small * 0.3;

  double left = outer.x + m.pad, right = outer.right() - m.pad;
  if (c.kind == ChartKind::heatmap) {
    double w = 0;
    for (const std::string& r : c.heatmap.row_labels) w = std::max(w, cv.measure(r, m.font).x);
    left += w + m.pad;
    if (!c.y.label.empty()) left += m.line_h;
    right -= 70 * m.s;  // colour bar and its labels
    bottom -= m.line_h * (c.x.label.empty() ? 1.2 : 2.3);
  } else {
    // Widest y tick label, at a tick density that fits the height.
    const double est_h = std::max(10.0, bottom - top);
    double w = 0;
    for (const Tick& t : make_ticks(L.y, L.sy, c.y.format, max_ticks_for(est_h, m.line_h * 2.2)))
      if (t.major) w = std::max(w, cv.measure(t.label, m.font).x);
    left += w + m.pad * 0.8;
    bottom -= m.line_h * (c.x.label.empty() ? 1.2 : 2.3);
    L.y_label_lines = wrap_lines(cv, c.y.label, m.font, std::max(10.0, bottom - top), 2);
    left += m.line_h * static_cast<double>(L.y_label_lines.size());
    right -= m.pad;
  }
  if (c.legend != LegendPos::none && c.kind != ChartKind::heatmap) {
    const LegendSize ls = legend_size(c, cv, m, std::max(40.0, (right - left) * 0.3));
    // Outside when it would cover more than 40% of the plot's height and the
    // plot stays wide enough without it.
    bool covers = false;
    if (!ls.items.empty() && c.legend == LegendPos::best) {
      ChartLayout probe = L;
      probe.plot = {left, top, std::max(1.0, right - left), std::max(1.0, bottom - top)};
      covers = legend_corner_hits(c, probe, m, ls.w, ls.h) > 0;
    }
    // (and only when at least two entries fit beside the plot: "+ 5 more" alone says nothing)
    if (!ls.items.empty() && (ls.h > 0.4 * (bottom - top) || covers) && (right - left) - ls.w - m.pad > 280 * m.s &&
        (bottom - top) >= 2.2 * ls.row) {
      L.legend_outside = true;
      right -= ls.w + m.pad;
      L.legend = {right + m.pad, top, ls.w, std::min(ls.h, bottom - top)};
    }
  }
  L.plot = {left, top, std::max(1.0, right - left), std::max(1.0, bottom - top)};
  if (c.kind == ChartKind::bars && !c.categories.empty()) {
    // Labels wider than their slot go on two lines when every label then
    // clears its neighbours, or at least the widest gets narrower.
    const double slot = L.plot.w / static_cast<double>(c.categories.size());
    const double one = widest_category(category_labels(cv, c.categories, m.font, false, false));
    const auto grouped = category_labels(cv, c.categories, m.font, true, true);
    const double two = widest_category(category_labels(cv, c.categories, m.font, true, false));
    if (one + m.pad > slot && (categories_fit(grouped, slot, m.pad * 0.5) || two < one) &&
        L.plot.h > min_plot + m.line_h) {
      L.two_line_categories = true;
      L.plot.h -= m.line_h;
    }
  }
  return L;
}

}  // namespace flashlab::analysis
