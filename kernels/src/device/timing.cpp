#include "flashlab/kernels/device/timing.hpp"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <stdexcept>

namespace flashlab::kernels {

int sized_repeats(const TimingOptions& o, double one_run_ms) {
  int repeats = o.repeats;
  if (one_run_ms > 0 && o.target_ms > 0) {
    const int wanted = static_cast<int>(std::ceil(o.target_ms / one_run_ms));
    repeats = std::max(repeats, std::min(o.max_repeats, wanted));
  }
  return repeats;
}

int repeats_after_warmups(const TimingOptions& o, int warmups, double last_warmup_ms) {
  return warmups > 0 ? sized_repeats(o, last_warmup_ms) : o.repeats;
}

std::size_t median_run(const std::vector<double>& times_ms) {
  if (times_ms.empty()) throw std::invalid_argument("median_run: no timed runs");
  std::vector<std::size_t> order(times_ms.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return times_ms[a] < times_ms[b]; });
  return order[order.size() / 2];
}

}  // namespace flashlab::kernels
