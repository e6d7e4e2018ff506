// The ring's passes as a bench times them: a series of runs back to back, its
// median reported, the forward's rung under the GPU's power limit
// (power_cap.hpp, ring_schedule.hpp's simulate_ring_timed).
#include "flashlab/sim/ring/ring_schedule.hpp"

namespace flashlab::sim {

RingSimulation simulate_ring_timed(const AttentionProblem& p, const RingTopology& topo, const RingComputeModel& cm,
                                   TimedSeries forward, TimedSeries backward, RingSeriesShares* shares) {
  RingSimulation at_boost = simulate_ring(p, topo, cm);
  if (shares) *shares = {};
  const RungTiming* f = ring_rung(cm, Pass::fwd, p.head_dim);
  const RungTiming* b = at_boost.backward ? ring_rung(cm, Pass::bwd, p.head_dim) : nullptr;
  const bool f_capped = f != nullptr && f->power_capped();
  const bool b_capped = b != nullptr && b->power_capped();
  if (!f_capped && !b_capped) return at_boost;
  RingComputeModel capped = cm;
  RingSeriesShares sh;
  // The pass's rung slowed: the model's own, or every entry of the set for
  // that rung at the head dim (one per mask where it has them).
  auto slow = [&](Pass pass, const RungTiming& t, double factor) {
    std::optional<RungTiming>& own = pass == Pass::fwd ? capped.forward_rung : capped.backward_rung;
    if (own || !capped.rung_set) {
      own = t.slowed(factor);
      return;
    }
    for (RungTiming& e : capped.rung_set->rungs)
      if (e.geometry.rung == t.geometry.rung && e.geometry.head_dim == t.geometry.head_dim) e = e.slowed(factor);
  };
  if (f_capped) {
    sh.forward = capped_shares(at_boost.forward.compute_s, f->boost_s, f->capped_rate, forward);
    slow(Pass::fwd, *f, capped_factor(sh.forward.median, f->capped_rate));
  }
  if (b_capped) {
    sh.backward = capped_shares(at_boost.backward->compute_s, b->boost_s, b->capped_rate, backward);
    slow(Pass::bwd, *b, capped_factor(sh.backward.median, b->capped_rate));
  }
  if (shares) *shares = sh;
  if (sh.forward.median == 0 && sh.backward.median == 0) return at_boost;
  return simulate_ring(p, topo, capped);
}

}  // namespace flashlab::sim
