// The Hopper schedules' timing (hopper_pipeline.cpp, hopper_bwd_pipeline.cpp):
// a list of ops, each on one unit, with the ops it waits for; every unit
// serves its ops in the kernel's issue order. The times follow in one
// topological pass.
//
// A unit serves one op at a time, except a shared group: ops that run on the
// unit at once, each at an equal share of it while the others run (processor
// sharing) — two warpgroups whose instructions the warp schedulers interleave
// on the same CUDA cores and exponential units, or on the same load/store path.
#pragma once

#include <algorithm>
#include <deque>
#include <limits>
#include <stdexcept>
#include <utility>
#include <vector>

#include "flashlab/sim/hopper/hopper_pipeline.hpp"

namespace flashlab::sim::detail {

class PipeBuilder {
 public:
  // An op of `busy` ns at the unit's full rate; its result is usable `latency` ns after the unit is done.
  int add(PipeOp op, PipeUnit unit, int wg, double busy, double latency = 0) {
    Op o;
    o.iv.op = op;
    o.iv.unit = unit;
    o.iv.warpgroup = wg;
    o.iv.busy_ns = busy;
    o.iv.work_ns = busy;
    o.latency = latency;
    ops_.push_back(o);
    return static_cast<int>(ops_.size()) - 1;
  }
  PipeInterval& iv(int k) { return ops_[static_cast<size_t>(k)].iv; }
  void dep(int op, int on) {
    if (on >= 0) ops_[static_cast<size_t>(op)].deps.push_back(on);
  }
  // Ops that share their unit while they run at once. Give them consecutively in the unit's order.
  void share(const std::vector<int>& members) {
    const int g = static_cast<int>(groups_.size());
    groups_.push_back(members);
    for (int m : members) ops_[static_cast<size_t>(m)].group = g;
  }
  // Each unit serves in the order given: the previous op of its order is a dependency.
  void order(const std::vector<int>& seq) {
    for (size_t k = 1; k < seq.size(); ++k) unit_prev_.push_back({seq[k], seq[k - 1]});
  }
  // Times in one topological pass; throws std::logic_error on a cycle (an order that contradicts the waits).
  std::vector<PipeInterval> run() {
    const size_t n = ops_.size();
    std::vector<std::vector<int>> after(n);
    std::vector<int> indegree(n, 0);
    unit_pred_.assign(n, -1);
    for (size_t k = 0; k < n; ++k)
      for (int d : ops_[k].deps) {
        after[static_cast<size_t>(d)].push_back(static_cast<int>(k));
        ++indegree[k];
      }
    for (auto [op, pred] : unit_prev_) {
      const int g = ops_[static_cast<size_t>(op)].group;
      if (g >= 0 && g == ops_[static_cast<size_t>(pred)].group) continue;  // a group runs at once: no order inside it
      unit_pred_[static_cast<size_t>(op)] = pred;
      after[static_cast<size_t>(pred)].push_back(op);
      ++indegree[static_cast<size_t>(op)];
    }
    group_end_.assign(groups_.size(), 0);
    std::vector<size_t> group_ready(groups_.size(), 0);
    std::deque<int> ready;
    for (size_t k = 0; k < n; ++k)
      if (indegree[k] == 0) ready.push_back(static_cast<int>(k));
    size_t done = 0;
    auto release = [&](int k) {
      for (int a : after[static_cast<size_t>(k)])
        if (--indegree[static_cast<size_t>(a)] == 0) ready.push_back(a);
    };
    while (!ready.empty()) {
      const int k = ready.front();
      ready.pop_front();
      const int g = ops_[static_cast<size_t>(k)].group;
      if (g < 0) {
        time_alone(k);
        ++done;
        release(k);
        continue;
      }
      const std::vector<int>& members = groups_[static_cast<size_t>(g)];
      if (++group_ready[static_cast<size_t>(g)] < members.size()) continue;  // timed once every member may start
      time_shared(g);
      done += members.size();
      for (int m : members) release(m);
    }
    if (done != n) throw std::logic_error("the Hopper schedule's issue orders contradict its waits");
    std::vector<PipeInterval> out;
    out.reserve(n);
    for (const Op& o : ops_) out.push_back(o.iv);
    return out;
  }
  const PipeInterval& at(int k) const { return ops_[static_cast<size_t>(k)].iv; }

 private:
  struct Op {
    PipeInterval iv;
    double latency = 0;
    std::vector<int> deps;
    int group = -1;
  };

  // When the op before k in its unit's order leaves the unit free.
  double unit_free(int k) const {
    const int p = unit_pred_[static_cast<size_t>(k)];
    if (p < 0) return 0;
    const Op& o = ops_[static_cast<size_t>(p)];
    return o.group >= 0 ? group_end_[static_cast<size_t>(o.group)] : o.iv.start_ns + o.iv.busy_ns;
  }
  double waits_met(int k) const {
    double t = 0;
    for (int d : ops_[static_cast<size_t>(k)].deps) t = std::max(t, ops_[static_cast<size_t>(d)].iv.end_ns);
    return t;
  }
  void time_alone(int k) {
    Op& o = ops_[static_cast<size_t>(k)];
    o.iv.start_ns = std::max(waits_met(k), unit_free(k));
    o.iv.end_ns = o.iv.start_ns + o.iv.busy_ns + o.latency;
  }
  // Processor sharing: each member starts when its waits are met and the unit
  // is free of the ops before the group; while c members run, each advances at
  // 1/c of the unit's rate. busy_ns becomes the time a member holds the unit.
  void time_shared(int g) {
    const std::vector<int>& members = groups_[static_cast<size_t>(g)];
    double free = 0;
    for (int m : members) free = std::max(free, unit_free(m));
    const size_t n = members.size();
    std::vector<double> start(n), left(n), finish(n, -1);
    for (size_t k = 0; k < n; ++k) {
      start[k] = std::max(waits_met(members[k]), free);
      left[k] = ops_[static_cast<size_t>(members[k])].iv.work_ns;
    }
    double t = *std::min_element(start.begin(), start.end());
    for (size_t finished = 0; finished < n;) {
      double next_start = std::numeric_limits<double>::infinity(), least = std::numeric_limits<double>::infinity();
      size_t running = 0;
      for (size_t k = 0; k < n; ++k) {
        if (finish[k] >= 0) continue;
        if (start[k] > t) next_start = std::min(next_start, start[k]);
        else {
          ++running;
          least = std::min(least, left[k]);
        }
      }
      if (running == 0) {
        t = next_start;
        continue;
      }
      const double step = std::min(least * static_cast<double>(running), next_start - t);
      for (size_t k = 0; k < n; ++k) {
        if (finish[k] >= 0 || start[k] > t) continue;
        left[k] -= step / static_cast<double>(running);
        if (left[k] <= 1e-9 * (1 + ops_[static_cast<size_t>(members[k])].iv.work_ns)) {
          finish[k] = t + step;
          ++finished;
        }
      }
      t += step;
    }
    double end = 0;
    for (size_t k = 0; k < n; ++k) {
      Op& o = ops_[static_cast<size_t>(members[k])];
      o.iv.start_ns = start[k];
      o.iv.busy_ns = finish[k] - start[k];
      o.iv.end_ns = finish[k] + o.latency;
      end = std::max(end, finish[k]);
    }
    group_end_[static_cast<size_t>(g)] = end;
  }

  std::vector<Op> ops_;
  std::vector<std::vector<int>> groups_;
  std::vector<std::pair<int, int>> unit_prev_;
  std::vector<int> unit_pred_;
  std::vector<double> group_end_;
};

}  // namespace flashlab::sim::detail
