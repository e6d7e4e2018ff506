// The implementations a results file measures — FlashLab's rungs and
// PyTorch's three — as a student names them, each with one colour that every
// chart keeps. The one table of colours: a model algorithm of the simulator is
// drawn in the colour of the row that implements it (standard attention in
// naive_cublas's, FlashAttention-2 in fa2's, eager PyTorch's unfused model in
// torch_eager's), so a model point and its measurement read alike. A backward
// takes its forward's colour (the line style or an open marker tells the pass).
// An id not in the table keeps its id and a colour of its own. A student's
// own kernel (`flashlab bench --kernel-file`, ids "user:NAME") is named
// "NAME (your kernel)" and drawn in a colour of its own list, outside the
// table's and the unknown ids'.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/analysis/charts/chart.hpp"
#include "flashlab/sim/problem/algorithm.hpp"

namespace flashlab::analysis {

struct Implementation {
  std::string_view id;      // what results files hold: "fa2_tc", "sdpa_cudnn"
  std::string_view name;    // what a legend reads: "FlashAttention-2 (tensor cores)"
  std::string_view family;  // the forward of a backward rung ("fa2_tc" for "fa2_tc_bwd"); else the id
  int colour = 0;           // palette() slot of the family
  // The simulator's algorithm (its key) that model charts draw in this row's
  // colour: at most one row per algorithm. Empty for a rung drawn beside its
  // model's own rung (fa2_tc, fa3_hopper beside fa2) and for PyTorch's SDPA.
  std::string_view model;
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
// A model algorithm's colour in every chart and in the GUI: the colour of the
// row whose `model` it is, else its forward's (fa1_bwd: fa1's).
Color algorithm_colour(sim::Algorithm a);
// The row that gives `a` its colour (its forward's for a backward without one); nullptr when none.
const Implementation* implementation_of(sim::Algorithm a);
// PyTorch's rows (eager, SDPA) rather than FlashLab's.
bool is_pytorch(const std::string& id);
// A student's own kernel: "user:NAME".
bool is_user_kernel(const std::string& id);

}  // namespace flashlab::analysis
