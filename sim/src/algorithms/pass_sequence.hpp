// The loop nest of the algorithms that materialise their N × N intermediates
// (materialized.cpp, materialized_bwd.cpp): a sequence of passes over the
// blocks, each a phase of its own with its own title, every intermediate
// written to HBM by one pass and read back by a later one.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "schedule/loop_nest.hpp"

namespace flashlab::sim::detail {

// One pass: what it computes (the file's own enum), its pseudocode line, its
// elementwise work per element of the tile it writes, and what the
// step-through's title says of it.
template <class Kind>
struct PassSpec {
  Kind kind;
  int line;
  i64 flops_per_element;
  std::string_view what;  // "S = QKᵀ, written to HBM"
};

// How the titles count the passes: an algorithm's "pass 2/3: …", or eager
// PyTorch's launches "kernel 4: …" (a causal problem launches one more).
enum class PassCount { of_total, kernels };

template <class Kind>
class PassSequence : public LoopNest {
 public:
  PassSequence(const AlgorithmInfo& info, std::vector<PassSpec<Kind>> passes, PassCount count)
      : LoopNest(info), passes_(std::move(passes)) {
    const std::string total = std::to_string(passes_.size());
    for (std::size_t k = 0; k < passes_.size(); ++k)
      titles_.push_back((count == PassCount::kernels ? "kernel " + std::to_string(k + 1)
                                                     : "pass " + std::to_string(k + 1) + "/" + total) +
                        ": " + std::string(passes_[k].what));
  }

  int phases() const override { return static_cast<int>(passes_.size()); }
  std::string_view phase_title(int ph) const override { return titles_[static_cast<std::size_t>(ph)]; }

 protected:
  const PassSpec<Kind>& spec(int ph) const { return passes_[static_cast<std::size_t>(ph)]; }

  // An elementwise pass over a materialised tile: read it from HBM, apply
  // `flops` of work in place, write it back.
  static void in_place(Emitter& e, int line, const TileRef& t, i64 flops) {
    e.load(line, t);
    e.compute(line, t, {t}, 0, flops, 0);
    e.store(line, t);
    e.free(line, {t});
  }

 private:
  std::vector<PassSpec<Kind>> passes_;
  std::vector<std::string> titles_;
};

}  // namespace flashlab::sim::detail
