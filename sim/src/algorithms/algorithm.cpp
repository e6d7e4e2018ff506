// The one list of algorithms. Each entry's record and loop nest live in the
// algorithm's own file (fa1.cpp, fa2.cpp, materialized.cpp and the backward
// ones: fa1_bwd.cpp, fa2_bwd.cpp, materialized_bwd.cpp).
#include "flashlab/sim/problem/algorithm.hpp"

#include <array>
#include <stdexcept>

#include "flashlab/sim/core/assets.hpp"
#include "schedule/loop_nest.hpp"

namespace flashlab::sim {

namespace detail {

namespace {
const std::vector<const AlgorithmEntry*>& entries() {
  static const std::vector<const AlgorithmEntry*> all{
      &standard_entry(),     &pytorch_entry(),     &fa1_entry(),     &fa2_entry(),
      &standard_bwd_entry(), &pytorch_bwd_entry(), &fa1_bwd_entry(), &fa2_bwd_entry()};
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
    for (Pass p : {Pass::fwd, Pass::bwd})
      for (const detail::AlgorithmEntry* e : detail::entries())
        if (e->info.pass == p) v.push_back(e->info.id);
    return v;
  }();
  return all;
}

const std::vector<Algorithm>& algorithms_of(Pass p) {
  static const std::array<std::vector<Algorithm>, 2> by_pass = [] {
    std::array<std::vector<Algorithm>, 2> v;
    for (Algorithm a : all_algorithms()) v[static_cast<size_t>(algorithm_info(a).pass)].push_back(a);
    return v;
  }();
  return by_pass[static_cast<size_t>(p)];
}

Algorithm forward_of(Algorithm a) {
  const AlgorithmInfo& i = algorithm_info(a);
  return i.pass == Pass::fwd ? a : i.forward;
}

std::optional<Algorithm> backward_of(Algorithm a) { return with_pass(a, Pass::bwd); }

std::optional<Algorithm> with_pass(Algorithm a, Pass p) {
  const Algorithm f = forward_of(a);
  for (Algorithm b : algorithms_of(p))
    if (forward_of(b) == f) return b;
  return std::nullopt;
}

std::string_view to_string(Algorithm a) { return algorithm_info(a).key; }

std::optional<Algorithm> parse_algorithm(std::string_view s) {
  const std::string l = lower(s);
  for (Algorithm a : all_algorithms()) {
    const AlgorithmInfo& info = algorithm_info(a);
    if (info.key == l) return a;
    for (std::string_view alias : info.aliases)
      if (alias == l) return a;
  }
  return std::nullopt;
}

}  // namespace flashlab::sim
