// The first head's reads along the schedule, split by the L2 model's visit trace.
#include <algorithm>
#include <map>
#include <tuple>

#include "flashlab/sim/memory/l2.hpp"

namespace flashlab::sim {

namespace {

// Read requests of a range of pieces: loads from HBM and from L2 (the L2 model's requests).
double reads_of(const Counters& c) {
  return static_cast<double>(c.level(Level::HBM).read_bytes + c.level(Level::L2).read_bytes);
}

}  // namespace

TracedReads::TracedReads(const Schedule& s, const L2Result& r) {
  if (!r.modelled) {
    why_not_ = r.why_not.empty() ? "the L2 is not modelled" : r.why_not;
    return;
  }
  const i64 n = s.outer_count();
  if (r.visit_index.size() != static_cast<size_t>(n) + 1 || r.visits.size() != static_cast<size_t>(r.visit_index.back())) {
    why_not_ = "the L2 model kept no per-visit trace of the first head (more than " +
               std::to_string(L2Result::kMaxTracedVisits) + " visits, or not asked for)";
    return;
  }
  visit_index_ = r.visit_index;
  requested_.assign(r.visits.size(), 0.0f);
  from_dram_.assign(r.visits.size(), 0.0f);
  outer_prefix_.assign(static_cast<size_t>(n) + 1, ReadSplit{});
  // A visit's reads depend on its pass and its block's extents only: count each kind once.
  std::map<std::tuple<int, i64, i64, bool>, double> visit_reads;
  const TileGrid& g = s.grid();
  for (i64 o = 0; o < n; ++o) {
    const i64 visits = s.visit_count(o);
    const double begin_reads = visits > 0 ? reads_of(s.cost_of_outer_begin(o)) : 0.0;
    ReadSplit sum = outer_prefix_[static_cast<size_t>(o)];
    for (i64 k = 0; k < visits; ++k) {
      const auto [i, j] = s.visit_block(o, k);
      const auto key = std::make_tuple(s.phase_of(o), g.rows(i), g.cols(j), g.partially_masked(i, j));
      auto it = visit_reads.find(key);
      if (it == visit_reads.end()) it = visit_reads.emplace(key, reads_of(s.cost_of_visits(o, k, k + 1))).first;
      const double req = it->second + (k == 0 ? begin_reads : 0.0);
      const size_t at = static_cast<size_t>(r.visit_index[static_cast<size_t>(o)] + k);
      const double dram = req * static_cast<double>(std::clamp(r.visits[at].dram_share, 0.0f, 1.0f));
      requested_[at] = static_cast<float>(req);
      from_dram_[at] = static_cast<float>(dram);
      // Summed as stored, so that a prefix within an outer iteration meets the next one's start.
      sum.request_bytes += static_cast<double>(requested_[at]);
      sum.dram_bytes += static_cast<double>(from_dram_[at]);
    }
    outer_prefix_[static_cast<size_t>(o) + 1] = sum;
  }
}

ReadSplit TracedReads::before(i64 o, i64 k) const {
  if (!available() || o < 0) return {};
  const i64 n = static_cast<i64>(outer_prefix_.size()) - 1;
  if (o >= n) return outer_prefix_.back();
  ReadSplit out = outer_prefix_[static_cast<size_t>(o)];
  const i64 first = visit_index_[static_cast<size_t>(o)], last = visit_index_[static_cast<size_t>(o) + 1];
  const i64 end = first + std::clamp<i64>(k, 0, last - first);
  for (i64 at = first; at < end; ++at) {
    out.request_bytes += static_cast<double>(requested_[static_cast<size_t>(at)]);
    out.dram_bytes += static_cast<double>(from_dram_[static_cast<size_t>(at)]);
  }
  return out;
}

ReadSplit TracedReads::total() const { return available() ? outer_prefix_.back() : ReadSplit{}; }

}  // namespace flashlab::sim
