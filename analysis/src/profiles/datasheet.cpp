#include "flashlab/analysis/profiles/datasheet.hpp"

#include <algorithm>
#include <cctype>
#include <set>

namespace flashlab::analysis {

namespace {

std::vector<std::string> tokens(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (unsigned char c : s + " ") {
    if (std::isalnum(c)) {
      cur += static_cast<char>(std::tolower(c));
    } else if (!cur.empty()) {
      if (cur != "nvidia") out.push_back(cur);
      cur.clear();
    }
  }
  return out;
}

bool has_digit(const std::string& s) {
  return std::any_of(s.begin(), s.end(), [](unsigned char c) { return std::isdigit(c); });
}

}  // namespace

std::optional<sim::HardwareModel> match_datasheet(const std::string& gpu_name, sim::i64 sm_count,
                                                  const std::vector<sim::HardwareModel>& candidates) {
  const std::vector<std::string> want = tokens(gpu_name);
  const auto model = std::find_if(want.begin(), want.end(), has_digit);  // "h100", "a100", "4090", "t4"
  if (model == want.end()) return std::nullopt;
  const std::set<std::string> want_set(want.begin(), want.end());
  std::optional<sim::HardwareModel> best;
  size_t best_score = 0;
  for (const sim::HardwareModel& hw : candidates) {
    // A file without the SM count (a CSV of PyTorch's) is matched by name alone.
    if (hw.kind != "datasheet" || (sm_count > 0 && hw.sm_count != sm_count)) continue;
    std::set<std::string> have;
    for (const std::string& t : tokens(hw.name + " " + hw.display_name)) have.insert(t);
    if (!have.count(*model)) continue;
    size_t score = 0;
    for (const std::string& t : have) score += want_set.count(t);
    if (score > best_score) {
      best_score = score;
      best = hw;
    }
  }
  return best;
}

std::optional<sim::HardwareModel> results_hardware(const sim::RunMeta& meta,
                                                   const std::vector<sim::HardwareModel>& candidates) {
  std::optional<sim::HardwareModel> hw = match_datasheet(meta.gpu, meta.sm_count, candidates);
  if (hw && meta.l2_bytes > 0) hw->l2_bytes = meta.l2_bytes;
  return hw;
}

std::vector<sim::HardwareModel> datasheet_presets() {
  std::vector<sim::HardwareModel> out;
  for (const std::string& n : sim::list_presets()) {
    try {
      sim::HardwareModel hw = sim::load_hardware(n);
      if (hw.kind == "datasheet") out.push_back(std::move(hw));
    } catch (const sim::HardwareError&) {
      // A broken preset is reported by `flashlab hw list`; it cannot be a datasheet here.
    }
  }
  return out;
}

std::optional<double> datasheet_value(const sim::HardwareModel& hw, const sim::FigureSpec& s) {
  using sim::Quantity;
  double v = 0;
  switch (s.quantity) {
    case Quantity::hbm_bandwidth: v = hw.hbm_bandwidth; break;
    case Quantity::l2_bandwidth: v = hw.l2_bandwidth; break;
    case Quantity::smem_bandwidth: v = hw.sram_bandwidth; break;
    case Quantity::flops: v = hw.peak(s.dtype, s.unit); break;
  }
  return v > 0 ? std::optional<double>(v) : std::nullopt;
}

double rate_at_clock(double peak, double datasheet_clock_mhz, double clock_mhz) {
  return datasheet_clock_mhz > 0 && clock_mhz > 0 ? peak * clock_mhz / datasheet_clock_mhz : peak;
}

}  // namespace flashlab::analysis
