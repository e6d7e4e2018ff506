#include "flashlab/analysis/charts/chart.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <stdexcept>

#include "flashlab/analysis/text/csv.hpp"

namespace flashlab::analysis {

Color palette(int k) {
  static const Color colors[] = {
      {0, 114, 178, 255},   // blue
      {213, 94, 0, 255},    // vermillion
      {0, 158, 115, 255},   // bluish green
      {204, 121, 167, 255}, // reddish purple
      {230, 159, 0, 255},   // orange
      {86, 180, 233, 255},  // sky blue
      {120, 120, 120, 255}, // grey (instead of Okabe–Ito black, kept for text)
      {180, 160, 20, 255},  // dark yellow (yellow itself vanishes on white)
      {150, 30, 70, 255},   // wine
      {70, 60, 170, 255},   // indigo
      {120, 80, 40, 255},   // brown
      {140, 0, 250, 255},   // violet: apart from vermillion, orange and the blues, also to colour-blind eyes
  };
  const int n = static_cast<int>(sizeof colors / sizeof colors[0]);
  return colors[((k % n) + n) % n];
}

Color with_alpha(Color c, std::uint8_t a) {
  c.a = a;
  return c;
}

bool Range::valid() const { return std::isfinite(lo) && std::isfinite(hi) && lo < hi; }

bool ChartSpec::empty() const {
  if (kind == ChartKind::heatmap) return heatmap.row_labels.empty() || heatmap.col_labels.empty();
  for (const Series& s : series)
    if (!s.x.empty()) return false;
  return true;
}

// ---- tick labels --------------------------------------------------------------

namespace {

// Up to 3 significant digits, trailing zeros dropped: 2.50 -> "2.5", 160 -> "160".
std::string sig3(double a) {
  if (a == 0) return "0";
  const double mag = std::floor(std::log10(std::fabs(a)));
  const int decimals = std::max(0, static_cast<int>(2 - mag));
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", std::min(decimals, 12), a);
  std::string s = buf;
  if (s.find('.') != std::string::npos) {
    while (!s.empty() && s.back() == '0') s.pop_back();
    if (!s.empty() && s.back() == '.') s.pop_back();
  }
  return s == "-0" ? "0" : s;
}

std::string with_prefix(double v, double base, const char* const* prefixes, int count, const char* sep) {
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "∞" : "−∞");
  double a = std::fabs(v);
  int k = 0;
  while (a >= base && k < count - 1) {
    a /= base;
    ++k;
  }
  // Rounding can carry to the next prefix: 999,999 -> "1000K" -> "1M".
  if (sig3(a) == sig3(base) && k < count - 1) {
    a /= base;
    ++k;
  }
  std::string s = (v < 0 ? "-" : "") + sig3(a);
  if (prefixes[k][0] != '\0' || sep[0] != '\0') s += sep;
  return s + prefixes[k];
}

}  // namespace

std::string format_tick(double v, TickFormat f) {
  static const char* const si_prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  static const char* const byte_units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  static const char* const iec_units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  if (!std::isfinite(v)) return std::isnan(v) ? "NaN" : (v > 0 ? "∞" : "−∞");
  const double a = std::fabs(v);
  switch (f) {
    case TickFormat::si:
      if (a != 0 && a < 1e-3) {
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2g", v);
        return buf;
      }
      return with_prefix(v, 1000.0, si_prefixes, 7, "");
    case TickFormat::binary:
      if (a < 1024) return sig3(v);
      return with_prefix(v, 1024.0, si_prefixes, 7, "");
    case TickFormat::bytes: return with_prefix(v, 1000.0, byte_units, 7, " ");
    case TickFormat::bytes_iec: return with_prefix(v, 1024.0, iec_units, 7, " ");
    case TickFormat::plain:
      if (a != 0 && (a < 1e-3 || a >= 1e5)) {
        if (a >= 1e5) return with_prefix(v, 1000.0, si_prefixes, 7, "");
        char buf[32];
        std::snprintf(buf, sizeof buf, "%.2g", v);
        return buf;
      }
      return sig3(v);
  }
  return sig3(v);
}

// ---- ticks ----------------------------------------------------------------------

namespace {

double nice_step(double raw) {
  const double p = std::pow(10.0, std::floor(std::log10(raw)));
  const double m = raw / p;
  return (m <= 1 ? 1 : m <= 2 ? 2 : m <= 2.5 ? 2.5 : m <= 5 ? 5 : 10) * p;
}

constexpr double kEps = 1e-9;

// Memory on a linear axis: steps of 1-2-5 in the largest unit the span holds
// twice, every label in that unit ("0.5 GiB", "1 GiB", "1.5 GiB").
void iec_linear_ticks(Range r, int max_major, std::vector<Tick>& out) {
  static const char* const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  const double span = r.hi - r.lo;
  int k = 0;
  while (k < 5 && span / std::pow(1024.0, k + 1) >= 2) ++k;
  const double unit = std::pow(1024.0, k);
  const double step = nice_step(span / unit / max_major) * unit;
  const double first = std::ceil(r.lo / step - kEps) * step;
  for (int n = 0; n < 1000; ++n) {
    double v = first + n * step;
    if (v > r.hi + step * kEps) break;
    if (std::fabs(v) < step * 1e-9) v = 0;
    out.push_back({v, v == 0 ? std::string("0") : sig3(v / unit) + " " + units[k], true});
  }
}

void linear_ticks(Range r, TickFormat f, int max_major, std::vector<Tick>& out) {
  if (f == TickFormat::bytes_iec) return iec_linear_ticks(r, max_major, out);
  const double span = r.hi - r.lo;
  double step;
  if (f == TickFormat::binary && span >= 1024) {
    step = std::exp2(std::ceil(std::log2(span / max_major)));
  } else {
    step = nice_step(span / max_major);
  }
  const double first = std::ceil(r.lo / step - kEps) * step;
  for (int k = 0; k < 1000; ++k) {
    double v = first + k * step;
    if (v > r.hi + step * kEps) break;
    if (std::fabs(v) < step * 1e-9) v = 0;
    out.push_back({v, format_tick(v, f), true});
  }
}

bool inside(double v, Range r) { return v >= r.lo * (1 - kEps) && v <= r.hi * (1 + kEps); }

void log10_ticks(Range r, TickFormat f, int max_major, std::vector<Tick>& out) {
  const int e0 = static_cast<int>(std::floor(std::log10(r.lo) + kEps));
  const int e1 = static_cast<int>(std::ceil(std::log10(r.hi) - kEps));
  const int decades = std::max(1, e1 - e0);
  const int stride = std::max(1, (decades + max_major - 1) / max_major);
  const bool fine = decades * 3 <= max_major;  // room for 1-2-5 labels
  const bool minor = decades <= 5;
  for (int e = e0; e <= e1; ++e) {
    const double p = std::pow(10.0, e);
    for (int m = 1; m <= 9; ++m) {
      const double v = m * p;
      if (!inside(v, r)) continue;
      const bool major = (m == 1 && ((e % stride) + stride) % stride == 0) || (fine && (m == 2 || m == 5));
      if (major) out.push_back({v, format_tick(v, f), true});
      else if (minor || m == 1) out.push_back({v, "", false});
    }
  }
  // A stride that leaves one labelled decade in view (a short plot over many
  // decades): label the first and the last decade instead, so the axis reads.
  const auto labelled = std::count_if(out.begin(), out.end(), [](const Tick& t) { return t.major; });
  if (labelled < 2) {
    Tick* first = nullptr;
    Tick* last = nullptr;
    for (Tick& t : out) {
      const double lead = t.value / std::pow(10.0, std::floor(std::log10(t.value) + kEps));
      if (std::fabs(lead - 1) > 1e-6) continue;
      if (!first) first = &t;
      last = &t;
    }
    for (Tick* t : {first, last})
      if (t && !t->major) {
        t->major = true;
        t->label = format_tick(t->value, f);
      }
  }
}

void log2_ticks(Range r, TickFormat f, int max_major, std::vector<Tick>& out) {
  const int e0 = static_cast<int>(std::ceil(std::log2(r.lo) - kEps));
  const int e1 = static_cast<int>(std::floor(std::log2(r.hi) + kEps));
  const int count = e1 - e0 + 1;
  const int stride = std::max(1, (count + max_major - 1) / max_major);
  for (int e = e0; e <= e1; ++e) {
    const double v = std::exp2(e);
    if (((e % stride) + stride) % stride == 0) out.push_back({v, format_tick(v, f), true});
    else out.push_back({v, "", false});
  }
}

int major_count(const std::vector<Tick>& t) {
  return static_cast<int>(std::count_if(t.begin(), t.end(), [](const Tick& k) { return k.major; }));
}

}  // namespace

std::vector<Tick> make_ticks(Range r, Scale s, TickFormat f, int max_major) {
  std::vector<Tick> out;
  if (!r.valid()) return out;
  max_major = std::clamp(max_major, 2, 50);
  if (s != Scale::linear && r.lo > 0) {
    if (s == Scale::log10 && f != TickFormat::bytes_iec) log10_ticks(r, f, max_major, out);
    else log2_ticks(r, f, max_major, out);
    // Short log ranges: label 3 as well (1-2-3-5), so a decade is never bare.
    if (s == Scale::log10 && major_count(out) < 4 && r.hi / r.lo < 200)
      for (Tick& t : out) {
        const double lead = t.value / std::pow(10.0, std::floor(std::log10(t.value) + kEps));
        if (!t.major && std::fabs(lead - 3) < 1e-6) {
          t.major = true;
          t.label = format_tick(t.value, f);
        }
      }
    if (major_count(out) >= 2) return out;
    out.clear();  // less than an octave or decade: linear ticks read better
  }
  linear_ticks(r, f, max_major, out);
  return out;
}

// ---- ranges ---------------------------------------------------------------------

bool plottable(double v, Scale s) { return std::isfinite(v) && (s == Scale::linear || v > 0); }

double axis_fraction(double v, Range r, Scale s) {
  if (s == Scale::linear) return (v - r.lo) / (r.hi - r.lo);
  if (v <= 0 || r.lo <= 0) return -1;
  return std::log(v / r.lo) / std::log(r.hi / r.lo);
}

double axis_value(double f, Range r, Scale s) {
  if (s == Scale::linear) return r.lo + f * (r.hi - r.lo);
  return r.lo * std::pow(r.hi / r.lo, f);
}

namespace {

// The plottable points of a series, in order.
std::vector<std::pair<double, double>> plotted(const Series& s, Scale sx, Scale sy) {
  std::vector<std::pair<double, double>> out;
  for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k)
    if (plottable(s.x[k], sx) && plottable(s.y[k], sy)) out.emplace_back(s.x[k], s.y[k]);
  return out;
}

}  // namespace

bool same_points(const Series& a, const Series& b) {
  const auto pa = plotted(a, Scale::linear, Scale::linear), pb = plotted(b, Scale::linear, Scale::linear);
  if (pa.size() != pb.size()) return false;
  for (size_t k = 0; k < pa.size(); ++k)
    if (pa[k].first != pb[k].first || std::fabs(pa[k].second - pb[k].second) > 1e-9 * std::fabs(pa[k].second))
      return false;
  return true;
}

std::vector<int> coinciding_series(const ChartSpec& c) {
  std::vector<int> out(c.series.size(), -1);
  if (c.kind != ChartKind::xy) return out;
  const Range x = auto_fit(c, true), y = auto_fit(c, false);
  const Scale sx = c.x.scale, sy = c.y.scale;
  std::vector<std::vector<std::pair<double, double>>> pts;
  for (const Series& s : c.series) pts.push_back(plotted(s, sx, sy));
  // Within 0.4 % of an axis: less than a marker's radius apart on any plot.
  const auto near = [](double a, double b, Range r, Scale s) {
    return a == b || std::fabs(axis_fraction(a, r, s) - axis_fraction(b, r, s)) < 0.004;
  };
  for (size_t k = 0; k < c.series.size(); ++k) {
    if (pts[k].empty() || c.series[k].style == SeriesStyle::bars) continue;
    for (size_t j = 0; j < k && out[k] < 0; ++j) {
      if (pts[j].size() != pts[k].size() || c.series[j].style == SeriesStyle::bars) continue;
      bool all = true;
      for (size_t n = 0; n < pts[k].size() && all; ++n)
        all = near(pts[j][n].first, pts[k][n].first, x, sx) && near(pts[j][n].second, pts[k][n].second, y, sy);
      if (all) out[k] = static_cast<int>(j);
    }
  }
  return out;
}

std::vector<double> stack_tops(const ChartSpec& c) {
  std::vector<double> top;
  for (const Series& s : c.series)
    for (size_t k = 0; k < std::min(s.x.size(), s.y.size()); ++k) {
      if (!(s.x[k] >= 0) || !std::isfinite(s.y[k]) || s.y[k] <= 0) continue;
      const auto cat = static_cast<size_t>(s.x[k]);
      if (cat >= top.size()) top.resize(cat + 1, 0.0);
      top[cat] += s.y[k];
    }
  return top;
}

Range auto_fit(const ChartSpec& c, bool x_axis) {
  const Axis& ax = x_axis ? c.x : c.y;
  if (c.kind == ChartKind::heatmap) {
    const double n = static_cast<double>(x_axis ? c.heatmap.col_labels.size() : c.heatmap.row_labels.size());
    return {0, std::max(1.0, n)};
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo;
  auto take = [&](double v) {
    if (!plottable(v, ax.scale)) return;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  };
  if (c.kind == ChartKind::bars && x_axis) {
    const double n = static_cast<double>(std::max<size_t>(1, c.categories.size()));
    Range r{-0.5, n - 0.5};
    return r;
  }
  if (c.kind == ChartKind::bars && c.stacked && !x_axis) {
    for (double top : stack_tops(c)) take(top);
  } else {
    for (const Series& s : c.series) {
      const std::vector<double>& v = x_axis ? s.x : s.y;
      const std::vector<double>& other = x_axis ? s.y : s.x;
      const Axis& oax = x_axis ? c.y : c.x;
      for (size_t k = 0; k < v.size(); ++k)
        if (k < other.size() && plottable(other[k], oax.scale)) take(v[k]);
    }
  }
  for (const RefLine& l : c.ref_lines)
    if (l.vertical == x_axis) take(l.value);
  for (const Marker& m : c.markers) {
    if (x_axis) take(m.x);
    else if (m.y) take(*m.y);
  }
  for (const Annotation& a : c.annotations) take(x_axis ? a.x : a.y);
  if (c.kind == ChartKind::bars && !x_axis && ax.scale == Scale::linear) take(0);
  if (ax.include_zero && ax.scale == Scale::linear) take(0);

  Range r;
  const bool log = ax.scale != Scale::linear;
  if (!(lo <= hi)) {
    r = log ? Range{1, 10} : Range{0, 1};
  } else if (log) {
    double span = std::log(hi / lo);
    if (span <= 0) {
      r = {lo / 2, hi * 2};
    } else {
      const double pad = std::exp(span * 0.06);
      r = {lo / pad, hi * pad};
    }
  } else {
    double span = hi - lo;
    if (span <= 0) span = lo != 0 ? std::fabs(lo) * 0.2 : 1.0;
    const double pad = span * 0.06;
    r = {lo == 0 && (ax.include_zero || c.kind == ChartKind::bars) ? 0.0 : lo - pad, hi + pad};
    if (hi == lo) r = {lo - span / 2, hi + span / 2};
  }
  if (ax.min && plottable(*ax.min, ax.scale)) r.lo = *ax.min;
  if (ax.max && plottable(*ax.max, ax.scale)) r.hi = *ax.max;
  if (!r.valid()) r = log ? Range{std::max(r.lo, 1e-30), std::max(r.lo, 1e-30) * 10} : Range{r.lo, r.lo + 1};
  if (!r.valid()) r = log ? Range{1, 10} : Range{0, 1};
  return r;
}

// ---- CSV ------------------------------------------------------------------------

namespace {

std::string num(double v) {
  if (std::isnan(v)) return "";
  char buf[40];
  std::snprintf(buf, sizeof buf, "%.17g", v);
  return buf;
}

double parse_num(const std::string& s, size_t line) {
  if (s.empty()) return std::numeric_limits<double>::quiet_NaN();
  char* end = nullptr;
  const double v = std::strtod(s.c_str(), &end);
  if (end == s.c_str() || *end != '\0')
    throw std::runtime_error("chart CSV line " + std::to_string(line) + ": '" + s + "' is not a number");
  return v;
}

}  // namespace

std::string axis_unit(const Axis& a) {
  if (!a.unit.empty()) return a.unit;
  return a.format == TickFormat::bytes || a.format == TickFormat::bytes_iec ? "bytes" : "";
}

std::string chart_to_csv(const ChartSpec& c) {
  // Added after the first six columns: readers of those keep working.
  std::string out = csv_row({"chart", "series", "x", "y", "label", "note", "x_name", "x_unit", "y_name", "y_unit"});
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const bool heat = c.kind == ChartKind::heatmap;
  const std::vector<std::string> axes{c.x.label, axis_unit(c.x), heat ? c.heatmap.value_label : c.y.label,
                                      heat ? c.heatmap.value_unit : axis_unit(c.y)};
  auto csv_row = [&](std::vector<std::string> cells) {
    cells.insert(cells.end(), axes.begin(), axes.end());
    return analysis::csv_row(cells);
  };
  if (heat) {
    const Heatmap& h = c.heatmap;
    for (size_t r = 0; r < h.row_labels.size(); ++r)
      for (size_t k = 0; k < h.col_labels.size(); ++k) {
        const size_t idx = r * h.col_labels.size() + k;
        out += csv_row({c.id, h.row_labels[r], num(k < h.col_values.size() ? h.col_values[k] : static_cast<double>(k)),
                        num(idx < h.values.size() ? h.values[idx] : nan), h.col_labels[k],
                        idx < h.cell_text.size() ? h.cell_text[idx] : ""});
      }
  }
  for (const Series& s : c.series)
    for (size_t k = 0; k < s.x.size(); ++k) {
      const std::string point = k < s.point_labels.size() ? s.point_labels[k] : "";
      std::string label = point, note;
      if (c.kind == ChartKind::bars) {
        const size_t cat = static_cast<size_t>(std::max(0.0, s.x[k]));
        label = cat < c.categories.size() ? c.categories[cat] : "";
        note = point;
      }
      const double y = k < s.y.size() ? s.y[k] : nan;
      if (std::isnan(y) && k < s.point_notes.size() && !s.point_notes[k].empty()) note = s.point_notes[k];
      out += csv_row({c.id, s.name, num(s.x[k]), num(y), label, note});
    }
  for (const RefLine& l : c.ref_lines)
    out += csv_row({c.id, "ref: " + l.label, l.vertical ? num(l.value) : (l.from_x ? num(*l.from_x) : ""),
                    l.vertical ? "" : num(l.value), l.label, l.vertical ? "vertical" : "horizontal"});
  for (const Marker& m : c.markers)
    out += csv_row({c.id, "marker: " + m.label, num(m.x), m.y ? num(*m.y) : "", m.label, "marker"});
  return out;
}

std::vector<Series> chart_series_from_csv(const std::string& text) {
  const auto rows = csv_parse(text);
  if (rows.empty() || rows.front().size() < 6 || rows.front()[0] != "chart" || rows.front()[1] != "series")
    throw std::runtime_error("chart CSV: the header must begin chart,series,x,y,label,note");
  std::vector<Series> out;
  for (size_t n = 1; n < rows.size(); ++n) {
    const auto& row = rows[n];
    if (row.size() == 1 && row[0].empty()) continue;  // trailing blank line
    if (row.size() < 6)
      throw std::runtime_error("chart CSV line " + std::to_string(n + 1) + ": expected 6 fields, got " +
                               std::to_string(row.size()));
    const std::string& name = row[1];
    if (name.rfind("ref: ", 0) == 0 || name.rfind("marker: ", 0) == 0) continue;
    if (out.empty() || out.back().name != name) {
      out.emplace_back();
      out.back().name = name;
    }
    Series& s = out.back();
    s.x.push_back(parse_num(row[2], n + 1));
    s.y.push_back(parse_num(row[3], n + 1));
    s.point_labels.push_back(row[4]);
  }
  for (Series& s : out)
    if (std::all_of(s.point_labels.begin(), s.point_labels.end(), [](const std::string& l) { return l.empty(); }))
      s.point_labels.clear();
  return out;
}

}  // namespace flashlab::analysis
