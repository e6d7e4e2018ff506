// What the layout of a chart and its drawing both measure (chart_layout.cpp,
// chart_render.cpp): the style's sizes in pixels, text wrapped or fitted to a
// width, the footnotes as drawn, the labels of bar categories, the legend's
// rows and size and the corner it covers least.
#pragma once

#include <string>
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

// `s` broken at spaces into lines no wider than `max_w` (a word wider than it
// stays whole on its own line), at most `max_lines`: the last one then takes
// the rest of the text. Empty text: no line.
std::vector<std::string> wrap_lines(Canvas& cv, const std::string& s, double size, double max_w, size_t max_lines);

// The footnotes as drawn: each wrapped to the width, at most 5 lines in all;
// the last line says when notes were left out (the CSV and the report keep
// them). The first note of an empty chart is drawn inside the plot instead.
std::vector<std::string> shown_notes(const ChartSpec& c, const ChartStyle& st, Canvas& cv, double size, double width);

// A label on two lines, broken at the space that makes the wider line
// narrowest; {label, ""} when it has no space.
std::pair<std::string, std::string> two_lines(Canvas& cv, const std::string& label, double size);

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

// The legend as drawn: a row per line of text. An entry's first row has its
// swatch; a name too wide for the legend goes on more rows; under the first
// entry of series drawn on one another, a row per other one ("= name"),
// which has no entry of its own.
struct LegendRow {
  int series = -1;    // the row's swatch; -1: a row without one
  std::string text;
  double indent = 0;  // continuation rows of a coincidence start further in
};

struct LegendSize {
  std::vector<size_t> items;   // series in the legend
  std::vector<LegendRow> rows;
  double w = 0, h = 0, sw = 0, tw = 0, row = 0, pad = 0;
  size_t entries_before(size_t upto) const {  // legend entries whose first row comes before row `upto`
    size_t n = 0;
    for (size_t k = 0; k < upto && k < rows.size(); ++k) n += rows[k].series >= 0 ? 1 : 0;
    return n;
  }
};

// The legend's rows and size, its text no wider than `max_text`.
LegendSize legend_size(const ChartSpec& c, Canvas& cv, const Metrics& m, double max_text);

Rect legend_corner(const ChartLayout& L, LegendPos p, double w, double h, double pad);

// How many data points, line midpoints and labels a legend of w×h covers in
// the corner of L.plot that covers fewest (a bar, with the value above it, and
// a segment of a series' line passing under it, counting as four each); sets
// *best_pos to that corner.
int legend_corner_hits(const ChartSpec& c, const ChartLayout& L, const Metrics& m, double w, double h,
                       LegendPos* best_pos = nullptr);

}  // namespace flashlab::analysis::chart_detail
