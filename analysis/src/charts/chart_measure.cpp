#include "chart_measure.hpp"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

namespace flashlab::analysis::chart_detail {

std::pair<std::string, std::string> two_lines(Canvas& cv, const std::string& label, double size) {
  std::pair<std::string, std::string> best{label, ""};
  double best_w = cv.measure(label, size).x;
  for (size_t k = label.find(' '); k != std::string::npos; k = label.find(' ', k + 1)) {
    std::pair<std::string, std::string> t{label.substr(0, k), label.substr(k + 1)};
    const double w = std::max(cv.measure(t.first, size).x, cv.measure(t.second, size).x);
    if (w < best_w) {
      best = t;
      best_w = w;
    }
  }
  return best;
}

namespace {

// For each series, the first of the series it coincides with, following the
// chain (coinciding_series gives the first earlier one).
std::vector<int> coincidence_roots(const ChartSpec& c) {
  std::vector<int> root = coinciding_series(c);
  for (size_t k = 0; k < root.size(); ++k)
    while (root[k] >= 0 && root[static_cast<size_t>(root[k])] >= 0) root[k] = root[static_cast<size_t>(root[k])];
  return root;
}

// The data points, line midpoints and labels a legend could cover.
std::vector<Point> legend_probes(const ChartSpec& c, const ChartLayout& L, const Metrics& m) {
  std::vector<Point> probes;
  if (c.kind == ChartKind::bars && c.stacked) {
    // A stack fills its category from the axis up to its top.
    const std::vector<double> top = stack_tops(c);
    for (size_t cat = 0; cat < top.size(); ++cat)
      for (double f = -0.45; f <= 0.451; f += 0.15)
        for (double t : c.stacked ? std::vector<double>{1.0, 0.75, 0.5, 0.25, 0.05}  // a stack covers its foot too
                                  : std::vector<double>{1.0, 0.75, 0.5, 0.25})
          if (plottable(static_cast<double>(cat) + f, L.sx) && plottable(top[cat] * t, L.sy))
            probes.push_back(L.to_px(static_cast<double>(cat) + f, top[cat] * t));
  }
  // Side-by-side bars: each bar is an obstacle of its own (bar_boxes), not a group's tallest.
  for (const Series& s : c.series)
    for (size_t k = 0; c.kind != ChartKind::bars && k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!plottable(s.x[k], L.sx) || !plottable(s.y[k], L.sy)) continue;
      probes.push_back(L.to_px(s.x[k], s.y[k]));
      if (k + 1 < std::min(s.x.size(), s.y.size()) && plottable(s.x[k + 1], L.sx) && plottable(s.y[k + 1], L.sy)) {
        const Point b = L.to_px(s.x[k + 1], s.y[k + 1]), a = probes.back();
        for (int t = 1; t < 4; ++t) probes.push_back({a.x + (b.x - a.x) * t / 4, a.y + (b.y - a.y) * t / 4});
      }
    }
  for (const Marker& mk : c.markers) {
    if (!plottable(mk.x, L.sx)) continue;
    // A marker without a value (an OOM cell) sits on the bottom edge, its label beside it.
    const bool bottom = !mk.y || !plottable(*mk.y, L.sy);
    const Point p{L.px_x(mk.x), bottom ? L.plot.bottom() - mk.size * m.s : L.px_y(*mk.y)};
    probes.push_back(p);
    if (!mk.label.empty())
      for (double dx : {10.0, 30.0, 50.0}) probes.push_back({p.x + dx * m.s, p.y - 6 * m.s});
  }
  for (const RefLine& l : c.ref_lines)
    if (l.vertical && plottable(l.value, L.sx)) probes.push_back({L.px_x(l.value) + 20 * m.s, L.plot.y + 8 * m.s});
    else if (!l.vertical && plottable(l.value, L.sy))
      // A horizontal line's name runs leftwards from the plot's right edge.
      for (double back : {40.0, 140.0, 240.0}) probes.push_back({L.plot.right() - back * m.s, L.px_y(l.value) + 8 * m.s});
  return probes;
}

// Side-by-side bars as drawn (chart_render.cpp's draw_bars), each grown
// upwards by a text row for the value above it.
std::vector<Rect> bar_boxes(const ChartSpec& c, const ChartLayout& L, const Metrics& m) {
  std::vector<Rect> out;
  if (c.kind != ChartKind::bars || c.stacked || c.series.empty()) return out;
  const double group = 0.8, bw = group / static_cast<double>(c.series.size());
  const double base = L.sy == Scale::linear ? std::max(L.y.lo, 0.0) : L.y.lo;
  for (size_t si = 0; si < c.series.size(); ++si) {
    const Series& s = c.series[si];
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!plottable(s.y[k], L.sy)) continue;
      const double x0 = s.x[k] - group / 2 + bw * static_cast<double>(si);
      const double px0 = L.px_x(x0), px1 = L.px_x(x0 + bw), y0 = L.px_y(base), y1 = L.px_y(s.y[k]);
      const double top = std::min(y0, y1) - m.line_h;
      out.push_back({px0, top, px1 - px0, std::max(y0, y1) - top});
    }
  }
  return out;
}

}  // namespace

Metrics metrics(const ChartStyle& st) {
  const double s = std::clamp(st.scale, 0.25, 8.0);
  const Color b = st.plot_background;
  const bool dark = 0.299 * b.r + 0.587 * b.g + 0.114 * b.b < 100;
  return {s, st.font_px * s, st.font_px * s * 0.9, st.title_px * s, 8 * s, st.font_px * s * 1.35, dark, b};
}

// Text in a series' colour: on a dark background, halfway to white.
Color ink(Color c, const Metrics& m) {
  if (!m.dark) return c;
  auto up = [](std::uint8_t v) { return static_cast<std::uint8_t>(v + (255 - v) / 2); };
  return {up(c.r), up(c.g), up(c.b), c.a};
}

int max_ticks_for(double length_px, double label_px) {
  return std::max(2, static_cast<int>(length_px / std::max(1.0, label_px)));
}

std::vector<std::string> wrap_lines(Canvas& cv, const std::string& s, double size, double max_w, size_t max_lines) {
  if (s.empty()) return {};
  if (cv.measure(s, size).x <= max_w) return {s};  // whole, as written
  std::vector<std::string> lines;
  std::string line;
  size_t k = 0;
  while (k < s.size()) {
    size_t e = s.find(' ', k);
    if (e == std::string::npos) e = s.size();
    const std::string word = s.substr(k, e - k);
    k = e + 1;
    if (word.empty()) continue;
    const std::string cand = line.empty() ? word : line + " " + word;
    if (!line.empty() && cv.measure(cand, size).x > max_w && lines.size() + 1 < max_lines) {
      lines.push_back(line);
      line = word;
    } else {
      line = cand;
    }
  }
  if (!line.empty()) lines.push_back(line);
  return lines;
}

std::vector<std::string> shown_notes(const ChartSpec& c, const ChartStyle& st, Canvas& cv, double size, double width) {
  if (!st.draw_notes) return {};
  constexpr size_t kMaxLines = 5;
  std::vector<std::string> lines;
  // The first note of an empty chart is drawn inside the plot instead.
  size_t k = c.empty() ? 1 : 0;
  for (; k < c.notes.size(); ++k) {
    const std::vector<std::string> w = wrap_lines(cv, c.notes[k], size, width, kMaxLines);
    if (lines.size() + w.size() > kMaxLines) break;
    lines.insert(lines.end(), w.begin(), w.end());
  }
  if (k < c.notes.size()) {
    const std::string more = "(+ " + std::to_string(c.notes.size() - k) + " more note(s) in the report and the CSV)";
    if (lines.size() >= kMaxLines) lines.resize(kMaxLines - 1);
    lines.push_back(more);
  }
  return lines;
}

std::string fit_text(Canvas& cv, const std::string& s, double size, double max_w) {
  max_w += 0.5;  // a width computed as the text's own, give or take rounding
  if (cv.measure(s, size).x <= max_w) return s;
  std::string t = s;
  while (!t.empty()) {
    // Drop whole UTF-8 code points.
    do t.pop_back();
    while (!t.empty() && (static_cast<unsigned char>(t.back()) & 0xC0) == 0x80);
    if (!t.empty()) t.pop_back();
    if (cv.measure(t + "…", size).x <= max_w) return t + "…";
  }
  return "";
}

std::vector<CategoryLabel> category_labels(Canvas& cv, const std::vector<std::string>& cats, double size, bool two,
                                           bool grouped) {
  std::vector<CategoryLabel> out;
  std::string previous;
  for (const std::string& label : cats) {
    CategoryLabel l;
    if (two) {
      std::tie(l.first, l.second) = two_lines(cv, label, size);
      const std::string group = l.first;
      if (grouped && !l.second.empty() && group == previous) l.first.clear();
      previous = group;
    } else {
      l.first = label;
    }
    l.width = std::max(cv.measure(l.first, size).x, l.second.empty() ? 0.0 : cv.measure(l.second, size).x);
    out.push_back(std::move(l));
  }
  return out;
}

// Every label clears its neighbour in slots of `slot` pixels.
bool categories_fit(const std::vector<CategoryLabel>& labels, double slot, double gap) {
  for (size_t k = 0; k + 1 < labels.size(); ++k)
    if ((labels[k].width + labels[k + 1].width) / 2 + gap > slot) return false;
  return true;
}

double widest_category(const std::vector<CategoryLabel>& labels) {
  double w = 0;
  for (const CategoryLabel& l : labels) w = std::max(w, l.width);
  return w;
}

LegendSize legend_size(const ChartSpec& c, Canvas& cv, const Metrics& m, double max_text) {
  LegendSize L;
  for (size_t k = 0; k < c.series.size(); ++k)
    if (c.series[k].in_legend && !c.series[k].name.empty()) L.items.push_back(k);
  L.sw = 22 * m.s;
  L.row = m.line_h;
  L.pad = m.pad * 0.7;
  const std::vector<int> root = coincidence_roots(c);
  const double indent = 10 * m.s;
  // A series drawn on another is named once: under the first legend entry of
  // its group ("= name", "≈ name"), not again as an entry of its own.
  {
    std::vector<bool> group_has_entry(c.series.size(), false);
    std::vector<size_t> entries;
    for (size_t k : L.items) {
      const size_t r = static_cast<size_t>(root[k] >= 0 ? root[k] : static_cast<int>(k));
      if (group_has_entry[r]) continue;
      group_has_entry[r] = true;
      entries.push_back(k);
    }
    L.items = std::move(entries);
  }
  for (size_t k : L.items) {
    bool first = true;
    for (const std::string& line : wrap_lines(cv, c.series[k].name, m.small, max_text, 3)) {
      L.rows.push_back({first ? static_cast<int>(k) : -1, line, 0});
      first = false;
    }
    // Under the first legend entry of a group of series drawn on one another:
    // each other member, "=" (the same numbers) or "≈" (closer than the eye tells).
    const int r = root[k] >= 0 ? root[k] : static_cast<int>(k);
    for (size_t j = 0; j < c.series.size(); ++j) {
      const int rj = root[j] >= 0 ? root[j] : static_cast<int>(j);
      if (j == k || rj != r || c.series[j].name.empty()) continue;
      // A member named after the entry ("X (predicted)" under "X"): its own part only.
      const std::string& own = c.series[k].name;
      const std::string& name = c.series[j].name;
      const bool named_after = name.size() > own.size() + 1 && name.compare(0, own.size() + 1, own + " ") == 0;
      const std::string text =
          (same_points(c.series[j], c.series[k]) ? "= " : "≈ ") + (named_after ? name.substr(own.size() + 1) : name);
      for (const std::string& line : wrap_lines(cv, text, m.small, max_text - indent, 3))
        L.rows.push_back({-1, line, indent});
    }
  }
  for (const LegendRow& row : L.rows) L.tw = std::max(L.tw, row.indent + cv.measure(row.text, m.small).x);
  L.tw = std::min(L.tw, max_text);
  L.w = L.sw + L.tw + 3 * L.pad;
  L.h = L.row * static_cast<double>(L.rows.size()) + L.pad;
  return L;
}

Rect legend_corner(const ChartLayout& L, LegendPos p, double w, double h, double pad) {
  const bool left = p == LegendPos::top_left || p == LegendPos::bottom_left;
  const bool top = p == LegendPos::top_left || p == LegendPos::top_right;
  return Rect{left ? L.plot.x + pad : L.plot.right() - pad - w, top ? L.plot.y + pad : L.plot.bottom() - pad - h, w, h};
}

int legend_corner_hits(const ChartSpec& c, const ChartLayout& L, const Metrics& m, double w, double h,
                       LegendPos* best_pos) {
  const std::vector<Point> probes = legend_probes(c, L, m);
  const std::vector<Rect> bars = bar_boxes(c, L, m);
  // The segments of every series drawn as a line, as draw_series_xy joins its points.
  std::vector<std::pair<Point, Point>> segments;
  for (const Series& s : c.series) {
    if (c.kind == ChartKind::bars || (s.style != SeriesStyle::line && s.style != SeriesStyle::line_points)) continue;
    for (size_t k = 0; k + 1 < std::min(s.x.size(), s.y.size()); ++k)
      if (plottable(s.x[k], L.sx) && plottable(s.y[k], L.sy) && plottable(s.x[k + 1], L.sx) && plottable(s.y[k + 1], L.sy))
        segments.push_back({L.to_px(s.x[k], s.y[k]), L.to_px(s.x[k + 1], s.y[k + 1])});
  }
  int best = -1;
  for (LegendPos p : {LegendPos::top_left, LegendPos::bottom_right, LegendPos::top_right, LegendPos::bottom_left}) {
    const Rect r = legend_corner(L, p, w, h, m.pad * 0.7);
    int n = 0;
    for (const Point& q : probes) n += r.contains(q) ? 1 : 0;
    // A bar or a stretch of line under the legend counts as much as a covered point and its label.
    for (const Rect& b : bars) n += r.x < b.right() && b.x < r.right() && r.y < b.bottom() && b.y < r.bottom() ? 4 : 0;
    for (const auto& [a, b] : segments) n += segment_crosses(a, b, r) ? 4 : 0;
    if (best < 0 || n < best) {
      best = n;
      if (best_pos) *best_pos = p;
    }
  }
  return best;
}

}  // namespace flashlab::analysis::chart_detail
