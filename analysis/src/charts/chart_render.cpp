// A chart drawn on a Canvas from its layout: axes and ticks, reference lines,
// series (a series on another's points as rings), bars and their labels,
// heatmaps with their colour bar, markers, annotations, the legend, the notes.
// Labels beside points take free spots (LabelPlacer) so that none covers another.
#include "flashlab/analysis/charts/chart_render.hpp"

#include <algorithm>
#include <cmath>
#include <functional>

#include "chart_measure.hpp"
#include "label_placer.hpp"

namespace flashlab::analysis {

using namespace chart_detail;  // what layout and drawing both measure

namespace {

// Heatmap colour: a perceptually ordered dark-blue → teal → yellow ramp (viridis stops).
Color ramp(double t) {
  static const Color stops[] = {{68, 1, 84, 255}, {59, 82, 139, 255}, {33, 145, 140, 255},
                                {94, 201, 98, 255}, {253, 231, 37, 255}};
  t = std::clamp(std::isfinite(t) ? t : 0.0, 0.0, 1.0) * 4;
  const int k = std::min(3, static_cast<int>(t));
  const double f = t - k;
  auto mix = [&](std::uint8_t a, std::uint8_t b) { return static_cast<std::uint8_t>(a + (b - a) * f + 0.5); };
  return {mix(stops[k].r, stops[k + 1].r), mix(stops[k].g, stops[k + 1].g), mix(stops[k].b, stops[k + 1].b), 255};
}

// WCAG 2 relative luminance of an sRGB colour.
double relative_luminance(Color c) {
  const auto lin = [](std::uint8_t v) {
    const double x = v / 255.0;
    return x <= 0.04045 ? x / 12.92 : std::pow((x + 0.055) / 1.055, 2.4);
  };
  return 0.2126 * lin(c.r) + 0.7152 * lin(c.g) + 0.0722 * lin(c.b);
}

// Text on a filled shape: black or white, whichever has the higher contrast ratio with the fill.
Color on_fill(Color fill) {
  const double l = relative_luminance(fill);
  return (l + 0.05) / 0.05 >= 1.05 / (l + 0.05) ? Color{0, 0, 0, 255} : Color{255, 255, 255, 255};
}

// Text placed now and drawn later, over the lines and points drawn between
// (a label placed before the lines is still read over them). Everything else
// goes straight through.
class HeldText : public ForwardingCanvas {
 public:
  using ForwardingCanvas::ForwardingCanvas;
  void text(Point p, const std::string& s, double size_px, Color c, HAlign h, VAlign v, bool vertical = false) override {
    held_.push_back({p, s, size_px, c, h, v, vertical});
  }
  void draw() {
    for (const Held& t : held_) inner_.text(t.p, t.s, t.size, t.c, t.h, t.v, t.vertical);
    held_.clear();
  }

 private:
  struct Held {
    Point p;
    std::string s;
    double size;
    Color c;
    HAlign h;
    VAlign v;
    bool vertical;
  };
  std::vector<Held> held_;
};

std::string without_spaces(const std::string& s) {
  std::string out;
  for (char ch : s)
    if (ch != ' ') out += ch;
  return out;
}

// Whether `label` holds one of the texts the caller names first.
bool names_first(const RenderExtras& x, const std::string& label) {
  if (label.empty()) return false;
  const std::string l = without_spaces(label);
  return std::any_of(x.named_first.begin(), x.named_first.end(), [&](const std::string& t) {
    const std::string w = without_spaces(t);
    return !w.empty() && l.find(w) != std::string::npos;
  });
}

struct HeatRange {
  double lo = 0, hi = 1;
  bool log = false;
  double t(double v) const {
    if (!std::isfinite(v)) return 0;
    if (log && v > 0 && lo > 0) return hi > lo ? std::log(v / lo) / std::log(hi / lo) : 0.5;
    return hi > lo ? (v - lo) / (hi - lo) : 0.5;
  }
};

HeatRange heat_range(const Heatmap& h) {
  HeatRange r;
  double lo = INFINITY, hi = -INFINITY;
  for (double v : h.values)
    if (std::isfinite(v) && (!h.log_color || v > 0)) {
      lo = std::min(lo, v);
      hi = std::max(hi, v);
    }
  if (lo <= hi) {
    r.lo = lo;
    r.hi = hi;
  }
  r.log = h.log_color && r.lo > 0;
  return r;
}

// `hole`: an open marker, its inside in that colour (the plot's background).
void draw_marker(Canvas& cv, Point p, MarkerShape m, double size, Color c, double s, const Color* hole = nullptr) {
  const double r = size * 0.5;
  switch (m) {
    case MarkerShape::none: break;
    case MarkerShape::circle: cv.circle_filled(p, r, c); break;
    case MarkerShape::square: cv.rect_filled({p.x - r, p.y - r, 2 * r, 2 * r}, c); break;
    case MarkerShape::diamond:
      cv.polygon_filled({{p.x, p.y - r * 1.3}, {p.x + r * 1.3, p.y}, {p.x, p.y + r * 1.3}, {p.x - r * 1.3, p.y}}, c);
      break;
    case MarkerShape::triangle:
      cv.polygon_filled({{p.x, p.y - r * 1.3}, {p.x + r * 1.2, p.y + r}, {p.x - r * 1.2, p.y + r}}, c);
      break;
    case MarkerShape::cross:
      cv.line({p.x - r, p.y - r}, {p.x + r, p.y + r}, c, 2.2 * s, Dash::solid);
      cv.line({p.x - r, p.y + r}, {p.x + r, p.y - r}, c, 2.2 * s, Dash::solid);
      break;
  }
  if (hole && m != MarkerShape::none && m != MarkerShape::cross) draw_marker(cv, p, m, size * 0.5, *hole, s);
}

// A marker's outline only, larger than the filled one under it: a series
// drawn on another's points (coinciding_series) rings them.
void draw_marker_ring(Canvas& cv, Point p, MarkerShape m, double size, Color c, double width) {
  const double r = size * 0.5;
  std::vector<Point> pts;
  switch (m) {
    case MarkerShape::none: return;
    case MarkerShape::circle:
      for (int k = 0; k <= 24; ++k) {
        const double a = 2 * 3.14159265358979323846 * k / 24;
        pts.push_back({p.x + r * std::cos(a), p.y + r * std::sin(a)});
      }
      break;
    case MarkerShape::square: pts = {{p.x - r, p.y - r}, {p.x + r, p.y - r}, {p.x + r, p.y + r}, {p.x - r, p.y + r}, {p.x - r, p.y - r}}; break;
    case MarkerShape::diamond:
      pts = {{p.x, p.y - r * 1.3}, {p.x + r * 1.3, p.y}, {p.x, p.y + r * 1.3}, {p.x - r * 1.3, p.y}, {p.x, p.y - r * 1.3}};
      break;
    case MarkerShape::triangle:
      pts = {{p.x, p.y - r * 1.3}, {p.x + r * 1.2, p.y + r}, {p.x - r * 1.2, p.y + r}, {p.x, p.y - r * 1.3}};
      break;
    case MarkerShape::cross:
      cv.line({p.x - r, p.y - r}, {p.x + r, p.y + r}, c, width, Dash::solid);
      cv.line({p.x - r, p.y + r}, {p.x + r, p.y - r}, c, width, Dash::solid);
      return;
  }
  cv.polyline(pts, c, width, Dash::solid);
}

// The box a marker of `size` at p covers (diamonds and triangles reach 1.3 r).
Rect marker_box(Point p, MarkerShape m, double size) {
  const double r = size * 0.5 * (m == MarkerShape::diamond || m == MarkerShape::triangle ? 1.3 : 1.0);
  return {p.x - r, p.y - r, 2 * r, 2 * r};
}

void draw_axes_xy(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const ChartStyle& st, const Metrics& m) {
  const Rect& P = L.plot;
  const auto yt = make_ticks(L.y, L.sy, c.y.format, max_ticks_for(P.h, m.line_h * 2.2));
  std::vector<Tick> xt;
  if (c.kind == ChartKind::bars) {
    for (size_t k = 0; k < c.categories.size(); ++k) xt.push_back({static_cast<double>(k), c.categories[k], true});
  } else {
    // Label width decides density: measure a typical label.
    const std::string probe = format_tick(L.x.hi, c.x.format) + "00";
    xt = make_ticks(L.x, L.sx, c.x.format, max_ticks_for(P.w, cv.measure(probe, m.font).x * 1.6));
  }
  for (const Tick& t : yt) {
    const double y = L.px_y(t.value);
    if (y < P.y - 0.5 || y > P.bottom() + 0.5) continue;
    cv.line({P.x, y}, {P.right(), y}, t.major ? st.grid : st.grid_minor, 1.0 * m.s, Dash::solid);
    // A label at the top edge stays under it: above lies the subtitle.
    if (t.major)
      cv.text({P.x - m.pad * 0.6, std::max(y, P.y + cv.measure(t.label, m.font).y / 2)}, t.label, m.font, st.text,
              HAlign::right, VAlign::middle);
  }
  // Bars: on two lines (a repeated first line left out) when the layout says
  // so; thinned so that neighbours never overlap.
  const bool two = c.kind == ChartKind::bars && L.two_line_categories;
  std::vector<CategoryLabel> cats;
  size_t stride = 1;
  if (c.kind == ChartKind::bars && !xt.empty()) {
    const double slot = P.w / static_cast<double>(xt.size());
    cats = category_labels(cv, c.categories, m.font, two, true);
    if (!two || !categories_fit(cats, slot, m.pad * 0.5)) {
      cats = category_labels(cv, c.categories, m.font, two, false);  // thinned: every label whole
      stride = std::max<size_t>(1, static_cast<size_t>(std::ceil((widest_category(cats) + m.pad) / std::max(1.0, slot))));
    }
  }
  double last_right = -1e300;
  for (size_t k = 0; k < xt.size(); ++k) {
    const Tick& t = xt[k];
    const double x = L.px_x(t.value);
    if (x < P.x - 0.5 || x > P.right() + 0.5) continue;
    if (c.kind != ChartKind::bars) cv.line({x, P.y}, {x, P.bottom()}, t.major ? st.grid : st.grid_minor, 1.0 * m.s, Dash::solid);
    if (!t.major || k % stride != 0) continue;
    const double w = k < cats.size() ? cats[k].width : cv.measure(t.label, m.font).x;
    if (x - w / 2 < last_right + m.pad * 0.5) continue;  // never overlap tick labels
    if (k < cats.size()) {
      if (!cats[k].first.empty())
        cv.text({x, P.bottom() + m.pad * 0.5}, cats[k].first, m.font, st.text, HAlign::center, VAlign::top);
      if (!cats[k].second.empty())
        cv.text({x, P.bottom() + m.pad * 0.5 + m.line_h}, cats[k].second, m.font, st.text, HAlign::center, VAlign::top);
    } else if (x - w / 2 < P.x) {
      // A tick on the plot's left edge (one N alone, its axis from N/2 to 2N): its label starts
      // at the tick, clear of the y axis's lowest label beside it.
      cv.text({x, P.bottom() + m.pad * 0.5}, t.label, m.font, st.text, HAlign::left, VAlign::top);
      last_right = x + w;
      continue;
    } else {
      cv.text({x, P.bottom() + m.pad * 0.5}, t.label, m.font, st.text, HAlign::center, VAlign::top);
    }
    last_right = x + w / 2;
  }
  cv.rect_outline(P, st.axis, 1.0 * m.s);
  if (!c.x.label.empty())
    cv.text({P.x + P.w / 2, P.bottom() + m.pad * 0.5 + m.line_h * (two ? 2.1 : 1.1)}, fit_text(cv, c.x.label, m.font, P.w),
            m.font, st.text, HAlign::center, VAlign::top);
  for (size_t k = 0; k < L.y_label_lines.size(); ++k)
    cv.text({L.outer.x + m.pad * 0.5 + m.line_h * static_cast<double>(k), P.y + P.h / 2},
            fit_text(cv, L.y_label_lines[k], m.font, P.h), m.font, st.text, HAlign::center, VAlign::top, true);
}

// A horizontal reference line's name on `lines` (1 or 2) lines: below it at
// the right, above it there, below its left end, before its left end, then
// anywhere along it from the right where no other line strikes it through. A
// dashed line (another dtype's) tries only the first spot and stays unnamed
// rather than crowd the plot. Whether a spot was free.
bool name_horizontal_line(const RefLine& l, int lines, Canvas& cv, const ChartLayout& L, const Metrics& m,
                          LabelPlacer& labels, bool clear_of_bars = false) {
  const Rect& P = L.plot;
  const double y = L.px_y(l.value);
  const double x0 = l.from_x && plottable(*l.from_x, L.sx) ? std::clamp(L.px_x(*l.from_x), P.x, P.right()) : P.x;
  const auto [first, second] = two_lines(cv, l.label, m.small);
  if (lines == 2 && second.empty()) return false;
  const double row = cv.measure(l.label, m.small).y;
  const Point size = lines == 1 ? cv.measure(l.label, m.small)
                                : Point{std::max(cv.measure(first, m.small).x, cv.measure(second, m.small).x), 2 * row};
  std::vector<Rect> tries = {{P.right() - m.pad * 0.5 - size.x, y + m.s * 3, size.x, size.y}};
  // Over bars the line (the baseline's 1×) is the only one: it may look along itself for a gap between them.
  const bool search = l.dash != Dash::dashed || clear_of_bars;
  if (search) {
    tries.push_back({P.right() - m.pad * 0.5 - size.x, y - m.s * 3 - size.y, size.x, size.y});
    tries.push_back({x0 + m.pad * 0.5, y + m.s * 3, size.x, size.y});
    // Before its left end: a gap of up to half a pad, as the plot's edge allows.
    tries.push_back({std::max(P.x, x0 - m.pad * 0.5 - size.x), y - size.y / 2, size.x, size.y});
    if (tries.back().right() > x0) tries.pop_back();
  }
  const size_t fixed = tries.size();
  if (search)
    for (const double dy : {m.s * 3, -m.s * 3 - size.y})
      for (double x = P.right() - m.pad * 0.5 - size.x; x >= x0; x -= 4 * m.s) tries.push_back({x, y + dy, size.x, size.y});
  for (size_t k = 0; k < tries.size(); ++k) {
    const Rect& r = tries[k];
    if (r.x < P.x || r.right() > P.right() || r.y < P.y || r.bottom() > P.bottom() || !labels.is_free(r)) continue;
    if (clear_of_bars && labels.on_bar(r)) continue;
    if (k >= fixed && labels.struck(r)) continue;  // along the line: only where no other line crosses the name
    labels.add(r);
    if (lines == 1) {
      cv.text({r.x, r.y}, l.label, m.small, ink(l.color, m), HAlign::left, VAlign::top);
    } else {
      cv.text({r.x, r.y}, first, m.small, ink(l.color, m), HAlign::left, VAlign::top);
      cv.text({r.x, r.y + row}, second, m.small, ink(l.color, m), HAlign::left, VAlign::top);
    }
    return true;
  }
  return false;
}

// `named`: lines whose names are drawn already (named first).
void draw_ref_lines(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const Metrics& m, LabelPlacer& labels,
                    std::vector<const RefLine*>* two_lines_later = nullptr, const std::vector<const RefLine*>* named = nullptr) {
  const Rect& P = L.plot;
  std::vector<Rect> placed;  // labels of vertical lines drawn so far
  for (const RefLine& l : c.ref_lines) {
    if (!plottable(l.value, l.vertical ? L.sx : L.sy)) continue;
    if (l.vertical) {
      const double x = L.px_x(l.value);
      if (x < P.x || x > P.right()) continue;
      cv.line({x, P.y}, {x, P.bottom()}, l.color, l.width * m.s, l.dash);
      if (l.label.empty()) continue;
      // Beside the line at the top, right or left, on the first text row where
      // it stays inside the frame, covers no other label and crosses no other
      // vertical line.
      const Point size = cv.measure(l.label, m.small);
      const double gap = m.pad * 0.4;
      auto fits = [&](const Rect& r) {
        if (r.x < P.x || r.right() > P.right()) return false;
        for (const Rect& o : placed)
          if (r.x < o.right() && o.x < r.right() && r.y < o.bottom() && o.y < r.bottom()) return false;
        if (!labels.is_free(r)) return false;
        for (const RefLine& other : c.ref_lines) {
          if (&other == &l || !other.vertical || !plottable(other.value, L.sx)) continue;
          const double ox = L.px_x(other.value);
          if (ox > r.x && ox < r.right()) return false;
        }
        return true;
      };
      std::optional<Rect> at;
      bool left = false;
      for (int row = 0; row < 4 && !at; ++row)
        for (bool try_left : {false, true}) {
          const Rect r{try_left ? x - gap - size.x : x + gap, P.y + gap + row * (size.y + m.s * 2), size.x, size.y};
          if (fits(r)) {
            at = r;
            left = try_left;
            break;
          }
        }
      if (!at) {
        left = x + gap + size.x > P.right();
        at = Rect{left ? x - gap - size.x : x + gap, P.y + gap, size.x, size.y};
      }
      placed.push_back(*at);
      labels.add(*at);
      cv.text({left ? x - gap : x + gap, at->y}, l.label, m.small, ink(l.color, m), left ? HAlign::right : HAlign::left,
              VAlign::top);
    } else {
      const double y = L.px_y(l.value);
      if (y < P.y || y > P.bottom()) continue;
      double x0 = P.x;
      if (l.from_x && plottable(*l.from_x, L.sx)) x0 = std::clamp(L.px_x(*l.from_x), P.x, P.right());
      cv.line({x0, y}, {P.right(), y}, l.color, l.width * m.s, l.dash);
      // Below the line at the right first: the space above a ceiling belongs
      // to the points that reach it. Named on one line where a spot is free; a solid or dotted line's name
      // that finds none tries two lines once the points have their labels
      // (`two_lines_later`; none given: at once). None free: a ceiling's name
      // over another's; the legend or the notes name it too.
      if (named && std::find(named->begin(), named->end(), &l) != named->end()) continue;
      // Over bars ("1× = baseline"): a spot clear of every bar on one line or two first.
      if (!l.label.empty() && labels.has_bars() &&
          (name_horizontal_line(l, 1, cv, L, m, labels, true) || name_horizontal_line(l, 2, cv, L, m, labels, true)))
        continue;
      if (!l.label.empty() && !name_horizontal_line(l, 1, cv, L, m, labels) && l.dash != Dash::dashed) {
        if (two_lines_later) two_lines_later->push_back(&l);
        else name_horizontal_line(l, 2, cv, L, m, labels);
      }
    }
  }
}

// `on_another`: the series lies on an earlier one's points (coinciding_series):
// its line dashed and its markers rings around the other's, so that both show.
void draw_series_xy(const Series& s, Canvas& cv, const ChartLayout& L, const Metrics& m, double width_mul,
                    bool on_another = false) {
  const bool lines = s.style == SeriesStyle::line || s.style == SeriesStyle::line_points;
  const bool points = s.style == SeriesStyle::points || s.style == SeriesStyle::line_points;
  const Dash dash = on_another && s.dash == Dash::solid ? Dash::dashed : s.dash;
  std::vector<Point> run;
  auto flush = [&] {
    if (run.size() >= 2) {
      cv.polyline(run, s.color, s.width * m.s * width_mul, dash);
      cv.data_line(run);
    }
    run.clear();
  };
  const size_t n = std::min(s.x.size(), s.y.size());
  for (size_t k = 0; k < n; ++k) {
    if (!plottable(s.x[k], L.sx) || !plottable(s.y[k], L.sy)) {
      flush();
      continue;
    }
    if (lines) run.push_back(L.to_px(s.x[k], s.y[k]));
  }
  flush();
  if (!points || s.marker == MarkerShape::none) return;
  const double size = (s.style == SeriesStyle::points ? 9 : 6.5) * m.s * width_mul;
  for (size_t k = 0; k < n; ++k) {
    if (!plottable(s.x[k], L.sx) || !plottable(s.y[k], L.sy)) continue;
    const Point p = L.to_px(s.x[k], s.y[k]);
    if (on_another) {
      draw_marker_ring(cv, p, s.marker, size * 1.9, s.color, 1.6 * m.s);
      cv.data_mark(marker_box(p, s.marker, size * 1.9));
    } else {
      draw_marker(cv, p, s.marker, size, s.color, m.s, s.open_marker ? &m.plot_background : nullptr);
      cv.data_mark(marker_box(p, s.marker, size));
    }
  }
}

// The labels of points labelled together, as one: "lines 3, 6" (the
// series' grouped_label and each label's words after its first), else the
// labels joined whole.
std::string grouped_text(const Series& s, const std::vector<size_t>& members) {
  if (members.size() == 1) return s.point_labels[members.front()];
  std::string joined;
  for (size_t k : members) {
    const std::string& label = s.point_labels[k];
    const size_t space = label.find(' ');
    const std::string part = s.grouped_label.empty() || space == std::string::npos ? label : label.substr(space + 1);
    joined += (joined.empty() ? "" : ", ") + part;
  }
  return s.grouped_label.empty() ? joined : s.grouped_label + " " + joined;
}

// A label in a free box on one line, or two narrower ones; whether it found one.
bool place_label(Canvas& cv, const std::string& text, Color c, const Metrics& m,
                 const std::function<std::optional<Rect>(Point)>& place) {
  const Point size = cv.measure(text, m.small);
  if (const auto box = place(size)) {
    cv.text({box->x, box->bottom()}, text, m.small, c, HAlign::left, VAlign::bottom);
    return true;
  }
  // No gap for one line in a crowd ("fa3_hopper 581 TFLOP/s" among the roofs): two narrower lines.
  // A label of two words stays whole: a word a line reads as two labels ("line" over "2").
  if (std::count(text.begin(), text.end(), ' ') < 2) return false;
  const auto [first, second] = two_lines(cv, text, m.small);
  if (second.empty()) return false;
  const Point two{std::max(cv.measure(first, m.small).x, cv.measure(second, m.small).x), 2 * size.y};
  if (const auto box = place(two)) {
    cv.text({box->x, box->y}, first, m.small, c, HAlign::left, VAlign::top);
    cv.text({box->x, box->y + size.y}, second, m.small, c, HAlign::left, VAlign::top);
    return true;
  }
  return false;
}

// A series' point labels, each in a free spot (LabelPlacer), in the series' order.
// `which`: the labels of this call (the named-first ones, then the others).
// Points whose labels find no spot of their own and lie close together (a
// column of runs at one intensity) share one label beside them.
void draw_series_labels(const Series& s, Canvas& cv, const ChartLayout& L, const Metrics& m, LabelPlacer& labels,
                        const std::function<bool(const std::string&)>& which) {
  const size_t n = std::min(s.x.size(), s.y.size());
  std::vector<size_t> unplaced;
  for (size_t k = 0; k < n && k < s.point_labels.size(); ++k)
    if (!s.point_labels[k].empty() && which(s.point_labels[k]) && plottable(s.x[k], L.sx) && plottable(s.y[k], L.sy)) {
      const Point p = L.to_px(s.x[k], s.y[k]);
      if (!place_label(cv, s.point_labels[k], ink(s.color, m), m,
                       [&](Point size) { return labels.place(p, size, {1.5, -0.75}, LabelPlacer::look_of(s.color, s.marker)); }))
        unplaced.push_back(k);
    }
  // Groups of the points left: each joined to those within a few label heights of one of its own.
  const double reach = 4 * cv.measure("0", m.small).y;
  std::vector<int> group(unplaced.size(), -1);
  int groups = 0;
  for (size_t a = 0; a < unplaced.size(); ++a) {
    if (group[a] >= 0) continue;
    group[a] = groups;
    for (size_t grown = 1; grown > 0;) {
      grown = 0;
      for (size_t b = 0; b < unplaced.size(); ++b) {
        if (group[b] >= 0) continue;
        const Point pb = L.to_px(s.x[unplaced[b]], s.y[unplaced[b]]);
        for (size_t c = 0; c < unplaced.size(); ++c)
          if (group[c] == groups) {
            const Point pc = L.to_px(s.x[unplaced[c]], s.y[unplaced[c]]);
            if (std::hypot(pb.x - pc.x, pb.y - pc.y) <= reach) {
              group[b] = groups;
              ++grown;
              break;
            }
          }
      }
    }
    ++groups;
  }
  for (int g = 0; g < groups; ++g) {
    std::vector<size_t> members;
    std::vector<Point> at;
    for (size_t a = 0; a < unplaced.size(); ++a)
      if (group[a] == g) {
        members.push_back(unplaced[a]);
        at.push_back(L.to_px(s.x[unplaced[a]], s.y[unplaced[a]]));
      }
    // (one alone: the wider search beside it)
    const std::string text = grouped_text(s, members);
    if (place_label(cv, text, ink(s.color, m), m, [&](Point size) { return labels.place_group(at, size); }) ||
        !s.label_every_point)
      continue;
    // A crowd of other runs round them: the nearest free spot, a thin leader
    // from each of its points to the label, so that none goes unnamed.
    std::optional<Rect> far;
    if (!place_label(cv, text, ink(s.color, m), m, [&](Point size) { return far = labels.place_far(at, size); }) || !far)
      continue;
    for (const Point& q : at) {
      const Point to{std::clamp(q.x, far->x, far->right()), std::clamp(q.y, far->y, far->bottom())};
      // From the marker's edge, not its middle: the marker stays whole.
      const double len = std::hypot(to.x - q.x, to.y - q.y), r = 5 * m.s;
      if (len <= r) continue;
      const Point from{q.x + (to.x - q.x) * r / len, q.y + (to.y - q.y) * r / len};
      // In the label's own ink and as wide as a series' line: it reads on any background.
      cv.line(from, to, ink(s.color, m), 1.5 * m.s, Dash::solid);
      labels.add_line(from, to, 1.5 * m.s);
    }
  }
}

// Stacked bars: each category's segments one on another from the axis up, a
// segment's label inside it where it fits (in black or white, whichever reads).
void draw_stacked_bars(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const Metrics& m) {
  const double half = 0.35;
  const double base = L.sy == Scale::linear ? std::max(L.y.lo, 0.0) : L.y.lo;
  std::vector<double> below;  // per category: the top of the segments drawn so far
  for (const Series& s : c.series) {
    cv.begin_group(s.name);
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!(s.x[k] >= 0) || !std::isfinite(s.y[k]) || s.y[k] <= 0) continue;
      const auto cat = static_cast<size_t>(s.x[k]);
      if (cat >= below.size()) below.resize(cat + 1, base);
      const double v0 = below[cat], v1 = v0 + s.y[k];
      below[cat] = v1;
      const double px0 = L.px_x(s.x[k] - half), px1 = L.px_x(s.x[k] + half);
      const double y0 = L.px_y(v0), y1 = L.px_y(v1);
      const Rect r{px0 + 1, std::min(y0, y1), std::max(1.0, px1 - px0 - 2), std::fabs(y0 - y1)};
      cv.rect_filled(r, s.color);
      cv.data_bar(r);
      const std::string label = k < s.point_labels.size() ? s.point_labels[k] : "";
      if (label.empty()) continue;
      const Point size = cv.measure(label, m.small);
      if (size.x + 4 * m.s <= r.w && size.y + 2 * m.s <= r.h)
        cv.text({r.x + r.w / 2, r.y + r.h / 2}, label, m.small,
                on_fill(s.color), HAlign::center, VAlign::middle);
    }
    cv.end_group();
  }
}

// A bar's label where it reads and covers no other: above the bar, then
// turned up along it above, then inside its top, then turned inside it; none
// free: left out (the hover read-out and the CSV keep it). `base`: a bar
// without a value says why where the bar would stand, from the axis up.
void place_bar_label(Canvas& cv, const ChartLayout& L, const Metrics& m, LabelPlacer& labels, const std::string& text,
                     double cx, double top, double bar_h, Color fill, Color ink_color, bool base,
                     const std::vector<Rect>& bars, const Rect* own, double slot_w = 1e300) {
  const Point size = cv.measure(text, m.small);
  const double gap = 2 * m.s;
  auto inside_plot = [&](const Rect& r) {
    return r.x >= L.plot.x && r.right() <= L.plot.right() && r.y >= L.plot.y && r.bottom() <= L.plot.bottom();
  };
  auto over_a_bar = [&](const Rect& r) {
    return std::any_of(bars.begin(), bars.end(), [&](const Rect& b) {
      return &b != own && r.x < b.right() - 0.5 && b.x + 0.5 < r.right() && r.y < b.bottom() - 0.5 && b.y + 0.5 < r.bottom();
    });
  };
  // No reference line strikes through a value: "0.726×" on the dashed 1× line reads as neither.
  auto take = [&](const Rect& r, bool clear_of_lines = true) {
    if (!inside_plot(r) || !labels.is_free(r) || over_a_bar(r) || (clear_of_lines && labels.struck(r))) return false;
    labels.add(r);
    return true;
  };
  // Black or white, whichever stands out more on the bar (WCAG contrast: white on a mid grey is below 4.5 : 1).
  const Color on_bar = on_fill(fill);
  if (base) {
    // Across the bar's (or the group's) own width, on one line or two; else
    // turned up along it. Where something else already stands at the base (a
    // reference line's name, the line itself), the label climbs its own column
    // until it is free; where a line crosses every free spot, it stands on the
    // line: a reason is never left unsaid.
    const auto [first, second] = two_lines(cv, text, m.small);
    const double two_w = second.empty() ? 1e300 : std::max(cv.measure(first, m.small).x, cv.measure(second, m.small).x);
    for (const bool clear_of_lines : {true, false}) {
      for (double lift = 0; top - gap - lift - size.y >= L.plot.y; lift += size.y / 2) {
        const double bottom = top - gap - lift;
        if (size.x <= slot_w && take({cx - size.x / 2, bottom - size.y, size.x, size.y}, clear_of_lines)) {
          cv.text({cx, bottom}, text, m.small, ink_color, HAlign::center, VAlign::bottom);
          return;
        }
        if (two_w <= slot_w && bottom - 2 * size.y >= L.plot.y &&
            take({cx - two_w / 2, bottom - 2 * size.y, two_w, 2 * size.y}, clear_of_lines)) {
          cv.text({cx, bottom - 2 * size.y}, first, m.small, ink_color, HAlign::center, VAlign::top);
          cv.text({cx, bottom - size.y}, second, m.small, ink_color, HAlign::center, VAlign::top);
          return;
        }
      }
      for (double lift = 0; top - gap - lift - size.x >= L.plot.y; lift += size.y / 2)
        if (take({cx - size.y / 2, top - gap - lift - size.x, size.y, size.x}, clear_of_lines)) {
          cv.text({cx, top - gap - lift}, text, m.small, ink_color, HAlign::left, VAlign::middle, true);
          return;
        }
    }
    return;
  }
  if (take({cx - size.x / 2, top - gap - size.y, size.x, size.y}))
    cv.text({cx, top - gap}, text, m.small, ink_color, HAlign::center, VAlign::bottom);
  else if (take({cx - size.y / 2, top - gap - size.x, size.y, size.x}))
    cv.text({cx, top - gap}, text, m.small, ink_color, HAlign::left, VAlign::middle, true);
  else if (bar_h >= size.y + 2 * gap && take({cx - size.x / 2, top + gap, size.x, size.y}))
    cv.text({cx, top + gap}, text, m.small, on_bar, HAlign::center, VAlign::top);
  else if (bar_h >= size.x + 2 * gap && take({cx - size.y / 2, top + gap, size.y, size.x}))
    cv.text({cx, top + gap}, text, m.small, on_bar, HAlign::right, VAlign::middle, true);
  else
    // A short bar under a reference line (a slow-down under "1×"): its value
    // climbs its own column past the line, across and then turned up.
    for (double lift = size.y / 2; top - gap - lift - size.y >= L.plot.y; lift += size.y / 2) {
      if (take({cx - size.x / 2, top - gap - lift - size.y, size.x, size.y})) {
        cv.text({cx, top - gap - lift}, text, m.small, ink_color, HAlign::center, VAlign::bottom);
        return;
      }
      if (top - gap - lift - size.x >= L.plot.y && take({cx - size.y / 2, top - gap - lift - size.x, size.y, size.x})) {
        cv.text({cx, top - gap - lift}, text, m.small, ink_color, HAlign::left, VAlign::middle, true);
        return;
      }
    }
}

// `over_bars` draws what goes over the bars and takes its labels' places
// first (the reference lines: "1× = baseline" stays named), before the
// bars' own labels take the free spots left.
void draw_bars(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const ChartStyle& st, const Metrics& m,
               LabelPlacer& labels, const std::function<void()>& over_bars) {
  const size_t ns = c.series.size();
  if (ns == 0) {
    over_bars();
    return;
  }
  if (c.stacked) {
    draw_stacked_bars(c, cv, L, m);
    over_bars();
    return;
  }
  const double group = 0.8, bw = group / static_cast<double>(ns);
  const double base = L.sy == Scale::linear ? std::max(L.y.lo, 0.0) : L.y.lo;
  // Every bar's rectangle first: a label goes over none but its own.
  std::vector<Rect> bars;
  std::vector<std::vector<int>> bar_of(ns);
  for (size_t si = 0; si < ns; ++si) {
    const Series& s = c.series[si];
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      bar_of[si].push_back(-1);
      if (!plottable(s.y[k], L.sy)) continue;
      const double x0 = s.x[k] - group / 2 + bw * static_cast<double>(si);
      const double px0 = L.px_x(x0), px1 = L.px_x(x0 + bw), y0 = L.px_y(base), y1 = L.px_y(s.y[k]);
      bar_of[si].back() = static_cast<int>(bars.size());
      bars.push_back({px0 + 1, std::min(y0, y1), std::max(1.0, px1 - px0 - 2), std::fabs(y0 - y1)});
    }
  }
  // A category none of whose bars has a value, all for one reason (the
  // baseline ran out of memory): the reason once, over the whole group.
  std::vector<std::string> group_reason(c.categories.size());
  for (size_t cat = 0; cat < c.categories.size(); ++cat) {
    std::optional<std::string> same;
    bool all = true;
    for (const Series& s : c.series)
      for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
        if (static_cast<size_t>(std::max(0.0, s.x[k])) != cat) continue;
        const std::string why = k < s.point_labels.size() ? s.point_labels[k] : "";
        if (plottable(s.y[k], L.sy) || why.empty() || (same && *same != why)) all = false;
        same = why;
      }
    if (all && same) group_reason[cat] = *same;
  }
  for (size_t si = 0; si < ns; ++si) {
    const Series& s = c.series[si];
    cv.begin_group(s.name);
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      const double x0 = s.x[k] - group / 2 + bw * static_cast<double>(si);
      const double px0 = L.px_x(x0), px1 = L.px_x(x0 + bw);
      if (!plottable(s.y[k], L.sy)) continue;  // its reason, with the labels below
      const double y0 = L.px_y(base), y1 = L.px_y(s.y[k]);
      const Rect bar{px0 + 1, std::min(y0, y1), std::max(1.0, px1 - px0 - 2), std::fabs(y0 - y1)};
      cv.rect_filled(bar, s.color);
      cv.data_bar(bar);
    }
    cv.end_group();
  }
  for (const Rect& b : bars) labels.add_bar(b);
  over_bars();
  // A bar without a value says why where it would stand ("OOM"), or once for its group.
  for (size_t si = 0; si < ns; ++si) {
    const Series& s = c.series[si];
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      const std::string label = k < s.point_labels.size() ? s.point_labels[k] : "";
      const size_t cat = static_cast<size_t>(std::max(0.0, s.x[k]));
      if (plottable(s.y[k], L.sy) || label.empty() || (cat < group_reason.size() && !group_reason[cat].empty()))
        continue;
      const double x0 = s.x[k] - group / 2 + bw * static_cast<double>(si);
      const double px0 = L.px_x(x0), px1 = L.px_x(x0 + bw);
      place_bar_label(cv, L, m, labels, label, (px0 + px1) / 2, L.px_y(base), 0, s.color, st.text, true, bars, nullptr,
                      px1 - px0);
    }
  }
  for (size_t cat = 0; cat < group_reason.size(); ++cat)
    if (!group_reason[cat].empty())
      place_bar_label(cv, L, m, labels, group_reason[cat], L.px_x(static_cast<double>(cat)), L.px_y(base), 0,
                      st.plot_background, st.text, true, bars, nullptr,
                      L.px_x(static_cast<double>(cat) + group / 2) - L.px_x(static_cast<double>(cat) - group / 2));
  // Values after every bar is drawn: a label may reach over a neighbour's slot, never under its bar.
  for (size_t si = 0; si < ns; ++si) {
    const Series& s = c.series[si];
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!plottable(s.y[k], L.sy)) continue;
      const double x0 = s.x[k] - group / 2 + bw * static_cast<double>(si);
      const double px0 = L.px_x(x0), px1 = L.px_x(x0 + bw);
      const std::string label = k < s.point_labels.size() ? s.point_labels[k] : "";
      const std::string text = label.empty() ? format_tick(s.y[k], c.y.format) : label;
      const double y0 = L.px_y(base), y1 = L.px_y(s.y[k]);
      place_bar_label(cv, L, m, labels, text, (px0 + px1) / 2, std::min(y0, y1), std::fabs(y0 - y1), s.color, st.text,
                      false, bars, &bars[static_cast<size_t>(bar_of[si][k])]);
    }
  }
}

void draw_heatmap(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const ChartStyle& st, const Metrics& m) {
  const Heatmap& h = c.heatmap;
  const size_t nr = h.row_labels.size(), nc = h.col_labels.size();
  if (nr == 0 || nc == 0) return;
  const Rect& P = L.plot;
  const double cw = P.w / static_cast<double>(nc), ch = P.h / static_cast<double>(nr);
  const HeatRange hr = heat_range(h);
  const double cell_font = std::min(m.font, ch * 0.45);
  cv.begin_group("heatmap");
  for (size_t r = 0; r < nr; ++r)
    for (size_t k = 0; k < nc; ++k) {
      const size_t idx = r * nc + k;
      const double v = idx < h.values.size() ? h.values[idx] : NAN;
      // Row 0 at the top, as the table reads.
      const Rect cell{P.x + cw * static_cast<double>(k), P.y + ch * static_cast<double>(r), cw, ch};
      const Color col = std::isfinite(v) ? ramp(hr.t(v)) : Color{150, 150, 150, 255};
      cv.rect_filled({cell.x + 1, cell.y + 1, cell.w - 2, cell.h - 2}, col);
      std::string text = idx < h.cell_text.size() && !h.cell_text[idx].empty() ? h.cell_text[idx]
                         : std::isfinite(v)                                    ? format_tick(v, h.value_format)
                                                                               : "—";
      if (cv.measure(text, cell_font).x < cell.w - 4)
        cv.text({cell.x + cell.w / 2, cell.y + cell.h / 2}, text, cell_font,
                std::isfinite(v) ? on_fill(col) : Color{200, 0, 0, 255},
                HAlign::center, VAlign::middle);
    }
  cv.end_group();
  for (size_t r = 0; r < nr; ++r)
    cv.text({P.x - m.pad * 0.6, P.y + ch * (static_cast<double>(r) + 0.5)}, h.row_labels[r], m.font, st.text, HAlign::right,
            VAlign::middle);
  double last_right = -1e300;
  for (size_t k = 0; k < nc; ++k) {
    const double x = P.x + cw * (static_cast<double>(k) + 0.5), w = cv.measure(h.col_labels[k], m.font).x;
    if (x - w / 2 < last_right + m.pad * 0.5) continue;
    cv.text({x, P.bottom() + m.pad * 0.5}, h.col_labels[k], m.font, st.text, HAlign::center, VAlign::top);
    last_right = x + w / 2;
  }
  if (!c.x.label.empty())
    cv.text({P.x + P.w / 2, P.bottom() + m.pad * 0.5 + m.line_h * 1.1}, c.x.label, m.font, st.text, HAlign::center, VAlign::top);
  if (!c.y.label.empty())
    cv.text({L.outer.x + m.pad * 0.5, P.y + P.h / 2}, c.y.label, m.font, st.text, HAlign::center, VAlign::top, true);
  // Colour bar.
  const Rect bar{P.right() + 14 * m.s, P.y, 14 * m.s, P.h};
  const int steps = 32;
  for (int k = 0; k < steps; ++k) {
    const double t0 = static_cast<double>(k) / steps;
    cv.rect_filled({bar.x, bar.bottom() - bar.h * (t0 + 1.0 / steps), bar.w, bar.h / steps + 0.5}, ramp(t0 + 0.5 / steps));
  }
  cv.rect_outline(bar, st.axis, 1.0 * m.s);
  if (!h.value_label.empty())
    cv.text({bar.x + bar.w / 2, bar.y - 3 * m.s}, h.value_label, m.small, st.text, HAlign::center, VAlign::bottom);
  cv.text({bar.right() + 4 * m.s, bar.y}, format_tick(hr.hi, h.value_format), m.small, st.text, HAlign::left, VAlign::top);
  cv.text({bar.right() + 4 * m.s, bar.bottom()}, format_tick(hr.lo, h.value_format), m.small, st.text, HAlign::left,
          VAlign::bottom);
}

// Where the legend's box goes and how many of its rows fit; none when the
// chart has no legend. The label placer keeps off it, and draw_legend fills it.
struct LegendBox {
  Rect box;
  size_t shown = 0;
  LegendSize size;
};

std::optional<LegendBox> legend_box(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const Metrics& m) {
  if (c.legend == LegendPos::none || c.kind == ChartKind::heatmap) return std::nullopt;
  LegendBox out;
  const double max_text = L.legend_outside ? L.legend.w - 22 * m.s - 3 * m.pad * 0.7
                                           : std::max(40.0, L.plot.w * 0.55 - 22 * m.s);
  out.size = legend_size(c, cv, m, max_text);
  const LegendSize& ls = out.size;
  if (ls.items.empty()) return std::nullopt;
  const double tw = L.legend_outside ? max_text : ls.tw;
  const double w = ls.sw + tw + 3 * ls.pad;
  const size_t fit_rows = static_cast<size_t>(std::max(1.0, (L.plot.h - 2 * ls.pad) / ls.row));
  out.shown = std::min(ls.rows.size(), fit_rows);
  const double h = ls.row * static_cast<double>(out.shown) + ls.pad;
  LegendPos pos = c.legend;
  if (pos == LegendPos::best && !L.legend_outside) legend_corner_hits(c, L, m, w, h, &pos);
  out.box = L.legend_outside ? Rect{L.legend.x, L.legend.y, w, h} : legend_corner(L, pos, w, h, ls.pad);
  return out;
}

// A series as its legend swatch shows it, and as it is drawn: one drawn on
// another's points (`ring`) dashed, its markers rings around the other's.
void draw_swatch(Canvas& cv, const Series& s, Point at, double sw, double row, const Metrics& m, double mul, bool ring) {
  if (s.style == SeriesStyle::bars) {
    cv.rect_filled({at.x, at.y - row * 0.3, sw, row * 0.6}, s.color);
    return;
  }
  const Dash dash = ring && s.dash == Dash::solid ? Dash::dashed : s.dash;
  if (s.style != SeriesStyle::points) cv.line(at, {at.x + sw, at.y}, s.color, s.width * m.s * mul, dash);
  if (s.style == SeriesStyle::line || s.marker == MarkerShape::none) return;
  const Point c{at.x + sw / 2, at.y};
  if (ring) draw_marker_ring(cv, c, s.marker, 11 * m.s, s.color, 1.6 * m.s);
  else draw_marker(cv, c, s.marker, 7 * m.s, s.color, m.s, s.open_marker ? &m.plot_background : nullptr);
}

void draw_legend(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const ChartStyle& st, const Metrics& m,
                 int highlight) {
  const std::optional<LegendBox> lb = legend_box(c, cv, L, m);
  if (!lb) return;
  const LegendSize& ls = lb->size;
  const double sw = ls.sw, row = ls.row, pad = ls.pad;
  const double tw = lb->box.w - sw - 3 * pad;
  const double w = lb->box.w, h = lb->box.h;
  const size_t shown = lb->shown;
  const double x = lb->box.x, y = lb->box.y;
  const std::vector<int> drawn_on = coinciding_series(c);
  cv.rect_filled({x, y, w, h}, with_alpha(st.plot_background, 225));
  cv.rect_outline({x, y, w, h}, st.grid, 1.0 * m.s);
  cv.legend_area({x, y, w, h});
  for (size_t r = 0; r < shown; ++r) {
    const LegendRow& lr = ls.rows[r];
    const double cy = y + pad * 0.5 + row * (static_cast<double>(r) + 0.5);
    if (r + 1 == shown && shown < ls.rows.size()) {
      const size_t left = ls.items.size() - ls.entries_before(r);
      cv.text({x + 2 * pad + sw, cy}, fit_text(cv, "+ " + std::to_string(left) + " more", m.small, tw),
              m.small, st.text, HAlign::left, VAlign::middle);
      break;
    }
    if (lr.series >= 0) {
      const Series& s = c.series[static_cast<size_t>(lr.series)];
      draw_swatch(cv, s, {x + pad, cy}, sw, row, m, lr.series == highlight ? 1.8 : 1.0,
                  drawn_on[static_cast<size_t>(lr.series)] >= 0);
    }
    cv.text({x + 2 * pad + sw + lr.indent, cy}, fit_text(cv, lr.text, m.small, tw - lr.indent), m.small,
            lr.series >= 0 || lr.indent == 0 ? st.text : st.axis, HAlign::left, VAlign::middle);
  }
}

}  // namespace

void render_chart(const ChartSpec& c, Canvas& cv, const ChartLayout& L, const ChartStyle& st, const RenderExtras* extras) {
  const Metrics m = metrics(st);
  if (L.outer.w < 4 || L.outer.h < 4) return;
  if (st.draw_background) cv.rect_filled(L.outer, st.background);
  double ty = L.outer.y + m.pad;
  for (const std::string& line : L.title_lines) {
    cv.text({L.outer.x + m.pad, ty}, fit_text(cv, line, m.title, L.outer.w - 2 * m.pad), m.title, st.text,
            HAlign::left, VAlign::top);
    ty += m.title * 1.35;
  }
  for (const std::string& line : L.subtitle_lines) {
    cv.text({L.outer.x + m.pad, ty}, fit_text(cv, line, m.small, L.outer.w - 2 * m.pad), m.small, st.axis,
            HAlign::left, VAlign::top);
    ty += m.small * 1.3;
  }
  if (L.plot.w < 8 || L.plot.h < 8) return;  // a window too small to draw into: title only

  cv.rect_filled(L.plot, st.plot_background);
  if (c.empty()) {
    // No axes for no data: the reason, in the middle of the plot.
    const std::string why = c.notes.empty() ? "no data" : c.notes.front();
    const std::vector<std::string> lines = wrap_lines(cv, why, m.font, L.plot.w - 2 * m.pad, 4);
    double y = L.plot.y + L.plot.h / 2 - m.line_h * (static_cast<double>(lines.size()) - 1) / 2;
    for (const std::string& line : lines) {
      cv.text({L.plot.x + L.plot.w / 2, y}, fit_text(cv, line, m.font, L.plot.w - 2 * m.pad), m.font, st.text,
              HAlign::center, VAlign::middle);
      y += m.line_h;
    }
  } else if (c.kind == ChartKind::heatmap) {
    draw_heatmap(c, cv, L, st, m);
  } else {
    draw_axes_xy(c, cv, L, st, m);
    cv.push_clip(L.plot);
    LabelPlacer labels(L.plot, 4 * m.s);
    // No label goes under the legend's box, drawn over the plot last.
    if (const std::optional<LegendBox> lb = legend_box(c, cv, L, m); lb && !L.legend_outside) labels.add(lb->box);
    // No label covers a data point: every drawn point is an obstacle first.
    // Then the reference lines' names, markers and annotations place their
    // labels (ceilings, the ridge, measured runs, OOM cells); the series'
    // point labels take the free spots left.
    const std::vector<int> drawn_on = coinciding_series(c);
    {
      for (size_t si = 0; si < c.series.size(); ++si) {
        const Series& sr = c.series[si];
        if (c.kind == ChartKind::bars || sr.style == SeriesStyle::line || sr.marker == MarkerShape::none) continue;
        // As large as the marker drawn (a ring around another's point is larger), at least 4.5 px.
        const double r = std::max(4.5 * m.s, (sr.style == SeriesStyle::points ? 9 : 6.5) * m.s *
                                                 (drawn_on[si] >= 0 ? 1.9 : 1.0) * 0.5 * 1.3);
        for (size_t k = 0; k < std::min(sr.x.size(), sr.y.size()); ++k)
          if (plottable(sr.x[k], L.sx) && plottable(sr.y[k], L.sy)) {
            const Point p = L.to_px(sr.x[k], sr.y[k]);
            labels.add_point(p, {p.x - r, p.y - r, 2 * r, 2 * r}, LabelPlacer::look_of(sr.color, sr.marker));
          }
      }
      // The lines (a roof, a slope, a Θ curve) strike no label through: each
      // segment, and each horizontal reference line from where it starts.
      for (const Series& sr : c.series) {
        if (c.kind == ChartKind::bars || (sr.style != SeriesStyle::line && sr.style != SeriesStyle::line_points)) continue;
        Point prev{0, 0};
        bool have_prev = false;  // the point before is plotted: a segment joins them
        for (size_t k = 0; k < std::min(sr.x.size(), sr.y.size()); ++k) {
          if (!plottable(sr.x[k], L.sx) || !plottable(sr.y[k], L.sy)) {
            have_prev = false;
            continue;
          }
          const Point p = L.to_px(sr.x[k], sr.y[k]);
          if (have_prev) labels.add_line(prev, p, sr.width * m.s);
          prev = p;
          have_prev = true;
        }
      }
      for (const RefLine& l : c.ref_lines) {
        if (l.vertical || !plottable(l.value, L.sy)) continue;
        const double y = L.px_y(l.value);
        const double x0 = l.from_x && plottable(*l.from_x, L.sx) ? std::clamp(L.px_x(*l.from_x), L.plot.x, L.plot.right()) : L.plot.x;
        labels.add_line({x0, y}, {L.plot.right(), y}, l.width * m.s);
      }
      // The markers of cells without a value (OOM on the bottom edge) and of runs too.
      for (const Marker& mk : c.markers) {
        if (!plottable(mk.x, L.sx)) continue;
        const bool bottom = !mk.y || !plottable(*mk.y, L.sy);
        const Point p{L.px_x(mk.x), bottom ? L.plot.bottom() - mk.size * m.s : L.px_y(*mk.y)};
        labels.add(marker_box(p, mk.shape, mk.size * 1.4 * m.s));
      }
    }
    // The labels the caller names first (what a lecture's scene talks
    // about) take their places before every other: the reference lines'
    // names, then the points'.
    const auto first = [&](const std::string& label) { return extras && names_first(*extras, label); };
    const auto not_first = [&](const std::string& label) { return !first(label); };
    std::vector<const RefLine*> named;  // reference lines named already
    HeldText named_first(cv);             // their text, drawn over the lines and points
    if (c.kind != ChartKind::bars && extras && !extras->named_first.empty()) {
      for (const RefLine& l : c.ref_lines)
        if (!l.vertical && first(l.label) && plottable(l.value, L.sy) && L.px_y(l.value) >= L.plot.y &&
            L.px_y(l.value) <= L.plot.bottom() &&
            (name_horizontal_line(l, 1, named_first, L, m, labels) || name_horizontal_line(l, 2, named_first, L, m, labels)))
          named.push_back(&l);
      for (const Series& sr : c.series) draw_series_labels(sr, named_first, L, m, labels, first);
    }
    std::vector<const RefLine*> unnamed;  // reference lines whose names try two lines after the points' labels
    if (c.kind != ChartKind::bars) draw_ref_lines(c, cv, L, m, labels, &unnamed, &named);
    if (c.kind == ChartKind::bars) {
      // The reference lines over the bars ("1× = baseline" stays visible), named before the bars' values.
      draw_bars(c, cv, L, st, m, labels, [&] { draw_ref_lines(c, cv, L, m, labels); });
    } else {
      for (size_t k = 0; k < c.series.size(); ++k) {
        cv.begin_group(c.series[k].name);
        const bool hl = extras && extras->highlight_series == static_cast<int>(k);
        draw_series_xy(c.series[k], cv, L, m, hl ? 1.8 : 1.0, drawn_on[k] >= 0);
        cv.end_group();
      }
    }
    if (extras)
      for (const Series* s : extras->series)
        if (s) draw_series_xy(*s, cv, L, m, 1.0);
    named_first.draw();
    for (const Marker& mk : c.markers) {
      if (!plottable(mk.x, L.sx)) continue;
      const bool bottom = !mk.y || !plottable(*mk.y, L.sy);
      const Point p{L.px_x(mk.x), bottom ? L.plot.bottom() - mk.size * m.s : L.px_y(*mk.y)};
      draw_marker(cv, p, mk.shape, mk.size * 1.4 * m.s, mk.color, m.s);
      cv.data_mark(marker_box(p, mk.shape, mk.size * 1.4 * m.s));
      if (mk.label.empty()) continue;
      const Point size = cv.measure(mk.label, m.small);
      if (const auto box = labels.place(p, size, {mk.size / 4, -mk.size / 6}))
        cv.text({box->x, box->bottom()}, mk.label, m.small, ink(mk.color, m), HAlign::left, VAlign::bottom);
    }
    for (const Annotation& a : c.annotations) {
      if (!plottable(a.x, L.sx) || !plottable(a.y, L.sy)) continue;
      const Point p = L.to_px(a.x, a.y);
      const Point size = cv.measure(a.text, m.small);
      Point toward{1.5, 0};  // where the label tries first
      switch (a.anchor) {
        case Annotation::Anchor::right: toward = {1.5, 0}; break;
        case Annotation::Anchor::left: toward = {-1.5, 0}; break;
        case Annotation::Anchor::above: toward = {0, -1.5}; break;
        case Annotation::Anchor::below: toward = {0, 1.5}; break;
      }
      if (const auto box = labels.place(p, size, toward))
        cv.text({box->x, box->bottom()}, a.text, m.small, ink(a.color, m), HAlign::left, VAlign::bottom);
    }
    if (c.kind != ChartKind::bars)
      for (const Series& sr : c.series) draw_series_labels(sr, cv, L, m, labels, not_first);
    if (extras)
      for (const Series* sr : extras->series)
        if (sr) draw_series_labels(*sr, cv, L, m, labels, not_first);
    for (const RefLine* l : unnamed) name_horizontal_line(*l, 2, cv, L, m, labels);
    cv.pop_clip();
    draw_legend(c, cv, L, st, m, extras ? extras->highlight_series : -1);
  }
  double ny = L.notes_top;
  for (const std::string& n : L.note_lines) {
    cv.text({L.outer.x + m.pad, ny}, fit_text(cv, n, m.small, L.outer.w - 2 * m.pad), m.small, st.axis, HAlign::left,
            VAlign::top);
    ny += m.small * 1.3;
  }
}

}  // namespace flashlab::analysis
