// The Hopper backward's schedule inside one CTA (hopper_bwd_pipeline.hpp): the
// ops of fa3_hopper_bwd's loop, each on one unit, with the waits of its
// mbarriers, wgmma waits and named barrier; timed by pipe_builder.hpp.
#include "flashlab/sim/hopper/hopper_bwd_pipeline.hpp"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "flashlab/sim/schedule/schedule.hpp"
#include "pipe_builder.hpp"

namespace flashlab::sim {

namespace {

// The work of one full B_r × B_c step and of the CTA's ends, from fa2_bwd's
// own emission (its main loop on a one-block problem, dQ added in fp32 as the
// kernel adds it into dQaccum).
struct BwdBlockWork {
  double k_bytes = 0, v_bytes = 0;                   // K_j, V_j: once per CTA
  double q_bytes = 0, do_bytes = 0, ld_bytes = 0;    // per step: Q_i, dO_i, L_i + D_i
  double s_flops = 0, dp_flops = 0, dv_flops = 0, dk_flops = 0, dq_flops = 0;  // the five products
  double p_flops = 0, ds_flops = 0, exps = 0;        // P_ij (with S_ij's scaling), dS_ij
  double ds_bytes = 0;                               // the dS_ij tile
  double dq_bytes = 0;                               // dQaccum_i read and written: the reductions
  double dq_store_bytes = 0;                         // dQ_i's fp32 values written: the writer's buffers
  double out_bytes = 0;                              // dK_j, dV_j
};

enum class Piece { outer_begin, visit, outer_end };

class BwdWorkSink final : public EventSink {
 public:
  BwdWorkSink(BwdBlockWork& w, Piece piece) : w_(w), piece_(piece) {}
  void on_event(const TileEvent& e) override {
    const double bytes = static_cast<double>(e.target.bytes);
    const Tensor t = e.target.tensor;
    switch (e.kind) {
      case EventKind::load:
        if (t == Tensor::K) w_.k_bytes += bytes;
        if (t == Tensor::V) w_.v_bytes += bytes;
        if (t == Tensor::Q) w_.q_bytes += bytes;
        if (t == Tensor::dO) w_.do_bytes += bytes;
        if (t == Tensor::LSE || t == Tensor::D) w_.ld_bytes += bytes;
        if (t == Tensor::dQ || t == Tensor::dQaccum) w_.dq_bytes += bytes;
        break;
      case EventKind::store:
        if (piece_ == Piece::visit) w_.dq_bytes += bytes;
        if (piece_ == Piece::visit && (t == Tensor::dQ || t == Tensor::dQaccum)) w_.dq_store_bytes += bytes;
        if (piece_ == Piece::outer_end) w_.out_bytes += bytes;
        break;
      case EventKind::compute: {
        const double mm = static_cast<double>(e.matmul_flops);
        if (t == Tensor::S) w_.s_flops += mm;
        if (t == Tensor::dP) w_.dp_flops += mm;
        if (t == Tensor::dV) w_.dv_flops += mm;
        if (t == Tensor::dK) w_.dk_flops += mm;
        if (t == Tensor::dQ || t == Tensor::dQaccum) w_.dq_flops += mm;
        if (t == Tensor::dS) w_.ds_bytes += bytes;
        if (piece_ == Piece::visit) {
          (t == Tensor::dS ? w_.ds_flops : w_.p_flops) += static_cast<double>(e.softmax_flops);
          w_.exps += static_cast<double>(e.exps);
        }
        break;
      }
      case EventKind::free: break;
    }
  }

 private:
  BwdBlockWork& w_;
  Piece piece_;
};

// The phase of fa2_bwd with inner visits: its main loop over K_j, V_j.
int main_loop_phase(const Schedule& s) {
  for (int ph = 0; ph < s.phases(); ++ph)
    if (s.has_visits(ph)) return ph;
  throw std::logic_error("fa2_bwd has no main loop");
}

BwdBlockWork bwd_block_work(const HopperBwdConfig& c, DType dt) {
  AttentionProblem one;
  one.seq_q = c.Br;
  one.seq_kv = c.Bc;
  one.head_dim = c.head_dim;
  one.dtype = dt;
  StorageTypes st;
  st.dq_accumulator = DType::fp32;  // dQaccum, as the kernel adds
  const Schedule s(Algorithm::fa2_bwd, one, TileShape{c.Br, c.Bc}, st);
  const i64 o = s.phase_begin(main_loop_phase(s));
  BwdBlockWork w;
  BwdWorkSink begin(w, Piece::outer_begin), visit(w, Piece::visit), end(w, Piece::outer_end);
  s.emit_outer_begin(o, begin);
  s.emit_visit(o, 0, visit);
  s.emit_outer_end(o, end);
  return w;
}

// The time the tensor cores are idle while the softmax units run: the measure
// of (∪ softmax intervals) ∖ (∪ tensor-core intervals).
double tensor_wait_in_softmax(const std::vector<PipeInterval>& ivs) {
  std::vector<std::pair<double, int>> edges;  // (t, +1/−1 softmax, +2/−2 tensor)
  for (const PipeInterval& iv : ivs) {
    if (iv.busy_ns <= 0) continue;
    const int w = iv.unit == PipeUnit::softmax_units ? 1 : iv.unit == PipeUnit::tensor_cores ? 2 : 0;
    if (w == 0) continue;
    edges.push_back({iv.start_ns, w});
    edges.push_back({iv.start_ns + iv.busy_ns, -w});
  }
  std::sort(edges.begin(), edges.end());
  double total = 0, last = 0;
  int soft = 0, tensor = 0;
  for (const auto& [t, w] : edges) {
    if (soft > 0 && tensor == 0) total += t - last;
    last = t;
    if (w == 1 || w == -1) soft += w;
    else tensor += w / 2;
  }
  return total;
}

}  // namespace

HopperBwdPipeline simulate_hopper_bwd_pipeline(const AttentionProblem& p, i64 j, const HopperBwdConfig& c,
                                               const HardwareModel& hw) {
  if (p.head_dim != c.head_dim)
    throw std::invalid_argument("the Hopper backward's configuration is for d=" + std::to_string(c.head_dim) +
                                ", the problem has d=" + std::to_string(p.head_dim) + " (compiled: d = " +
                                hopper_bwd_head_dims_text() + ")");
  if (c.stages < 2 || c.Bc != 128 || c.Br < 64 || c.Br % 16 != 0)
    throw std::invalid_argument(
        "a Hopper backward configuration needs at least two stages, B_c = 128 (two warpgroups of 64 keys) and B_r a "
        "multiple of 16 from 64 (wgmma's N, whole k-steps of dV_j and dK_j)");
  const TileGrid g(p, TileShape{c.Br, c.Bc});
  if (j < 0 || j >= g.T_c)
    throw std::invalid_argument("column block " + std::to_string(j) + " is outside 0.." + std::to_string(g.T_c - 1));

  HopperBwdPipeline out;
  out.config = c;
  out.rates = pipeline_rates(hw, p.dtype);
  out.j = j;
  out.first_i = g.first_row(j);
  out.visits = g.T_r - out.first_i;
  const i64 n = out.visits;
  const int W = c.consumers();
  const int s = c.stages;
  const PipelineRates& r = out.rates;

  // Every step is computed whole: TMA fills rows past N with zeros and wgmma
  // has no partial shapes. Each warpgroup does 1/W of every product and of the
  // softmax backward (its keys), stores its half of dS_ijᵀ and adds its block of dQ_i.
  // The softmax backward is two ops: P_ijᵀ (the exponentials) once S_ijᵀ is in
  // registers, while dP_ijᵀ runs; dS_ijᵀ = P_ijᵀ ∘ (dP_ijᵀ − D_i), with its store to
  // shared memory, once dP_ijᵀ is. dQ_i's block goes to dQaccum with the same
  // bytes either way (the adds are the L2's): by the writer's TMA reductions
  // after the warpgroup stored it to shared memory, or by its own reductions.
  const BwdBlockWork w = bwd_block_work(c, p.dtype);
  const double wg = static_cast<double>(W);
  const double t_S = w.s_flops / wg / r.mma_flops_per_ns, t_dP = w.dp_flops / wg / r.mma_flops_per_ns;
  const double t_dV = w.dv_flops / wg / r.mma_flops_per_ns, t_dK = w.dk_flops / wg / r.mma_flops_per_ns;
  const double t_dQ = w.dq_flops / wg / r.mma_flops_per_ns;
  const double t_P = std::max(w.exps / wg / r.exp_per_ns, w.p_flops / wg / r.fp32_ops_per_ns);
  const double t_dS = w.ds_flops / wg / r.fp32_ops_per_ns;
  const double t_store = w.ds_bytes / wg / r.smem_bytes_per_ns;
  const double t_reduce = w.dq_bytes / wg / r.copy_bytes_per_ns;
  const bool writer = c.dq_buffers > 0;
  const double t_dq_store = writer ? w.dq_store_bytes / wg / r.smem_bytes_per_ns : 0;
  out.gemm_ns_per_step = t_S + t_dP + t_dV + t_dK + t_dQ;
  out.softmax_ns_per_step = t_P + t_dS;
  out.store_ns_per_step = t_store;
  out.dq_store_ns_per_step = t_dq_store;
  out.reduce_ns_per_step = t_reduce;

  detail::PipeBuilder b;
  auto add = [&](PipeOp op, PipeUnit unit, int warpgroup, i64 i, double busy, double latency = 0) {
    const int k = b.add(op, unit, warpgroup, busy, latency);
    b.iv(k).i = i;
    b.iv(k).j = j;
    return k;
  };
  const int K = add(PipeOp::copy_K, PipeUnit::copy_engine, -1, -1, w.k_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
  const int V = add(PipeOp::copy_V, PipeUnit::copy_engine, -1, -1, w.v_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
  using Grid = std::vector<std::vector<int>>;  // [warpgroup][step]
  const Grid per_wg(static_cast<size_t>(W), std::vector<int>(static_cast<size_t>(n)));
  Grid S = per_wg, dP = per_wg, X = per_wg, st = per_wg, dV = per_wg, dK = per_wg, dQ = per_wg, red = per_wg;
  // With the writer: each warpgroup's store of its block (sq), and the moment the
  // writer gives the buffer of a step back (freed: no unit, no work, dropped below).
  Grid sq = per_wg, freed = per_wg;
  std::vector<int> cQ(static_cast<size_t>(n)), cdO(cQ), cLD(cQ), barrier(cQ);
  auto at = [](const Grid& m, int warpgroup, i64 k) { return m[static_cast<size_t>(warpgroup)][static_cast<size_t>(k)]; };
  for (i64 k = 0; k < n; ++k) {
    const i64 i = out.first_i + k;
    const size_t u = static_cast<size_t>(k);
    cQ[u] = add(PipeOp::copy_Q, PipeUnit::copy_engine, -1, i, w.q_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
    cdO[u] = add(PipeOp::copy_dO, PipeUnit::copy_engine, -1, i, w.do_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
    cLD[u] = add(PipeOp::copy_LD, PipeUnit::copy_engine, -1, i, w.ld_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
    for (int c_ = 0; c_ < W; ++c_) {
      const size_t v = static_cast<size_t>(c_);
      S[v][u] = add(PipeOp::gemm_St, PipeUnit::tensor_cores, c_, i, t_S);
      dP[v][u] = add(PipeOp::gemm_dPt, PipeUnit::tensor_cores, c_, i, t_dP);
      X[v][u] = add(PipeOp::softmax_bwd, PipeUnit::softmax_units, c_, i, t_P);
      st[v][u] = add(PipeOp::store_dS, PipeUnit::softmax_units, c_, i, t_dS + t_store);
      dV[v][u] = add(PipeOp::gemm_dV, PipeUnit::tensor_cores, c_, i, t_dV);
      dK[v][u] = add(PipeOp::gemm_dK, PipeUnit::tensor_cores, c_, i, t_dK);
      dQ[v][u] = add(PipeOp::gemm_dQ, PipeUnit::tensor_cores, c_, i, t_dQ);
      if (writer) {
        sq[v][u] = add(PipeOp::store_dQ, PipeUnit::load_store, c_, i, t_dq_store);
        red[v][u] = add(PipeOp::reduce_dQ, PipeUnit::dq_writer, c_, i, t_reduce);
        freed[v][u] = b.add(PipeOp::reduce_dQ, PipeUnit::dq_writer, -1, 0);
      } else {
        red[v][u] = add(PipeOp::reduce_dQ, PipeUnit::load_store, c_, i, t_reduce);
      }
    }
    // The named barrier: no unit, no work; dropped from the intervals below.
    barrier[u] = b.add(PipeOp::store_dS, PipeUnit::softmax_units, -1, 0);
  }
  std::vector<int> epi(static_cast<size_t>(W));
  for (int c_ = 0; c_ < W; ++c_)
    epi[static_cast<size_t>(c_)] =
        add(PipeOp::epilogue_dKdV, PipeUnit::load_store, c_, -1, w.out_bytes / wg / r.copy_bytes_per_ns);

  // The waits: mbarriers (bar_kv, full, empty), wgmma.wait_group, the named barrier.
  // A warpgroup releases step k's stage once dK_j's product of step k is done: at
  // the next step's first wait when dK_j overlaps it, else at the end of step k.
  const bool overlap = c.dk_overlaps_next_step();
  auto release_waits = [&](i64 k, int c_) {  // the ops step k's release waits for
    if (overlap && k + 1 < n) return std::vector<int>{at(S, c_, k + 1)};
    if (writer) return std::vector<int>{at(dV, c_, k), at(dQ, c_, k), at(dK, c_, k), at(sq, c_, k)};
    return std::vector<int>{at(dV, c_, k), at(dQ, c_, k), at(dK, c_, k)};
  };
  // The writer takes the blocks in the order the warpgroups store them, step by
  // step: block g = k·W + c. After issuing block g it waits until every block but
  // the (B − 1)·W newest has been read out of shared memory, then gives back the
  // buffer warpgroup c stores into next (that of step k + 1 − B).
  const int B = c.dq_buffers;
  auto writer_block = [&](i64 blk, const Grid& m) { return at(m, static_cast<int>(blk % W), blk / W); };
  for (i64 k = 0; k < n; ++k) {
    const size_t u = static_cast<size_t>(k);
    if (k >= s)  // the producer waits until step k − s left the stage (empty[s])
      for (int c_ = 0; c_ < W; ++c_)
        for (int copy : {cQ[u], cdO[u], cLD[u]})
          for (int op : release_waits(k - s, c_)) b.dep(copy, op);
    for (int c_ = 0; c_ < W; ++c_) {
      for (int gemm : {at(S, c_, k), at(dP, c_, k)}) {
        for (int copy : {K, V, cQ[u], cdO[u], cLD[u]}) b.dep(gemm, copy);  // bar_kv, full[s]
        // wgmma.wait_group of the step before: 1 (dQ_i done, dK_j may run) or 0
        if (k >= 1) b.dep(gemm, at(overlap ? dQ : dK, c_, k - 1));
        // The threads stored the step before's block of dQ_i first.
        if (writer && k >= 1) b.dep(gemm, at(sq, c_, k - 1));
      }
      b.dep(at(X, c_, k), at(S, c_, k));  // wgmma.wait_group 1: S_ijᵀ in registers, dP_ijᵀ may run
      b.dep(at(st, c_, k), at(X, c_, k));
      b.dep(at(st, c_, k), at(dP, c_, k));  // wgmma.wait_group 0: dP_ijᵀ in registers
      b.dep(at(dV, c_, k), at(st, c_, k));  // issued after the stores of dS_ijᵀ and their fence
      b.dep(barrier[u], at(st, c_, k));
      b.dep(at(dQ, c_, k), barrier[u]);
      b.dep(at(dK, c_, k), barrier[u]);  // issued after dQ_i's product
      if (!writer) {
        for (int prod : {at(dV, c_, k), at(dQ, c_, k)}) b.dep(at(red, c_, k), prod);  // wgmma.wait_group 1
        continue;
      }
      for (int prod : {at(dV, c_, k), at(dQ, c_, k)}) b.dep(at(sq, c_, k), prod);  // wgmma.wait_group 1
      if (k >= B) b.dep(at(sq, c_, k), at(freed, c_, k - 1));  // its buffer, given back
      const i64 blk = k * W + c_;
      b.dep(at(red, c_, k), at(sq, c_, k));  // the block is in its buffer
      b.dep(at(freed, c_, k), at(sq, c_, k));
      if (blk >= 1) {  // the writer's program order: the block before, and its buffer given back
        b.dep(at(red, c_, k), writer_block(blk - 1, freed));
        b.dep(at(freed, c_, k), writer_block(blk - 1, freed));
      }
      if (const i64 read = blk - static_cast<i64>(B - 1) * W; read >= 0) b.dep(at(freed, c_, k), writer_block(read, red));
    }
  }
  for (int c_ = 0; c_ < W; ++c_) {
    b.dep(epi[static_cast<size_t>(c_)], V);
    if (n > 0) {
      b.dep(epi[static_cast<size_t>(c_)], at(writer ? sq : red, c_, n - 1));
      b.dep(epi[static_cast<size_t>(c_)], at(dK, c_, n - 1));  // wgmma.wait_group 0 after the loop
    }
  }

  // The issue order of each unit, and the ops two warpgroups run at once.
  std::vector<int> copies{K, V}, tensor, soft, lsu, tma_reduce;
  auto group = [&](const Grid& m, i64 k, std::vector<int>& unit) {
    std::vector<int> members;
    for (int c_ = 0; c_ < W; ++c_) members.push_back(at(m, c_, k));
    b.share(members);
    unit.insert(unit.end(), members.begin(), members.end());
  };
  for (i64 k = 0; k < n; ++k) {
    const size_t u = static_cast<size_t>(k);
    copies.insert(copies.end(), {cQ[u], cdO[u], cLD[u]});
    for (const Grid* m : {&S, &dP, &dV, &dQ, &dK}) group(*m, k, tensor);
    group(X, k, soft);
    group(st, k, soft);
    if (writer) {
      group(sq, k, lsu);
      for (int c_ = 0; c_ < W; ++c_) tma_reduce.push_back(at(red, c_, k));  // one block at a time
    } else {
      group(red, k, lsu);
    }
  }
  b.share(epi);
  lsu.insert(lsu.end(), epi.begin(), epi.end());
  b.order(copies);
  b.order(tensor);
  b.order(soft);
  b.order(lsu);
  b.order(tma_reduce);

  const std::vector<PipeInterval> all = b.run();
  std::vector<bool> is_barrier(all.size(), false);  // the named barriers and the buffers given back
  for (int k : barrier) is_barrier[static_cast<size_t>(k)] = true;
  if (writer)
    for (const std::vector<int>& row : freed)
      for (int k : row) is_barrier[static_cast<size_t>(k)] = true;
  for (size_t k = 0; k < all.size(); ++k) {
    if (is_barrier[k]) continue;
    PipeInterval iv = all[k];
    if (iv.op == PipeOp::copy_Q || iv.op == PipeOp::copy_dO || iv.op == PipeOp::copy_LD)
      iv.stage = static_cast<int>((iv.i - out.first_i) % s);
    out.add(iv);
  }
  out.kv_arrived_ns = std::max(b.at(K).end_ns, b.at(V).end_ns);
  for (i64 k = 0; k < n; ++k) {
    const size_t u = static_cast<size_t>(k);
    out.barrier_ns.push_back(b.at(barrier[u]).end_ns);
    BwdStageUse su;
    su.stage = static_cast<int>(k % s);
    su.i = out.first_i + k;
    su.step = k;
    su.issued_ns = b.at(cQ[u]).start_ns;
    su.q_arrived_ns = b.at(cQ[u]).end_ns;
    su.do_arrived_ns = b.at(cdO[u]).end_ns;
    su.arrived_ns = b.at(cLD[u]).end_ns;
    for (int c_ = 0; c_ < W; ++c_)
      for (int op : release_waits(k, c_)) su.released_ns = std::max(su.released_ns, b.at(op).end_ns);
    out.stage_uses.push_back(su);
  }
  out.tensor_wait_in_softmax_ns = tensor_wait_in_softmax(out.intervals);
  return out;
}

BwdPipelineState HopperBwdPipeline::state_at(double t) const {
  BwdPipelineState st;
  st.t_ns = t;
  st.stages = stages_at<BwdPipelineState::Stage>(stage_uses, t, [t](BwdPipelineState::Stage& s, const BwdStageUse& u) {
    s.i = u.i;
    s.Q = stage_status(t, u.q_arrived_ns, u.released_ns);
    s.dO = stage_status(t, u.do_arrived_ns, u.released_ns);
    s.LD = stage_status(t, u.arrived_ns, u.released_ns);
  });
  auto held = [&](PipeOp op) {
    const PipeInterval* iv = find(op, -1);
    if (iv == nullptr || t < iv->start_ns) return StageStatus::empty;
    return t < iv->end_ns ? StageStatus::loading : StageStatus::full;
  };
  st.K = held(PipeOp::copy_K);
  st.V = held(PipeOp::copy_V);
  const int W = config.consumers();
  st.warpgroup_op.assign(static_cast<size_t>(W), -1);
  st.at_barrier.assign(static_cast<size_t>(W), false);
  for (size_t k = 0; k < intervals.size(); ++k) {
    const PipeInterval& iv = intervals[k];
    if (iv.i >= 0 && iv.warpgroup >= 0 && iv.start_ns <= t) st.step = std::max(st.step, iv.i - first_i);
    if (!(iv.start_ns <= t && t < iv.start_ns + iv.busy_ns)) continue;
    st.running.push_back(static_cast<int>(k));
    // A warpgroup's own op is what its threads compute: a product it issued runs
    // on the tensor cores, and its dQ reductions drain on the load/store path,
    // while it computes P_ijᵀ.
    if (iv.warpgroup < 0 || iv.unit == PipeUnit::dq_writer) continue;  // the writer's: another warp's
    auto rank = [](PipeUnit u) { return u == PipeUnit::softmax_units ? 0 : u == PipeUnit::load_store ? 1 : 2; };
    int& own = st.warpgroup_op[static_cast<size_t>(iv.warpgroup)];
    if (own < 0 || rank(iv.unit) < rank(intervals[static_cast<size_t>(own)].unit)) own = static_cast<int>(k);
  }
  for (const PipeInterval& iv : intervals) {
    if (iv.op != PipeOp::store_dS || iv.warpgroup < 0) continue;
    const double stored = iv.start_ns + iv.busy_ns, met = barrier_ns[static_cast<size_t>(iv.i - first_i)];
    if (stored <= t && t < met) st.at_barrier[static_cast<size_t>(iv.warpgroup)] = true;
  }
  return st;
}

double HopperBwdPipeline::time_of(const TileEvent& e) const {
  if (e.j != j) return -1;  // another CTA, or a pass over the row blocks (j = −1)
  if (e.i < 0) {  // the CTA's ends: K_j, V_j and dK_j = dV_j = 0, or the writes of dK_j, dV_j
    if (e.kind == EventKind::load) return end_of(e.target.tensor == Tensor::K ? PipeOp::copy_K : PipeOp::copy_V, -1);
    if (e.kind == EventKind::compute) return kv_arrived_ns;
    if (e.kind == EventKind::store) return start_of(PipeOp::epilogue_dKdV, -1);
    return end_ns;
  }
  if (e.i < first_i) return -1;
  switch (e.kind) {
    case EventKind::load:
      if (e.target.tensor == Tensor::dQ || e.target.tensor == Tensor::dQaccum) return start_of(PipeOp::gemm_dQ, e.i);
      return start_of(PipeOp::gemm_St, e.i);  // Q_i, dO_i, L_i, D_i are in their stage: S_ijᵀ starts
    case EventKind::store: return start_of(PipeOp::reduce_dQ, e.i);
    case EventKind::free: return stage_uses[static_cast<size_t>(e.i - first_i)].released_ns;
    case EventKind::compute:
      switch (e.target.tensor) {
        case Tensor::S: return start_of(PipeOp::gemm_St, e.i);
        case Tensor::P: return start_of(PipeOp::softmax_bwd, e.i);
        case Tensor::dV: return start_of(PipeOp::gemm_dV, e.i);
        case Tensor::dP: return start_of(PipeOp::gemm_dPt, e.i);
        case Tensor::dS: return start_of(PipeOp::store_dS, e.i);
        case Tensor::dK: return start_of(PipeOp::gemm_dK, e.i);
        case Tensor::dQ:
        case Tensor::dQaccum: return start_of(PipeOp::gemm_dQ, e.i);
        default: return -1;
      }
  }
  return -1;
}

}  // namespace flashlab::sim
