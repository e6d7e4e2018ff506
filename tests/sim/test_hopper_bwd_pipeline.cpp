// The Hopper backward's schedule inside one CTA: one interval per op, step and
// warpgroup; the work of each unit is the closed form of one B_r × B_c block
// (five products of 2·B_r·B_c·d FLOPs, B_r·B_c exponentials, the tiles'
// bytes); the causal visits; the ring never holds more than its stages and a
// stage is refilled only once released; the two warpgroups compute P_ijᵀ at
// once under dP_ijᵀ, and dS_ijᵀ at once while the tensor cores wait; dQ_i waits
// for the barrier; dQ_i's blocks go through the writer's buffers (or by the
// warpgroups' reductions) with the same bytes, and a warpgroup stores into a
// buffer only once the writer has read it; the step-through's events map onto
// the timeline.
#include <algorithm>
#include <map>

#include "hopper_fixture.hpp"

using namespace flashlab::sim;
using namespace flashlab::test;  // hopper_fixture.hpp

namespace {

// The most intervals of one unit running at one moment.
int most_at_once(const std::vector<PipeInterval>& v) {
  std::vector<std::pair<double, int>> edges;
  for (const PipeInterval& iv : v) {
    if (iv.busy_ns <= 0) continue;
    edges.push_back({iv.start_ns, 1});
    edges.push_back({iv.start_ns + iv.busy_ns, -1});
  }
  std::sort(edges.begin(), edges.end());  // an end before a start at the same moment
  int now = 0, most = 0;
  for (const auto& [t, d] : edges) most = std::max(most, now += d);
  return most;
}

// Every compiled configuration with each way of adding dQ: the writer with two
// buffers (the build's default), with one, and the vector reductions.
std::vector<HopperBwdConfig> every_dq_way() {
  std::vector<HopperBwdConfig> v;
  for (const HopperBwdConfig& c : kHopperBwdConfigs)
    for (const int buffers : {2, 1, 0}) {
      HopperBwdConfig x = c;
      x.dq_buffers = buffers;
      v.push_back(x);
    }
  return v;
}

}  // namespace

TEST_CASE("the Hopper backward's configurations: two warpgroups of 64 keys, in a Hopper SM", "[sim][hopper][bwd]") {
  CHECK(hopper_bwd_head_dims_text() == "64, 128");
  for (const HopperBwdConfig& c : kHopperBwdConfigs) {
    CAPTURE(c.head_dim);
    CHECK(c.consumers() == 2);
    // The build's, in the kernel and in the model alike (at most one at B_r = 80).
    CHECK(c.dq_buffers == (c.Br == 80 ? std::min(kHopperBwdDqBuffers, 1) : kHopperBwdDqBuffers));
    CHECK(c.stages >= 2);
    CHECK(static_cast<i64>(hopper_bwd_smem_bytes(c)) <= h200().max_smem_per_block_bytes);
  }
  // dQ through a writer warp: a 64 × 64 fp32 block (16 KiB) per warpgroup and
  // buffer, and no 1 KiB of alignment slack. Double-buffered, d = 64 (B_r = 128)
  // takes 164 − 1 + 64 = 227 KiB, the whole opt-in limit; d = 128 (B_r = 64) 226 KiB.
  for (const int buffers : {0, 1, 2}) {
    CAPTURE(buffers);
    const HopperBwdConfig d64{64, 128, 128, 2, buffers}, d128{128, 64, 128, 2, buffers};
    const std::size_t slack = buffers > 0 ? 0 : 1024;
    CHECK(hopper_bwd_smem_bytes(d64) == 166912u + slack + buffers * 32768u);
    CHECK(hopper_bwd_smem_bytes(d128) == 165888u + slack + buffers * 32768u);
    CHECK(static_cast<i64>(hopper_bwd_smem_bytes(d64)) <= h200().max_smem_per_block_bytes);
    CHECK(static_cast<i64>(hopper_bwd_smem_bytes(d128)) <= h200().max_smem_per_block_bytes);
  }
  CHECK(h200().max_smem_per_block_bytes == 232448);  // 227 KiB: d = 64's two dQ buffers fill it to the byte
  CHECK(hopper_bwd_smem_bytes(HopperBwdConfig{64, 128, 128, 2, 2}) == 232448u);
  // B_r = 80 at d = 128, dQ swapped: K_j, V_j 64 KiB, two stages of Q_i, dO_i 4 · 20 KiB, dS_ij
  // 2 · 20 KiB, one (80, 64) fp32 block of dQ_i per warpgroup 2 · 20 KiB, L_i and D_i 4 · 320 bytes
  // padded to 384, 1 KiB of barriers: 226.5 KiB with one buffer; a second would not fit.
  const HopperBwdConfig d80{128, 80, 128, 2, 1, HopperMask::non_causal};
  CHECK(d80.dq_swapped());
  CHECK(d80.stat_stage_bytes() == 384);
  CHECK(hopper_bwd_smem_bytes(d80) == 65536u + 81920u + 40960u + 40960u + 4 * 384u + 1024u);
  CHECK(static_cast<i64>(hopper_bwd_smem_bytes(d80)) <= h200().max_smem_per_block_bytes);
  HopperBwdConfig d80_two = d80;
  d80_two.dq_buffers = 2;
  CHECK(static_cast<i64>(hopper_bwd_smem_bytes(d80_two)) > h200().max_smem_per_block_bytes);
  for (const HopperBwdConfig& c : kHopperBwdConfigs) CHECK(c.dq_swapped() == (c.Br == 80));
}

TEST_CASE("the Hopper backward's row per head dim and mask", "[sim][hopper][bwd]") {
  for (const bool causal : {false, true}) {
    CAPTURE(causal);
    REQUIRE(hopper_bwd_config(64, causal));
    CHECK(hopper_bwd_config(64, causal)->Br == 128);
    REQUIRE(hopper_bwd_config(128, causal));
    CHECK(hopper_bwd_config(128, causal)->Bc == 128);
    CHECK_FALSE(hopper_bwd_config(96, causal));
  }
  // d = 128: 64 × 128 under the causal mask; unmasked the build's B_r (80 unless built with 64).
  CHECK(hopper_bwd_config(128, true)->Br == 64);
  CHECK(hopper_bwd_config(128, false)->Br == kHopperBwdD128Br);
  CHECK(hopper_bwd_config(128, false)->mask == HopperMask::non_causal);
  CHECK(hopper_bwd_config(64, true)->mask == HopperMask::any);
  CHECK(to_string(HopperMask::non_causal) == "non-causal");
  // Each head dim once, though d = 128 has a row per mask.
  CHECK(hopper_bwd_head_dims_text() == "64, 128");
}

TEST_CASE("the Hopper backward: one interval per op, step and warpgroup, T_r − first_row(j) steps", "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& c : every_dq_way())
    for (const bool causal : {false, true})
      for (const i64 n : {i64{1}, i64{100}, i64{1000}, i64{4096}}) {
        const AttentionProblem p = hopper_problem(n, c.head_dim, causal);
        const i64 T_r = (n + c.Br - 1) / c.Br, T_c = (n + c.Bc - 1) / c.Bc;
        for (const i64 j : {i64{0}, T_c / 2, T_c - 1}) {
          CAPTURE(c.head_dim, c.dq_buffers, causal, n, j);
          const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(p, j, c, h200());
          // Under the mask column block j starts at the row block of its first key, j·B_c.
          const i64 first = causal ? (j * c.Bc) / c.Br : 0;
          CHECK(h.first_i == first);
          CHECK(h.visits == T_r - first);
          std::map<PipeOp, i64> count;
          for (const PipeInterval& iv : h.intervals) ++count[iv.op];
          const i64 W = c.consumers();
          for (PipeOp op : {PipeOp::gemm_St, PipeOp::gemm_dPt, PipeOp::softmax_bwd, PipeOp::store_dS, PipeOp::gemm_dV,
                            PipeOp::gemm_dK, PipeOp::gemm_dQ, PipeOp::reduce_dQ}) {
            CAPTURE(to_string(op));
            CHECK(count[op] == h.visits * W);
          }
          for (PipeOp op : {PipeOp::copy_Q, PipeOp::copy_dO, PipeOp::copy_LD}) CHECK(count[op] == h.visits);
          CHECK(count[PipeOp::copy_K] == 1);
          CHECK(count[PipeOp::copy_V] == 1);
          CHECK(count[PipeOp::epilogue_dKdV] == W);
          // With the writer each warpgroup also stores its block of dQ_i to shared memory.
          const i64 dq_stores = c.dq_buffers > 0 ? h.visits * W : 0;
          CHECK(count[PipeOp::store_dQ] == dq_stores);
          CHECK(h.intervals.size() == static_cast<size_t>(2 + 3 * h.visits + 8 * W * h.visits + W + dq_stores));
          CHECK(h.barrier_ns.size() == static_cast<size_t>(h.visits));
          CHECK(h.stage_uses.size() == static_cast<size_t>(h.visits));
        }
      }
}

TEST_CASE("the Hopper backward's work is the closed form of a B_r × B_c block", "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& c : every_dq_way())
    for (const bool causal : {false, true}) {
      CAPTURE(c.head_dim, c.dq_buffers, causal);
      const AttentionProblem p = hopper_problem(1000, c.head_dim, causal);
      const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(p, 1, c, h200());
      const PipelineRates& r = h.rates;
      const double Br = c.Br, Bc = c.Bc, d = c.head_dim, steps = static_cast<double>(h.visits);
      // Five products of 2·B_r·B_c·d FLOPs each per step, every step whole.
      CHECK(h.tensor_busy_ns == Approx(steps * 5 * 2 * Br * Bc * d / r.mma_flops_per_ns).epsilon(1e-12));
      CHECK(h.gemm_ns_per_step * c.consumers() == Approx(5 * 2 * Br * Bc * d / r.mma_flops_per_ns).epsilon(1e-12));
      // P_ij: B_r·B_c exponentials and 2·B_r·B_c element-wise operations (τ, S − L_i), the slower of the two;
      // dS_ij: 3·B_r·B_c (dP − D_i, the product, τ); then its B_r·B_c 16-bit elements stored to shared memory.
      const double softmax =
          std::max(Br * Bc / r.exp_per_ns, 2 * Br * Bc / r.fp32_ops_per_ns) + 3 * Br * Bc / r.fp32_ops_per_ns;
      const double store = Br * Bc * 2 / r.smem_bytes_per_ns;
      CHECK(h.softmax_busy_ns == Approx(steps * (softmax + store)).epsilon(1e-12));
      // dQaccum_i (B_r × d in fp32) read and written per step in the L2, the same bytes whoever adds:
      // the writer's TMA reductions, or the load/store path's own; dK_j, dV_j (B_c × d) at the end.
      const double reduce = steps * 2 * Br * d * 4 / r.copy_bytes_per_ns, out = 2 * Bc * d * 2 / r.copy_bytes_per_ns;
      CHECK(h.reduce_ns_per_step * c.consumers() == Approx(2 * Br * d * 4 / r.copy_bytes_per_ns).epsilon(1e-12));
      if (c.dq_buffers > 0) {
        // The writer adds; the warpgroups store dQ_i's B_r × d fp32 values to shared memory.
        CHECK(h.dq_writer_busy_ns == Approx(reduce).epsilon(1e-12));
        CHECK(h.dq_store_ns_per_step * c.consumers() == Approx(Br * d * 4 / r.smem_bytes_per_ns).epsilon(1e-12));
        CHECK(h.load_store_busy_ns == Approx(steps * Br * d * 4 / r.smem_bytes_per_ns + out).epsilon(1e-12));
      } else {
        CHECK(h.dq_writer_busy_ns == 0);
        CHECK(h.dq_store_ns_per_step == 0);
        CHECK(h.load_store_busy_ns == Approx(reduce + out).epsilon(1e-12));
      }
      // K_j, V_j once; Q_i, dO_i (B_r × d, 16 bits) and L_i, D_i (B_r, fp32) per step.
      CHECK(h.copy_busy_ns == Approx((2 * Bc * d * 2 + steps * (2 * Br * d * 2 + 2 * Br * 4)) / r.copy_bytes_per_ns)
                                  .epsilon(1e-12));
      CHECK(h.tensor_utilisation() > 0);
      CHECK(h.tensor_utilisation() < 1);
    }
}

TEST_CASE("the Hopper backward's units and ring: one op at a time or a shared group, at most `stages` blocks",
          "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& c : every_dq_way())
    for (const bool causal : {false, true}) {
      CAPTURE(c.head_dim, c.dq_buffers, causal);
      const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(hopper_problem(2000, c.head_dim, causal), 0, c, h200());
      CHECK(most_at_once(on_unit(h, PipeUnit::copy_engine)) == 1);
      CHECK(most_at_once(on_unit(h, PipeUnit::dq_writer)) == (c.dq_buffers > 0 ? 1 : 0));
      CHECK(most_at_once(on_unit(h, PipeUnit::tensor_cores)) <= c.consumers());
      CHECK(most_at_once(on_unit(h, PipeUnit::softmax_units)) <= c.consumers());
      CHECK(most_at_once(on_unit(h, PipeUnit::load_store)) <= c.consumers());
      // A stage is refilled only once the block before released it.
      for (size_t k = static_cast<size_t>(c.stages); k < h.stage_uses.size(); ++k) {
        const BwdStageUse& now = h.stage_uses[k];
        const BwdStageUse& before = h.stage_uses[k - static_cast<size_t>(c.stages)];
        CHECK(now.stage == before.stage);
        CHECK(now.issued_ns >= before.released_ns);
      }
      // At every issue and release, the blocks held (issued, not released) are at most `stages`.
      for (const BwdStageUse& at : h.stage_uses)
        for (const double t : {at.issued_ns, at.arrived_ns, at.released_ns}) {
          int held = 0;
          for (const BwdStageUse& u : h.stage_uses) held += u.issued_ns <= t && t < u.released_ns;
          CHECK(held <= c.stages);
        }
      // Each step's products wait for its stage to be full, and release it afterwards.
      for (const BwdStageUse& u : h.stage_uses) {
        CHECK(h.find(PipeOp::gemm_St, u.i)->start_ns >= u.arrived_ns);
        CHECK(u.released_ns >= h.find(PipeOp::gemm_dQ, u.i, 1)->start_ns);
      }
    }
}

TEST_CASE("the two warpgroups compute P_ijᵀ under dP_ijᵀ, then dS_ijᵀ while the tensor cores wait",
          "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& c : kHopperBwdConfigs) {
    CAPTURE(c.head_dim);
    const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(hopper_problem(4096, c.head_dim, false), 3, c, h200());
    const PipelineRates& r = h.rates;
    const double half = double(c.Br) * c.Bc / 2;  // one warpgroup's elements
    const double p_alone = std::max(half / r.exp_per_ns, 2 * half / r.fp32_ops_per_ns);
    const double ds_alone = 3 * half / r.fp32_ops_per_ns;
    CHECK(h.softmax_ns_per_step == Approx(p_alone + ds_alone).epsilon(1e-12));
    auto on_tensor_cores = [&](double from, double to) {
      double t = 0;
      for (const PipeInterval& iv : h.intervals)
        if (iv.unit == PipeUnit::tensor_cores)
          t += std::max(0.0, std::min(to, iv.start_ns + iv.busy_ns) - std::max(from, iv.start_ns));
      return t;
    };
    double stores = 0;
    for (i64 i = 0; i < h.visits; ++i) {
      CAPTURE(i);
      const PipeInterval* a = h.find(PipeOp::softmax_bwd, i, 0);
      const PipeInterval* b = h.find(PipeOp::softmax_bwd, i, 1);
      const PipeInterval* sa = h.find(PipeOp::store_dS, i, 0);
      const PipeInterval* sb = h.find(PipeOp::store_dS, i, 1);
      REQUIRE((a && b && sa && sb));
      // Side by side: the same start and end, each at half the units' rate, twice as long as alone.
      CHECK(a->start_ns == Approx(b->start_ns));
      CHECK(a->end_ns == Approx(b->end_ns));
      CHECK(a->busy_ns == Approx(2 * p_alone).epsilon(1e-9));
      CHECK(a->work_ns == Approx(p_alone).epsilon(1e-12));
      CHECK(sa->start_ns == Approx(sb->start_ns));
      // P_ijᵀ starts with S_ijᵀ in registers and runs beside dP_ijᵀ on the tensor cores.
      CHECK(a->start_ns >= h.find(PipeOp::gemm_St, i, 1)->end_ns - 1e-6);
      const PipeInterval* dp = h.find(PipeOp::gemm_dPt, i, 1);
      CHECK(dp->start_ns < a->end_ns);
      CHECK(on_tensor_cores(a->start_ns, a->end_ns) > 0);
      // dS_ijᵀ waits for dP_ijᵀ, and no product runs while it is computed and stored.
      CHECK(sa->start_ns >= dp->end_ns - 1e-6);
      CHECK(on_tensor_cores(sa->start_ns, sa->end_ns) == Approx(0).margin(1e-6));
      stores += sa->end_ns - sa->start_ns;
      // dQ_i and dK_j wait for the barrier: both halves of dS_ijᵀ stored; dV_j does not.
      const double stored = std::max(sa->end_ns, sb->end_ns);
      CHECK(h.barrier_ns[static_cast<size_t>(i)] == Approx(stored));
      for (int w = 0; w < 2; ++w) {
        CHECK(h.find(PipeOp::gemm_dQ, i, w)->start_ns >= stored);
        CHECK(h.find(PipeOp::gemm_dK, i, w)->start_ns >= h.find(PipeOp::gemm_dQ, i, w)->start_ns);
        // dQ_i's reductions start once dV_j and dQ_i are done, while dK_j may still run.
        CHECK(h.find(PipeOp::reduce_dQ, i, w)->start_ns >= h.find(PipeOp::gemm_dQ, i, w)->end_ns - 1e-6);
      }
    }
    // The tensor cores wait through every dS_ijᵀ, and through less than the whole softmax backward.
    CHECK(h.tensor_wait_in_softmax_ns >= stores - 1e-6);
    CHECK(h.tensor_wait_in_softmax_ns < h.softmax_busy_ns);
  }
}

TEST_CASE("the Hopper backward's dQ writer adds the blocks one at a time as stored, a buffer reused once read",
          "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& compiled : kHopperBwdConfigs)
    for (const bool causal : {false, true}) {
      double end_ns[3] = {};
      for (const int B : {1, 2}) {
        HopperBwdConfig c = compiled;
        c.dq_buffers = B;
        CAPTURE(c.head_dim, B, causal);
        const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(hopper_problem(4096, c.head_dim, causal), 1, c, h200());
        const PipeInterval* added_before = nullptr;
        double stored_before = 0;  // the load/store path's last store of the step before
        for (i64 k = 0; k < h.visits; ++k) {
          const i64 i = h.first_i + k;
          double stored = 0;
          for (int w = 0; w < c.consumers(); ++w) {
            CAPTURE(k, w);
            const PipeInterval* st = h.find(PipeOp::store_dQ, i, w);
            const PipeInterval* add = h.find(PipeOp::reduce_dQ, i, w);
            REQUIRE((st && add));
            CHECK(st->unit == PipeUnit::load_store);
            CHECK(add->unit == PipeUnit::dq_writer);
            const double computed = std::max(h.find(PipeOp::gemm_dQ, i, w)->end_ns, h.find(PipeOp::gemm_dV, i, w)->end_ns);
            // Stored once dV_j's and dQ_i's products are done (wgmma.wait_group 1) and the path is free;
            // before its B buffers have all been used, nothing else holds it back.
            CHECK(st->start_ns >= std::max(computed, stored_before) - 1e-6);
            if (k < B) CHECK(st->start_ns == Approx(std::max(computed, stored_before)).epsilon(1e-12));
            // A buffer used B steps before is stored into again only once the writer has read it.
            if (k >= B) CHECK(st->start_ns >= h.find(PipeOp::reduce_dQ, i - B, w)->end_ns - 1e-6);
            // Added once stored, one block at a time, in the order the warpgroups store them.
            CHECK(add->start_ns >= st->end_ns - 1e-6);
            if (added_before != nullptr) CHECK(add->start_ns >= added_before->end_ns - 1e-6);
            added_before = add;
            // The warpgroup's threads store the block before they issue the next step's products.
            if (k + 1 < h.visits) CHECK(h.find(PipeOp::gemm_St, i + 1, w)->start_ns >= st->end_ns - 1e-6);
            stored = std::max(stored, st->start_ns + st->busy_ns);
          }
          stored_before = stored;
        }
        end_ns[B] = h.end_ns;
      }
      // A second buffer only takes waits away.
      CHECK(end_ns[2] <= end_ns[1] + 1e-6);
    }
}

TEST_CASE("the Hopper backward's state at chosen moments", "[sim][hopper][bwd]") {
  const HopperBwdConfig& c = config_of(kHopperBwdConfigs, 128);
  const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 2, c, h200());
  REQUIRE(h.visits == 16);
  const BwdPipelineState before = h.state_at(-1);
  CHECK(before.step == -1);
  CHECK(before.K == StageStatus::empty);
  for (const auto& s : before.stages) CHECK(s.i == -1);
  // While Q_0 is copied: stage 0 loads it, K_j and V_j are in.
  const PipeInterval* q0 = h.find(PipeOp::copy_Q, 0);
  const BwdPipelineState loading = h.state_at(q0->end_ns - 1e-3);
  CHECK(loading.stages[0].i == 0);
  CHECK(loading.stages[0].Q == StageStatus::loading);
  // In the middle of step 5's dS_ijᵀ: both warpgroups in it, row block 5 held in stage 1, the
  // tensor cores idle, row block 6 (stage 0) landed or landing.
  const PipeInterval* x = h.find(PipeOp::store_dS, 5, 0);
  const BwdPipelineState mid = h.state_at(x->start_ns + x->busy_ns / 2);
  CHECK(mid.step == 5);
  CHECK(mid.K == StageStatus::full);
  CHECK(mid.V == StageStatus::full);
  CHECK(mid.stages[1].i == 5);
  CHECK(mid.stages[1].Q == StageStatus::full);
  CHECK(mid.stages[1].LD == StageStatus::full);
  CHECK(mid.stages[0].i == 6);
  for (int w = 0; w < 2; ++w) {
    REQUIRE(mid.warpgroup_op[static_cast<size_t>(w)] >= 0);
    CHECK(h.intervals[static_cast<size_t>(mid.warpgroup_op[static_cast<size_t>(w)])].op == PipeOp::store_dS);
  }
  for (int k : mid.running) CHECK(h.intervals[static_cast<size_t>(k)].unit != PipeUnit::tensor_cores);
  // In the middle of step 5's P_ijᵀ: the warpgroups' own work is P_ijᵀ while their dP_ijᵀ runs on the tensor cores.
  const PipeInterval* pp = h.find(PipeOp::softmax_bwd, 5, 0);
  const PipeInterval* dp = h.find(PipeOp::gemm_dPt, 5, 0);
  const double t_p = std::max(pp->start_ns, dp->start_ns) + 1e-3;
  REQUIRE(t_p < std::min(pp->end_ns, dp->end_ns));
  const BwdPipelineState under = h.state_at(t_p);
  for (int w = 0; w < 2; ++w)
    CHECK(h.intervals[static_cast<size_t>(under.warpgroup_op[static_cast<size_t>(w)])].op == PipeOp::softmax_bwd);
  CHECK(std::any_of(under.running.begin(), under.running.end(),
                    [&](int k) { return h.intervals[static_cast<size_t>(k)].op == PipeOp::gemm_dPt; }));
  // At the end every stage is released.
  const BwdPipelineState end = h.state_at(h.end_ns + 1);
  for (const auto& s : end.stages) CHECK(s.Q == StageStatus::released);
  CHECK(end.running.empty());
}

TEST_CASE("the step-through's backward events map onto the Hopper backward's timeline", "[sim][hopper][bwd]") {
  for (const HopperBwdConfig& c : kHopperBwdConfigs) {
    CAPTURE(c.head_dim);
    const AttentionProblem p = hopper_problem(1000, c.head_dim, true);
    const Schedule s(Algorithm::fa2_bwd, p, tiles_of(c));
    int main = -1;
    for (int ph = 0; ph < s.phases(); ++ph)
      if (s.has_visits(ph)) main = ph;
    REQUIRE(main >= 0);
    const i64 j = 2;
    const i64 o = s.phase_begin(main) + j;
    REQUIRE(s.outer_block(o) == j);
    const HopperBwdPipeline h = simulate_hopper_bwd_pipeline(p, j, c, h200());
    const auto events = timed_events(s, o, h);
    REQUIRE(!events.empty());
    double last = -1;
    int back = 0;
    for (const auto& [e, time] : events) {
      CAPTURE(e.line, e.i, static_cast<int>(e.kind));
      CHECK(time >= 0);
      CHECK(time <= h.end_ns);
      // Back in time only where the kernel reorders the paper: dP_ij (line 13) before P_ij's dV_j, a
      // step's first event (its S_ijᵀ starts before the last one's reductions), and with the writer
      // dK_j's product (line 16), issued before the writer adds dQ_i (line 15).
      if (time < last) {
        ++back;
        CHECK((e.line == 13 || e.line == 9 || (c.dq_buffers > 0 && e.line == 16)));
      }
      last = time;
    }
    CHECK(back > 0);
    CHECK(events.back().second == Approx(h.end_ns));
    // The pre-pass and another column block are not on this timeline.
    struct First final : EventSink {
      const HopperBwdPipeline* h;
      std::vector<double> t;
      void on_event(const TileEvent& e) override { t.push_back(h->time_of(e)); }
    } f;
    f.h = &h;
    s.emit_outer(0, f);  // the pre-pass: D_0 = rowsum(dO_0 ∘ O_0)
    s.emit_outer(s.phase_begin(main), f);  // column block 0
    for (double x : f.t) CHECK(x == -1);
  }
}

TEST_CASE("the Hopper backward refuses what it cannot model", "[sim][hopper][bwd]") {
  const HopperBwdConfig& c = config_of(kHopperBwdConfigs, 128);
  CHECK_THROWS_AS(simulate_hopper_bwd_pipeline(hopper_problem(1024, 64, false), 0, c, h200()), std::invalid_argument);
  CHECK_THROWS_WITH(simulate_hopper_bwd_pipeline(hopper_problem(1024, 64, false), 0, c, h200()),
                    Catch::Contains("d=128") && Catch::Contains("64, 128"));
  CHECK_THROWS_AS(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 8, c, h200()), std::invalid_argument);
  CHECK_THROWS_WITH(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 8, c, h200()),
                    Catch::Contains("column block 8 is outside 0..7"));
  CHECK_THROWS_WITH(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), -1, c, h200()),
                    Catch::Contains("column block -1"));
  HardwareModel none = h200();
  none.clock_mhz = 0;
  CHECK_THROWS_WITH(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 0, c, none),
                    Catch::Contains("clock"));
  HopperBwdConfig one_stage = c;
  one_stage.stages = 1;
  CHECK_THROWS_WITH(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 0, one_stage, h200()),
                    Catch::Contains("two stages"));
  HopperBwdConfig wide = c;
  wide.Bc = 192;
  CHECK_THROWS_AS(simulate_hopper_bwd_pipeline(hopper_problem(1024, 128, false), 0, wide, h200()),
                  std::invalid_argument);
}
