// Internal: the interface every algorithm implements, and the Emitter its loop
// nest writes events through. Not installed; see schedule.hpp for the public view.
#pragma once

#include <initializer_list>
#include <memory>
#include <vector>

#include "flashlab/sim/checked.hpp"
#include "flashlab/sim/counters.hpp"
#include "flashlab/sim/tiles.hpp"

namespace flashlab::sim::detail {

// Additive sizes of a set of schedule pieces. A closed form is a linear
// function of these, so summing them over any range of outer iterations and
// evaluating once gives that range's exact counters.
struct Sums {
  i64 begins = 0, begin_size = 0;  // outer iterations begun; Σ of their outer tile size
  i64 ends = 0, end_size = 0;      // outer iterations ended; Σ of their outer tile size
  i64 visits = 0, v_r = 0, v_c = 0, v_rc = 0;      // (i, j) visits: count, Σ rows, Σ cols, Σ rows·cols
  i64 fvisits = 0, fv_r = 0, fv_c = 0, fv_rc = 0;  // the same, for visits of the phase's first outer
  Sums& operator+=(const Sums& o);
};

// Builds TileRefs of the right size and pushes events into a sink.
class Emitter {
 public:
  Emitter(const TileGrid& g, DType dt, EventSink& sink) : g_(g), dt_(dt), sink_(sink) {}

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

  // Loop indices of the iteration the next events belong to.
  void at(i64 i, i64 j, bool masked) { i_ = i; j_ = j; masked_ = masked; }

  void load(int line, const TileRef& t, Level from = Level::HBM);
  void store(int line, const TileRef& t, Level from = Level::SRAM);
  void compute(int line, const TileRef& result, std::initializer_list<TileRef> operands,
               i64 matmul_flops, i64 softmax_flops, i64 exps, const TileRef* replaces = nullptr);
  void free(int line, std::initializer_list<TileRef> tiles);

 private:
  TileEvent base(EventKind k, int line) const;
  const TileGrid& g_;
  DType dt_;
  EventSink& sink_;
  i64 i_ = -1, j_ = -1;
  bool masked_ = false;
};

// Accumulates closed-form counts with checked arithmetic.
class Tally {
 public:
  explicit Tally(DType dt) : dt_(dt) {}
  void read(Level l, Tensor t, i64 elements);
  void write(Level l, Tensor t, i64 elements);
  void matmul(i64 flops);
  void softmax(i64 flops);
  void exps(i64 n);
  Counters done() const { return c_; }

 private:
  DType dt_;
  Counters c_;
};

inline i64 mul(i64 a, i64 b) { return checked_mul(a, b, "closed-form count"); }
inline i64 mul(i64 a, i64 b, i64 c) { return mul(mul(a, b), c); }

class AlgorithmModel {
 public:
  AlgorithmModel(const AttentionProblem& p, TileShape t) : p_(p), g_(p, t) {}
  virtual ~AlgorithmModel() = default;

  // Structure: phases of outer iterations; each outer iteration runs over row
  // blocks i (visiting column blocks j) or over column blocks j (visiting i).
  virtual int phases() const { return 1; }
  virtual bool outer_over_rows() const = 0;
  virtual bool skips_masked_blocks() const = 0;

  // Loop-nest pieces; line numbers refer to algorithm_info(a).pseudocode.
  virtual void prologue(Emitter&) const {}
  virtual void outer_begin(int phase, i64 idx, Emitter&) const = 0;
  virtual void visit(int phase, i64 i, i64 j, bool first_outer, Emitter&) const = 0;
  virtual void outer_end(int phase, i64 idx, Emitter&) const = 0;
  virtual void epilogue(Emitter&) const {}

  // Closed forms of the same pieces (events excluded; counted from ev_*).
  virtual Counters cf_prologue() const { return {}; }
  virtual Counters cf_phase(int phase, const Sums& s) const = 0;
  virtual Counters cf_epilogue() const { return {}; }

  virtual i64 ev_prologue() const { return 0; }
  virtual i64 ev_begin(int phase) const = 0;
  virtual i64 ev_visit(int phase) const = 0;
  virtual i64 ev_end(int phase) const = 0;
  virtual i64 ev_epilogue() const { return 0; }

  const TileGrid& grid() const { return g_; }
  const AttentionProblem& problem() const { return p_; }

 protected:
  AttentionProblem p_;
  TileGrid g_;
};

std::unique_ptr<AlgorithmModel> make_standard(const AttentionProblem&, TileShape);
std::unique_ptr<AlgorithmModel> make_pytorch(const AttentionProblem&, TileShape);
std::unique_ptr<AlgorithmModel> make_fa1(const AttentionProblem&, TileShape);
std::unique_ptr<AlgorithmModel> make_fa2(const AttentionProblem&, TileShape);

}  // namespace flashlab::sim::detail
