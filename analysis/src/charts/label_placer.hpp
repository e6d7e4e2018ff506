// The label placer of the chart renderer (chart_render.cpp): where each label
// beside a point goes so that none covers another, a point or a line.
#pragma once

#include <algorithm>
#include <cmath>
#include <optional>
#include <utility>
#include <vector>

#include "flashlab/analysis/charts/chart_render.hpp"

namespace flashlab::analysis::chart_detail {

// Labels beside points (series' point labels, markers, annotations) placed
// so that no two cover each other: each tries the spot it prefers, then the
// other sides of its point, then further out; one that finds no free spot
// inside the plot is left out (the hover read-out and the CSV still carry it).
class LabelPlacer {
 public:
  LabelPlacer(const Rect& plot, double step) : plot_(plot), step_(step) {}
  // The box's top-left for a label of `size` at point p, preferring `first`
  // (dx, dy multiples of the step: +x right, +y down); nullopt when none is free.
  // `look`: what the point looks like (look_of: colour and marker), -1 none.
  std::optional<Rect> place(Point p, Point size, Point first, long long look = -1) {
    const double s = step_;
    const Point tries[] = {first,   {1, -1},  {1, 1},  {-1, -1}, {-1, 1}, {-1.5, 0}, {0, -2}, {0, 2},
                           {1, -3}, {1, 3},   {-1, -3}, {-1, 3}, {2, -5},  {2, 5},    {-2, -5}};
    const auto takes = [&](const Rect& r, bool clear_of_lines) {
      if (r.x < plot_.x || r.right() > plot_.right() || r.y < plot_.y || r.bottom() > plot_.bottom()) return false;
      return is_free(r) && !(clear_of_lines && struck(r)) && nearest_is(p, r, look);
    };
    // A spot no line strikes through first; else one clear of labels and points only.
    for (const bool clear_of_lines : {true, false}) {
      for (const Point& t : tries) {
        // dx > 0: the label starts right of p; < 0: it ends left of p; 0: centred.
        const double x = t.x > 0 ? p.x + t.x * s : t.x < 0 ? p.x + t.x * s - size.x : p.x - size.x / 2;
        const double y = t.y < 0 ? p.y + t.y * s - size.y : t.y > 0 ? p.y + t.y * s : p.y - size.y / 2;
        const Rect r{x, y, size.x, size.y};
        if (!takes(r, clear_of_lines)) continue;
        placed_.push_back(r);
        return r;
      }
      // Where a crowd of points and names leaves none of those spots, the
      // nearest gap beside the point in finer steps (half a step up or down,
      // a few steps out).
      if (const std::optional<Rect> r = nearest_gap(p, size, clear_of_lines, takes)) {
        placed_.push_back(*r);
        return r;
      }
    }
    return std::nullopt;
  }
  // One label for the points `own` (too close together for a label each):
  // beside their bounding box, right, left, above or below, then further out;
  // nearer to one of them than to any other point. nullopt when none is free.
  std::optional<Rect> place_group(const std::vector<Point>& own, Point size) {
    if (own.empty()) return std::nullopt;
    double x0 = own.front().x, x1 = x0, y0 = own.front().y, y1 = y0;
    for (const Point& q : own) {
      x0 = std::min(x0, q.x), x1 = std::max(x1, q.x), y0 = std::min(y0, q.y), y1 = std::max(y1, q.y);
    }
    const double s = step_, cy = (y0 + y1) / 2, cx = (x0 + x1) / 2;
    std::vector<std::pair<double, Rect>> spots;
    for (int out = 0; out <= 6; ++out) {
      const double gap = (1.5 + out) * s;
      for (double dy = 0; dy <= (y1 - y0) / 2 + 2 * size.y; dy += s / 2)
        for (const int up : {-1, 1}) {
          if (dy == 0 && up > 0) continue;
          const double y = cy + up * dy - size.y / 2;
          spots.push_back({std::hypot(gap, dy), Rect{x1 + gap, y, size.x, size.y}});
          spots.push_back({std::hypot(gap, dy) + 0.5, Rect{x0 - gap - size.x, y, size.x, size.y}});
        }
      spots.push_back({gap + (y1 - y0) / 2, Rect{cx - size.x / 2, y0 - gap - size.y, size.x, size.y}});
      spots.push_back({gap + (y1 - y0) / 2, Rect{cx - size.x / 2, y1 + gap, size.x, size.y}});
    }
    std::stable_sort(spots.begin(), spots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    const auto nearest_own = [&](const Rect& r) {
      double mine = 1e300;
      for (const Point& q : own) mine = std::min(mine, distance(q, r));
      return std::none_of(points_.begin(), points_.end(), [&](Point q) {
        const bool member = std::any_of(own.begin(), own.end(), [&](Point o) { return std::hypot(o.x - q.x, o.y - q.y) < 0.5; });
        return !member && distance(q, r) < mine + step_;
      });
    };
    for (const bool clear_of_lines : {true, false})
      for (const auto& [d, r] : spots) {
        if (r.x < plot_.x || r.right() > plot_.right() || r.y < plot_.y || r.bottom() > plot_.bottom()) continue;
        if (!is_free(r) || (clear_of_lines && struck(r)) || !nearest_own(r)) continue;
        placed_.push_back(r);
        return r;
      }
    return std::nullopt;
  }
  // Where no spot beside the points `own` is free (a crowd of other runs
  // round them): the free box nearest to them anywhere in the plot, to be
  // joined to them by a leader line. nullopt only when the plot has no room.
  std::optional<Rect> place_far(const std::vector<Point>& own, Point size) {
    if (own.empty()) return std::nullopt;
    double cx = 0, cy = 0;
    for (const Point& q : own) cx += q.x / static_cast<double>(own.size()), cy += q.y / static_cast<double>(own.size());
    const double s = step_;
    std::vector<std::pair<double, Rect>> spots;
    for (double y = plot_.y; y + size.y <= plot_.bottom(); y += s)
      for (double x = plot_.x; x + size.x <= plot_.right(); x += s) {
        const Rect r{x, y, size.x, size.y};
        spots.push_back({distance({cx, cy}, r), r});
      }
    std::stable_sort(spots.begin(), spots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const bool clear_of_lines : {true, false})
      for (const auto& [d, r] : spots)
        if (is_free(r) && !(clear_of_lines && struck(r))) {
          placed_.push_back(r);
          return r;
        }
    return std::nullopt;
  }
  // What a point looks like: its colour and marker. Two points that look
  // alike are told apart by where their labels stand alone.
  static long long look_of(Color c, MarkerShape m) {
    return (static_cast<long long>(c.r) << 32) | (static_cast<long long>(c.g) << 24) | (static_cast<long long>(c.b) << 16) |
           (static_cast<long long>(c.a) << 8) | static_cast<long long>(m);
  }
  // A label placed by other means (a reference line's), or a data point: the
  // labels placed after it must not cover it.
  void add(const Rect& r) { placed_.push_back(r); }
  // A data point at p covering r: no label covers it, and none sits nearer to it than to its own point.
  void add_point(Point p, const Rect& r, long long look = -1) {
    placed_.push_back(r);
    points_.push_back(p);
    looks_.push_back(look);
  }
  // A bar (its value may stand inside it): a reference line's name keeps off
  // bars where it can.
  void add_bar(const Rect& r) { bars_.push_back(r); }
  bool has_bars() const { return !bars_.empty(); }
  bool on_bar(const Rect& r) const {
    return std::any_of(bars_.begin(), bars_.end(), [&](const Rect& o) {
      return r.x < o.right() && o.x < r.right() && r.y < o.bottom() && o.y < r.bottom();
    });
  }
  // A line drawn `width` wide from a to b: no label is struck through by it.
  void add_line(Point a, Point b, double width) { lines_.push_back({a, b, width}); }
  bool is_free(const Rect& r) const {
    return std::none_of(placed_.begin(), placed_.end(), [&](const Rect& o) {
      return r.x < o.right() && o.x < r.right() && r.y < o.bottom() && o.y < r.bottom();
    });
  }
  bool struck(const Rect& r) const {
    return std::any_of(lines_.begin(), lines_.end(), [&](const Line& l) { return crosses(l, r); });
  }

 private:
  struct Line {
    Point a, b;
    double width;
  };
  // How far a label reads from q: across to its nearer end, up or down to its middle line.
  static double distance(Point q, const Rect& r) {
    return std::hypot(std::max({r.x - q.x, 0.0, q.x - r.right()}), q.y - (r.y + r.h / 2));
  }
  // Whether a label at r is clearly nearer to its own point p than to any other data point (by a
  // step; one in the same spot aside): labels beside close points are never read the wrong way round.
  // A label reads from its start: one left of its point must not start
  // nearer to another point that looks the same (the same colour and marker:
  // two flagged rows) than to its own, or it reads as that one's.
  bool nearest_is(Point p, const Rect& r, long long look = -1) const {
    const double own = distance(p, r) + step_;
    const Point start{r.x, r.y + r.h / 2};
    const double own_start = std::hypot(p.x - start.x, p.y - start.y);
    for (size_t k = 0; k < points_.size(); ++k) {
      const Point q = points_[k];
      if (std::hypot(q.x - p.x, q.y - p.y) <= 0.5) continue;
      if (distance(q, r) < own) return false;
      if (look >= 0 && looks_[k] == look && std::hypot(q.x - start.x, q.y - start.y) < own_start) return false;
    }
    return true;
  }
  // Beside p on either side, up to three steps further out than the nearest
  // spot, with the label's middle up to 1.5 label heights above or below p:
  // the free box nearest to p.
  template <class Takes>
  std::optional<Rect> nearest_gap(Point p, Point size, bool clear_of_lines, const Takes& takes) const {
    const double s = step_;
    std::vector<std::pair<double, Rect>> spots;
    for (int out = 0; out <= 3; ++out)
      for (const int side : {1, -1})
        for (double dy = 0; dy <= 1.5 * size.y; dy += s / 2)
          for (const int up : {-1, 1}) {
            if (dy == 0 && up > 0) continue;
            const double gap = (1.5 + out) * s;
            const double x = side > 0 ? p.x + gap : p.x - gap - size.x;
            const Rect r{x, p.y + up * dy - size.y / 2, size.x, size.y};
            spots.push_back({std::hypot(gap, dy), r});
          }
    std::stable_sort(spots.begin(), spots.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (const auto& [d, r] : spots)
      if (takes(r, clear_of_lines)) return r;
    return std::nullopt;
  }
  // Whether the line passes through r (grown by half its width): sampled every pixel along it.
  static bool crosses(const Line& l, const Rect& r) {
    const double h = l.width / 2 + 1;
    const double x0 = r.x - h, x1 = r.right() + h, y0 = r.y - h, y1 = r.bottom() + h;
    if (std::max(l.a.x, l.b.x) < x0 || std::min(l.a.x, l.b.x) > x1 || std::max(l.a.y, l.b.y) < y0 ||
        std::min(l.a.y, l.b.y) > y1)
      return false;
    const double len = std::hypot(l.b.x - l.a.x, l.b.y - l.a.y);
    const int n = std::max(1, static_cast<int>(std::min(len, 1e5)));
    for (int k = 0; k <= n; ++k) {
      const double t = static_cast<double>(k) / n;
      const double x = l.a.x + (l.b.x - l.a.x) * t, y = l.a.y + (l.b.y - l.a.y) * t;
      if (x >= x0 && x <= x1 && y >= y0 && y <= y1) return true;
    }
    return false;
  }
  Rect plot_;
  double step_;
  std::vector<Rect> placed_;
  std::vector<Point> points_;
  std::vector<long long> looks_;  // per point: look_of, -1 none
  std::vector<Line> lines_;
  std::vector<Rect> bars_;
};

}  // namespace flashlab::analysis::chart_detail
