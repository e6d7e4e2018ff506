// The one list of algorithms. Each entry's record and loop nest live in the
// algorithm's own file (fa1.cpp, fa2.cpp, materialized.cpp).
#include "flashlab/sim/algorithm.hpp"

#include <stdexcept>

#include "loop_nest.hpp"

namespace flashlab::sim {

namespace detail {

namespace {
const std::vector<const AlgorithmEntry*>& entries() {
  static const std::vector<const AlgorithmEntry*> all{&standard_entry(), &pytorch_entry(), &fa1_entry(),
                                                      &fa2_entry()};
  return all;
}
}  // namespace

const AlgorithmEntry& entry(Algorithm a) {
  for (const AlgorithmEntry* e : entries())
    if (e->info.id == a) return *e;
  throw std::logic_error("algorithm " + std::to_string(static_cast<int>(a)) + " has no entry in the algorithm table");
}

}  // namespace detail

const AlgorithmInfo& algorithm_info(Algorithm a) { return detail::entry(a).info; }

const std::vector<Algorithm>& all_algorithms() {
  static const std::vector<Algorithm> all = [] {
    std::vector<Algorithm> v;
    for (const detail::AlgorithmEntry* e : detail::entries()) v.push_back(e->info.id);
    return v;
  }();
  return all;
}

}  // namespace flashlab::sim
