// The Hopper rung's schedule inside one CTA (hopper_pipeline.hpp): a list of
// ops, each on one unit, with the ops it waits for; every unit serves its ops
// in the kernel's issue order. The times follow in one topological pass
// (pipe_builder.hpp).
#include "flashlab/sim/hopper/hopper_pipeline.hpp"

#include <algorithm>
#include <deque>
#include <functional>
#include <iterator>
#include <map>
#include <queue>
#include <stdexcept>

#include "core/config_table.hpp"
#include "core/enum_names.hpp"
#include "cta_placement.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/schedule/counters.hpp"
#include "flashlab/sim/schedule/schedule.hpp"
#include "pipe_builder.hpp"

namespace flashlab::sim {

std::optional<std::size_t> hopper_row(i64 head_dim, i64 seq, bool causal) {
  return detail::row_serving(kHopperConfigs, head_dim, causal, seq);
}
std::optional<HopperConfig> hopper_config(i64 head_dim, i64 seq, bool causal) {
  if (const auto k = hopper_row(head_dim, seq, causal)) return kHopperConfigs[*k];
  return std::nullopt;
}
std::optional<HopperConfig> hopper_config(const AttentionProblem& p) {
  return hopper_config(p.head_dim, hopper_seq(p), p.causal);
}
std::string hopper_head_dims_text() { return detail::head_dims_text(kHopperConfigs); }
std::optional<std::size_t> hopper_bwd_row(i64 head_dim, bool causal) {
  return detail::row_serving(kHopperBwdConfigs, head_dim, causal, kAnySeq);
}
std::optional<HopperBwdConfig> hopper_bwd_config(i64 head_dim, bool causal) {
  if (const auto k = hopper_bwd_row(head_dim, causal)) return kHopperBwdConfigs[*k];
  return std::nullopt;
}
std::string hopper_bwd_head_dims_text() { return detail::head_dims_text(kHopperBwdConfigs); }

namespace {

using detail::EnumName;

constexpr EnumName<PipeOp> kOpNames[] = {
    {PipeOp::copy_Q, "TMA Q_i"},
    {PipeOp::copy_K, "TMA K_j"},
    {PipeOp::copy_V, "TMA V_j"},
    {PipeOp::gemm_S, "S_ij = Q_i K_jᵀ"},
    {PipeOp::softmax, "softmax"},
    {PipeOp::gemm_PV, "O_i += P̃_ij V_j"},
    {PipeOp::epilogue, "O_i, L_i out"},
    {PipeOp::copy_dO, "TMA dO_i"},
    {PipeOp::copy_LD, "TMA L_i, D_i"},
    {PipeOp::gemm_St, "S_ijᵀ = K_j Q_iᵀ"},
    {PipeOp::gemm_dPt, "dP_ijᵀ = V_j dO_iᵀ"},
    {PipeOp::softmax_bwd, "P_ijᵀ"},
    {PipeOp::store_dS, "dS_ijᵀ, to SMEM"},
    {PipeOp::gemm_dV, "dV_j += P_ijᵀ dO_i"},
    {PipeOp::gemm_dK, "dK_j += dS_ijᵀ Q_i"},
    {PipeOp::gemm_dQ, "dQ_i = dS_ij K_j"},
    {PipeOp::reduce_dQ, "dQ_i added in L2"},
    {PipeOp::epilogue_dKdV, "dK_j, dV_j out"},
    {PipeOp::store_dQ, "dQ_i's block, to SMEM"}};
static_assert(detail::lists_through(kOpNames, PipeOp::store_dQ));

constexpr EnumName<PipeUnit> kUnitNames[] = {{PipeUnit::copy_engine, "TMA (producer)"},
                                             {PipeUnit::tensor_cores, "tensor cores"},
                                             {PipeUnit::softmax_units, "softmax (exp2)"},
                                             {PipeUnit::load_store, "load/store"},
                                             {PipeUnit::dq_writer, "TMA (dQ writer)"}};
static_assert(detail::lists_through(kUnitNames, PipeUnit::dq_writer));

constexpr EnumName<HopperMask> kMaskNames[] = {
    {HopperMask::any, "any"}, {HopperMask::causal, "causal"}, {HopperMask::non_causal, "non-causal"}};
static_assert(detail::lists_through(kMaskNames, HopperMask::non_causal));

constexpr EnumName<StageStatus> kStageStatusNames[] = {{StageStatus::empty, "empty"},
                                                  {StageStatus::loading, "loading"},
                                                  {StageStatus::full, "full"},
                                                  {StageStatus::released, "released"}};
static_assert(detail::lists_through(kStageStatusNames, StageStatus::released));

}  // namespace

std::string_view to_string(PipeOp op) { return detail::name_of(kOpNames, op); }
std::string_view to_string(PipeUnit u) { return detail::name_of(kUnitNames, u); }
std::string_view to_string(StageStatus s) { return detail::name_of(kStageStatusNames, s); }
std::string_view to_string(HopperMask m) { return detail::name_of(kMaskNames, m); }

PipelineRates pipeline_rates(const HardwareModel& hw, DType dt) {
  auto need = [&](double v, const char* what) {
    if (!(v > 0)) throw std::invalid_argument("the hardware model " + hw.name + " has no " + what);
  };
  need(static_cast<double>(hw.sm_count), "SM count");
  need(hw.clock_mhz, "clock");
  const double sms = static_cast<double>(hw.sm_count);
  PipelineRates r;
  r.mma_flops_per_ns = hw.peak(dt, ComputeUnit::tensor_core) / sms * 1e-9;
  need(r.mma_flops_per_ns, "tensor-core peak for this dtype");
  // The softmax's element-wise operations (max, subtract, add, scale) are one
  // instruction each; the peak counts an FMA as two FLOPs.
  r.fp32_ops_per_ns = hw.peak(DType::fp32, ComputeUnit::cuda_core) / 2 / sms * 1e-9;
  need(r.fp32_ops_per_ns, "fp32 CUDA-core peak");
  r.exp_per_ns = kExpPerClockPerSm * hw.clock_mhz * 1e-3;
  const bool l2 = hw.l2_bandwidth > 0;
  r.copy_source = l2 ? "L2" : "HBM";
  r.copy_bytes_per_ns = (l2 ? hw.l2_bandwidth : hw.hbm_bandwidth) / sms * 1e-9;
  need(r.copy_bytes_per_ns, "memory bandwidth");
  r.copy_latency_ns = kCopyLatencyCycles / (hw.clock_mhz * 1e-3);
  r.smem_bytes_per_ns = kSmemBytesPerClockPerSm * hw.clock_mhz * 1e-3;
  return r;
}

namespace {

// The work of one full B_r × B_c visit and of a row block's ends, from the
// loop nest's own emission (FlashAttention-2's, on a one-block problem).
struct BlockWork {
  double q_bytes = 0, k_bytes = 0, v_bytes = 0, out_bytes = 0;
  double s_flops = 0, pv_flops = 0;           // the two products of a visit
  double softmax_flops = 0, exps = 0;         // the softmax of a visit
  double end_flops = 0, end_exps = 0;         // O_i = diag(ℓ_i)⁻¹ O_i, L_i
};

class WorkSink final : public EventSink {
 public:
  explicit WorkSink(BlockWork& w, bool visit) : w_(w), visit_(visit) {}
  void on_event(const TileEvent& e) override {
    const double bytes = static_cast<double>(e.target.bytes);
    switch (e.kind) {
      case EventKind::load:
        if (e.target.tensor == Tensor::Q) w_.q_bytes += bytes;
        if (e.target.tensor == Tensor::K) w_.k_bytes += bytes;
        if (e.target.tensor == Tensor::V) w_.v_bytes += bytes;
        break;
      case EventKind::store: w_.out_bytes += bytes; break;
      case EventKind::compute:
        if (e.matmul_flops > 0) (e.target.tensor == Tensor::S ? w_.s_flops : w_.pv_flops) += static_cast<double>(e.matmul_flops);
        (visit_ ? w_.softmax_flops : w_.end_flops) += static_cast<double>(e.softmax_flops);
        (visit_ ? w_.exps : w_.end_exps) += static_cast<double>(e.exps);
        break;
      case EventKind::free: break;
    }
  }

 private:
  BlockWork& w_;
  bool visit_;
};

BlockWork block_work(const HopperConfig& c, DType dt) {
  AttentionProblem one;
  one.seq_q = c.Br;
  one.seq_kv = c.Bc;
  one.head_dim = c.head_dim;
  one.dtype = dt;
  const Schedule s(Algorithm::fa2, one, tiles_of(c));
  BlockWork w;
  WorkSink ends(w, false), visit(w, true);
  s.emit_outer_begin(0, ends);
  s.emit_visit(0, 0, visit);
  s.emit_outer_end(0, ends);
  return w;
}

// The column blocks row block i visits: all of them, or under causal masking
// the prefix up to the diagonal (TileGrid's rule).
i64 visits_of(const TileGrid& g, i64 i) {
  if (!g.causal) return g.T_c;
  i64 lo = 0, hi = g.T_c;  // the first j not visited
  while (lo < hi) {
    const i64 mid = lo + (hi - lo) / 2;
    if (g.visited(i, mid)) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

}  // namespace

HopperPipeline simulate_hopper_pipeline(const AttentionProblem& p, i64 i, const HopperConfig& c,
                                        const HardwareModel& hw) {
  if (p.head_dim != c.head_dim)
    throw std::invalid_argument("the Hopper configuration is for d=" + std::to_string(c.head_dim) + ", the problem has d=" +
                                std::to_string(p.head_dim));
  if (c.stages < 2 || c.Br < 64 || c.Br % 64 != 0 || c.Bc < 1)
    throw std::invalid_argument("a Hopper configuration needs at least two stages and whole warpgroups of 64 rows");
  const TileGrid g(p, tiles_of(c));
  if (i < 0 || i >= g.T_r)
    throw std::invalid_argument("row block " + std::to_string(i) + " is outside 0.." + std::to_string(g.T_r - 1));

  HopperPipeline out;
  out.config = c;
  out.rates = pipeline_rates(hw, p.dtype);
  out.i = i;
  out.visits = visits_of(g, i);
  const i64 n = out.visits;
  const int W = c.consumers();
  const int s = c.stages;
  const PipelineRates& r = out.rates;

  // Every block is computed whole: TMA fills rows past N with zeros and the
  // products run on the full tile (wgmma has no partial shapes).
  const BlockWork w = block_work(c, p.dtype);
  const double gemm_S = w.s_flops / W / r.mma_flops_per_ns;
  const double gemm_PV = w.pv_flops / W / r.mma_flops_per_ns;
  const double softmax = std::max(w.exps / W / r.exp_per_ns, w.softmax_flops / W / r.fp32_ops_per_ns);
  out.gemm_ns_per_visit = gemm_S + gemm_PV;
  out.softmax_ns_per_visit = softmax;

  detail::PipeBuilder pb;
  struct {
    detail::PipeBuilder& b;
    int add(PipeOp op, PipeUnit unit, int wg, i64 j, double busy, double latency = 0) {
      const int k = b.add(op, unit, wg, busy, latency);
      b.iv(k).j = j;
      return k;
    }
    void dep(int op, int on) { b.dep(op, on); }
    void order(const std::vector<int>& seq) { b.order(seq); }
  } b{pb};
  const int q = b.add(PipeOp::copy_Q, PipeUnit::copy_engine, -1, -1, w.q_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
  std::vector<int> K(static_cast<size_t>(n)), V(static_cast<size_t>(n));
  std::vector<std::vector<int>> S(static_cast<size_t>(W), std::vector<int>(static_cast<size_t>(n))),
      X(S), PV(S);  // per warpgroup and block: S_ij, the softmax, P̃_ij V_j
  for (i64 j = 0; j < n; ++j) {
    K[static_cast<size_t>(j)] = b.add(PipeOp::copy_K, PipeUnit::copy_engine, -1, j, w.k_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
    V[static_cast<size_t>(j)] = b.add(PipeOp::copy_V, PipeUnit::copy_engine, -1, j, w.v_bytes / r.copy_bytes_per_ns, r.copy_latency_ns);
    for (int wg = 0; wg < W; ++wg) {
      S[static_cast<size_t>(wg)][static_cast<size_t>(j)] = b.add(PipeOp::gemm_S, PipeUnit::tensor_cores, wg, j, gemm_S);
      X[static_cast<size_t>(wg)][static_cast<size_t>(j)] = b.add(PipeOp::softmax, PipeUnit::softmax_units, wg, j, softmax);
      PV[static_cast<size_t>(wg)][static_cast<size_t>(j)] = b.add(PipeOp::gemm_PV, PipeUnit::tensor_cores, wg, j, gemm_PV);
    }
  }
  const int epilogue = b.add(PipeOp::epilogue, PipeUnit::copy_engine, -1, -1,
                             w.out_bytes / r.copy_bytes_per_ns + w.end_flops / r.fp32_ops_per_ns + w.end_exps / r.exp_per_ns);
  auto at = [](const std::vector<std::vector<int>>& m, int wg, i64 j) { return m[static_cast<size_t>(wg)][static_cast<size_t>(j)]; };

  // The waits (mbarriers and wgmma.wait_group).
  for (i64 j = 0; j < n; ++j) {
    if (j >= s)  // the producer waits until block j − s left the stage: its K once S is done, its V once P V is
      for (int wg = 0; wg < W; ++wg) {
        b.dep(K[static_cast<size_t>(j)], at(S, wg, j - s));
        b.dep(V[static_cast<size_t>(j)], at(PV, wg, j - s));
      }
    for (int wg = 0; wg < W; ++wg) {
      const int sj = at(S, wg, j), xj = at(X, wg, j), pj = at(PV, wg, j);
      b.dep(sj, q);
      b.dep(sj, K[static_cast<size_t>(j)]);
      if (c.overlap) {  // Algorithm 2: S_{i,j} is issued once the softmax of j − 1 is done and P̃ V of j − 2 retired
        if (j >= 1) b.dep(sj, at(X, wg, j - 1));
        if (j >= 2) b.dep(sj, at(PV, wg, j - 2));
      } else if (j >= 1) {  // Algorithm 1: each product is waited for before the next is issued
        b.dep(sj, at(PV, wg, j - 1));
      }
      b.dep(xj, sj);
      b.dep(pj, xj);
      b.dep(pj, V[static_cast<size_t>(j)]);
      if (j >= 1) b.dep(pj, at(PV, wg, j - 1));
    }
  }
  for (int wg = 0; wg < W; ++wg) b.dep(epilogue, n > 0 ? at(PV, wg, n - 1) : q);

  // The issue order of each unit.
  std::vector<int> copies{q};
  for (i64 j = 0; j < n; ++j) copies.insert(copies.end(), {K[static_cast<size_t>(j)], V[static_cast<size_t>(j)]});
  copies.push_back(epilogue);
  b.order(copies);
  std::vector<int> tensor, soft;
  if (n > 0) {
    for (int wg = 0; wg < W; ++wg) tensor.push_back(at(S, wg, 0));
    for (i64 j = 0; j < n; ++j) {
      for (int wg = 0; wg < W; ++wg) {
        if (c.overlap) {  // S_{i,j+1} before P̃_ij V_j
          if (j + 1 < n) tensor.push_back(at(S, wg, j + 1));
          tensor.push_back(at(PV, wg, j));
        } else {  // P̃_ij V_j, then the next S: one warpgroup's pair while another's softmax runs
          tensor.push_back(at(PV, wg, j));
          if (j + 1 < n) tensor.push_back(at(S, wg, j + 1));
        }
        soft.push_back(at(X, wg, j));
      }
    }
  }
  b.order(tensor);
  b.order(soft);

  for (const PipeInterval& iv : pb.run()) out.add(iv);  // no unit is shared: each op's work is its busy time
  for (i64 j = 0; j < n; ++j) {
    StageUse u;
    u.stage = static_cast<int>(j % s);
    u.j = j;
    u.issued_ns = pb.at(K[static_cast<size_t>(j)]).start_ns;
    u.k_arrived_ns = pb.at(K[static_cast<size_t>(j)]).end_ns;
    u.arrived_ns = pb.at(V[static_cast<size_t>(j)]).end_ns;
    for (int wg = 0; wg < W; ++wg) {
      u.k_released_ns = std::max(u.k_released_ns, pb.at(at(S, wg, j)).end_ns);
      u.released_ns = std::max(u.released_ns, pb.at(at(PV, wg, j)).end_ns);
    }
    out.stage_uses.push_back(u);
  }
  return out;
}

HopperLaunchEstimate estimate_hopper_launch(const AttentionProblem& p, const HopperConfig& c, const HardwareModel& hw) {
  const TileGrid g(p, tiles_of(c));
  const i64 heads = p.head_count();
  HopperLaunchEstimate e;
  e.sms = hw.sm_count;
  e.ctas = checked_mul(heads, g.T_r, "CTAs");
  e.waves = static_cast<double>(e.ctas) / static_cast<double>(std::max<i64>(1, e.sms));
  // A row block's schedule depends only on how many column blocks it visits.
  std::map<i64, std::pair<double, double>> by_visits;  // visits -> (CTA time, tensor busy), ns
  std::vector<std::pair<double, i64>> rows;              // (CTA time, how many CTAs), heaviest first
  for (i64 i = g.T_r - 1; i >= 0; --i) {
    const i64 visits = visits_of(g, i);
    auto it = by_visits.find(visits);
    if (it == by_visits.end()) {
      if (by_visits.size() >= 4096)
        throw std::invalid_argument("the launch estimate follows at most 4,096 different row blocks (T_r = " +
                                    std::to_string(g.T_r) + " under causal masking)");
      const HopperPipeline h = simulate_hopper_pipeline(p, i, c, hw);
      it = by_visits.emplace(visits, std::make_pair(h.end_ns, h.tensor_busy_ns)).first;
    }
    if (!rows.empty() && rows.back().first == it->second.first) rows.back().second += heads;
    else rows.emplace_back(it->second.first, heads);
  }
  double tensor = 0;
  for (i64 i = 0; i < g.T_r; ++i) tensor += by_visits.at(visits_of(g, i)).second * static_cast<double>(heads);
  e.cta_time_max_s = rows.front().first * 1e-9;
  e.cta_time_min_s = rows.back().first * 1e-9;
  const i64 sms = std::max<i64>(1, e.sms);
  e.blocks = c.persistent ? std::min(e.ctas, sms) : e.ctas;
  double end_ns = 0;
  const std::string stride = "block b takes tiles b, b + " + std::to_string(e.blocks) + ", ... as the rung does";
  if (rows.size() == 1) {  // every tile alike: whole waves, of CTAs or of a persistent block's tiles
    end_ns = rows.front().first * static_cast<double>((e.ctas + sms - 1) / sms);
    e.method = c.persistent ? stride : "every CTA alike: ⌈CTAs / SMs⌉ waves of one CTA's time";
  } else if (c.persistent && e.ctas <= 4'000'000) {
    // Block b takes tiles b, b + blocks, ... in the rung's order: unmasked head
    // by head; causal in sections of `blocks` heads, heaviest row block of every
    // head first (so that each block gets one row block of each rank per
    // section). The launch ends with its busiest block.
    std::vector<double> by_row(static_cast<size_t>(g.T_r));
    for (i64 i = 0; i < g.T_r; ++i) by_row[static_cast<size_t>(i)] = by_visits.at(visits_of(g, i)).first;
    const i64 per = e.blocks * g.T_r;
    auto rank_of = [&](i64 t) {  // 0: the heaviest row block
      if (!p.causal) return t % g.T_r;
      const i64 sec = t / per;
      return (t - sec * per) / std::min(e.blocks, heads - sec * e.blocks);
    };
    for (i64 b = 0; b < e.blocks; ++b) {
      double busy = 0;
      for (i64 t = b; t < e.ctas; t += e.blocks) busy += by_row[static_cast<size_t>(g.T_r - 1 - rank_of(t))];
      end_ns = std::max(end_ns, busy);
    }
    e.method = stride + (p.causal ? ", in sections of " + std::to_string(e.blocks) +
                                        " heads, heaviest row block first"
                                  : std::string());
  } else if (!c.persistent && e.ctas <= 4'000'000) {
    // Each CTA, in launch order, to the SM that frees first: head by head, each
    // head's heaviest row block first (the rung's numbering).
    std::vector<double> per_head;
    for (i64 i = g.T_r - 1; i >= 0; --i) per_head.push_back(by_visits.at(visits_of(g, i)).first);
    end_ns = first_free_makespan(head_by_head(per_head, heads), sms);
    e.method = "each CTA to the SM that frees first: head by head, heaviest row block first";
  } else {
    double total = 0;
    for (const auto& [t, count] : rows) total += t * static_cast<double>(count);
    end_ns = std::max(total / static_cast<double>(sms), rows.front().first);
    e.method = "the CTAs' total time over the SMs (too many CTAs to place one by one)";
  }
  e.time_s = end_ns * 1e-9;
  e.tensor_busy_fraction = end_ns > 0 ? tensor / (static_cast<double>(sms) * end_ns) : 0;
  return e;
}

PipelineState HopperPipeline::state_at(double t) const {
  PipelineState st;
  st.t_ns = t;
  st.stages = stages_at<PipelineState::Stage>(stage_uses, t, [t](PipelineState::Stage& s, const StageUse& u) {
    s.j = u.j;
    s.K = stage_status(t, u.k_arrived_ns, u.k_released_ns);
    s.V = stage_status(t, u.arrived_ns, u.released_ns);
  });
  st.warpgroup_op.assign(static_cast<size_t>(config.consumers()), -1);
  for (size_t k = 0; k < intervals.size(); ++k) {
    const PipeInterval& iv = intervals[k];
    const bool running = iv.start_ns <= t && t < iv.start_ns + iv.busy_ns;
    if (!running) continue;
    const int idx = static_cast<int>(k);
    (iv.unit == PipeUnit::tensor_cores ? st.tensor : iv.unit == PipeUnit::softmax_units ? st.softmax : st.copy) = idx;
    if (iv.warpgroup >= 0) st.warpgroup_op[static_cast<size_t>(iv.warpgroup)] = idx;
  }
  return st;
}

double HopperPipeline::time_of(const TileEvent& e) const {
  if (e.i != i) return -1;
  if (e.j < 0) {  // the row block's ends: Q_i and the initial state, or the epilogue
    if (e.kind == EventKind::load || (e.kind == EventKind::compute && e.operand_count == 0)) return end_of(PipeOp::copy_Q, -1);
    return e.kind == EventKind::store || e.kind == EventKind::free ? end_of(PipeOp::epilogue, -1) : start_of(PipeOp::epilogue, -1);
  }
  switch (e.kind) {
    case EventKind::load: return start_of(PipeOp::gemm_S, e.j);  // K_j, V_j are in their stage: S_ij starts
    case EventKind::free: return end_of(PipeOp::gemm_PV, e.j);    // this warpgroup arrives on the stage's barrier
    case EventKind::store: return end_of(PipeOp::epilogue, -1);
    case EventKind::compute:
      if (e.target.tensor == Tensor::S) return start_of(PipeOp::gemm_S, e.j);
      if (e.matmul_flops > 0) return start_of(PipeOp::gemm_PV, e.j);
      if (e.has_replaces && e.target.tensor == Tensor::m) return end_of(PipeOp::gemm_PV, e.j);
      return start_of(PipeOp::softmax, e.j);
  }
  return -1;
}

}  // namespace flashlab::sim
