#include "flashlab/sim/core/closest_name.hpp"

#include <algorithm>
#include <cctype>

namespace flashlab::sim {
namespace {

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Optimal string alignment distance: Levenshtein plus the swap of two neighbours.
std::size_t edits(const std::string& a, const std::string& b) {
  const std::size_t n = a.size(), m = b.size();
  std::vector<std::vector<std::size_t>> d(n + 1, std::vector<std::size_t>(m + 1));
  for (std::size_t i = 0; i <= n; ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= m; ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= n; ++i)
    for (std::size_t j = 1; j <= m; ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1]) d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[n][m];
}

}  // namespace

std::optional<std::string> closest_name(const std::string& typed, const std::vector<std::string>& known) {
  const std::string t = lower(typed);
  std::optional<std::string> best;
  std::size_t best_edits = 0;
  for (const std::string& k : known) {
    const std::string l = lower(k);
    if (l == t) return std::nullopt;
    const std::size_t e = edits(t, l);
    const std::size_t limit = std::max<std::size_t>(1, std::max(t.size(), l.size()) / 3);
    if (e <= limit && (!best || e < best_edits)) {
      best = k;
      best_edits = e;
    }
  }
  return best;
}

std::string did_you_mean(const std::string& typed, const std::vector<std::string>& known) {
  const auto c = closest_name(typed, known);
  return c ? " (did you mean " + *c + "?)" : std::string();
}

}  // namespace flashlab::sim
