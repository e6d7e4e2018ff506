// What the layout of a chart and its drawing both measure (chart_layout.cpp,
// chart_render.cpp): the style's sizes in pixels, text fitted to a width, the
// labels of bar categories, the legend's size and the corner it covers least.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "flashlab/analysis/charts/chart_render.hpp"

namespace flashlab::analysis::chart_detail {

struct Metrics {
  double s, font, small, title, pad, line_h;
  bool dark;  // a dark plot background: coloured text is lightened to stay readable
  Color plot_background;  // the inside of an open marker
};

Metrics metrics(const ChartStyle& st);

// Text in a series' colour: on a dark background, halfway to white.
Color ink(Color c, const Metrics& m);

int max_ticks_for(double length_px, double label_px);

// The notes drawn under the plot (at most 3; the first note of an empty chart
// is drawn inside the plot instead).
std::vector<std::string> shown_notes(const ChartSpec& c, const ChartStyle& st);

// Text that fits `max_w` pixels, cut with an ellipsis.
std::string fit_text(Canvas& cv, const std::string& s, double size, double max_w);

// Bar categories as drawn: one line each, or two (broken at a space) where a
// repeated first line is left out (`grouped`: "LLaMA-2-7B" over "8K", then
// "32K" alone), with the width each takes.
struct CategoryLabel {
  std::string first, second;
  double width = 0;
};
std::vector<CategoryLabel> category_labels(Canvas& cv, const std::vector<std::string>& cats, double size, bool two,
                                           bool grouped);
// Every label clears its neighbour in slots of `slot` pixels.
bool categories_fit(const std::vector<CategoryLabel>& labels, double slot, double gap);
double widest_category(const std::vector<CategoryLabel>& labels);

struct LegendSize {
  std::vector<size_t> items;
  double w = 0, h = 0, sw = 0, tw = 0, row = 0, pad = 0;
};

LegendSize legend_size(const ChartSpec& c, Canvas& cv, const Metrics& m, double max_text);

Rect legend_corner(const ChartLayout& L, LegendPos p, double w, double h, double pad);

// How many data points, line midpoints and labels a legend of w×h covers in
// the corner of L.plot that covers fewest; sets *best_pos to that corner.
int legend_corner_hits(const ChartSpec& c, const ChartLayout& L, const Metrics& m, double w, double h,
                       LegendPos* best_pos = nullptr);

}  // namespace flashlab::analysis::chart_detail
