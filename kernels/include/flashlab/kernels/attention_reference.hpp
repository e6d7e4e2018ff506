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
      : n_kv_(n_kv), d_(d), kt_(static_cast<std::size_t>(n_kv * d)), v_(static_cast<std::size_t>(n_kv * d)) {
    // Kᵀ, so that the scores of a row accumulate as d contiguous passes over the keys.
    for (std::int64_t c = 0; c < n_kv; ++c)
      for (std::int64_t x = 0; x < d; ++x) {
        kt_[static_cast<std::size_t>(x * n_kv + c)] = static_cast<double>(k[c * d + x]);
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

 private:
  std::int64_t n_kv_, d_;
  std::vector<double> kt_, v_;  // Kᵀ [d, n_kv] and V [n_kv, d]
};

}  // namespace flashlab::kernels
