// The implementations a results file measures — FlashLab's rungs and
// PyTorch's three — as a student names them, each with one colour that every
// chart keeps. A rung's backward takes its forward's colour (the line style
// tells the pass). An id not in the table keeps its id and a colour of its own.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/chart.hpp"

namespace flashlab::analysis {

struct Implementation {
  std::string_view id;      // what results files hold: "fa2_tc", "sdpa_cudnn"
  std::string_view name;    // what a legend reads: "FlashAttention-2 (tensor cores)"
  std::string_view family;  // the forward of a backward rung ("fa2_tc" for "fa2_tc_bwd"); else the id
  int colour = 0;           // palette() slot of the family
};

const std::vector<Implementation>& implementations();
const Implementation* find_implementation(const std::string& id);  // nullptr when unknown

// "PyTorch SDPA (cuDNN)"; an unknown id as given.
std::string implementation_name(const std::string& id);
// The legend of a run: its name, with " backward" when the id names no pass
// of its own (PyTorch's rows: "PyTorch eager backward").
std::string run_name(const std::string& id, const std::string& direction);
// The family's colour; an unknown id a colour outside the table's, the same in every chart.
Color implementation_colour(const std::string& id);
// PyTorch's rows (eager, SDPA) rather than FlashLab's.
bool is_pytorch(const std::string& id);

}  // namespace flashlab::analysis
