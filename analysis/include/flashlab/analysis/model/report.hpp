// Results as JSON objects, CSV rows and plain-text tables: the printers every
// front end shares.
#pragma once

#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "flashlab/analysis/model/sweep.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::analysis {

nlohmann::json problem_json(const sim::AttentionProblem& p);
// The L2 model's result as JSON: modelled, why_not, l2_bytes, method, launch,
// per tensor and in total the requests, L2 read hits and DRAM bytes (DRAM
// writes include what is still dirty at the end), and the read hit rate.
nlohmann::json l2_json(const sim::L2Result& l2);
// The `flashlab sim --json` object: algorithm, problem, tiles, hbm (requests
// to global memory: the paper's HBM accesses), gemm_l2_rereads, l2 (the L2
// model, l2_json), dram (what reaches DRAM after it), sram, flops,
// arithmetic_intensity, roofline, problems, ...
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

using sim::fixed;  // printf("%.*f"), the one formatter (sim/core/format.hpp)

// The algorithms' names (their CLI keys) joined: "standard, pytorch, fa1, fa2".
std::string algorithm_keys(const std::vector<sim::Algorithm>& algos, const std::string& separator = ", ");

}  // namespace flashlab::analysis
