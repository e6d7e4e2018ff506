// Results as JSON objects, CSV rows and plain-text tables: the printers every
// front end shares.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/sweep.hpp"

namespace flashlab::analysis {

nlohmann::json problem_json(const sim::AttentionProblem& p);
// The `flashlab sim --json` object: algorithm, problem, tiles, hbm, l2, sram,
// flops, arithmetic_intensity, roofline, problems, ...
nlohmann::json sim_json(const sim::SimResult& r, const sim::HardwareModel& hw);

// One CSV layout for sweeps and comparisons (header, then one row per result).
std::vector<std::string> result_csv_header();
std::vector<std::string> result_csv_fields(const sim::SimResult& r, const RooflineEstimate& roof,
                                           const std::string& axis, i64 value, double theta_standard,
                                           double theta_flash);

// A fixed-width text table: left-aligned first column, right-aligned others.
class TextTable {
 public:
  explicit TextTable(std::vector<std::string> header) : header_(std::move(header)) {}
  void add(std::vector<std::string> row) { rows_.push_back(std::move(row)); }
  std::string str() const;

 private:
  std::vector<std::string> header_;
  std::vector<std::vector<std::string>> rows_;
};

std::string fixed(double v, int decimals);  // printf("%.*f")

// The algorithms' names (their CLI keys) joined: "standard, pytorch, fa1, fa2".
std::string algorithm_keys(const std::vector<sim::Algorithm>& algos, const std::string& separator = ", ");

}  // namespace flashlab::analysis
