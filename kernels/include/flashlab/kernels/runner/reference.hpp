// The fp64 CPU reference that every kernel is checked against (the arithmetic
// is attention_reference.hpp, shared with the fa2_tc checkers), and the host
// side of the dtypes (fp16 and bf16 bits to float) it reads.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::kernels {

using sim::i64;

// IEEE binary16 and bfloat16 bits to float, exactly (subnormals, ±inf, NaN).
float half_bits_to_float(std::uint16_t h);
float bf16_bits_to_float(std::uint16_t b);
// Round to nearest even; used by tests to build inputs with known values.
std::uint16_t float_to_half_bits(float f);
std::uint16_t float_to_bf16_bits(float f);

// `count` elements of dtype `t` at `data` (host memory) as doubles.
std::vector<double> to_doubles(const void* data, i64 count, sim::DType t);

// One head: Q [n_q, d], K and V [n_kv, d], row-major doubles.
struct HeadInputs {
  i64 n_q = 0, n_kv = 0, d = 0;
  std::vector<double> q, k, v;
};

// O for the given query rows (in order): softmax(τ q_r Kᵀ, causal keeps key c
// iff c ≤ r) V, in fp64 with the maximum subtracted. Result [rows.size(), d].
std::vector<double> reference_rows(const HeadInputs& in, const std::vector<i64>& rows, double scale, bool causal);

// Σ (a − b)² and Σ b², so that the error over several heads is one ratio.
struct ErrorSums {
  double diff2 = 0, ref2 = 0;
  ErrorSums& operator+=(const ErrorSums& o) {
    diff2 += o.diff2;
    ref2 += o.ref2;
    return *this;
  }
  // ‖a − b‖_F / ‖b‖_F; 0 when both are zero, +inf when only b is.
  double relative() const;
};

// The backward's error: the worst of dQ, dK and dV, each relative to its own
// fp64 reference. With a single visible key per query (N_kv = 1, or N = 1)
// the true dQ and dK are exactly zero (softmax over one key has no gradient
// with respect to its score) and a kernel's rounding leaves ~1e-7 there: a
// gradient whose reference is all zeros is measured against the norm of dV's
// reference instead, the same softmax's gradient that is not zero.
double backward_error(const ErrorSums& dq, const ErrorSums& dk, const ErrorSums& dv);
ErrorSums error_sums(const std::vector<double>& got, const std::vector<double>& ref);

// Which (head, query row) pairs a check covers: every head and row when the
// reference costs at most `flop_budget` fp64 FLOPs, otherwise evenly spread
// heads (first and last included) and, when one head alone is over budget,
// evenly spread rows (first, last and the start of the last B_r-sized block
// included). `full` ignores the budget.
struct CheckPlan {
  std::vector<i64> heads;  // flat index b·H + h
  std::vector<i64> rows;   // the same rows in every checked head
  bool all() const;
  i64 n_heads_total = 0, n_rows_total = 0;
};
CheckPlan plan_check(const sim::AttentionProblem& p, double flop_budget, bool full);

// The backward's check. A head's whole gradients cost about 12·N_q·N_kv·d fp64
// FLOPs (the forward's 4, dP's 2, and 2 for each of dQ, dK, dV); when whole
// heads fit the budget, dQ, dK and dV of those heads are checked (`keys`).
// Beyond, dQ is checked on the rows plan_check would pick (row r of dQ needs
// row r alone, 10·N_kv·d FLOPs) and dK, dV are not: each of their rows sums
// over every query row. With grouped-query heads (H_kv < H) the whole-head
// plan holds whole groups: the G = H / H_kv query heads of each K/V head
// checked, adjacent, since dK, dV of that head sum over all of them.
struct BackwardCheckPlan {
  CheckPlan rows;     // heads, and the query rows whose dQ is checked
  bool keys = true;   // dK and dV of those heads checked too (all rows are then in `rows`)
};
BackwardCheckPlan plan_check_backward(const sim::AttentionProblem& p, double flop_budget, bool full);

// References already computed in this process, keyed by inputs: a kernel run
// on the same seed and problem reuses the fp64 result (tests check every rung
// against one reference).
class ReferenceCache {
 public:
  const std::vector<double>* find(const std::string& key) const;
  void put(const std::string& key, std::vector<double> value);
  std::size_t size() const { return map_.size(); }

 private:
  std::map<std::string, std::vector<double>> map_;
};

}  // namespace flashlab::kernels
