// The fp64 attention that every kernel is checked against, written once: the
// runner's check (reference.hpp, reference_rows), the CPU emulation of fa2_tc
// (tests/kernels/fa2_tc_emulate.cpp) and its device checker
// (tests/kernels/fa2_tc_standalone.cu, built by plain nvcc) all call it.
// Header-only and dependency-free (standard library only) for that reason.
//
// For query row r of one head: s_c = τ·(q_r · k_c) over the visible keys
// (all of them, or c ≤ r when causal: the simulator's TileGrid rule),
// m = max s_c, ℓ = Σ exp(s_c − m), o_r = Σ exp(s_c − m)·v_c / ℓ, and the
// logsumexp m + log ℓ. Every sum in fp64; inputs are read as doubles, so the
// reference sees exactly the values the kernel was given (fp16/bf16 rounded).
//
// The backward pass, row by row (backward_row), for dO_r: with P_rc the
// softmax above, dP_rc = dO_r · v_c, D_r = Σ_c P_rc dP_rc (= dO_r · o_r),
// dS_rc = P_rc (dP_rc − D_r); then dQ_r = τ Σ_c dS_rc k_c, and row r adds
// τ dS_rc q_r to dK_c and P_rc dO_r to dV_c. The exact gradient of the exact
// forward: a kernel's error includes what rounding its own O contributed.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

namespace flashlab::kernels {

class HeadReference {
 public:
  // K and V of one head, [n_kv, d] row-major, in any type convertible to double.
  template <class T>
  HeadReference(const T* k, const T* v, std::int64_t n_kv, std::int64_t d)
      : n_kv_(n_kv),
        d_(d),
        kt_(static_cast<std::size_t>(n_kv * d)),
        k_(static_cast<std::size_t>(n_kv * d)),
        v_(static_cast<std::size_t>(n_kv * d)) {
    // Kᵀ, so that the scores of a row accumulate as d contiguous passes over the keys.
    for (std::int64_t c = 0; c < n_kv; ++c)
      for (std::int64_t x = 0; x < d; ++x) {
        kt_[static_cast<std::size_t>(x * n_kv + c)] = static_cast<double>(k[c * d + x]);
        k_[static_cast<std::size_t>(c * d + x)] = static_cast<double>(k[c * d + x]);
        v_[static_cast<std::size_t>(c * d + x)] = static_cast<double>(v[c * d + x]);
      }
  }

  std::int64_t n_kv() const { return n_kv_; }
  std::int64_t d() const { return d_; }

  // Output row r (d values into `o`) for query q_r (d values); returns its
  // logsumexp. Const and allocation-local: rows may be computed in parallel.
  template <class T>
  double row(const T* q, std::int64_t r, double scale, bool causal, double* o) const {
    const std::int64_t kept = causal ? std::min(r + 1, n_kv_) : n_kv_;
    std::vector<double> s(static_cast<std::size_t>(kept), 0.0);
    const double m = scaled_scores(q, scale, s);
    std::fill(o, o + d_, 0.0);
    double l = 0;
    for (std::int64_t c = 0; c < kept; ++c) {
      const double p = std::exp(s[static_cast<std::size_t>(c)] - m);
      l += p;
      const double* vc = v_.data() + c * d_;
      for (std::int64_t x = 0; x < d_; ++x) o[x] += p * vc[x];
    }
    for (std::int64_t x = 0; x < d_; ++x) o[x] /= l;
    return m + std::log(l);
  }

  // The backward pass through query row r (q_r and dO_r: d values each): dQ_r
  // into `dq` (d values), and row r's part of dK and dV added into `dk`, `dv`
  // ([n_kv, d] each, the sums over every row once all rows are done). Any of
  // the three may be null. Const: rows that write only dq may run in parallel.
  template <class T>
  void backward_row(const T* q, const T* d_o, std::int64_t r, double scale, bool causal, double* dq, double* dk,
                    double* dv) const {
    const std::int64_t kept = causal ? std::min(r + 1, n_kv_) : n_kv_;
    std::vector<double> p(static_cast<std::size_t>(kept), 0.0), dp(static_cast<std::size_t>(kept), 0.0);
    const double m = scaled_scores(q, scale, p);
    double l = 0;
    for (double& sc : p) {
      sc = std::exp(sc - m);
      l += sc;
    }
    double D = 0;
    for (std::int64_t c = 0; c < kept; ++c) {
      double& pc = p[static_cast<std::size_t>(c)];
      pc /= l;
      const double* vc = v_.data() + c * d_;
      double acc = 0;
      for (std::int64_t x = 0; x < d_; ++x) acc += static_cast<double>(d_o[x]) * vc[x];
      dp[static_cast<std::size_t>(c)] = acc;
      D += pc * acc;
    }
    if (dq != nullptr) std::fill(dq, dq + d_, 0.0);
    for (std::int64_t c = 0; c < kept; ++c) {
      const double pc = p[static_cast<std::size_t>(c)];
      const double ds = pc * (dp[static_cast<std::size_t>(c)] - D);
      const double* kc = k_.data() + c * d_;
      if (dq != nullptr)
        for (std::int64_t x = 0; x < d_; ++x) dq[x] += scale * ds * kc[x];
      if (dk != nullptr)
        for (std::int64_t x = 0; x < d_; ++x) dk[c * d_ + x] += scale * ds * static_cast<double>(q[x]);
      if (dv != nullptr)
        for (std::int64_t x = 0; x < d_; ++x) dv[c * d_ + x] += pc * static_cast<double>(d_o[x]);
    }
  }

 private:
  // s_c = τ q·k_c for the first s.size() keys (s zeroed by the caller); returns the row's maximum.
  template <class T>
  double scaled_scores(const T* q, double scale, std::vector<double>& s) const {
    const std::int64_t kept = static_cast<std::int64_t>(s.size());
    for (std::int64_t x = 0; x < d_; ++x) {
      const double qx = static_cast<double>(q[x]);
      const double* kx = kt_.data() + x * n_kv_;
      for (std::int64_t c = 0; c < kept; ++c) s[static_cast<std::size_t>(c)] += qx * kx[c];
    }
    double m = -INFINITY;
    for (double& sc : s) {
      sc *= scale;
      m = std::max(m, sc);
    }
    return m;
  }

  std::int64_t n_kv_, d_;
  std::vector<double> kt_, k_, v_;  // Kᵀ [d, n_kv], K and V [n_kv, d]
};

// dQ [n_q, d], dK and dV [n_kv, d] of one head, every row through
// HeadReference::backward_row.
struct HeadGradients {
  std::vector<double> dq, dk, dv;
};
template <class T>
HeadGradients head_gradients(const T* q, const T* k, const T* v, const T* d_o, std::int64_t n_q, std::int64_t n_kv,
                             std::int64_t d, double scale, bool causal) {
  const HeadReference head(k, v, n_kv, d);
  HeadGradients g;
  g.dq.assign(static_cast<std::size_t>(n_q * d), 0.0);
  g.dk.assign(static_cast<std::size_t>(n_kv * d), 0.0);
  g.dv.assign(static_cast<std::size_t>(n_kv * d), 0.0);
  for (std::int64_t r = 0; r < n_q; ++r)
    head.backward_row(q + r * d, d_o + r * d, r, scale, causal, g.dq.data() + r * d, g.dk.data(), g.dv.data());
  return g;
}

}  // namespace flashlab::kernels
