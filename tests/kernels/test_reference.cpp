// The fp64 reference and the host dtypes it reads: if these are wrong, every
// kernel test is wrong with them.
#include <catch2/catch.hpp>
#include <cmath>
#include <random>

#include <algorithm>

#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "support.hpp"

using namespace flashlab;
using namespace flashlab::kernels;
using flashlab::test::problem;

namespace {

std::mt19937_64& rng() {
  static std::mt19937_64 g{std::random_device{}()};
  return g;
}

std::vector<double> normals(std::size_t n, double scale = 1.0) {
  std::normal_distribution<double> dist(0.0, scale);
  std::vector<double> v(n);
  for (double& x : v) x = dist(rng());
  return v;
}

// The textbook definition, loop by loop: what reference_rows must equal.
std::vector<double> direct(const HeadInputs& in, double tau, bool causal) {
  std::vector<double> out(static_cast<std::size_t>(in.n_q * in.d));
  for (i64 r = 0; r < in.n_q; ++r) {
    std::vector<double> s(static_cast<std::size_t>(in.n_kv));
    double m = -INFINITY;
    for (i64 c = 0; c < in.n_kv; ++c) {
      double dot = 0;
      for (i64 k = 0; k < in.d; ++k) dot += in.q[r * in.d + k] * in.k[c * in.d + k];
      s[c] = (causal && c > r) ? -INFINITY : tau * dot;
      m = std::max(m, s[c]);
    }
    double l = 0;
    for (double& x : s) l += (x = std::exp(x - m));
    for (i64 k = 0; k < in.d; ++k) {
      double acc = 0;
      for (i64 c = 0; c < in.n_kv; ++c) acc += s[c] / l * in.v[c * in.d + k];
      out[r * in.d + k] = acc;
    }
  }
  return out;
}

HeadInputs random_head(i64 nq, i64 nkv, i64 d, double scale = 1.0) {
  HeadInputs in;
  in.n_q = nq;
  in.n_kv = nkv;
  in.d = d;
  in.q = normals(static_cast<std::size_t>(nq * d), scale);
  in.k = normals(static_cast<std::size_t>(nkv * d), scale);
  in.v = normals(static_cast<std::size_t>(nkv * d), scale);
  return in;
}

std::vector<i64> all_rows(i64 n) {
  std::vector<i64> r;
  for (i64 i = 0; i < n; ++i) r.push_back(i);
  return r;
}

}  // namespace

TEST_CASE("fp16 bits convert exactly, subnormals and specials included", "[kernels][reference]") {
  CHECK(half_bits_to_float(0x3c00) == 1.0f);
  CHECK(half_bits_to_float(0xc000) == -2.0f);
  CHECK(half_bits_to_float(0x7bff) == 65504.0f);
  CHECK(half_bits_to_float(0x0001) == std::ldexp(1.0f, -24));
  CHECK(half_bits_to_float(0x03ff) == std::ldexp(1023.0f, -24));
  CHECK(half_bits_to_float(0x0400) == std::ldexp(1.0f, -14));
  CHECK(std::isinf(half_bits_to_float(0x7c00)));
  CHECK(std::isnan(half_bits_to_float(0x7e00)));
  CHECK(std::isnan(half_bits_to_float(0xffff)));  // the runner's poison
  CHECK(std::signbit(half_bits_to_float(0x8000)));
  CHECK(float_to_half_bits(1.0f) == 0x3c00);
  CHECK(float_to_half_bits(65504.0f) == 0x7bff);
  CHECK(float_to_half_bits(70000.0f) == 0x7c00);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -24)) == 0x0001);
  CHECK(float_to_half_bits(std::ldexp(1.0f, -26)) == 0x0000);
  CHECK(float_to_half_bits(1.0f + std::ldexp(1.0f, -11)) == 0x3c00);  // a tie rounds to even
  CHECK(float_to_half_bits(1.0f + 3 * std::ldexp(1.0f, -11)) == 0x3c02);
}

TEST_CASE("every fp16 value round-trips through float", "[kernels][reference]") {
  for (std::uint32_t h = 0; h < 0x10000; ++h) {
    const auto bits = static_cast<std::uint16_t>(h);
    const float f = half_bits_to_float(bits);
    if (std::isnan(f)) continue;
    INFO("bits " << h);
    REQUIRE(float_to_half_bits(f) == bits);
  }
}

TEST_CASE("bf16 bits convert exactly and round to nearest even", "[kernels][reference]") {
  CHECK(bf16_bits_to_float(0x3f80) == 1.0f);
  CHECK(bf16_bits_to_float(0xc040) == -3.0f);
  CHECK(std::isnan(bf16_bits_to_float(0xffff)));
  for (std::uint32_t b = 0; b < 0x10000; b += 7) {
    const float f = bf16_bits_to_float(static_cast<std::uint16_t>(b));
    if (!std::isnan(f)) REQUIRE(float_to_bf16_bits(f) == b);
  }
  CHECK(float_to_bf16_bits(1.0f + std::ldexp(1.0f, -8)) == 0x3f80);   // tie to even
  CHECK(float_to_bf16_bits(1.0f + 3 * std::ldexp(1.0f, -8)) == 0x3f82);
}

TEST_CASE("to_doubles reads each dtype", "[kernels][reference]") {
  const std::uint16_t h[3] = {0x3c00, 0xc000, 0x3800};
  CHECK(to_doubles(h, 3, sim::DType::fp16) == std::vector<double>{1.0, -2.0, 0.5});
  const std::uint16_t b[2] = {0x3f80, 0x4040};
  CHECK(to_doubles(b, 2, sim::DType::bf16) == std::vector<double>{1.0, 3.0});
  const float f[2] = {0.25f, -7.5f};
  CHECK(to_doubles(f, 2, sim::DType::fp32) == std::vector<double>{0.25, -7.5});
}

TEST_CASE("the fp64 reference equals the definition, ragged and causal", "[kernels][reference]") {
  struct Shape {
    i64 nq, nkv, d;
    bool causal;
  };
  for (const Shape s : {Shape{5, 7, 3, false}, Shape{6, 6, 4, true}, Shape{1, 1, 8, false}, Shape{1, 9, 2, false},
                        Shape{9, 1, 2, false}, Shape{17, 17, 5, true}}) {
    INFO(s.nq << "x" << s.nkv << " d=" << s.d << " causal=" << s.causal);
    const HeadInputs in = random_head(s.nq, s.nkv, s.d);
    const double tau = 1 / std::sqrt(static_cast<double>(s.d));
    const auto want = direct(in, tau, s.causal);
    const auto got = reference_rows(in, all_rows(s.nq), tau, s.causal);
    REQUIRE(got.size() == want.size());
    for (std::size_t k = 0; k < got.size(); ++k) REQUIRE(got[k] == Approx(want[k]).epsilon(1e-12).margin(1e-13));
    // A subset of rows is the same rows of the whole.
    const std::vector<i64> some{0, s.nq - 1};
    const auto part = reference_rows(in, some, tau, s.causal);
    for (i64 k = 0; k < s.d; ++k) {
      CHECK(part[k] == Approx(want[k]).epsilon(1e-12).margin(1e-13));
      CHECK(part[s.d + k] == Approx(want[(s.nq - 1) * s.d + k]).epsilon(1e-12).margin(1e-13));
    }
  }
}

TEST_CASE("the reference stays exact for inputs ×30 (the maximum is subtracted)", "[kernels][reference]") {
  const HeadInputs in = random_head(33, 33, 16, 30.0);
  const auto got = reference_rows(in, all_rows(33), 0.25, true);
  for (double x : got) REQUIRE(std::isfinite(x));
  // Query 0 sees only key 0: its output is V's row 0, exactly.
  for (i64 k = 0; k < 16; ++k) CHECK(got[k] == in.v[k]);
}

TEST_CASE("relative Frobenius error, with NaN counted as infinite", "[kernels][reference]") {
  const std::vector<double> ref{3, 4}, got{3, 4.5};
  CHECK(error_sums(got, ref).relative() == Approx(0.5 / 5.0));
  CHECK(error_sums(ref, ref).relative() == 0.0);
  CHECK(std::isinf(error_sums({3, NAN}, ref).relative()));
  CHECK(std::isinf(error_sums({3}, ref).relative()));
  ErrorSums two = error_sums(got, ref);
  two += error_sums(ref, ref);
  CHECK(two.relative() == Approx(0.5 / std::sqrt(50.0)));
}

TEST_CASE("a check covers every row when cheap and spreads rows and heads when not", "[kernels][reference]") {
  const auto small = kernels::test::problem(2, 3, 129, 64);
  const CheckPlan all = plan_check(small, 2e9, false);
  CHECK(all.all());
  CHECK(all.heads.size() == 6);
  CHECK(all.rows.size() == 129);

  const auto big = kernels::test::problem(4, 32, 16384, 128);
  const CheckPlan some = plan_check(big, 2e9, false);
  CHECK_FALSE(some.all());
  REQUIRE(some.heads.size() == 2);
  CHECK(some.heads.front() == 0);
  CHECK(some.heads.back() == 127);
  CHECK(some.rows.front() == 0);
  CHECK(some.rows.back() == 16383);
  CHECK(std::is_sorted(some.rows.begin(), some.rows.end()));
  const double cost = 4.0 * 16384 * 128 * static_cast<double>(some.rows.size()) * 2;
  CHECK(cost <= 2e9 * 1.1);
  CHECK(plan_check(big, 2e9, true).all());

  // Middle case: whole heads, as many as the budget buys.
  const auto mid = kernels::test::problem(8, 8, 1024, 64);  // 0.27 GFLOP per head
  const CheckPlan heads = plan_check(mid, 2e9, false);
  CHECK(heads.rows.size() == 1024);
  CHECK(heads.heads.size() == 7);
  CHECK(heads.heads.back() == 63);
}

TEST_CASE("the backward's check takes grouped query heads whole, so that dK and dV can be summed",
          "[kernels][reference][bwd]") {
  auto p = kernels::test::problem(2, 8, 1024, 64);  // 12·N²·d = 0.81 GFLOP per head
  p.kv_heads = 2;                                   // groups of 4 query heads
  const BackwardCheckPlan plan = plan_check_backward(p, 8e9, false);
  REQUIRE(plan.keys);
  const std::vector<sim::i64>& h = plan.rows.heads;
  REQUIRE(h.size() % 4 == 0);
  CHECK(h.size() < 16);  // not every head: the budget buys two groups
  for (std::size_t at = 0; at < h.size(); at += 4)
    for (sim::i64 g = 0; g < 4; ++g) CHECK(h[at + g] == h[at] + g);
  CHECK(h.front() == 0);
  CHECK(h.back() == 15);  // the last group: batch 1's last K/V head
  CHECK(plan.rows.rows.size() == 1024);
  CHECK(plan.rows.n_heads_total == 16);
  CHECK(12.0 * 1024 * 1024 * 64 * static_cast<double>(h.size()) <= 8e9);

  // One group alone over the budget: dQ rows only, dK and dV not checked.
  CHECK_FALSE(plan_check_backward(p, 3e9, false).keys);
  // Without groups the same budget checks whole heads.
  p.kv_heads = 0;
  CHECK(plan_check_backward(p, 3e9, false).keys);
  CHECK(plan_check_backward(p, 3e9, false).rows.heads.size() == 3);
}

TEST_CASE("the reference cache keeps what it was given", "[kernels][reference]") {
  ReferenceCache c;
  CHECK(c.find("a") == nullptr);
  c.put("a", {1.0, 2.0});
  REQUIRE(c.find("a") != nullptr);
  CHECK(*c.find("a") == std::vector<double>{1.0, 2.0});
  CHECK(c.size() == 1);
}

// ---- the backward reference ------------------------------------------------------------

TEST_CASE("the fp64 gradients are the derivatives of Σ O∘dO (central differences)", "[kernels][reference][bwd]") {
  const bool causal = GENERATE(false, true);
  const std::int64_t nq = 5, nkv = causal ? 5 : 7, d = 4;
  std::mt19937_64 g(causal ? 7 : 11);
  std::normal_distribution<double> n01;
  auto fill = [&](std::int64_t n) {
    std::vector<double> v(static_cast<std::size_t>(n));
    for (double& x : v) x = n01(g);
    return v;
  };
  std::vector<double> q = fill(nq * d), k = fill(nkv * d), v = fill(nkv * d), dO = fill(nq * d);
  const double tau = 0.7;
  // L(Q, K, V) = Σ_rx O_rx dO_rx, whose gradients are exactly dQ, dK, dV.
  auto loss = [&] {
    const HeadReference head(k.data(), v.data(), nkv, d);
    std::vector<double> o(static_cast<std::size_t>(d));
    double l = 0;
    for (std::int64_t r = 0; r < nq; ++r) {
      head.row(q.data() + r * d, r, tau, causal, o.data());
      for (std::int64_t x = 0; x < d; ++x) l += o[x] * dO[r * d + x];
    }
    return l;
  };
  const HeadGradients grad = head_gradients(q.data(), k.data(), v.data(), dO.data(), nq, nkv, d, tau, causal);
  auto numeric = [&](std::vector<double>& t, std::size_t i) {
    const double h = 1e-6, keep = t[i];
    t[i] = keep + h;
    const double up = loss();
    t[i] = keep - h;
    const double down = loss();
    t[i] = keep;
    return (up - down) / (2 * h);
  };
  for (std::size_t i = 0; i < q.size(); ++i) CHECK(grad.dq[i] == Approx(numeric(q, i)).margin(1e-7));
  for (std::size_t i = 0; i < k.size(); ++i) CHECK(grad.dk[i] == Approx(numeric(k, i)).margin(1e-7));
  for (std::size_t i = 0; i < v.size(); ++i) CHECK(grad.dv[i] == Approx(numeric(v, i)).margin(1e-7));
}

TEST_CASE("with a single key the true dQ and dK are zero, measured against dV's norm", "[kernels][reference][bwd]") {
  const std::vector<double> q{1, -2, 0.5, 3, 0.25, 1, -1, 2}, k{0.3, -0.7}, v{2, 1}, dO{1, 2, -1, 0.5, 3, 1, 0, 1};
  const HeadGradients g = head_gradients(q.data(), k.data(), v.data(), dO.data(), 4, 1, 2, 0.5, false);
  for (double x : g.dq) CHECK(x == 0.0);
  for (double x : g.dk) CHECK(x == 0.0);
  CHECK(g.dv[0] == Approx(1 - 1 + 3 + 0));  // Σ_r dO_r0 (P = 1)
  // A kernel's rounding leaves ~1e-7 where the truth is 0: relative to dV's reference, not +inf.
  const ErrorSums dv = error_sums(std::vector<double>{g.dv[0] * (1 + 1e-3), g.dv[1]}, g.dv);
  const ErrorSums dq = error_sums(std::vector<double>(8, 1e-7), g.dq), dk = error_sums({1e-7, 0}, g.dk);
  CHECK(std::isinf(dq.relative()));
  const double e = backward_error(dq, dk, dv);
  CHECK(std::isfinite(e));
  CHECK(e < 1e-3 * 1.01);
  CHECK(e == Approx(std::max(std::sqrt(8e-14 / dv.ref2), dv.relative())));
}

TEST_CASE("the backward check takes whole heads when their gradients fit, dQ rows beyond", "[kernels][reference][bwd]") {
  // 12·N²·d per head: 12·300²·64 = 6.9e7, so four heads fit 3e8.
  BackwardCheckPlan small = plan_check_backward(problem(2, 4, 300, 64), 3e8, false);
  CHECK(small.keys);
  CHECK(small.rows.heads.size() == 4);
  CHECK(small.rows.rows.size() == 300);
  // One head over the budget: dQ on spread rows of two heads, dK and dV not checked.
  BackwardCheckPlan large = plan_check_backward(problem(1, 32, 16384, 64), 2e9, false);
  CHECK_FALSE(large.keys);
  CHECK(large.rows.heads.size() == 2);
  CHECK(large.rows.rows.size() < 16384);
  CHECK(std::find(large.rows.rows.begin(), large.rows.rows.end(), 16383) != large.rows.rows.end());
  // full: everything.
  BackwardCheckPlan full = plan_check_backward(problem(1, 32, 16384, 64), 2e9, true);
  CHECK(full.keys);
  CHECK(full.rows.all());
}
