// The ring's simulator against closed forms of its own rules: equal steps
// without the mask, the zig-zag's balance and the contiguous layout's bubbles
// under it, P = 1 as one GPU, the backward's dK, dV coming home, grouped-query
// attention moving H_kv/H of the bytes, uneven chunks, links across nodes,
// and the messages for what cannot be simulated.
#include <catch2/catch.hpp>

#include <algorithm>
#include <cmath>
#include <map>
#include <random>

#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/ring/ring_schedule.hpp"
#include "../support/problems.hpp"

using namespace flashlab::sim;

namespace {

const HardwareModel& h100() {
  static const HardwareModel hw = load_hardware("H100-SXM5-80GB");
  return hw;
}

RingComputeModel compute(double efficiency = 1.0) {
  RingComputeModel cm;
  cm.hw = h100();
  cm.efficiency = efficiency;
  return cm;
}

InterconnectModel link(double gbs, double latency_us, std::string id = "test") {
  InterconnectModel l;
  l.id = std::move(id);
  l.label = l.id;
  l.bandwidth = gbs * 1e9;
  l.latency_s = latency_us * 1e-6;
  l.source = "test";
  return l;
}

RingTopology one_node(double gbs, double latency_us = 0, int per_node = 64) {
  RingTopology t;
  t.gpus_per_node = per_node;
  t.intra = link(gbs, latency_us, "intra");
  t.inter = link(gbs / 10, latency_us, "inter");
  return t;
}

// Links so fast that a transfer takes no time at all.
RingTopology free_links() { return one_node(1e30, 0); }

AttentionProblem problem(int P, i64 N, RingLayout layout, bool causal) {
  return flashlab::test::ring_problem(P, layout, 2, 8, 8, N, 128, causal, DType::bf16, PassSelection::fwd);
}

std::vector<const RingEvent*> events_of(const RingSimulation& s, Pass pass, RingEventKind kind) {
  std::vector<const RingEvent*> out;
  for (const RingEvent& e : s.events)
    if (e.pass == pass && e.kind == kind) out.push_back(&e);
  return out;
}

const RingEvent& compute_event(const RingSimulation& s, Pass pass, int gpu, int step) {
  for (const RingEvent& e : s.events)
    if (e.pass == pass && e.kind == RingEventKind::compute && e.gpu == gpu && e.step == step) return e;
  FAIL("no compute event for GPU " << gpu << " step " << step);
  throw std::logic_error("unreachable");
}

double tol(double x) { return 1e-9 * std::max(1.0, std::abs(x)); }

}  // namespace

TEST_CASE("ring, no mask, contiguous: equal steps, K/V bytes per step, pass time (P − 1)·max(c, T) + c", "[ring]") {
  const int P = GENERATE(2, 3, 4, 8);
  const double gbs = GENERATE(1000.0, 5.0);  // transfers hidden under compute, then exposed
  const i64 N = 1024 * P;
  const AttentionProblem p = problem(P, N, RingLayout::contiguous, false);
  const RingTopology topo = one_node(gbs, 2.0);
  const RingSimulation s = simulate_ring(p, topo, compute());
  CAPTURE(P, gbs);

  const double c = ring_block_cost(p, N / P, N / P, ChunkVisibility::full, Pass::fwd, compute()).time_s;
  const i64 bytes = 2 * p.batch * p.h_kv() * (N / P) * p.head_dim * 2;
  const double T = 2e-6 + static_cast<double>(bytes) / (gbs * 1e9);
  REQUIRE(c > 0);

  const auto computes = events_of(s, Pass::fwd, RingEventKind::compute);
  REQUIRE(computes.size() == static_cast<std::size_t>(P * P));
  for (const RingEvent* e : computes) {
    CHECK(e->duration_s() == Approx(c).epsilon(1e-12));
    CHECK(e->pairs == (N / P) * (N / P));
  }
  const auto transfers = events_of(s, Pass::fwd, RingEventKind::transfer);
  REQUIRE(transfers.size() == static_cast<std::size_t>(P * (P - 1)));
  for (const RingEvent* e : transfers) {
    CHECK(e->bytes == bytes);
    CHECK(e->duration_s() == Approx(T).epsilon(1e-12));
    CHECK(e->peer == (e->gpu + P - 1) % P);
    CHECK(e->kv_owner == ring_kv_source(e->gpu, e->step + 1, P));
  }
  CHECK(s.forward.bytes_per_step == bytes);
  CHECK(s.forward.time_s == Approx((P - 1) * std::max(c, T) + c).epsilon(1e-12));
  CHECK(s.forward.compute_s == Approx(P * c).epsilon(1e-12));
  CHECK(s.forward.comm_s == Approx((P - 1) * T).epsilon(1e-12));
  CHECK(s.forward.exposed_comm_s == Approx((P - 1) * std::max(0.0, T - c)).margin(tol(c)));
  CHECK(s.forward.idle_s == Approx(0).margin(tol(c)));
  CHECK(s.forward.flops == Approx(4.0 * p.batch * p.heads * N * N * p.head_dim));
  if (T < c) CHECK(s.forward.overlap == Approx(1.0));
  else CHECK(s.forward.overlap == Approx(1.0 - (T - c) / T).epsilon(1e-9));
}

TEST_CASE("ring backward: K/V ring overlapped, dK and dV in fp32 after each compute, the homecoming at step P", "[ring]") {
  const int P = GENERATE(2, 3, 5);
  const double gbs = GENERATE(2000.0, 20.0, 2.0);
  // Fused steps round the finished dK, dV to the dtype before the homecoming;
  // pairwise steps send it as the fp32 running sum it was.
  const RingSteps steps = GENERATE(RingSteps::fused, RingSteps::pairwise);
  const i64 N = 512 * P;
  AttentionProblem p = problem(P, N, RingLayout::contiguous, false);
  p.parallel_part().passes = PassSelection::fwd_bwd;
  const RingTopology topo = one_node(gbs, 1.0);
  RingComputeModel cm = compute();
  cm.steps = steps;
  const RingSimulation s = simulate_ring(p, topo, cm);
  CAPTURE(P, gbs, ring_steps_name(steps));
  REQUIRE(s.backward);
  const RingPassResult& b = *s.backward;

  const i64 n = N / P;
  const double c = ring_block_cost(p, n, n, ChunkVisibility::full, Pass::bwd, compute()).time_s;
  const i64 kv = 2 * p.batch * p.h_kv() * n * p.head_dim * 2;
  const i64 dkv = 2 * p.batch * p.h_kv() * n * p.head_dim * 4;  // fp32 accumulators
  const double T_kv = 1e-6 + static_cast<double>(kv) / (gbs * 1e9);
  const double T_d = 1e-6 + static_cast<double>(dkv) / (gbs * 1e9);
  const i64 home_bytes = steps == RingSteps::fused ? kv : dkv;
  const double T_home = steps == RingSteps::fused ? T_kv : T_d;
  // Step 0 waits for K, V only; steps 1 … P − 2 also for the dK, dV sent after
  // the previous compute, one after the other on the hop; step P − 1 for those;
  // the homecoming follows.
  const double expected = std::max(c, T_kv) + (P - 2) * std::max(c, T_kv + T_d) + std::max(c, T_d) + T_home;
  CHECK(b.start_s == Approx(s.forward.end_s));
  // After the last compute only dK, dV travel: those of step P − 1, then home.
  CHECK(b.tail_s == Approx(std::max(c, T_d) - c + T_home).epsilon(1e-9));
  CHECK(b.exposed_steps_s <= b.exposed_comm_s);
  CHECK(b.exposed_comm_s - b.exposed_steps_s >= T_home * (1 - 1e-9));
  CHECK(s.forward.tail_s == 0);
  CHECK(s.forward.exposed_steps_s == s.forward.exposed_comm_s);
  CHECK(b.time_s == Approx(expected).epsilon(1e-12));
  CHECK(s.time_s == Approx(s.forward.time_s + b.time_s));

  int home = 0;
  double last_home = 0;
  for (const RingEvent* e : events_of(s, Pass::bwd, RingEventKind::transfer)) {
    if (!e->gradients) {
      CHECK(e->bytes == kv);
      continue;
    }
    CHECK(e->bytes == (e->step == P ? home_bytes : dkv));
    CHECK(e->step >= 1);
    CHECK(e->kv_owner == ring_kv_source(e->peer, e->step - 1, P));
    if (e->step == P) {
      ++home;
      CHECK(e->kv_owner == e->gpu);  // the chunks' own GPU
      last_home = std::max(last_home, e->end_s);
    }
  }
  CHECK(home == P);
  CHECK(b.end_s == Approx(last_home));
  // From P = 3 on, a middle step carries K, V and dK, dV; with P = 2 step 0
  // carries K, V only and step 1 dK, dV only.
  CHECK(b.bytes_per_step == (P >= 3 ? kv + dkv : dkv));
}

TEST_CASE("ring, zig-zag under the causal mask: every GPU's pairs equal to within a chunk's diagonal, no bubbles",
          "[ring]") {
  const int P = GENERATE(2, 4, 8);
  const i64 chunk = 256;
  const i64 N = 2 * P * chunk;
  const RingSimulation s = simulate_ring(problem(P, N, RingLayout::zigzag, true), free_links(), compute());
  CAPTURE(P);
  // Step 0: a GPU's own chunks, two diagonals and one full pair; every later
  // step two full pairs (one of its chunks sees both K/V chunks or each sees one).
  for (int r = 0; r < P; ++r)
    for (int st = 0; st < P; ++st) {
      const RingEvent& e = compute_event(s, Pass::fwd, r, st);
      CHECK(e.pairs == (st == 0 ? 2 * chunk * chunk + chunk : 2 * chunk * chunk));
    }
  for (const RingGpuTotals& g : s.forward.gpus) CHECK(g.pairs == s.forward.gpus.front().pairs);
  CHECK(s.forward.idle_s == Approx(0).margin(1e-15));
  // The same problem laid out contiguously has bubbles and takes longer.
  const RingSimulation c = simulate_ring(problem(P, N, RingLayout::contiguous, true), free_links(), compute());
  CHECK(c.forward.idle_s > 0);
  CHECK(c.forward.time_s > s.forward.time_s);
}

TEST_CASE("ring, zig-zag with uneven chunks: GPUs' pairs differ by no more than the chunks' size difference allows",
          "[ring]") {
  std::mt19937_64 rng(20261201);
  for (int trial = 0; trial < 20; ++trial) {
    const int P = 2 + static_cast<int>(rng() % 7);
    const i64 N = 2 * P + static_cast<i64>(rng() % 3000);
    const RingSimulation s = simulate_ring(problem(P, N, RingLayout::zigzag, true), free_links(), compute());
    i64 lo = s.forward.gpus.front().pairs, hi = lo, total = 0;
    for (const RingGpuTotals& g : s.forward.gpus) {
      lo = std::min(lo, g.pairs);
      hi = std::max(hi, g.pairs);
      total += g.pairs;
    }
    CAPTURE(P, N);
    CHECK(total == N * (N + 1) / 2);
    // GPU r's pairs are Σ over its two chunks a of |a|·begin_a + |a|(|a| + 1)/2.
    // Equal chunks of q make that the same for every GPU; chunks of q or q + 1
    // move begin_a by less than 2P tokens and |a| by one: at most
    // 2P(q + 1) + 2Pq per chunk, and one token more on each diagonal.
    const i64 q = N / (2 * P);
    CHECK(hi - lo <= 2 * (2 * P * (q + 1) + 2 * P * q) + 2 * (q + 1));
    CHECK(hi - lo < lo / 4);
  }
}

TEST_CASE("ring, contiguous under the causal mask: GPU 0 idles from step 1 on while the last GPU does the work",
          "[ring]") {
  const int P = GENERATE(2, 4, 8);
  const i64 n = 512;
  const AttentionProblem p = problem(P, n * P, RingLayout::contiguous, true);
  const RingSimulation s = simulate_ring(p, free_links(), compute());
  CAPTURE(P);
  const double diag = ring_block_cost(p, n, n, ChunkVisibility::diagonal, Pass::fwd, compute()).time_s;
  const double full = ring_block_cost(p, n, n, ChunkVisibility::full, Pass::fwd, compute()).time_s;
  for (int st = 1; st < P; ++st) {
    const RingEvent& e = compute_event(s, Pass::fwd, 0, st);
    CHECK(e.pairs == 0);
    CHECK(e.duration_s() == 0);
  }
  CHECK(compute_event(s, Pass::fwd, 0, 0).duration_s() == Approx(diag));
  // The last GPU sees every earlier chunk: it sets the pass's time and never waits.
  CHECK(s.forward.time_s == Approx(diag + (P - 1) * full).epsilon(1e-12));
  CHECK(s.forward.gpus.back().idle_s == Approx(0).margin(1e-15));
  // GPU 0's idle time is the work the others do after its step 0.
  CHECK(s.forward.gpus.front().idle_s == Approx((P - 1) * full).epsilon(1e-12));
  CHECK(s.forward.idle_s == Approx((P - 1) * full).epsilon(1e-12));
  // ... shown as idle bars on its timeline.
  double bars = 0;
  for (const RingEvent* e : events_of(s, Pass::fwd, RingEventKind::idle))
    if (e->gpu == 0) bars += e->duration_s();
  CHECK(bars == Approx((P - 1) * full).epsilon(1e-12));
}

TEST_CASE("ring, contiguous under the causal mask on a slow link: a GPU with nothing to compute waits for nothing",
          "[ring]") {
  // Links slow enough that every step waits for its K, V: GPU 0 still relays
  // the chunks, but from step 1 on it has no pair to compute, so none of its
  // gap is exposed communication — it is idle (drawn grey, not red).
  const int P = GENERATE(3, 4, 8);
  const i64 n = 512;
  const AttentionProblem p = problem(P, n * P, RingLayout::contiguous, true);
  const RingSimulation s = simulate_ring(p, one_node(0.001), compute());
  CAPTURE(P);
  CHECK(s.forward.gpus.front().wait_s == 0);
  for (const RingEvent* e : events_of(s, Pass::fwd, RingEventKind::wait)) CHECK(e->gpu != 0);
  // The GPUs that do compute later still wait for their data.
  CHECK(s.forward.gpus.back().wait_s > 0);
  CHECK(s.forward.exposed_comm_s > 0);
}

TEST_CASE("ring on one GPU: no transfers, the single-GPU time, scaling efficiency 1", "[ring]") {
  const bool causal = GENERATE(false, true);
  const bool backward = GENERATE(false, true);
  AttentionProblem p = problem(1, 3000, RingLayout::contiguous, causal);
  p.parallel_part().passes = backward ? PassSelection::fwd_bwd : PassSelection::fwd;
  const RingSimulation s = simulate_ring(p, one_node(1.0, 100.0), compute(0.5));
  CAPTURE(causal, backward);
  for (const RingEvent& e : s.events) CHECK(e.kind != RingEventKind::transfer);
  const double fwd = ring_single_gpu_cost(p, Pass::fwd, compute(0.5)).time_s;
  const double bwd = backward ? ring_single_gpu_cost(p, Pass::bwd, compute(0.5)).time_s : 0.0;
  CHECK(s.forward.time_s == Approx(fwd).epsilon(1e-12));
  CHECK(s.time_s == Approx(fwd + bwd).epsilon(1e-12));
  CHECK(s.single_gpu_s == Approx(fwd + bwd).epsilon(1e-12));
  CHECK(s.scaling_efficiency == Approx(1.0).epsilon(1e-12));
  CHECK(s.forward.comm_s == 0);
  CHECK(s.forward.overlap == 1.0);
  // Efficiency 0.5 doubles the bound.
  CHECK(fwd == Approx(2 * ring_single_gpu_cost(p, Pass::fwd, compute(1.0)).time_s));
}

TEST_CASE("ring with grouped-query attention: H_kv/H of the bytes travel, the compute stays", "[ring]") {
  AttentionProblem mha = problem(4, 8192, RingLayout::zigzag, true);
  mha.heads = 32;
  mha.kv_heads = 32;
  mha.parallel_part().passes = PassSelection::fwd_bwd;
  AttentionProblem gqa = mha;
  gqa.kv_heads = 8;
  const RingTopology topo = one_node(100.0, 3.0);
  const RingSimulation a = simulate_ring(mha, topo, compute());
  const RingSimulation b = simulate_ring(gqa, topo, compute());
  // The same transfers (waits differ: smaller transfers hide better).
  using Key = std::tuple<int, int, int, bool>;  // pass, gpu, step, dK/dV
  auto transfers = [](const RingSimulation& s) {
    std::map<Key, i64> m;
    for (const RingEvent& e : s.events)
      if (e.kind == RingEventKind::transfer) m[{static_cast<int>(e.pass), e.gpu, e.step, e.gradients}] = e.bytes;
    return m;
  };
  const auto ta = transfers(a), tb = transfers(b);
  REQUIRE(ta.size() == tb.size());
  REQUIRE(ta.size() == 4 * 3 + 4 * 3 + 4 * 4);
  for (const auto& [key, bytes] : ta) CHECK(tb.at(key) * 4 == bytes);
  CHECK(b.forward.compute_s == Approx(a.forward.compute_s));
  CHECK(b.backward->compute_s == Approx(a.backward->compute_s));
  CHECK(b.forward.bytes_per_step * 4 == a.forward.bytes_per_step);
  // Pairwise steps give the rung K, V expanded to H heads: a scratch buffer
  // only GQA needs; fused steps read the H_kv heads in place.
  auto has_term = [](const RingMemory& m, const std::string& name) {
    return std::any_of(m.terms.begin(), m.terms.end(), [&](const RingMemoryTerm& t) { return t.name == name; });
  };
  CHECK_FALSE(has_term(b.memory[0], "K_j, V_j expanded to H heads"));
  const RingPartition part = ring_partition(b.problem.seq_q, b.problem.gpus(), b.problem.layout());
  CHECK(has_term(ring_memory(b.problem, part, 0, RingSteps::pairwise), "K_j, V_j expanded to H heads"));
  CHECK_FALSE(has_term(ring_memory(a.problem, part, 0, RingSteps::pairwise), "K_j, V_j expanded to H heads"));
}

TEST_CASE("ring with N not divisible by P: each transfer carries its owner's tokens, all pairs counted once", "[ring]") {
  const bool causal = GENERATE(false, true);
  const std::size_t which = GENERATE(range(std::size_t{0}, ring_layouts().size()));
  AttentionProblem p = problem(4, 1003, ring_layouts()[which].layout, causal);
  p.parallel_part().passes = PassSelection::fwd_bwd;
  const RingSimulation s = simulate_ring(p, one_node(50.0, 1.0), compute());
  for (const RingEvent& e : s.events) {
    if (e.kind != RingEventKind::transfer) continue;
    const i64 tokens = s.partition.tokens_of(e.kv_owner);
    // dK, dV travel in fp32 but go home rounded to bf16 (fused steps, the default).
    const bool fp32 = e.gradients && e.step < p.gpus();
    CHECK(e.bytes == 2 * p.batch * p.h_kv() * tokens * p.head_dim * (fp32 ? 4 : 2));
  }
  i64 fwd_pairs = 0, bwd_pairs = 0;
  for (const RingGpuTotals& g : s.forward.gpus) fwd_pairs += g.pairs;
  for (const RingGpuTotals& g : s.backward->gpus) bwd_pairs += g.pairs;
  const i64 N = p.seq_q;
  CHECK(fwd_pairs == (causal ? N * (N + 1) / 2 : N * N));
  CHECK(bwd_pairs == fwd_pairs);
  CHECK(s.forward.flops == Approx(ring_convention_flops(p, fwd_pairs, Pass::fwd)));
  CHECK(s.backward->flops == Approx(2.5 * s.forward.flops));
}

TEST_CASE("ring events follow the rules: a transfer meets both ends' step, a step waits for its transfers", "[ring]") {
  std::mt19937_64 rng(4242);
  for (int trial = 0; trial < 30; ++trial) {
    AttentionProblem p = problem(1 + static_cast<int>(rng() % 12), 0, ring_layouts()[rng() % ring_layouts().size()].layout,
                            rng() % 2 == 0);
    p.seq_q = ring_layout_info(p.layout()).chunks_per_gpu * p.gpus() + static_cast<i64>(rng() % 5000);
    p.parallel_part().passes = (rng() % 2 == 0) ? PassSelection::fwd_bwd : PassSelection::fwd;
    const RingTopology topo = one_node(1.0 + static_cast<double>(rng() % 500), static_cast<double>(rng() % 20),
                                       1 + static_cast<int>(rng() % 8));
    const RingSimulation s = simulate_ring(p, topo, compute(0.7));
    const int P = p.gpus();
    CAPTURE(trial, P, p.seq_q, p.backward(), topo.gpus_per_node);
    std::map<std::tuple<int, int, int>, const RingEvent*> comp;  // (pass, gpu, step)
    for (const RingEvent& e : s.events)
      if (e.kind == RingEventKind::compute) comp[{static_cast<int>(e.pass), e.gpu, e.step}] = &e;
    for (const RingEvent& e : s.events) {
      CHECK(e.end_s >= e.start_s);
      if (e.kind != RingEventKind::transfer) continue;
      const int pass = static_cast<int>(e.pass);
      // The link: across nodes or inside one.
      const InterconnectModel& l = e.crosses_nodes ? topo.inter : topo.intra;
      CHECK(e.crosses_nodes == (e.peer / topo.gpus_per_node != e.gpu / topo.gpus_per_node));
      CHECK(e.duration_s() == Approx(l.latency_s + static_cast<double>(e.bytes) / l.bandwidth).epsilon(1e-9));
      if (!e.gradients) {
        // K, V of step s: when both ends have started step s, or (backward)
        // when the dK, dV ready before them have left the hop.
        const double both = std::max(comp[{pass, e.peer, e.step}]->start_s, comp[{pass, e.gpu, e.step}]->start_s);
        double after = both;
        for (const RingEvent& d : s.events)
          if (d.kind == RingEventKind::transfer && d.gradients && d.pass == e.pass && d.gpu == e.gpu &&
              d.step == e.step && d.start_s <= both)
            after = std::max(after, d.end_s);
        CHECK(e.start_s == Approx(after).epsilon(1e-12));
        // GPU `gpu` computes on them at step s + 1, after they arrived.
        CHECK(comp[{pass, e.gpu, e.step + 1}]->start_s >= e.end_s - tol(e.end_s));
        CHECK(comp[{pass, e.peer, e.step + 1}]->start_s >= e.end_s - tol(e.end_s));
      } else {
        // dK, dV leave after the sender's compute of the step before, once the
        // receiver has started the step; the next step waits for them.
        CHECK(e.start_s >= comp[{pass, e.peer, e.step - 1}]->end_s - tol(e.start_s));
        if (e.step < P) CHECK(e.start_s >= comp[{pass, e.gpu, e.step}]->start_s - tol(e.start_s));
        if (e.step + 1 < P) {
          CHECK(comp[{pass, e.gpu, e.step + 1}]->start_s >= e.end_s - tol(e.end_s));
          CHECK(comp[{pass, e.peer, e.step + 1}]->start_s >= e.end_s - tol(e.end_s));
        }
      }
    }
    // A hop carries one message at a time.
    std::map<std::tuple<int, int, int>, std::vector<const RingEvent*>> hop;  // (pass, gpu receiving, step)
    for (const RingEvent& e : s.events)
      if (e.kind == RingEventKind::transfer) hop[{static_cast<int>(e.pass), e.gpu, e.step}].push_back(&e);
    for (auto& [key, v] : hop) {
      std::sort(v.begin(), v.end(), [](const RingEvent* a, const RingEvent* b) { return a->start_s < b->start_s; });
      for (std::size_t k = 1; k < v.size(); ++k) CHECK(v[k]->start_s >= v[k - 1]->end_s - tol(v[k]->start_s));
    }
    // Every GPU's pass is covered by its compute, waits and idle time.
    for (const RingPassResult* r : {&s.forward, s.backward ? &*s.backward : nullptr}) {
      if (r == nullptr) continue;
      for (const RingGpuTotals& g : r->gpus)
        CHECK(g.compute_s + g.wait_s + g.idle_s == Approx(r->time_s).epsilon(1e-9));
      CHECK(r->exposed_comm_s <= r->comm_s + tol(r->comm_s));
    }
    CHECK(std::is_sorted(s.events.begin(), s.events.end(), [](const RingEvent& a, const RingEvent& b) {
      return a.gpu != b.gpu ? a.gpu < b.gpu : a.start_s < b.start_s;
    }));
  }
}

TEST_CASE("ring across nodes: only the hops between nodes take the inter-node link", "[ring]") {
  const AttentionProblem p = problem(16, 16 * 1024, RingLayout::zigzag, true);
  RingTopology topo = one_node(400.0, 3.0, 8);
  topo.inter = link(40.0, 5.0, "inter");
  const RingSimulation s = simulate_ring(p, topo, compute());
  for (const RingEvent* e : events_of(s, Pass::fwd, RingEventKind::transfer)) {
    const bool crossing = e->gpu == 0 || e->gpu == 8;  // from 15 and from 7
    CHECK(e->crosses_nodes == crossing);
    const InterconnectModel& l = crossing ? topo.inter : topo.intra;
    CHECK(e->duration_s() == Approx(l.latency_s + static_cast<double>(e->bytes) / l.bandwidth));
  }
  // The ring moves in lockstep: the slow hops set every step.
  const RingSimulation fast = simulate_ring(p, one_node(400.0, 3.0, 16), compute());
  CHECK(s.forward.time_s > fast.forward.time_s);
}

TEST_CASE("ring memory: the named terms of what each GPU holds, as the ring's kernels allocate", "[ring]") {
  AttentionProblem p = problem(4, 4096, RingLayout::zigzag, true);  // 8 chunks of 512: GPU 0 {0, 7}, GPU 1 {1, 6}
  p.batch = 1;
  p.heads = 24;
  p.kv_heads = 8;
  const RingPartition part = ring_partition(p.seq_q, p.gpus(), p.layout());
  const i64 n = 1024, c = 512, H = 24, Hkv = 8, d = 128;
  auto terms = [&](int gpu, RingSteps steps = RingSteps::pairwise) {
    std::map<std::string, i64> t;
    for (const RingMemoryTerm& x : ring_memory(p, part, gpu, steps).terms) t[x.name] = x.bytes;
    return t;
  };
  std::map<std::string, i64> t = terms(0);
  CHECK(t["Q"] == H * n * d * 2);
  CHECK(t["O"] == H * n * d * 2);
  CHECK(t["LSE (fp32)"] == H * n * 4);
  // Chunk 0 sees only itself under the mask: the rung writes its O directly.
  CHECK(t["O accumulator (fp32)"] == H * c * d * 4);
  CHECK(terms(1)["O accumulator (fp32)"] == H * n * d * 4);
  CHECK(t["K, V of its chunks"] == 2 * Hkv * n * d * 2);
  CHECK(t["K, V ring buffers (2)"] == 2 * 2 * Hkv * n * d * 2);
  CHECK(t["K_j, V_j expanded to H heads"] == 2 * H * c * d * 2);
  CHECK(t["partial O and LSE of a chunk pair"] == H * c * (d * 2 + 4));
  CHECK(t.size() == 8);  // nothing of the backward in a forward alone
  p.parallel_part().passes = PassSelection::fwd_bwd;
  t = terms(0);
  CHECK(t.size() == 15);
  CHECK(t["dO"] == H * n * d * 2);
  CHECK(t["dQ"] == H * n * d * 2);
  CHECK(t["dQ accumulator (fp32)"] == H * c * d * 4);
  CHECK(t["dK, dV of its chunks"] == 2 * Hkv * n * d * 2);
  CHECK(t["dK, dV travelling (fp32, 2 buffers)"] == 2 * 2 * Hkv * n * d * 4);
  CHECK(t["dK, dV of a step (fp32)"] == 2 * Hkv * n * d * 4);
  CHECK(t["partial dQ, dK, dV of a chunk pair (H heads)"] == 3 * H * c * d * 2);
  // Fused steps: the rungs read H_kv heads, fold O and add the gradients in
  // place — none of the chunk pair's scratch, everything else the same.
  std::map<std::string, i64> f = terms(0, RingSteps::fused);
  CHECK(f.size() == 12);
  for (const char* scratch : {"K_j, V_j expanded to H heads", "partial O and LSE of a chunk pair",
                              "partial dQ, dK, dV of a chunk pair (H heads)"}) {
    CHECK(f.count(scratch) == 0);
    f[scratch] = t[scratch];
  }
  CHECK(f == t);
  // Multi-head attention on one GPU: no ring buffers, no expansion.
  AttentionProblem one = problem(1, 4096, RingLayout::contiguous, false);
  one.parallel_part().passes = PassSelection::fwd_bwd;
  std::map<std::string, i64> u;
  for (const RingMemoryTerm& x : ring_memory(one, ring_partition(4096, 1, RingLayout::contiguous), 0).terms)
    u[x.name] = x.bytes;
  CHECK(u.count("K, V ring buffers (2)") == 0);
  CHECK(u.count("K_j, V_j expanded to H heads") == 0);
  CHECK(u.count("dK, dV of a step (fp32)") == 0);
  CHECK(u.count("O accumulator (fp32)") == 0);  // one pair: the rung writes O itself
  const RingSimulation s = simulate_ring(p, free_links(), compute());
  for (std::size_t r = 0; r < 4; ++r) CHECK(s.peak_bytes_per_gpu[r] == s.memory[r].total_bytes());
  CHECK(s.peak_bytes_per_gpu[1] > s.peak_bytes_per_gpu[0]);  // GPU 0's chunk 0 needs no accumulators
}

TEST_CASE("ring step view: the K/V owner and each chunk pair's visibility", "[ring]") {
  const RingPartition part = ring_partition(8, 2, RingLayout::zigzag);  // chunks of 2: GPU 0 {0, 3}, GPU 1 {1, 2}
  const RingStepView v0 = ring_step_view(part, 0, true);
  CHECK(v0.kv_owner == std::vector<int>{0, 1});
  REQUIRE(v0.blocks[0].size() == 4);
  CHECK(v0.blocks[0][0].visibility == ChunkVisibility::diagonal);  // (0, 0)
  CHECK(v0.blocks[0][0].pairs == 3);
  CHECK(v0.blocks[0][1].visibility == ChunkVisibility::none);      // (0, 3)
  CHECK(v0.blocks[0][2].visibility == ChunkVisibility::full);      // (3, 0)
  CHECK(v0.blocks[0][3].visibility == ChunkVisibility::diagonal);  // (3, 3)
  const RingStepView v1 = ring_step_view(part, 1, true);
  CHECK(v1.kv_owner == std::vector<int>{1, 0});
  CHECK(v1.blocks[0][0].kv_chunk == 1);
  CHECK(v1.blocks[0][0].visibility == ChunkVisibility::none);   // (0, 1)
  CHECK(v1.blocks[0][2].visibility == ChunkVisibility::full);   // (3, 1)
  CHECK(v1.blocks[0][3].visibility == ChunkVisibility::full);   // (3, 2)
  CHECK_THROWS_WITH(ring_step_view(part, 2, true), Catch::Contains("steps 0 to 1, not 2"));
}

TEST_CASE("ring validation: one sentence per problem, and simulate_ring refuses with the first", "[ring]") {
  auto first = [](AttentionProblem p) {
    const auto why = validate(p);
    return why.empty() ? std::string() : why.front().message;
  };
  AttentionProblem ok = problem(4, 4096, RingLayout::zigzag, true);
  CHECK(validate(ok).empty());
  AttentionProblem p = ok;
  p.parallel_part().gpus = 0;
  CHECK(first(p) == "the ring needs 1 to 4096 GPUs, not 0");
  p = ok;
  p.seq_q = 7;
  CHECK_THAT(first(p), Catch::Contains("cannot fill the 8 chunks of the zigzag layout on 4 GPUs"));
  p = ok;
  p.heads = 24;
  p.kv_heads = 7;
  CHECK_THAT(first(p), Catch::Contains("H = 24 is not a multiple of H_kv = 7"));
  p = ok;
  p.kv_heads = 64;
  CHECK_THAT(first(p), Catch::Contains("H_kv = 64 key/value heads exceed the H = 8 query heads"));
  p = ok;
  p.head_dim = 0;
  CHECK_THAT(first(p), Catch::Contains("head dim d must be at least 1"));
  p = ok;
  p.batch = -1;
  CHECK_THAT(first(p), Catch::Contains("batch B must be at least 1"));

  p = ok;
  p.parallel_part().gpus = 0;
  CHECK_THROWS_WITH(simulate_ring(p, free_links(), compute()), "the ring needs 1 to 4096 GPUs, not 0");
  CHECK_THROWS_WITH(simulate_ring(ok, free_links(), compute(0.0)), Catch::Contains("efficiency must be in (0, 1]"));
  RingTopology bad = free_links();
  bad.intra.bandwidth = 0;
  CHECK_THROWS_WITH(simulate_ring(ok, bad, compute()), Catch::Contains("link 'intra' needs a positive bandwidth"));
  bad = free_links();
  bad.gpus_per_node = 0;
  CHECK_THROWS_WITH(simulate_ring(ok, bad, compute()), Catch::Contains("a node needs at least one GPU"));
}

TEST_CASE("ring: a 32-GPU 128K training step is simulated from a handful of distinct blocks", "[ring]") {
  AttentionProblem p = problem(32, 131072, RingLayout::zigzag, true);
  p.batch = 1;
  p.heads = 32;
  p.kv_heads = 32;
  p.parallel_part().passes = PassSelection::fwd_bwd;
  const RingSimulation s = simulate_ring(p, default_ring_topology(), compute());
  // 32 GPUs × 32 steps of compute per pass; K, V 31 steps; dK, dV 32 (with the homecoming).
  CHECK(events_of(s, Pass::fwd, RingEventKind::compute).size() == 32 * 32);
  CHECK(events_of(s, Pass::bwd, RingEventKind::transfer).size() == 32 * 31 + 32 * 32);
  CHECK(s.scaling_efficiency > 0);
  CHECK(s.scaling_efficiency <= 1.0 + 1e-9);
}

TEST_CASE("interconnect presets: the links with their sources, a measured link in the same format", "[ring]") {
  const InterconnectModel* nv = find_interconnect("NVLink4");
  REQUIRE(nv != nullptr);
  CHECK(nv->bandwidth == Approx(450e9));
  CHECK(nv->latency_s > 0);
  CHECK_THAT(nv->source, Catch::Contains("900 GB/s"));
  const InterconnectModel* ib = find_interconnect("ib-ndr");
  REQUIRE(ib != nullptr);
  CHECK(ib->bandwidth == Approx(50e9));
  const InterconnectModel* pcie = find_interconnect("pcie5");
  REQUIRE(pcie != nullptr);
  CHECK(pcie->bandwidth == Approx(63e9));
  for (const InterconnectModel& l : interconnect_presets()) {
    CHECK_FALSE(l.source.empty());
    CHECK((l.kind == "datasheet" || l.kind == "measured"));  // measured ones: interconnects/measured/
  }
  const RingTopology t = default_ring_topology();
  CHECK(t.intra.id == "nvlink4");
  CHECK(t.inter.id == "ib-ndr");
  CHECK(t.gpus_per_node == 8);

  InterconnectModel m = *nv;
  m.id = "nccl-h100-pair";
  m.kind = "measured";
  m.bandwidth = 123.5e9;
  m.source = "measured on 2 × H100 SXM, NCCL send/recv";
  const InterconnectModel back = parse_interconnect_json(to_interconnect_json(m), "x.json");
  CHECK(back.id == m.id);
  CHECK(back.kind == "measured");
  CHECK(back.bandwidth == Approx(m.bandwidth));
  CHECK(back.latency_s == Approx(m.latency_s));
  CHECK(back.notes == m.notes);

  CHECK_THROWS_WITH(parse_interconnect_json(R"({"format": "flashlab-interconnect/1", "id": "x", "source": "s",
                                                "latency_us": 1})",
                                            "link.json"),
                    "link.json: missing field 'bandwidth_gbs'");
  CHECK_THROWS_WITH(parse_interconnect_json(R"({"format": "flashlab-interconnect/1", "id": "x", "source": "s",
                                                "bandwidth_gbs": -3, "latency_us": 1})",
                                            "link.json"),
                    Catch::Contains("'bandwidth_gbs' must be positive"));
  CHECK_THROWS_WITH(parse_interconnect_json(R"({"id": "x"})", "link.json"), Catch::Contains("field 'format'"));
  CHECK_THROWS_WITH(load_interconnect("warp-drive"), Catch::Contains("unknown link 'warp-drive' (known: ib-ndr, nvlink4, pcie5"));
}

TEST_CASE("ring problems: one equality, the same attention, the one-GPU baseline", "[sim][ring]") {
  AttentionProblem p = default_ring_problem();
  p.heads = 24;
  p.kv_heads = 8;
  p.seq_q = 32768;
  p.parallel_part().gpus = 4;
  p.parallel_part().passes = PassSelection::fwd_bwd;
  AttentionProblem q = p;
  CHECK(p == q);
  q.parallel_part().layout = RingLayout::contiguous;
  CHECK(p != q);
  CHECK(same_attention(p, q));
  q = p;
  q.kv_heads = 24;
  CHECK_FALSE(same_attention(p, q));
  const AttentionProblem one = on_one_gpu(p);
  CHECK(one.gpus() == 1);
  CHECK(one.layout() == RingLayout::contiguous);
  CHECK(same_attention(one, p));
  CHECK(one.backward() == p.backward());
  const AttentionProblem whole = whole_problem(p);
  CHECK(whole.n_q() == 32768);
  CHECK(whole.n_kv() == 32768);
  CHECK(whole.heads == 24);
  CHECK(whole.causal == p.causal);
  CHECK(block_problem(p, 4096, 8192, false).n_kv() == 8192);
}

TEST_CASE("ring setup validation: each error names the machine's or the compute model's field", "[ring]") {
  RingTopology t = free_links();
  t.gpus_per_node = 0;
  t.inter.bandwidth = 0;
  const std::vector<RingSetupError> topo = validate(t);
  REQUIRE(topo.size() == 2);
  CHECK(topo[0].field == RingSetupField::gpus_per_node);
  CHECK(topo[1].field == RingSetupField::inter);
  CHECK(ring_setup_field_key(topo[1].field) == "inter");
  RingComputeModel cm = compute(1.5);
  const std::vector<RingSetupError> c = validate(cm, DType::bf16);
  REQUIRE(c.size() == 1);
  CHECK(c[0].field == RingSetupField::efficiency);
  CHECK_THAT(c[0].message, Catch::Contains("efficiency must be in (0, 1]"));
}

TEST_CASE("ring, a slow host: each step waits for the host to issue it, one host for every GPU or one per GPU",
          "[ring][host]") {
  // A problem so small that the GPUs' work is nanoseconds: the pass is the
  // host's issuing. Zig-zag on 2 GPUs, causal, forward: step 0 computes 3
  // chunk pairs on each GPU, step 1 two; only step 0 has an exchange.
  AttentionProblem p = problem(2, 64, RingLayout::zigzag, true);
  p.batch = 1;
  p.heads = 1;
  p.kv_heads = 1;
  RingComputeModel cm = compute();
  const double c = 10e-6, L = 20e-6, X = 50e-6;
  cm.host.call_s = c;
  cm.host.launch_s = L;  // no rung launch model: the rung's launch takes the small kernel's
  cm.host.exchange_s = X;
  cm.host.gpus = 2;
  const RingSimulation s = simulate_ring(p, one_node(400, 1), cm);
  // The exchange: 4 calls per GPU and the NCCL group; each GPU's turn at
  // step 0: 3 calls, 3 × (2 calls + a launch), 3 calls; at step 1: 4 calls,
  // 2 × (2 calls + a launch), 3 calls.
  const double one_host = X + 8 * c + 2 * (12 * c + 3 * L) + 2 * (11 * c + 2 * L);
  CHECK(s.forward.time_s == Approx(one_host).epsilon(1e-4));
  // GPU 1's step 0 starts once GPU 0's turn is issued and its own first launch.
  CHECK(compute_event(s, Pass::fwd, 1, 0).start_s ==
        Approx(X + 8 * c + (12 * c + 3 * L) + 4 * c + L).epsilon(1e-6));
  // A process per GPU: each host issues its own turn and half the exchange.
  cm.host.host_per_gpu = true;
  const RingSimulation per_gpu = simulate_ring(p, one_node(400, 1), cm);
  CHECK(per_gpu.forward.time_s == Approx(X / 2 + 4 * c + (12 * c + 3 * L) + (11 * c + 2 * L)).epsilon(1e-4));
  // Two nodes of one GPU: one process cannot drive both, so each has its host.
  cm.host.host_per_gpu = false;
  CHECK(simulate_ring(p, one_node(400, 1, 1), cm).forward.time_s == Approx(per_gpu.forward.time_s).epsilon(1e-3));
  // Without the host's costs the same pass is the GPUs' alone: far shorter.
  cm.host = HostIssueCosts{};
  CHECK(simulate_ring(p, one_node(400, 1), cm).forward.time_s < one_host / 100);
}

TEST_CASE("ring, a host far faster than the steps delays only the first step's issue", "[ring][host]") {
  const AttentionProblem p = problem(4, 32768, RingLayout::zigzag, true);
  RingComputeModel cm = compute(0.5);
  const RingSimulation base = simulate_ring(p, one_node(400, 3), cm);
  cm.host.call_s = 1e-9;
  cm.host.launch_s = 1e-9;
  cm.host.exchange_s = 1e-9;
  cm.host.gpus = 4;
  const RingSimulation hosted = simulate_ring(p, one_node(400, 3), cm);
  // The first step starts once its launches are issued (tens of calls of a
  // nanosecond); after that the GPUs never wait for the host.
  CHECK(hosted.forward.time_s >= base.forward.time_s);
  CHECK(hosted.forward.time_s - base.forward.time_s < 200e-9);
}

TEST_CASE("each side posts its part of an exchange when it is ready, and the later posting starts the transfer",
          "[ring]") {
  // Contiguous under the causal mask, with the backward: GPU 0 has one chunk
  // pair and finishes early; GPU 1 has three. Its dK, dV come home only when
  // GPU 1 is done, so GPU 0 posts the homecoming long before it can start.
  const int P = 2;
  AttentionProblem p = problem(P, 4096, RingLayout::contiguous, true);
  p.parallel_part().passes = PassSelection::fwd_bwd;
  const RingSimulation s = simulate_ring(p, one_node(1e6, 5.0), compute());
  int checked = 0;
  for (const RingEvent* e : events_of(s, Pass::bwd, RingEventKind::transfer)) {
    CAPTURE(e->gpu, e->peer, e->step);
    CHECK(e->posted_s <= e->start_s + tol(e->start_s));
    CHECK(e->peer_posted_s <= e->start_s + tol(e->start_s));
    // One message at a time on a hop: a transfer starts at the later posting
    // or when the hop's previous message has arrived.
    CHECK(std::max(e->posted_s, e->peer_posted_s) <= e->start_s + tol(e->start_s));
    if (e->step == P && e->gpu == 0) {
      // GPU 0 posts once its last step and that step's transfers are done ...
      double ready = compute_event(s, Pass::bwd, 0, P - 1).end_s;
      for (const RingEvent* x : events_of(s, Pass::bwd, RingEventKind::transfer))
        if (x->step == P - 1 && (x->gpu == 0 || x->peer == 0)) ready = std::max(ready, x->end_s);
      CHECK(e->posted_s == Approx(ready).epsilon(1e-12));
      // ... and GPU 1, the sender, only after its longer last step.
      CHECK(e->peer_posted_s >= compute_event(s, Pass::bwd, 1, P - 1).end_s - tol(e->start_s));
      CHECK(e->start_s == Approx(e->peer_posted_s).epsilon(1e-12));
      CHECK(e->start_s - e->posted_s > 0.5 * compute_event(s, Pass::bwd, 1, P - 1).duration_s());
      ++checked;
    }
  }
  CHECK(checked == 1);
}

TEST_CASE("ring, the exchange's kernel holding SMs: the rung slows while a transfer is in flight, not after",
          "[ring]") {
  // Two GPUs, no mask: step 0 computes while K, V travel. With a link so slow
  // that the transfer outlasts the step, step 0 runs wholly beside the
  // exchange's kernel: on 99 of the H100's 132 SMs, 4/3 of its time. Step 1
  // has no transfer and runs at full speed.
  const AttentionProblem p = problem(2, 8192, RingLayout::contiguous, false);
  const RingTopology slow = one_node(5, 0);
  RingComputeModel cm = compute(0.5);
  REQUIRE(cm.hw.sm_count == 132);
  const RingSimulation base = simulate_ring(p, slow, cm);
  cm.host.exchange_sms = 33;
  const RingSimulation held = simulate_ring(p, slow, cm);
  for (int r = 0; r < 2; ++r) {
    const double c0 = compute_event(base, Pass::fwd, r, 0).duration_s();
    REQUIRE(events_of(base, Pass::fwd, RingEventKind::transfer).front()->duration_s() > 2 * c0);
    CHECK(compute_event(held, Pass::fwd, r, 0).duration_s() == Approx(c0 * 4.0 / 3.0).epsilon(1e-12));
    CHECK(compute_event(held, Pass::fwd, r, 1).duration_s() ==
          Approx(compute_event(base, Pass::fwd, r, 1).duration_s()).epsilon(1e-12));
  }
  // On free links the transfer takes no time: nothing is slowed.
  const RingSimulation fast = simulate_ring(p, free_links(), cm);
  cm.host.exchange_sms = 0;
  CHECK(fast.forward.time_s == Approx(simulate_ring(p, free_links(), cm).forward.time_s).epsilon(1e-12));
  // A transfer shorter than the step: the rung is slowed for its span only.
  cm.host.exchange_sms = 33;
  const RingTopology quick = one_node(400, 0);
  const RingSimulation part = simulate_ring(p, quick, cm);
  const double c0 = compute_event(base, Pass::fwd, 0, 0).duration_s();
  const double T = events_of(part, Pass::fwd, RingEventKind::transfer).front()->duration_s();
  REQUIRE(T < c0);
  // During T it does 3/4 of the work per second: T/4 of the work is left over.
  CHECK(compute_event(part, Pass::fwd, 0, 0).duration_s() == Approx(c0 + T / 4).epsilon(1e-9));
}
