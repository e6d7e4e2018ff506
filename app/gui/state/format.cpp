#include "format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>

#include "flashlab/analysis/charts/chart.hpp"

namespace flashlab::gui {

namespace {

ScreenChecks* g_checks = nullptr;

bool finite_or_count(double v, const char* where) {
  if (std::isfinite(v)) return true;
  if (g_checks) {
    if (g_checks->nonfinite++ == 0) g_checks->first_nonfinite = where;
  }
  return false;
}

}  // namespace

void set_screen_checks(ScreenChecks* checks) { g_checks = checks; }

std::string fmt_bytes(double bytes, const char* where) {
  if (!finite_or_count(bytes, where)) return "—";
  return analysis::format_tick(bytes, analysis::TickFormat::bytes);
}

std::string fmt_count(i64 v) { return sim::group_digits(v); }

std::string fmt_si(double v, const char* unit, const char* where) {
  if (!finite_or_count(v, where)) return "—";
  std::string s = analysis::format_tick(v, analysis::TickFormat::si);
  // "312T" + "FLOP/s" -> "312 TFLOP/s"
  std::string prefix;
  while (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) {
    prefix.insert(prefix.begin(), s.back());
    s.pop_back();
  }
  return s + " " + prefix + unit;
}

std::string fmt_fixed(double v, int decimals, const char* where) {
  if (!finite_or_count(v, where)) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string fmt_ms(double ms, const char* where) {
  if (!finite_or_count(ms, where)) return "—";
  return sim::duration(ms * 1e-3);
}

std::string fmt_ratio(double r, const char* where, int decimals) {
  if (!finite_or_count(r, where)) return "—";
  if (std::fabs(r) >= 1000) return fmt_si(r, "×", where);
  // A ratio above zero that rounds to it (138 MB over 150 TB) is not zero: said as under the last digit.
  const double last = std::pow(10.0, -decimals);
  if (r > 0 && r < last / 2) return "< " + fmt_fixed(last, decimals, where) + "×";
  return fmt_fixed(r, std::fabs(r) < 10 ? decimals : 1, where) + "×";
}

std::string fmt_stat(double v, const char* where) {
  if (std::isinf(v) && v < 0) return "−∞";
  if (!finite_or_count(v, where)) return "—";
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.4f", v);
  return buf;
}

std::string short_title(sim::Algorithm a) {
  const std::string_view title = sim::algorithm_info(a).title;
  return std::string(title.substr(0, title.find(" (")));
}

std::string title_in_sentence(sim::Algorithm a) {
  std::string s = short_title(a);
  const auto word_end = s.begin() + static_cast<std::ptrdiff_t>(std::min(s.find(' '), s.size()));
  const bool capitalised = s.size() > 1 && std::isupper(static_cast<unsigned char>(s[0])) &&
                           std::all_of(s.begin() + 1, word_end, [](char c) { return std::islower(static_cast<unsigned char>(c)) != 0; });
  if (capitalised) s[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(s[0])));
  return s;
}

}  // namespace flashlab::gui
