// The runner's side of the fp64 reference (attention_reference.hpp): the rows
// a check covers, fp16/bf16 bits, error sums. Softmax subtracts the row
// maximum, so ×30 inputs are as exact as ×1.
#include "flashlab/kernels/runner/reference.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "flashlab/kernels/runner/attention_reference.hpp"

namespace flashlab::kernels {

float half_bits_to_float(std::uint16_t h) {
  const std::uint32_t sign = (h & 0x8000u) << 16;
  const std::uint32_t exp = (h >> 10) & 0x1fu;
  std::uint32_t mant = h & 0x3ffu;
  std::uint32_t bits = 0;
  if (exp == 0x1f) {
    bits = sign | 0x7f800000u | (mant << 13);  // inf or NaN
  } else if (exp != 0) {
    bits = sign | ((exp + 112u) << 23) | (mant << 13);  // 127 − 15 = 112
  } else if (mant == 0) {
    bits = sign;  // ±0
  } else {
    // Subnormal: shift the mantissa up until its leading one is implicit.
    int e = -1;
    do {
      ++e;
      mant <<= 1;
    } while ((mant & 0x400u) == 0);
    bits = sign | (static_cast<std::uint32_t>(112 - e) << 23) | ((mant & 0x3ffu) << 13);
  }
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

float bf16_bits_to_float(std::uint16_t b) {
  const std::uint32_t bits = static_cast<std::uint32_t>(b) << 16;
  float f;
  std::memcpy(&f, &bits, sizeof f);
  return f;
}

std::uint16_t float_to_bf16_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  if (std::isnan(f)) return static_cast<std::uint16_t>((bits >> 16) | 0x40u);
  const std::uint32_t round = 0x7fffu + ((bits >> 16) & 1u);  // to nearest even
  return static_cast<std::uint16_t>((bits + round) >> 16);
}

std::uint16_t float_to_half_bits(float f) {
  std::uint32_t bits;
  std::memcpy(&bits, &f, sizeof bits);
  const std::uint16_t sign = static_cast<std::uint16_t>((bits >> 16) & 0x8000u);
  if (std::isnan(f)) return static_cast<std::uint16_t>(sign | 0x7e00u);
  const float a = std::fabs(f);
  if (a >= 65520.0f) return static_cast<std::uint16_t>(sign | 0x7c00u);  // rounds to inf
  if (a < 5.9604645e-8f * 0.5f) return sign;                             // below half the smallest subnormal
  int e;
  std::frexp(a, &e);  // a = m·2^e, m in [0.5, 1)
  // Spacing of half values near a: 2^(e−11) for normals, 2^−24 for subnormals.
  const int step_exp = std::max(e - 11, -24);
  const double q = std::nearbyint(std::ldexp(static_cast<double>(a), -step_exp));  // ties to even
  const double v = std::ldexp(q, step_exp);
  if (v == 0) return sign;
  // Rebuild the bits from the rounded value (it may have carried into the next binade).
  int ve;
  const double vm = std::frexp(v, &ve);  // v = vm·2^ve
  std::uint16_t out;
  if (ve - 1 < -14) {
    out = static_cast<std::uint16_t>(std::ldexp(v, 24));  // subnormal: v / 2^−24
  } else {
    const auto exp_field = static_cast<std::uint16_t>(ve - 1 + 15);
    const auto mant = static_cast<std::uint16_t>(std::ldexp(vm * 2.0 - 1.0, 10));
    out = static_cast<std::uint16_t>((exp_field << 10) | mant);
  }
  return static_cast<std::uint16_t>(sign | out);
}

std::vector<double> to_doubles(const void* data, i64 count, sim::DType t) {
  std::vector<double> out(static_cast<std::size_t>(count));
  switch (t) {
    case sim::DType::fp32: {
      const auto* p = static_cast<const float*>(data);
      for (i64 i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = p[i];
      break;
    }
    case sim::DType::fp16: {
      const auto* p = static_cast<const std::uint16_t*>(data);
      for (i64 i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = half_bits_to_float(p[i]);
      break;
    }
    case sim::DType::bf16: {
      const auto* p = static_cast<const std::uint16_t*>(data);
      for (i64 i = 0; i < count; ++i) out[static_cast<std::size_t>(i)] = bf16_bits_to_float(p[i]);
      break;
    }
  }
  return out;
}

std::vector<double> reference_rows(const HeadInputs& in, const std::vector<i64>& rows, double scale, bool causal) {
  const HeadReference head(in.k.data(), in.v.data(), in.n_kv, in.d);
  std::vector<double> out(rows.size() * static_cast<std::size_t>(in.d));
  for (std::size_t i = 0; i < rows.size(); ++i)
    head.row(in.q.data() + rows[i] * in.d, rows[i], scale, causal, out.data() + i * static_cast<std::size_t>(in.d));
  return out;
}

double ErrorSums::relative() const {
  if (ref2 == 0) return diff2 == 0 ? 0.0 : std::numeric_limits<double>::infinity();
  return std::sqrt(diff2 / ref2);
}

double backward_error(const ErrorSums& dq, const ErrorSums& dk, const ErrorSums& dv) {
  auto rel = [&dv](const ErrorSums& e) {
    if (e.ref2 == 0 && dv.ref2 > 0) return std::sqrt(e.diff2 / dv.ref2);
    return e.relative();
  };
  return std::max({rel(dq), rel(dk), dv.relative()});
}

ErrorSums error_sums(const std::vector<double>& got, const std::vector<double>& ref) {
  ErrorSums s;
  const std::size_t n = std::min(got.size(), ref.size());
  for (std::size_t i = 0; i < n; ++i) {
    const double dlt = got[i] - ref[i];
    // A NaN or inf in `got` must not vanish into a comparison.
    s.diff2 += std::isfinite(dlt) ? dlt * dlt : std::numeric_limits<double>::infinity();
    s.ref2 += ref[i] * ref[i];
  }
  if (got.size() != ref.size()) s.diff2 = std::numeric_limits<double>::infinity();
  return s;
}

bool CheckPlan::all() const {
  return static_cast<i64>(heads.size()) == n_heads_total && static_cast<i64>(rows.size()) == n_rows_total;
}

namespace {

// `count` indices spread evenly over [0, n), first and last included, plus
// the extra ones given; sorted and unique.
std::vector<i64> spread(i64 n, i64 count, std::vector<i64> extra = {}) {
  std::vector<i64> v = std::move(extra);
  if (count >= n) {
    v.clear();
    for (i64 i = 0; i < n; ++i) v.push_back(i);
    return v;
  }
  for (i64 i = 0; i < count; ++i) v.push_back(count == 1 ? 0 : i * (n - 1) / (count - 1));
  std::sort(v.begin(), v.end());
  v.erase(std::unique(v.begin(), v.end()), v.end());
  v.erase(std::remove_if(v.begin(), v.end(), [n](i64 x) { return x < 0 || x >= n; }), v.end());
  return v;
}

}  // namespace

CheckPlan plan_check(const sim::AttentionProblem& p, double flop_budget, bool full) {
  CheckPlan plan;
  plan.n_heads_total = p.head_count();
  plan.n_rows_total = p.n_q();
  const double per_row = 4.0 * static_cast<double>(p.n_kv()) * static_cast<double>(p.head_dim);
  const double per_head = per_row * static_cast<double>(p.n_q());
  if (full || per_head * static_cast<double>(plan.n_heads_total) <= flop_budget) {
    plan.heads = spread(plan.n_heads_total, plan.n_heads_total);
    plan.rows = spread(plan.n_rows_total, plan.n_rows_total);
    return plan;
  }
  if (per_head * 2 <= flop_budget) {
    const auto heads = static_cast<i64>(flop_budget / per_head);
    plan.heads = spread(plan.n_heads_total, std::max<i64>(2, heads));
    plan.rows = spread(plan.n_rows_total, plan.n_rows_total);
    return plan;
  }
  // Two heads (first and last), rows spread, with the boundaries that break
  // kernels: the first rows, the last rows, and rows around multiples of 64.
  plan.heads = spread(plan.n_heads_total, 2);
  const i64 n = plan.n_rows_total;
  const i64 rows = std::max<i64>(8, static_cast<i64>(flop_budget / (2 * per_row)));
  std::vector<i64> extra{0, 1, n - 2, n - 1};
  for (i64 b : {64, 128}) {
    const i64 last_block = (n - 1) / b * b;
    extra.push_back(last_block);
    extra.push_back(last_block - 1);
  }
  plan.rows = spread(n, rows, extra);
  return plan;
}

BackwardCheckPlan plan_check_backward(const sim::AttentionProblem& p, double flop_budget, bool full) {
  BackwardCheckPlan plan;
  const double per_head = 12.0 * static_cast<double>(p.n_q()) * static_cast<double>(p.n_kv()) *
                          static_cast<double>(p.head_dim);
  // dK, dV of a K/V head sum over its group's G query heads: whole groups are
  // checked together, G heads' price each.
  const i64 G = p.heads / p.h_kv();
  const double per_group = per_head * static_cast<double>(G);
  // plan_check prices a head at 4·N_q·N_kv·d: scale the budget so that it picks
  // whole heads exactly when their gradients fit.
  if (full || per_group * 2 <= flop_budget || per_head * static_cast<double>(p.head_count()) <= flop_budget) {
    plan.keys = true;
    if (G == 1) {
      plan.rows = plan_check(p, flop_budget * 4.0 / 12.0, full);
      return plan;
    }
    // The plan of the K/V heads (a K/V head priced as its group), each
    // expanded to its query heads b·H + h, adjacent and in order.
    sim::AttentionProblem kv_heads = p;
    kv_heads.heads = p.h_kv();
    kv_heads.kv_heads = 0;
    const CheckPlan groups = plan_check(kv_heads, flop_budget * 4.0 / 12.0 / static_cast<double>(G), full);
    plan.rows.rows = groups.rows;
    plan.rows.n_heads_total = p.head_count();
    plan.rows.n_rows_total = p.n_q();
    for (i64 kh : groups.heads)
      for (i64 g = 0; g < G; ++g) plan.rows.heads.push_back(kh * G + g);
    return plan;
  }
  // dQ rows: 10·N_kv·d each against the forward's 4.
  plan.rows = plan_check(p, flop_budget * 4.0 / 10.0, false);
  plan.keys = false;
  return plan;
}

const std::vector<double>* ReferenceCache::find(const std::string& key) const {
  const auto it = map_.find(key);
  return it == map_.end() ? nullptr : &it->second;
}

void ReferenceCache::put(const std::string& key, std::vector<double> value) { map_[key] = std::move(value); }

}  // namespace flashlab::kernels
