// The ring's simulator: each GPU's steps as events under the rules of
// ring_schedule.hpp. Chunk-pair costs come from the single-GPU simulator's
// counts (FlashAttention-2's loop nest, closed forms, no L2), each distinct
// (n_q, n_kv, visibility, pass) derived once per simulation.
#include "flashlab/sim/ring/ring_schedule.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <stdexcept>
#include <sstream>
#include <tuple>

#include "core/enum_names.hpp"
#include "flashlab/sim/memory/simulate.hpp"

namespace flashlab::sim {

const RungTiming* ring_rung(const RingComputeModel& cm, Pass pass, i64 head_dim, bool causal) {
  const std::optional<RungTiming>& t = pass == Pass::fwd ? cm.forward_rung : cm.backward_rung;
  if (t) return &*t;
  if (!cm.rung_set) return nullptr;
  // The rungs the ring runs on the GPU the set was fitted on: the Hopper
  // rung where the set has it at this head dim, else the mma.sync rung; the
  // entry fitted to the launch's mask where the set has one per mask.
  const bool bwd = pass == Pass::bwd;
  const char* hopper = bwd ? "fa3_hopper_bwd" : "fa3_hopper";
  if (cm.rung_set->find(hopper, head_dim)) return cm.rung_set->find(hopper, head_dim, causal);
  return cm.rung_set->find(bwd ? "fa2_tc_bwd" : "fa2_tc", head_dim, causal);
}

namespace {

constexpr double kNever = -std::numeric_limits<double>::infinity();

std::size_t at(int i) { return static_cast<std::size_t>(i); }

int next_gpu(int r, int P) { return (r + 1) % P; }
int prev_gpu(int r, int P) { return (r + P - 1) % P; }

double efficiency_of(const RingComputeModel& cm, Pass pass) {
  return pass == Pass::bwd ? cm.backward_efficiency.value_or(cm.efficiency) : cm.efficiency;
}

// FLOPs and HBM requests of one FlashAttention-2 pass on `ap`, and the bound.

RingBlockCost block_cost(const AttentionProblem& ap, Pass pass, const RingComputeModel& cm) {
  SimOptions opt;
  opt.l2 = false;              // plain HBM requests: the L2 model is slow and per launch
  opt.stream_event_limit = 0;  // the closed forms (equal to the stream by test)
  const Algorithm a = pass == Pass::fwd ? Algorithm::fa2 : Algorithm::fa2_bwd;
  const SimResult r = simulate(a, ap, cm.hw, opt);
  if (!r.ok())
    throw std::invalid_argument("the rung cannot run a " + describe(ap) + " block on " + cm.hw.name + ": " +
                                r.errors().front());
  RingBlockCost c;
  c.flops = static_cast<double>(r.total.flops());
  c.hbm_bytes = static_cast<double>(r.total.level(Level::HBM).bytes());
  const double peak = cm.hw.peak(ap.dtype, HardwareModel::default_unit(ap.dtype));
  if (!(peak > 0) || !(cm.hw.hbm_bandwidth > 0))
    throw std::invalid_argument("hardware '" + cm.hw.name + "' has no peak rate for " +
                                std::string(to_string(ap.dtype)) + " or no HBM bandwidth");
  c.bound_s = std::max(c.flops / peak, c.hbm_bytes / cm.hw.hbm_bandwidth);
  c.time_s = c.bound_s / efficiency_of(cm, pass);
  return c;
}

// Bytes of 2 tensors (K and V, or dK and dV) of H_kv heads over `tokens`.
i64 kv_bytes(const AttentionProblem& p, i64 tokens, i64 element_bytes) {
  return 2 * p.batch * p.h_kv() * tokens * p.head_dim * element_bytes;
}

struct Interval {
  double start = 0, end = 0;
};

// The length of the union of intervals (empty ones ignored).
double union_length(std::vector<Interval> v) {
  std::sort(v.begin(), v.end(), [](const Interval& a, const Interval& b) { return a.start < b.start; });
  double total = 0, cur_s = kNever, cur_e = kNever;
  for (const Interval& i : v) {
    if (!(i.end > i.start)) continue;
    if (i.start > cur_e) {
      if (cur_e > cur_s) total += cur_e - cur_s;
      cur_s = i.start;
      cur_e = i.end;
    } else {
      cur_e = std::max(cur_e, i.end);
    }
  }
  if (cur_e > cur_s) total += cur_e - cur_s;
  return total;
}

// What the host issues for one pass (host_issue.hpp), in the order the ring's
// runner does: for each step the exchange (every GPU's stream calls and the
// NCCL group), then each GPU's launches and events in turn. Empty: the host
// is not modelled.
struct HostPlan {
  std::vector<double> exchange_s;          // [step 0 … P]: issuing the step's exchange; 0 when it has none
  std::vector<std::vector<double>> first_s;  // [gpu][step]: from its turn to its first rung launch issued
  std::vector<std::vector<double>> all_s;    // [gpu][step]: its whole turn
  bool per_gpu = false;                      // a host per GPU: exchange_s is each one's part
  bool empty() const { return exchange_s.empty(); }
};

// One transfer into GPU `to`: from `from`, of step `step`.
struct Transfer {
  int from = 0, to = 0, step = 0, owner = 0;
  bool gradients = false;
  double start = 0, end = 0;
  // When each side posted its part of the exchange (its own data and buffers
  // ready, the host's call issued): the transfer starts at the later of the
  // two, and each side waits from its own posting — the peer's matching call.
  double posted_from = 0, posted_to = 0;
  i64 bytes = 0;
};

class PassBuilder {
 public:
  PassBuilder(const AttentionProblem& p, const RingPartition& part, const RingTopology& topo, Pass pass,
              const std::vector<std::vector<double>>& compute_s, const std::vector<std::vector<double>>& shared_s,
              const std::vector<std::vector<i64>>& pairs, double origin, RingSteps steps, const HostPlan& host)
      : p_(p),
        part_(part),
        topo_(topo),
        pass_(pass),
        compute_s_(compute_s),
        shared_s_(shared_s),
        pairs_(pairs),
        origin_(origin),
        steps_(steps),
        host_(host) {}

  RingPassResult run(std::vector<RingEvent>& events) {
    const int P = p_.gpus();
    const bool bwd = pass_ == Pass::bwd;
    start_.assign(at(P), std::vector<double>(at(P + 1), origin_));
    end_.assign(at(P), std::vector<double>(at(P), origin_));
    posted_.assign(at(P), std::vector<double>(at(P + 1), origin_));
    // Transfers into GPU r by step label: K, V of step s (s ≤ P − 2); dK, dV of
    // step s (1 ≤ s ≤ P, the homecoming at P).
    kv_.assign(at(P), std::vector<const Transfer*>(at(P + 1), nullptr));
    dkv_.assign(at(P), std::vector<const Transfer*>(at(P + 1), nullptr));
    transfers_.reserve(at(2 * P * (P + 1)));
    // The hosts' clocks: what each has issued so far (one host drives every
    // GPU, or each GPU has its own).
    std::vector<double> host(at(host_.per_gpu ? P : 1), origin_);
    auto host_of = [&](int r) -> double& { return host[host_.per_gpu ? at(r) : 0]; };
    for (int s = 0; s < P; ++s) {
      // The host issues the step's exchange, then each GPU's turn: a GPU
      // starts its step once its first launch is issued, and its step ends
      // no earlier than its last. A transfer starts once every host has
      // issued its part of the exchange.
      double exchange_issued = kNever;
      if (!host_.empty()) {
        for (double& h : host) h += host_.exchange_s[at(s)];
        exchange_issued = *std::max_element(host.begin(), host.end());
      }
      // GPU r posts exchange s once its step s − 1 and that step's transfers
      // are done (its comm stream runs one exchange after another) and the
      // host has issued it.
      for (int r = 0; r < P; ++r) posted_[at(r)][at(s)] = std::max(start_[at(r)][at(s)], exchange_issued);
      std::vector<double> issued(at(P), kNever);
      for (int r = 0; r < P; ++r) {
        double& start = start_[at(r)][at(s)];
        if (!host_.empty()) {
          start = std::max(start, host_of(r) + host_.first_s[at(r)][at(s)]);
          host_of(r) += host_.all_s[at(r)][at(s)];
          issued[at(r)] = host_of(r);
        }
      }
      // The hop into GPU r carries one message at a time (one NCCL stream):
      // K, V and dK, dV of a step in the order they are ready, K, V first on a tie.
      for (int r = 0; r < P; ++r) {
        const bool kv = s < P - 1, dkv = bwd && s >= 1;
        const int from = prev_gpu(r, P);
        const double kv_ready = kv ? std::max({start_[at(from)][at(s)], start_[at(r)][at(s)], exchange_issued}) : 0.0;
        const double dkv_ready = dkv ? std::max(dkv_ready_at(r, s), exchange_issued) : 0.0;
        double hop_free = kNever;
        auto send = [&](std::vector<std::vector<const Transfer*>>& table, bool gradients, double ready) {
          hop_free = add_transfer(table, r, s, gradients, std::max(ready, hop_free))->end;
        };
        if (kv && (!dkv || kv_ready <= dkv_ready)) {
          send(kv_, false, kv_ready);
          if (dkv) send(dkv_, true, dkv_ready);
        } else if (dkv) {
          send(dkv_, true, dkv_ready);
          if (kv) send(kv_, false, kv_ready);
        }
      }
      // The step's compute, slowed while the exchange's kernel holds SMs.
      for (int r = 0; r < P; ++r)
        end_[at(r)][at(s)] = std::max(compute_end(r, s), issued[at(r)]);
      // Step s + 1 waits for the compute of step s and every transfer of step s
      // GPU r sends or receives (its buffers are reused).
      for (int r = 0; r < P; ++r) {
        double t = end_[at(r)][at(s)];
        for (const Transfer* x : step_transfers(r, s)) t = std::max(t, x->end);
        start_[at(r)][at(s + 1)] = t;
      }
    }
    if (bwd && P > 1) {
      const double issued =
          host_.empty() ? kNever : *std::max_element(host.begin(), host.end()) + host_.exchange_s[at(P)];
      for (int r = 0; r < P; ++r) posted_[at(r)][at(P)] = std::max(start_[at(r)][at(P)], issued);
      for (int r = 0; r < P; ++r) add_transfer(dkv_, r, P, true, std::max(dkv_ready_at(r, P), issued));  // the homecoming
    }

    double last_compute = origin_;
    for (int r = 0; r < P; ++r) last_compute = std::max(last_compute, end_[at(r)][at(P - 1)]);
    double pass_end = last_compute;
    for (const Transfer& x : transfers_) pass_end = std::max(pass_end, x.end);

    RingPassResult res;
    res.pass = pass_;
    res.start_s = origin_;
    res.end_s = pass_end;
    res.time_s = pass_end - origin_;
    res.tail_s = pass_end - last_compute;
    res.gpus.resize(at(P));
    std::vector<i64> step_bytes(at(P) * at(P + 1), 0);
    for (const Transfer& x : transfers_) {
      RingEvent e = event(x.to, x.step, RingEventKind::transfer, x.start, x.end, x.owner);
      e.posted_s = x.posted_to;
      e.peer_posted_s = x.posted_from;
      e.peer = x.from;
      e.gradients = x.gradients;
      e.crosses_nodes = topo_.crosses_nodes(x.from, x.to);
      e.bytes = x.bytes;
      events.push_back(e);
      res.gpus[at(x.to)].bytes_received += x.bytes;
      step_bytes[at(x.to) * at(P + 1) + at(x.step)] += x.bytes;
    }
    for (i64 b : step_bytes) res.bytes_per_step = std::max(res.bytes_per_step, b);

    for (int r = 0; r < P; ++r) {
      RingGpuTotals& g = res.gpus[at(r)];
      for (int s = 0; s < P; ++s) {
        RingEvent e =
            event(r, s, RingEventKind::compute, start_[at(r)][at(s)], end_[at(r)][at(s)], ring_kv_source(r, s, P));
        e.pairs = pairs_[at(r)][at(s)];
        e.flops = ring_convention_flops(p_, e.pairs, pass_);
        events.push_back(e);
        g.compute_s += e.duration_s();
        g.pairs += e.pairs;
        res.flops += e.flops;
        // The gap before the next step (or the pass's end): waiting while a
        // transfer it needs is in flight, idle otherwise.
        const bool last = s == P - 1;
        const double gap_end = last ? pass_end : start_[at(r)][at(s + 1)];
        std::vector<const Transfer*> blocking = step_transfers(r, s);
        // A next step with no pair to compute (the causal mask's empty chunk
        // pairs) waits for nothing it needs: the gap is idle, not exposed.
        if (!last && pairs_[at(r)][at(s + 1)] == 0) blocking.clear();
        if (last && bwd)
          for (const Transfer* x : step_transfers(r, P)) blocking.push_back(x);
        const double before = g.wait_s;
        split_gap(r, s, e.end_s, gap_end, blocking, g, events);
        if (last) g.tail_wait_s = g.wait_s - before;
      }
      std::vector<Interval> mine;
      for (const Transfer& x : transfers_)
        if (x.to == r || x.from == r) mine.push_back({x.start, x.end});
      g.comm_s = union_length(std::move(mine));
      res.compute_s = std::max(res.compute_s, g.compute_s);
      res.comm_s = std::max(res.comm_s, g.comm_s);
      res.exposed_comm_s = std::max(res.exposed_comm_s, g.wait_s);
      res.exposed_steps_s = std::max(res.exposed_steps_s, g.wait_s - g.tail_wait_s);
      res.idle_s = std::max(res.idle_s, g.idle_s);
    }
    res.overlap = res.comm_s > 0 ? std::clamp(1.0 - res.exposed_comm_s / res.comm_s, 0.0, 1.0) : 1.0;
    return res;
  }

 private:
  // GPU r's step s ends when the rung has done its work: at full speed
  // (compute_s) outside the exchange's kernel, at the shared speed
  // (compute_s / shared_s of it) from the exchange's posting on GPU r to its
  // last transfer's end.
  double compute_end(int r, int s) const {
    const double start = start_[at(r)][at(s)], full = compute_s_[at(r)][at(s)], shared = shared_s_[at(r)][at(s)];
    double held_from = std::numeric_limits<double>::infinity(), held_to = kNever;
    for (const Transfer* x : step_transfers(r, s)) {
      held_from = std::min(held_from, x->to == r ? x->posted_to : x->posted_from);
      held_to = std::max(held_to, x->end);
    }
    if (!(shared > full) || !(held_to > start) || !(held_to > held_from)) return start + full;
    const double rate = full / shared;  // work per second while the SMs are shared
    const double a = std::max(start, held_from);
    if (start + full <= a) return start + full;  // done before the kernel arrives
    const double left = full - (a - start);      // work left when it does
    if (a + left / rate <= held_to) return a + left / rate;
    return held_to + (left - (held_to - a) * rate);
  }

  const Transfer* add_transfer(std::vector<std::vector<const Transfer*>>& table, int to, int step, bool gradients,
                               double start) {
    const int P = p_.gpus();
    Transfer x;
    x.from = prev_gpu(to, P);
    x.to = to;
    x.step = step;
    x.gradients = gradients;
    // K, V of step s are those GPU `to` computes on at step s + 1; dK, dV of
    // step s are those GPU `from` computed on at step s − 1.
    x.owner = gradients ? ring_kv_source(x.from, step - 1, P) : ring_kv_source(to, step + 1, P);
    // dK, dV travel as fp32 running sums; the homecoming carries a finished sum,
    // which fused steps round to the dtype before it leaves (the same rounding
    // the owner would apply on arrival): half the bytes of the pass's tail.
    const bool in_dtype = !gradients || (step == p_.gpus() && steps_ == RingSteps::fused);
    x.bytes = kv_bytes(p_, part_.tokens_of(x.owner), in_dtype ? dtype_bytes(p_.dtype) : 4);
    // The fused homecoming leaves chunk by chunk, dK then dV of each: its
    // messages, one after another (kernels/src/ring/ring_runner.cpp).
    const int messages = gradients && step == p_.gpus() && steps_ == RingSteps::fused
                             ? 2 * static_cast<int>(part_.held[at(x.owner)].size())
                             : 1;
    const InterconnectModel& link = topo_.link(x.from, x.to);
    x.start = start;
    x.end = link.exchange_arrival_s(start, static_cast<double>(x.bytes), messages);
    x.posted_from = std::min(start, posted_[at(x.from)][at(step)]);
    x.posted_to = std::min(start, posted_[at(to)][at(step)]);
    transfers_.push_back(x);
    table[at(to)][at(step)] = &transfers_.back();
    return &transfers_.back();
  }

  // dK, dV of step s into GPU r: sent when GPU r − 1 has computed step s − 1
  // and received the partial it adds to (dK, dV of step s − 1), once GPU r has
  // started step s (the homecoming, s = P: ended step P − 1's transfers).
  double dkv_ready_at(int r, int s) const {
    const int from = prev_gpu(r, p_.gpus());
    double t = std::max(end_[at(from)][at(s - 1)], start_[at(r)][at(s)]);
    if (const Transfer* partial = dkv_[at(from)][at(s - 1)]) t = std::max(t, partial->end);
    return t;
  }

  // Every transfer of step s that GPU r receives or sends.
  std::vector<const Transfer*> step_transfers(int r, int s) const {
    std::vector<const Transfer*> out;
    const int nxt = next_gpu(r, p_.gpus());
    for (const auto* table : {&kv_, &dkv_})
      for (int g : {r, nxt})
        if (const Transfer* x = (*table)[at(g)][at(s)]; x != nullptr && (x->to == r || x->from == r)) out.push_back(x);
    return out;
  }

  void split_gap(int r, int step, double a, double b, const std::vector<const Transfer*>& blocking,
                 RingGpuTotals& g, std::vector<RingEvent>& events) const {
    if (!(b > a)) return;
    std::vector<Interval> in;
    for (const Transfer* x : blocking) {
      const double s = std::max(a, x->start), e = std::min(b, x->end);
      if (e > s) in.push_back({s, e});
    }
    std::sort(in.begin(), in.end(), [](const Interval& x, const Interval& y) { return x.start < y.start; });
    auto emit = [&](RingEventKind k, double s, double e) {
      // Rounding leaves slivers where two times meet: a femtosecond is no bar.
      if (!(e - s > 1e-15)) return;
      events.push_back(event(r, step, k, s, e, ring_kv_source(r, step, p_.gpus())));
      (k == RingEventKind::wait ? g.wait_s : g.idle_s) += e - s;
    };
    double cur = a;
    std::size_t k = 0;
    while (k < in.size()) {
      double s = in[k].start, e = in[k].end;
      for (++k; k < in.size() && in[k].start <= e; ++k) e = std::max(e, in[k].end);
      emit(RingEventKind::idle, cur, s);
      emit(RingEventKind::wait, std::max(cur, s), e);
      cur = std::max(cur, e);
    }
    emit(RingEventKind::idle, cur, b);
  }

  // An event of this pass on GPU `gpu` at step `step`, over K, V chunks (or dK, dV) of GPU `kv_owner`.
  RingEvent event(int gpu, int step, RingEventKind k, double start_s, double end_s, int kv_owner) const {
    return RingEvent{gpu, step, pass_, k, start_s, end_s, kv_owner};
  }

  const AttentionProblem& p_;
  const RingPartition& part_;
  const RingTopology& topo_;
  Pass pass_;
  const std::vector<std::vector<double>>& compute_s_;
  const std::vector<std::vector<double>>& shared_s_;  // the same work on the SMs the exchange leaves
  const std::vector<std::vector<i64>>& pairs_;
  double origin_;
  RingSteps steps_;
  const HostPlan& host_;
  std::vector<std::vector<double>> start_, end_;  // [gpu][step]: step start (0 … P), compute end (0 … P − 1)
  std::vector<std::vector<double>> posted_;       // [gpu][step]: when it posted exchange s (0 … P)
  std::vector<Transfer> transfers_;               // reserved: the tables point into it
  std::vector<std::vector<const Transfer*>> kv_, dkv_;  // [gpu receiving][step]
};

std::string dims(i64 v) { return std::to_string(v); }

std::string number_text(double v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

}  // namespace

// ---- names ---------------------------------------------------------------------


namespace {
constexpr detail::EnumName<RingEventKind> kEventNames[] = {{RingEventKind::compute, "compute"},
                                                           {RingEventKind::transfer, "transfer"},
                                                           {RingEventKind::wait, "wait"},
                                                           {RingEventKind::idle, "idle"}};
static_assert(detail::lists_through(kEventNames, RingEventKind::idle));
}  // namespace

std::string_view ring_event_name(RingEventKind k) { return detail::name_of(kEventNames, k, "idle"); }

// ---- validation ------------------------------------------------------------------

std::vector<RingSetupError> validate(const RingComputeModel& cm, DType dtype) {
  std::vector<RingSetupError> out;
  if (!(cm.efficiency > 0 && cm.efficiency <= 1))
    out.push_back({RingSetupField::efficiency,
                   "the compute efficiency must be in (0, 1] (got " + number_text(cm.efficiency) + ")"});
  if (cm.backward_efficiency && !(*cm.backward_efficiency > 0 && *cm.backward_efficiency <= 1))
    out.push_back({RingSetupField::efficiency, "the backward's compute efficiency must be in (0, 1] (got " +
                                                   number_text(*cm.backward_efficiency) + ")"});
  if (!(cm.hw.peak(dtype, HardwareModel::default_unit(dtype)) > 0))
    out.push_back({RingSetupField::hardware,
                   "hardware '" + cm.hw.name + "' has no peak rate for " + std::string(to_string(dtype))});
  if (!(cm.hw.hbm_bandwidth > 0))
    out.push_back({RingSetupField::hardware, "hardware '" + cm.hw.name + "' has no HBM bandwidth"});
  return out;
}

// ---- costs ----------------------------------------------------------------------

double ring_convention_flops(const AttentionProblem& p, i64 pairs, Pass pass) {
  const double fwd = 4.0 * static_cast<double>(p.batch) * static_cast<double>(p.heads) * static_cast<double>(pairs) *
                     static_cast<double>(p.head_dim);
  return pass == Pass::fwd ? fwd : 2.5 * fwd;
}

RingBlockCost ring_block_cost(const AttentionProblem& p, i64 n_q, i64 n_kv, ChunkVisibility v, Pass pass,
                              const RingComputeModel& cm, bool folds) {
  if (v == ChunkVisibility::none) return {};
  const bool diagonal = v == ChunkVisibility::diagonal;
  if (diagonal && n_q != n_kv)
    throw std::invalid_argument("a diagonal chunk pair is one chunk against itself (n_q = n_kv), not " + dims(n_q) +
                                " × " + dims(n_kv));
  RingBlockCost c = block_cost(block_problem(p, n_q, n_kv, diagonal), pass, cm);
  if (const RungTiming* t = ring_rung(cm, pass, p.head_dim, diagonal)) {
    // What the ring adds to each CTA of the rung alone, at its share of the
    // HBM bandwidth: the forward's epilogue reads and writes the running O
    // (fp32) and logsumexp; the backward adds dK, dV into the travelling fp32
    // sums (read and write) instead of writing them in the dtype once.
    const double per_sm = cm.hw.hbm_bandwidth / static_cast<double>(std::max<i64>(1, cm.hw.sm_count));
    const double d = static_cast<double>(p.head_dim), e = static_cast<double>(dtype_bytes(p.dtype));
    double extra_bytes = 0;
    if (pass == Pass::fwd && folds) extra_bytes = 2.0 * t->geometry.tiles.Br * (d * 4 + 4);
    if (pass == Pass::bwd && folds) extra_bytes = 2.0 * t->geometry.tiles.Bc * d * (2 * 4 - e);
    c.time_s = rung_launch(*t, p.batch * p.heads, n_q, n_kv, diagonal, cm.hw.sm_count, extra_bytes / per_sm).time_s;
  }
  c.pairs = diagonal ? n_q * (n_q + 1) / 2 : n_q * n_kv;
  c.convention_flops = ring_convention_flops(p, c.pairs, pass);
  return c;
}

RingBlockCost ring_single_gpu_cost(const AttentionProblem& p, Pass pass, const RingComputeModel& cm) {
  RingBlockCost c = block_cost(whole_problem(p), pass, cm);
  if (const RungTiming* t = ring_rung(cm, pass, p.head_dim, p.causal))
    c.time_s = rung_launch(*t, p.batch * p.heads, p.seq_q, p.seq_q, p.causal, cm.hw.sm_count).time_s;
  c.pairs = p.causal ? p.seq_q * (p.seq_q + 1) / 2 : p.seq_q * p.seq_q;
  c.convention_flops = ring_convention_flops(p, c.pairs, pass);
  return c;
}

// ---- memory ---------------------------------------------------------------------

i64 RingMemory::total_bytes() const {
  i64 t = 0;
  for (const RingMemoryTerm& x : terms) t += x.bytes;
  return t;
}


// As the ring's kernels allocate (kernels/src/ring/ring_runner.cpp). GPU r holds n
// tokens in its own chunks. Per own chunk: Q, O, the logsumexp and, unless the
// rung writes its O directly (a chunk with one visible pair over the whole
// ring, e.g. chunk 0 under the causal mask), the running O in fp32; the
// backward adds dO, dQ (and its fp32 accumulator unless direct), dK, dV of
// its chunks. Per GPU: its own K, V, two K/V buffers the ring alternates
// between (sized for the largest GPU's chunks, n_gpu_max), the rung's scratch
// for one chunk pair (sized for the largest chunk, n_chunk_max) when the
// steps are pairwise: K_j, V_j expanded to H heads (GQA), a partial O and
// logsumexp, and in the backward a chunk pair's partial dQ, dK, dV (dK, dV of
// H heads before the group sum) — fused steps need none of them; the
// backward's two travelling dK, dV buffers and a step's dK, dV (fp32).
RingMemory ring_memory(const AttentionProblem& p, const RingPartition& part, int gpu, RingSteps steps) {
  RingMemory m;
  const i64 B = p.batch, H = p.heads, Hkv = p.h_kv(), d = p.head_dim, e = dtype_bytes(p.dtype);
  const std::string eb = std::to_string(e);
  i64 n = 0, n_acc = 0, n_gpu_max = 0, n_chunk_max = 0;
  for (int c : part.held.at(at(gpu))) {
    const RingChunk& q = part.chunks[at(c)];
    n += q.size();
    int visible = 0;
    for (const RingChunk& kv : part.chunks) visible += chunk_visibility(q, kv, p.causal) != ChunkVisibility::none;
    if (visible > 1) n_acc += q.size();
  }
  for (int r = 0; r < part.gpus; ++r) n_gpu_max = std::max(n_gpu_max, part.tokens_of(r));
  for (const RingChunk& c : part.chunks) n_chunk_max = std::max(n_chunk_max, c.size());
  auto add = [&](Pass pass, std::string name, std::string formula, i64 bytes) {
    if (bytes > 0) m.terms.push_back({std::move(name), std::move(formula), bytes, pass});
  };
  const Pass F = Pass::fwd, Bw = Pass::bwd;
  const bool ring = p.gpus() > 1, gqa = Hkv < H, pairwise = steps == RingSteps::pairwise;
  add(F, "Q", "B·H·n·d·" + eb, B * H * n * d * e);
  add(F, "O", "B·H·n·d·" + eb, B * H * n * d * e);
  add(F, "LSE (fp32)", "B·H·n·4", B * H * n * 4);
  add(F, "O accumulator (fp32)", "B·H·n_acc·d·4", B * H * n_acc * d * 4);
  add(F, "K, V of its chunks", "2·B·H_kv·n·d·" + eb, 2 * B * Hkv * n * d * e);
  if (ring) add(F, "K, V ring buffers (2)", "2·2·B·H_kv·n_gpu_max·d·" + eb, 2 * 2 * B * Hkv * n_gpu_max * d * e);
  if (pairwise && gqa)
    add(F, "K_j, V_j expanded to H heads", "2·B·H·n_chunk_max·d·" + eb, 2 * B * H * n_chunk_max * d * e);
  if (pairwise)
    add(F, "partial O and LSE of a chunk pair", "B·H·n_chunk_max·(d·" + eb + " + 4)", B * H * n_chunk_max * (d * e + 4));
  if (!p.backward()) return m;
  add(Bw, "dO", "B·H·n·d·" + eb, B * H * n * d * e);
  add(Bw, "dQ", "B·H·n·d·" + eb, B * H * n * d * e);
  add(Bw, "dQ accumulator (fp32)", "B·H·n_acc·d·4", B * H * n_acc * d * 4);
  add(Bw, "dK, dV of its chunks", "2·B·H_kv·n·d·" + eb, 2 * B * Hkv * n * d * e);
  add(Bw, "dK, dV travelling (fp32, 2 buffers)", "2·2·B·H_kv·n_gpu_max·d·4", 2 * 2 * B * Hkv * n_gpu_max * d * 4);
  if (ring) add(Bw, "dK, dV of a step (fp32)", "2·B·H_kv·n_gpu_max·d·4", 2 * B * Hkv * n_gpu_max * d * 4);
  if (pairwise)
    add(Bw, gqa ? "partial dQ, dK, dV of a chunk pair (H heads)" : "partial dQ, dK, dV of a chunk pair",
        "3·B·H·n_chunk_max·d·" + eb, 3 * B * H * n_chunk_max * d * e);
  return m;
}

// ---- the simulation ----------------------------------------------------------------

const RingPassResult& RingSimulation::pass(Pass p) const {
  if (p == Pass::fwd) return forward;
  if (!backward) throw std::out_of_range("the simulation has no backward pass");
  return *backward;
}

RingSimulation simulate_ring(const AttentionProblem& p, const RingTopology& topo, const RingComputeModel& cm) {
  std::vector<std::string> why = messages(validate(p));
  for (RingSetupError& e : validate(topo)) why.push_back(std::move(e.message));
  for (RingSetupError& e : validate(cm, p.dtype)) why.push_back(std::move(e.message));
  if (!why.empty()) throw std::invalid_argument(why.front());

  RingSimulation sim;
  sim.problem = p;
  sim.partition = ring_partition(p.seq_q, p.gpus(), p.layout());
  const RingPartition& part = sim.partition;
  const int P = p.gpus();

  // The rung's launches beside the exchange's kernel: on the SMs it leaves
  // (at least one).
  RingComputeModel cm_shared = cm;
  if (P > 1 && cm.host.exchange_sms > 0)
    cm_shared.hw.sm_count = std::max<i64>(1, cm.hw.sm_count - static_cast<i64>(cm.host.exchange_sms));
  // Each distinct block once: zig-zag chunks come in at most two sizes.
  std::map<std::tuple<i64, i64, int, int, bool, bool>, RingBlockCost> cache;
  auto cost = [&](i64 nq, i64 nkv, ChunkVisibility v, Pass pass, bool folds,
                  bool shared) -> const RingBlockCost& {
    const auto key = std::make_tuple(nq, nkv, static_cast<int>(v), static_cast<int>(pass), folds, shared);
    auto it = cache.find(key);
    if (it == cache.end()) {
      RingBlockCost c = ring_block_cost(p, nq, nkv, v, pass, shared ? cm_shared : cm, folds);
      // Without the launch model the rate is the whole GPU's: the SMs left
      // do their share of it.
      if (shared && ring_rung(cm, pass, p.head_dim) == nullptr)
        c.time_s *= static_cast<double>(cm.hw.sm_count) / static_cast<double>(cm_shared.hw.sm_count);
      it = cache.emplace(key, c).first;
    }
    return it->second;
  };
  // A query chunk with more than one visible pair over the ring folds its
  // partial outputs (and its key chunk's dK, dV travel as fp32 sums).
  std::vector<bool> folds(part.chunks.size(), false);
  for (std::size_t c = 0; c < part.chunks.size(); ++c) {
    int visible = 0;
    for (const RingChunk& kv : part.chunks) visible += chunk_visibility(part.chunks[c], kv, p.causal) != ChunkVisibility::none;
    folds[c] = visible > 1;
  }
  const bool grouped = p.h_kv() != p.heads;
  // A step's kernels besides the rung's, with the launch model only (they are
  // memory-bound: bytes over the HBM bandwidth, a launch each): the backward
  // zeroes the step's fp32 dK, dV, adds the arriving sum to them (from step
  // 1), and at its last step rounds the finished package and dQ to the dtype.
  // Pairwise steps (kernels/src/ring/ring_runner.cpp) also expand a grouped K_j,
  // V_j to H heads for the rung, and after each pair's launch fold its partial
  // output into the running one (the forward's merge) or add its dQ, dK, dV
  // into the fp32 sums (the backward's); the forward rounds the running O at
  // its last step.
  const bool pairwise = cm.steps == RingSteps::pairwise;
  const double e = static_cast<double>(dtype_bytes(p.dtype));
  const double bh = static_cast<double>(p.batch * p.heads), bhkv = static_cast<double>(p.batch * p.h_kv());
  const double d = static_cast<double>(p.head_dim);
  // The one GPU's one chunk: its dK, dV written directly, not summed in fp32.
  const bool direct_kv = P == 1 && !grouped && part.held[0].size() == 1;
  // GPU r's step s as the runner walks it (ring_runner.cpp, for_each_pair):
  // each key chunk of the package that one of its query chunks sees
  // (on_key(k)), then each visible pair of it (on_pair(query chunk index, k)).
  auto walk_step = [&](int r, int s, const auto& on_key, const auto& on_pair) {
    for (int kc : part.held[at(ring_kv_source(r, s, P))]) {
      const RingChunk& k = part.chunks[at(kc)];
      bool any = false;
      for (int qc : part.held[at(r)]) any |= chunk_visibility(part.chunks[at(qc)], k, p.causal) != ChunkVisibility::none;
      if (!any) continue;
      on_key(k);
      for (int qc : part.held[at(r)])
        if (chunk_visibility(part.chunks[at(qc)], k, p.causal) != ChunkVisibility::none) on_pair(qc, k);
    }
  };
  std::vector<int> merged(part.chunks.size(), 0);  // the forward's merges so far, per query chunk
  auto pairwise_kernels_s = [&](int r, int s, Pass pass, double launch) -> double {
    const double bw = cm.hw.hbm_bandwidth;
    double time = 0;
    walk_step(
        r, s,
        [&](const RingChunk& k) {
          if (grouped) time += 2 * ((bhkv + bh) * static_cast<double>(k.size()) * d * e / bw + launch);  // K_j, V_j to H heads
        },
        [&](int qc, const RingChunk& k) {
          const double rows = bh * static_cast<double>(part.chunks[at(qc)].size());
          if (pass == Pass::fwd) {
            if (!folds[at(qc)]) return;  // the chunk's only pair: the rung writes O itself
            if (merged[at(qc)]++ == 0) time += rows * (d * (e + 4) + 8) / bw + launch;  // O_run, L = the pair's
            else time += rows * (d * (e + 8) + 12) / bw + launch + rows * 12 / bw + launch;  // merge, then L
          } else {
            if (folds[at(qc)]) time += rows * d * (e + 8) / bw + launch;  // dQ into its fp32 sum
            // dK, dV (H heads, or summed per group into H_kv) into the step's fp32 package.
            if (!direct_kv) time += 2 * ((bh * e + bhkv * 8) * static_cast<double>(k.size()) * d / bw + launch);
          }
        });
    if (pass == Pass::fwd && s == P - 1)
      for (int qc : part.held[at(r)])
        if (folds[at(qc)]) time += bh * static_cast<double>(part.chunks[at(qc)].size()) * d * (4 + e) / bw + launch;
    return time;
  };
  auto step_kernels_s = [&](int r, int s, Pass pass) -> double {
    const RungTiming* t = ring_rung(cm, pass, p.head_dim);
    if (t == nullptr) return 0.0;
    const double launch = t->launch_s;
    double time = pairwise ? pairwise_kernels_s(r, s, pass, launch) : 0.0;
    if (pass != Pass::bwd || P == 1) return time;
    const double pkg = static_cast<double>(kv_bytes(p, part.tokens_of(ring_kv_source(r, s, P)), 4));
    const double bw = cm.hw.hbm_bandwidth;
    time += pkg / bw + launch;                           // zero the step's dK, dV
    if (s >= 1) time += 3 * pkg / bw + launch;           // add the arriving sum
    if (s == P - 1) {
      const double q = bh * static_cast<double>(part.tokens_of(r)) * d;
      time += pkg * (1 + e / 4) / bw + launch + q * (4 + e) / bw + launch;  // round dK, dV and dQ
    }
    return time;
  };
  // What the host issues for each GPU's step (kernels/src/ring/ring_runner.cpp, in
  // calls: stream calls, small kernels' launches and the rung's launches).
  const HostIssueCosts& hc = cm.host;
  auto host_plan = [&](Pass pass) {
    HostPlan h;
    if (!hc.measured()) return h;
    h.per_gpu = hc.per_gpu(P, topo.gpus_per_node);
    const bool bwd = pass == Pass::bwd;
    const RungTiming* rt = ring_rung(cm, pass, p.head_dim);
    const double rung_launch = rt != nullptr && rt->host_launch_s > 0 ? rt->host_launch_s : hc.launch_s;
    h.exchange_s.assign(at(P + 1), 0.0);
    for (int s = 0; s <= P; ++s) {
      const bool kv = s <= P - 2, dkv = bwd && s >= 1 && s <= P && P > 1;
      // Per GPU: set the device, wait for its last step, record the start; then set it again and record the end.
      const int gpus = h.per_gpu ? 1 : P;
      if (kv || dkv) h.exchange_s[at(s)] = gpus * (4 + (s >= 1 ? 1 : 0)) * hc.call_s + hc.exchange_share(P, topo.gpus_per_node);
    }
    h.first_s.assign(at(P), std::vector<double>(at(P), 0.0));
    h.all_s = h.first_s;
    std::vector<int> merges(part.chunks.size(), 0);
    for (int r = 0; r < P; ++r)
      for (int s = 0; s < P; ++s) {
        double t = (3 + (s >= 1 ? 1 : 0)) * hc.call_s;  // set the device, record, wait for the package, record
        if (bwd && !direct_kv) t += hc.call_s;          // zero the step's dK, dV
        double first = -1;
        walk_step(
            r, s,
            [&](const RingChunk&) {
              if (pairwise && grouped) t += 2 * hc.launch_s;  // K_j, V_j to H heads
            },
            [&](int qc, const RingChunk&) {
              t += 2 * hc.call_s + rung_launch;  // the events around the rung's launch
              if (first < 0) first = t - hc.call_s;
              if (!pairwise) return;
              if (!bwd) t += folds[at(qc)] ? (merges[at(qc)]++ == 0 ? 1 : 2) * hc.launch_s : 0.0;
              else t += ((folds[at(qc)] ? 1 : 0) + (direct_kv ? 0 : 2)) * hc.launch_s;
            });
        if (!bwd) {
          if (pairwise && s == P - 1)
            for (int qc : part.held[at(r)]) t += folds[at(qc)] ? hc.launch_s : 0.0;
          t += 3 * hc.call_s;  // the step's closing events
        } else {
          t += hc.call_s + (s >= 1 ? 2 * hc.call_s + hc.launch_s : hc.call_s);  // fold in the arriving sum
          if (P > 1 && s == P - 1 && !pairwise) {
            t += hc.launch_s;  // the finished package rounded
            for (int qc : part.held[at(r)]) t += folds[at(qc)] ? hc.launch_s : 0.0;
          }
          t += hc.call_s;
        }
        h.first_s[at(r)][at(s)] = first < 0 ? t : first;
        h.all_s[at(r)][at(s)] = t;
      }
    return h;
  };
  auto step_work = [&](Pass pass, std::vector<std::vector<double>>& t, std::vector<std::vector<double>>& t_shared,
                       std::vector<std::vector<i64>>& pairs) {
    std::fill(merged.begin(), merged.end(), 0);
    t.assign(at(P), std::vector<double>(at(P), 0.0));
    t_shared = t;
    pairs.assign(at(P), std::vector<i64>(at(P), 0));
    for (int r = 0; r < P; ++r)
      for (int s = 0; s < P; ++s) {
        const int owner = ring_kv_source(r, s, P);
        for (int qc : part.held[at(r)])
          for (int kc : part.held[at(owner)]) {
            const RingChunk& q = part.chunks[at(qc)];
            const RingChunk& k = part.chunks[at(kc)];
            // The backward sums dK, dV in fp32 whenever they travel or are grouped.
            const bool f = pass == Pass::fwd ? folds[at(qc)] : (P > 1 || grouped || part.held[at(r)].size() > 1);
            const ChunkVisibility v = chunk_visibility(q, k, p.causal);
            const RingBlockCost& c = cost(q.size(), k.size(), v, pass, f, false);
            t[at(r)][at(s)] += c.time_s;
            t_shared[at(r)][at(s)] += cost(q.size(), k.size(), v, pass, f, true).time_s;
            pairs[at(r)][at(s)] += c.pairs;
          }
        const double other = step_kernels_s(r, s, pass);
        t[at(r)][at(s)] += other;
        t_shared[at(r)][at(s)] += other;
      }
  };

  std::vector<std::vector<double>> t, t_shared;
  std::vector<std::vector<i64>> pairs;
  step_work(Pass::fwd, t, t_shared, pairs);
  const HostPlan fwd_host = host_plan(Pass::fwd);
  sim.forward =
      PassBuilder(p, part, topo, Pass::fwd, t, t_shared, pairs, 0.0, cm.steps, fwd_host).run(sim.events);
  sim.single_gpu_s = ring_single_gpu_cost(p, Pass::fwd, cm).time_s;
  sim.time_s = sim.forward.time_s;
  if (p.backward()) {
    step_work(Pass::bwd, t, t_shared, pairs);
    const HostPlan bwd_host = host_plan(Pass::bwd);
    sim.backward = PassBuilder(p, part, topo, Pass::bwd, t, t_shared, pairs, sim.forward.end_s, cm.steps,
                               bwd_host)
                       .run(sim.events);
    sim.single_gpu_s += ring_single_gpu_cost(p, Pass::bwd, cm).time_s;
    sim.time_s += sim.backward->time_s;
  }
  sim.scaling_efficiency = sim.time_s > 0 ? sim.single_gpu_s / (P * sim.time_s) : 0.0;
  std::stable_sort(sim.events.begin(), sim.events.end(), [](const RingEvent& a, const RingEvent& b) {
    return a.gpu != b.gpu ? a.gpu < b.gpu : a.start_s < b.start_s;
  });

  for (int r = 0; r < P; ++r) {
    RingMemory m = ring_memory(p, part, r, cm.steps);
    sim.peak_bytes_per_gpu.push_back(m.total_bytes());
    sim.memory.push_back(std::move(m));
  }
  return sim;
}

// ---- the step-through ------------------------------------------------------------

RingStepView ring_step_view(const RingPartition& part, int step, bool causal) {
  if (step < 0 || step >= part.gpus)
    throw std::invalid_argument("the ring of " + std::to_string(part.gpus) + " GPUs has steps 0 to " +
                                std::to_string(part.gpus - 1) + ", not " + std::to_string(step));
  RingStepView v;
  v.step = step;
  for (int r = 0; r < part.gpus; ++r) {
    const int owner = ring_kv_source(r, step, part.gpus);
    v.kv_owner.push_back(owner);
    std::vector<RingPairView> blocks;
    for (int qc : part.held[at(r)])
      for (int kc : part.held[at(owner)]) {
        const RingChunk& q = part.chunks[at(qc)];
        const RingChunk& k = part.chunks[at(kc)];
        blocks.push_back({qc, kc, chunk_visibility(q, k, causal), visible_pairs(q, k, causal)});
      }
    v.blocks.push_back(std::move(blocks));
  }
  return v;
}

}  // namespace flashlab::sim
