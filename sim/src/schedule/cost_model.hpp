// Internal: the cost of every piece of a loop nest, derived from its emission.
//
// Each piece's counters are bilinear in the extents of its block — r rows of
// Q_i, c rows of K_j, for a fixed d and dtype — so four emissions of the piece
// on probe blocks (r, c) ∈ {1, 2}² give its exact polynomial
//     cost(r, c) = k0 + k_r·r + k_c·c + k_rc·r·c.
// Summing a set of pieces is then evaluating the polynomial at the set's
// BlockMoments (how many, Σ r, Σ c, Σ r·c). The loop nest is never restated:
// a piece that is not bilinear makes the closed-form tests fail.
#pragma once

#include <memory>
#include <vector>

#include "flashlab/sim/schedule/counters.hpp"
#include "loop_nest.hpp"

namespace flashlab::sim::detail {

struct PieceCost {
  Counters k0, k_r, k_c, k_rc;
  // Σ of the piece's cost over a set of blocks; throws OverflowError.
  Counters at(const BlockMoments& m) const;
  // Events of one piece: the cursor needs them independent of the block size.
  i64 events() const { return k0.events; }
};

struct PhaseCosts {
  PieceCost outer_begin, outer_end;  // evaluated at the outer iteration's extent
  PieceCost first_visit;             // a visit of the phase's first outer iteration
  PieceCost visit;                   // any later visit (zero in a phase without visits)
};

class CostModel {
 public:
  // Derives every phase's piece costs for problems of this head dim, dtype and
  // masking (the loop nest may depend on them); throws std::logic_error when a
  // piece's event count depends on the block size, or an outer piece on the
  // inner block's (each phase's own outer loop says which block is inner). A
  // phase without visits has zero visit costs.
  CostModel(const LoopNest& nest, const AttentionProblem& p, StorageTypes storage);
  const PhaseCosts& phase(int ph) const { return phases_[static_cast<size_t>(ph)]; }

  // The derived costs of (algorithm, d, dtype, causal, storage), shared: a
  // sweep over N derives them once.
  static std::shared_ptr<const CostModel> shared(Algorithm a, const LoopNest& nest, const AttentionProblem& p,
                                                 StorageTypes storage);

 private:
  std::vector<PhaseCosts> phases_;
};

}  // namespace flashlab::sim::detail
