// Internal: what an algorithm file provides — its description record and its
// loop nest, written once as tile events through an Emitter. Every cost the
// simulator reports is derived from these emissions (cost_model.hpp); nothing
// here restates them. Not installed; schedule.hpp is the public view.
#pragma once

#include <initializer_list>
#include <memory>
#include <optional>
#include <string_view>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/schedule/event.hpp"
#include "flashlab/sim/problem/tiles.hpp"

namespace flashlab::sim::detail {

// Builds TileRefs of the right size and pushes events into a sink. The sizes
// come from the emitter's grid: the schedule's own, or a probe grid of one
// r × c block when costs are derived.
class Emitter {
 public:
  Emitter(const TileGrid& g, DType dt, EventSink& sink, StorageTypes storage = {})
      : g_(g), dt_(dt), storage_(storage), sink_(sink) {}

  const TileGrid& grid() const { return g_; }
  i64 rows(i64 i) const { return g_.rows(i); }  // r: rows of row block i
  i64 cols(i64 j) const { return g_.cols(j); }  // c: rows of column block j
  i64 d() const { return g_.d; }

  TileRef tile(Tensor t, i64 ti, i64 tj, i64 rows, i64 cols) const;
  TileRef Q(i64 i) const { return tile(Tensor::Q, i, -1, g_.rows(i), g_.d); }
  TileRef K(i64 j) const { return tile(Tensor::K, -1, j, g_.cols(j), g_.d); }
  TileRef V(i64 j) const { return tile(Tensor::V, -1, j, g_.cols(j), g_.d); }
  TileRef O(i64 i) const { return tile(Tensor::O, i, -1, g_.rows(i), g_.d); }
  TileRef S(i64 i, i64 j) const { return tile(Tensor::S, i, j, g_.rows(i), g_.cols(j)); }
  TileRef P(i64 i, i64 j) const { return tile(Tensor::P, i, j, g_.rows(i), g_.cols(j)); }
  // Row statistics of row block i (one fp32 per row).
  TileRef row_stat(Tensor t, i64 i, i64 j = -1) const { return tile(t, i, j, g_.rows(i), 1); }
  TileRef whole(Tensor t, i64 rows, i64 cols) const { return tile(t, -1, -1, rows, cols); }
  // O while it accumulates in global memory between outer iterations (an
  // algorithm that keeps it there): in StorageTypes::o_accumulator when set.
  TileRef O_accumulator(i64 i) const;
  TileRef whole_O_accumulator() const;

  // The backward pass's tensors: dO_i, dQ_i (N_q × d), dK_j, dV_j (N_kv × d),
  // dS_ij, dP_ij (B_r × B_c), and D_i = rowsum(dO_i ∘ O_i) as a row statistic.
  TileRef dO(i64 i) const { return tile(Tensor::dO, i, -1, g_.rows(i), g_.d); }
  TileRef dQ(i64 i) const { return tile(Tensor::dQ, i, -1, g_.rows(i), g_.d); }
  TileRef dK(i64 j) const { return tile(Tensor::dK, -1, j, g_.cols(j), g_.d); }
  TileRef dV(i64 j) const { return tile(Tensor::dV, -1, j, g_.cols(j), g_.d); }
  TileRef dS(i64 i, i64 j) const { return tile(Tensor::dS, i, j, g_.rows(i), g_.cols(j)); }
  TileRef dP(i64 i, i64 j) const { return tile(Tensor::dP, i, j, g_.rows(i), g_.cols(j)); }
  // dQ while the backward adds into it in global memory from every K_j, V_j
  // block. When StorageTypes::dq_accumulator names another type than the
  // problem's, a buffer of its own in that type (Tensor::dQaccum, fp32 in
  // FlashAttention-2), which a pass converts to dQ at the end; otherwise dQ itself.
  TileRef dQ_accumulator(i64 i) const;
  TileRef whole_dQ_accumulator() const;
  bool dQ_accumulates_apart() const;
  // dK_j, dV_j of a K/V head while the query heads of its group add into them
  // in global memory (Tensor::dKaccum, dVaccum), in
  // StorageTypes::dkv_accumulator (the problem's type when unset).
  TileRef dK_accumulator(i64 j) const;
  TileRef dV_accumulator(i64 j) const;

  // Loop indices of the iteration the next events belong to.
  void at(i64 i, i64 j, bool masked) { i_ = i; j_ = j; masked_ = masked; }

  void load(int line, const TileRef& t, Level from = Level::HBM);
  void store(int line, const TileRef& t, Level from = Level::SRAM);
  void compute(int line, const TileRef& result, std::initializer_list<TileRef> operands,
               i64 matmul_flops, i64 softmax_flops, i64 exps, const TileRef* replaces = nullptr);
  void free(int line, std::initializer_list<TileRef> tiles);

 private:
  TileEvent base(EventKind k, int line) const;
  void move(EventKind k, int line, const TileRef& t, Level from, Level to);
  const TileGrid& g_;
  DType dt_;
  StorageTypes storage_;
  EventSink& sink_;
  i64 i_ = -1, j_ = -1;
  bool masked_ = false;
};

// An algorithm's loop nest, cut into the pieces the schedule iterates:
//
//   prologue
//   for each phase (a pass of the materialising algorithms, a pre- or
//   post-pass of a backward one; one otherwise)
//     for each outer iteration (row block i, or column block j: the phase says which)
//       outer_begin;  for each visited inner block: visit;  outer_end
//   epilogue
//
// A phase's outer loop runs over row blocks or column blocks
// (outer_over_rows(phase), by default the record's), and a phase may have no
// inner loop at all (has_visits(phase) false: a pass over row blocks such as
// FlashAttention-2's D_i = rowsum(dO_i ∘ O_i); visit is never called for it).
// Per-block work belongs in a phase, never in the prologue or epilogue: those
// hold whole tensors and the cursor replays them from their start.
//
// A piece reads its block sizes from the emitter (e.rows(i), e.cols(j), e.d()),
// never from the problem, so that its costs can be derived by emitting it on a
// probe grid. `first_outer` is true for the phase's first outer iteration.
class LoopNest {
 public:
  explicit LoopNest(const AlgorithmInfo& info) : info_(info) {}
  virtual ~LoopNest() = default;
  virtual int phases() const { return 1; }
  // A title per phase for the step-through ("pass 1/3: S = QKᵀ, written to HBM");
  // by default the record's strategy, which names a loop nest of one phase.
  virtual std::string_view phase_title(int /*phase*/) const { return info_.strategy; }
  // The phase's outer loop: over row blocks i (Q_i) or column blocks j (K_j, V_j).
  virtual bool outer_over_rows(int /*phase*/) const { return info_.outer_over_rows; }
  // Whether the phase has an inner loop; false: outer_begin and outer_end only.
  virtual bool has_visits(int /*phase*/) const { return true; }
  // Whether the phase runs once per K/V head instead of once per query head:
  // a pass over tensors a group of G = H / H_kv query heads shares (zeroing
  // and converting dKaccum, dVaccum). Its pieces are counted B·H_kv times,
  // the others B·H times (Schedule::over_heads).
  virtual bool once_per_kv_head(int /*phase*/) const { return false; }
  // The tensor whose memory `t` is written over, if any: an elementwise pass
  // may write its result where an input of the same shape and type was, once
  // that input's last reader is the pass itself (standard_bwd's dS over dP).
  // The traffic is the same; the device memory holds one tensor less.
  virtual std::optional<Tensor> stored_over(Tensor /*t*/) const { return std::nullopt; }
  // Whether one thread block of the phase walks the G = H / H_kv query heads
  // of a group in turn (summing their dK_j, dV_j on chip) instead of a block
  // per query head: the grid has B·H_kv × T_c blocks, and each runs the
  // phase's visits of column block j for the group's heads one after another.
  // The pieces are still emitted per query head (the requests stay the
  // paper's); the L2 model runs the walk (l2_model.cpp).
  virtual bool walks_group(int /*phase*/) const { return false; }
  const AlgorithmInfo& record() const { return info_; }

  virtual void prologue(Emitter&) const {}
  virtual void outer_begin(int phase, i64 idx, Emitter&) const = 0;
  virtual void visit(int phase, i64 i, i64 j, bool first_outer, Emitter&) const = 0;
  virtual void outer_end(int phase, i64 idx, Emitter&) const = 0;
  virtual void epilogue(Emitter&) const {}

 private:
  const AlgorithmInfo& info_;
};

// One entry of the algorithm table (algorithm.cpp): the record and the loop
// nest, which may depend on the problem (causal adds a mask pass to eager
// PyTorch) and on the storage types (an fp32 dQ accumulator adds a pass that
// converts it).
using MakeLoopNest = std::unique_ptr<LoopNest> (*)(const AttentionProblem& p, const StorageTypes& storage);
struct AlgorithmEntry {
  const AlgorithmInfo& info;
  MakeLoopNest make;
};

// An algorithm file's entry, made once from its record and its maker.
template <const AlgorithmInfo& (*Info)(), MakeLoopNest Make>
const AlgorithmEntry& entry_of() {
  static const AlgorithmEntry e{Info(), Make};
  return e;
}

const AlgorithmEntry& standard_entry();
const AlgorithmEntry& pytorch_entry();
const AlgorithmEntry& fa1_entry();
const AlgorithmEntry& fa2_entry();
const AlgorithmEntry& standard_bwd_entry();
const AlgorithmEntry& pytorch_bwd_entry();
const AlgorithmEntry& fa1_bwd_entry();
const AlgorithmEntry& fa2_bwd_entry();
const AlgorithmEntry& entry(Algorithm a);

}  // namespace flashlab::sim::detail
