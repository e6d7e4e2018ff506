// One algorithm on one problem for a pass selection: its forward, its
// backward, or both as a training step. Each pass is simulated on its own —
// with its own tiles, its own launch through the L2 — and the step's totals
// are their sums: requests, DRAM bytes, FLOPs, and the lower-bound time as
// the sum of each pass's bound (the passes run one after the other).
#pragma once

#include <string>
#include <vector>

#include "flashlab/analysis/model/roofline.hpp"

namespace flashlab::analysis {

struct PassPart {
  sim::SimResult result;
  RooflineEstimate roof;  // of this pass alone (valid when result.ok())
};

struct PassRun {
  sim::Algorithm family = sim::Algorithm::fa2;  // the forward algorithm
  sim::PassSelection passes = sim::PassSelection::fwd;
  sim::AttentionProblem problem;
  std::vector<PassPart> parts;  // the forward first, then the backward
  // Sums over the parts (valid when ok()).
  sim::Counters total;
  i64 dram_read_bytes = 0, dram_write_bytes = 0;
  RooflineEstimate roof;  // flops, bytes and times summed; ai = flops / DRAM bytes

  bool ok() const;
  std::vector<std::string> errors() const;    // "fa2_bwd: ..." for each failing part
  std::vector<std::string> messages() const;  // every part's findings, named
  std::string label() const;                  // "fa2", "fa2_bwd", "fa2 fwd+bwd"
  i64 dram_bytes() const { return dram_read_bytes + dram_write_bytes; }
};

// The algorithms a selection runs for algorithm `a` (a forward or a backward
// one: its family is used), forward first. Throws std::invalid_argument when
// the family has no algorithm for a pass asked for.
std::vector<sim::Algorithm> pass_algorithms(sim::Algorithm a, sim::PassSelection passes);

// What a selection of `a`'s family shows: `a` itself when the selection is its
// own pass, the same family's algorithm of the other pass, or both.
PassRun simulate_passes(sim::Algorithm a, sim::PassSelection passes, const sim::AttentionProblem& p,
                        const sim::HardwareModel& hw, const sim::SimOptions& options = {});

// A sum of per-pass estimates: FLOPs, bytes and times add; the bound is the
// sum of the bounds (each pass is limited by its own resource).
RooflineEstimate sum_estimates(const std::vector<RooflineEstimate>& parts, double convention_flops);

}  // namespace flashlab::analysis
