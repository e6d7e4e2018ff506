// A GPU's datasheet beside what was measured on it: which preset that is, the
// datasheet's figure for what a micro-benchmark measures, a peak at another
// SM clock.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "flashlab/sim/hardware/measured_profile.hpp"
#include "flashlab/sim/measurement/measurement.hpp"

namespace flashlab::analysis {

// The datasheet preset of this GPU: same SM count (any, when sm_count is 0), and the best overlap of name
// tokens that includes the model ("H100", "A100", "4090"). Measured profiles
// among the candidates are ignored.
std::optional<sim::HardwareModel> match_datasheet(const std::string& gpu_name, sim::i64 sm_count,
                                                  const std::vector<sim::HardwareModel>& candidates);
// The hardware a results file ran on, as the model needs it: the datasheet
// preset of its GPU (match_datasheet) with the SM count and L2 size the run
// recorded. nullopt when no preset matches.
std::optional<sim::HardwareModel> results_hardware(const sim::RunMeta& meta,
                                                   const std::vector<sim::HardwareModel>& candidates);
// Every datasheet preset of the assets folder (sim::list_presets()).
std::vector<sim::HardwareModel> datasheet_presets();

// The datasheet's figure for what `spec` measures; nullopt when the datasheet
// does not give one (e.g. L2 bandwidth).
std::optional<double> datasheet_value(const sim::HardwareModel& datasheet, const sim::FigureSpec& spec);
// A datasheet peak scaled to another SM clock (peaks are SMs × work/clock × clock).
double rate_at_clock(double datasheet_peak, double datasheet_clock_mhz, double clock_mhz);

}  // namespace flashlab::analysis
