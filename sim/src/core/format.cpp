#include "flashlab/sim/core/format.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>

namespace flashlab::sim {

std::string group_digits(i64 v) {
  const bool neg = v < 0;
  std::string digits = std::to_string(v);
  if (neg) digits.erase(0, 1);
  std::string out;
  int n = 0;
  for (auto it = digits.rbegin(); it != digits.rend(); ++it) {
    if (n > 0 && n % 3 == 0) out.insert(out.begin(), ',');
    out.insert(out.begin(), *it);
    ++n;
  }
  return neg ? "-" + out : out;
}

std::string shortest(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  char buf[40];
  for (int precision : {15, 16, 17}) {
    std::snprintf(buf, sizeof buf, "%.*g", precision, v);
    if (std::strtod(buf, nullptr) == v) break;
  }
  return buf;
}

std::string fixed(double v, int decimals) {
  char buf[64];
  std::snprintf(buf, sizeof buf, "%.*f", decimals, v);
  return buf;
}

std::string si(double v, int digits) {
  static const char* prefixes[] = {"", "K", "M", "G", "T", "P", "E"};
  int k = 0;
  double a = std::fabs(v);
  while (a >= 1000.0 && k < 6) {
    a /= 1000.0;
    v /= 1000.0;
    ++k;
  }
  char buf[64];
  const int decimals = a >= 100 ? std::max(0, digits - 3) : a >= 10 ? std::max(0, digits - 2) : digits - 1;
  std::snprintf(buf, sizeof buf, "%.*f%s", decimals, v, prefixes[k]);
  return buf;
}

std::string si_unit(double v, const char* unit) {
  std::string s = v == 0 ? "0" : si(v);
  if (!s.empty() && std::isalpha(static_cast<unsigned char>(s.back()))) s.insert(s.size() - 1, " ");
  else s += " ";
  return s + unit;
}

std::string duration(double seconds) {
  const double ms = seconds * 1e3;
  char buf[64];
  if (!std::isfinite(ms)) return shortest(seconds);
  if (std::fabs(seconds) >= 7200) std::snprintf(buf, sizeof buf, "%.1f h", seconds / 3600);
  else if (std::fabs(seconds) >= 120) std::snprintf(buf, sizeof buf, "%.0f min", seconds / 60);
  else if (std::fabs(seconds) >= 10) std::snprintf(buf, sizeof buf, "%.1f s", seconds);
  else if (std::fabs(ms) >= 1000) std::snprintf(buf, sizeof buf, "%.2f s", seconds);
  else if (std::fabs(ms) >= 1) std::snprintf(buf, sizeof buf, "%.2f ms", ms);
  else if (std::fabs(ms) >= 1e-3) std::snprintf(buf, sizeof buf, "%.1f µs", ms * 1e3);
  else std::snprintf(buf, sizeof buf, "%.0f ns", ms * 1e6);
  return buf;
}

std::string bytes_iec(double bytes) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB", "EiB"};
  int k = 0;
  while (std::fabs(bytes) >= 1024.0 && k < 6) {
    bytes /= 1024.0;
    ++k;
  }
  char buf[64];
  if (k == 0 || std::fabs(bytes - std::round(bytes)) < 1e-9)
    std::snprintf(buf, sizeof buf, "%.0f %s", bytes, units[k]);
  else
    std::snprintf(buf, sizeof buf, "%.2f %s", bytes, units[k]);
  return buf;
}

std::optional<i64> parse_whole(const std::string& text) {
  try {
    std::size_t used = 0;
    const long long v = std::stoll(text, &used);
    if (used == text.size()) return v;
  } catch (const std::logic_error&) {  // std::invalid_argument, std::out_of_range
  }
  return std::nullopt;
}

std::optional<i64> parse_size(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  size_t pos = 0;
  while (pos < s.size() && (std::isdigit(static_cast<unsigned char>(s[pos])) || s[pos] == '.')) ++pos;
  if (pos == 0) return std::nullopt;
  const std::string number(s.substr(0, pos));
  if (std::count(number.begin(), number.end(), '.') > 1 || number == ".") return std::nullopt;
  std::string suffix(s.substr(pos));
  for (char& c : suffix) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  long double mult = 1;
  if (suffix.empty() || suffix == "b") mult = 1;
  else if (suffix == "k" || suffix == "kib") mult = 1024.0L;
  else if (suffix == "m" || suffix == "mib") mult = 1024.0L * 1024;
  else if (suffix == "g" || suffix == "gib") mult = 1024.0L * 1024 * 1024;
  else if (suffix == "t" || suffix == "tib") mult = 1024.0L * 1024 * 1024 * 1024;
  else if (suffix == "kb") mult = 1e3L;
  else if (suffix == "mb") mult = 1e6L;
  else if (suffix == "gb") mult = 1e9L;
  else if (suffix == "tb") mult = 1e12L;
  else return std::nullopt;
  const long double value = std::strtold(number.c_str(), nullptr) * mult;
  if (!(value < 9.2e18L)) return std::nullopt;
  const long double rounded = std::floor(value + 0.5L);
  if (std::fabs(value - rounded) > 1e-6L) return std::nullopt;
  return static_cast<i64>(rounded);
}

}  // namespace flashlab::sim
