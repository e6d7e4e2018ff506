// The ring's outputs checked against the fp64 reference (the runner's check
// plans: every row, or sampled rows and heads within a FLOP budget), the
// outputs counted for what was not written, and the whole tensors gathered.
// With a process per GPU each rank reads its own chunks' rows and the others'
// come through the group (share_rows), so every rank scores the same rows.
#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <sstream>
#include <string>
#include <vector>

#include "device/cuda_check.hpp"
#include "device/device_utils.hpp"
#include "flashlab/kernels/runner/attention_reference.hpp"
#include "flashlab/kernels/runner/reference.hpp"
#include "ring_run.hpp"

namespace flashlab::kernels::ring {

i64 RingRun::count_unwritten(bool backward) {
  i64 bad = 0;
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      if (!backward) {
        bad += detail::count_not_finite(c.o.data, c.o.elems, p_.dtype, g.counter, g.compute);
      } else {
        for (const DtypeBuffer* t : {&c.dq, &c.dk, &c.dv})
          bad += detail::count_not_finite(t->data, t->elems, p_.dtype, g.counter, g.compute);
      }
    }
  }
  return sum_over_ranks(bad);
}

std::vector<std::uint16_t> RingRun::gather(int tensor, i64 b, i64 h) {
  const bool kv_shaped = tensor == kK || tensor == kV || tensor == kDK || tensor == kDV;
  const i64 heads = kv_shaped ? p_.h_kv() : p_.heads;
  const i64 d = p_.head_dim;
  std::vector<std::uint16_t> out(static_cast<std::size_t>(p_.seq_q * d));
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    FLASHLAB_CUDA_CHECK(cudaStreamSynchronize(g.compute));
    for (std::size_t j = 0; j < g.own.size(); ++j) {
      OwnChunk& c = g.own[j];
      const i64 n = c.chunk.size();
      const void* base = nullptr;
      switch (tensor) {
        case kQ: base = c.q.data; break;
        case kO: base = c.o.data; break;
        case kDO: base = c.d_o.data; break;
        case kDQ: base = c.dq.data; break;
        case kDK: base = c.dk.data; break;
        case kDV: base = c.dv.data; break;
        case kK: base = g.kv_home.at(k_offset(g.index, j)); break;
        case kV: base = g.kv_home.at(k_offset(g.index, j) + kv_elems(n)); break;
        default: break;
      }
      const char* src = static_cast<const char*>(base) + ((b * heads + h) * n) * d * es();
      FLASHLAB_CUDA_CHECK(cudaMemcpy(out.data() + c.chunk.begin * d, src, static_cast<std::size_t>(n * d * es()),
                                     cudaMemcpyDeviceToHost));
    }
  }
  share_rows(reinterpret_cast<char*>(out.data()), d * es());
  return out;
}

std::vector<float> RingRun::gather_lse(i64 b, i64 h) {
  std::vector<float> out(static_cast<std::size_t>(p_.seq_q));
  for (Rank& g : ranks_) {
    FLASHLAB_CUDA_CHECK(cudaSetDevice(g.device));
    for (OwnChunk& c : g.own) {
      const i64 n = c.chunk.size();
      FLASHLAB_CUDA_CHECK(cudaMemcpy(out.data() + c.chunk.begin, c.lse.at((b * p_.heads + h) * n),
                                     static_cast<std::size_t>(n * 4), cudaMemcpyDeviceToHost));
    }
  }
  share_rows(reinterpret_cast<char*>(out.data()), 4);
  return out;
}

std::vector<double> as_doubles(const std::vector<std::uint16_t>& bits, sim::DType t) {
  return to_doubles(bits.data(), static_cast<i64>(bits.size()), t);
}

void RingRun::check_forward(sim::MeasuredRun& out) {
  const CheckPlan plan = plan_check(sim::whole_problem(p_), o_.check_flop_budget, o_.check == CheckMode::full);
  const i64 d = p_.head_dim, group = p_.heads / p_.h_kv();
  ErrorSums err;
  for (i64 flat : plan.heads) {
    const i64 b = flat / p_.heads, h = flat % p_.heads, hk = h / group;
    const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
    const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
    const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
    const std::vector<double> o = as_doubles(gather(kO, b, h), p_.dtype);
    const HeadReference ref(k.data(), v.data(), p_.seq_q, d);
    std::vector<double> got, want;
    std::vector<double> row(static_cast<std::size_t>(d));
    for (i64 r : plan.rows) {
      ref.row(q.data() + r * d, r, scale_, p_.causal, row.data());
      want.insert(want.end(), row.begin(), row.end());
      got.insert(got.end(), o.begin() + r * d, o.begin() + (r + 1) * d);
    }
    err += error_sums(got, want);
  }
  out.rel_error = err.relative();
  std::ostringstream note;
  note << (plan.all() ? "O of every row of every head" : "O of " + std::to_string(plan.rows.size()) + " rows in " +
                                                             std::to_string(plan.heads.size()) + " of " +
                                                             std::to_string(plan.n_heads_total) + " heads");
  out.parallel_part().check_note = note.str();
}

void RingRun::check_backward(sim::MeasuredRun& out) {
  sim::ParallelRun& pr = out.parallel_part();
  const BackwardCheckPlan plan =
      plan_check_backward(sim::whole_problem(p_), o_.check_flop_budget, o_.check == CheckMode::full);
  const i64 d = p_.head_dim, N = p_.seq_q, group = p_.heads / p_.h_kv();
  ErrorSums dq_err, dk_err, dv_err;
  if (plan.keys) {
    // Whole K/V heads: every query head of each checked head's group.
    std::vector<i64> kv_heads;
    for (i64 flat : plan.rows.heads) {
      const i64 kvh = (flat / p_.heads) * p_.h_kv() + (flat % p_.heads) / group;
      if (std::find(kv_heads.begin(), kv_heads.end(), kvh) == kv_heads.end()) kv_heads.push_back(kvh);
    }
    for (i64 kvflat : kv_heads) {
      const i64 b = kvflat / p_.h_kv(), hk = kvflat % p_.h_kv();
      const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
      const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
      std::vector<double> dk(static_cast<std::size_t>(N * d), 0.0), dv(dk);
      for (i64 h = hk * group; h < (hk + 1) * group; ++h) {
        const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
        const std::vector<double> dO = as_doubles(gather(kDO, b, h), p_.dtype);
        const HeadGradients g = head_gradients(q.data(), k.data(), v.data(), dO.data(), N, N, d, scale_, p_.causal);
        dq_err += error_sums(as_doubles(gather(kDQ, b, h), p_.dtype), g.dq);
        for (std::size_t i = 0; i < dk.size(); ++i) {
          dk[i] += g.dk[i];
          dv[i] += g.dv[i];
        }
      }
      dk_err += error_sums(as_doubles(gather(kDK, b, hk), p_.dtype), dk);
      dv_err += error_sums(as_doubles(gather(kDV, b, hk), p_.dtype), dv);
    }
    pr.rel_error_grads = backward_error(dq_err, dk_err, dv_err);
    pr.check_note += "; dQ, dK, dV of " + std::to_string(kv_heads.size()) + " K/V head(s) whole";
    return;
  }
  for (i64 flat : plan.rows.heads) {
    const i64 b = flat / p_.heads, h = flat % p_.heads, hk = h / group;
    const std::vector<double> q = as_doubles(gather(kQ, b, h), p_.dtype);
    const std::vector<double> k = as_doubles(gather(kK, b, hk), p_.dtype);
    const std::vector<double> v = as_doubles(gather(kV, b, hk), p_.dtype);
    const std::vector<double> dO = as_doubles(gather(kDO, b, h), p_.dtype);
    const std::vector<double> dq = as_doubles(gather(kDQ, b, h), p_.dtype);
    const HeadReference ref(k.data(), v.data(), N, d);
    std::vector<double> row(static_cast<std::size_t>(d)), got, want;
    for (i64 r : plan.rows.rows) {
      ref.backward_row(q.data() + r * d, dO.data() + r * d, r, scale_, p_.causal, row.data(), nullptr, nullptr);
      want.insert(want.end(), row.begin(), row.end());
      got.insert(got.end(), dq.begin() + r * d, dq.begin() + (r + 1) * d);
    }
    dq_err += error_sums(got, want);
  }
  pr.rel_error_grads = dq_err.relative();
  pr.check_note += "; dQ of " + std::to_string(plan.rows.rows.size()) + " rows in " +
                    std::to_string(plan.rows.heads.size()) + " heads (dK, dV of a head this long: not checked)";
}

void RingRun::gather_all(RingTensors& t) {
  auto whole = [&](int tensor, i64 heads) {
    std::vector<std::uint16_t> all;
    for (i64 b = 0; b < p_.batch; ++b)
      for (i64 h = 0; h < heads; ++h) {
        const std::vector<std::uint16_t> one = gather(tensor, b, h);
        all.insert(all.end(), one.begin(), one.end());
      }
    return all;
  };
  t.q = whole(kQ, p_.heads);
  t.k = whole(kK, p_.h_kv());
  t.v = whole(kV, p_.h_kv());
  t.o = whole(kO, p_.heads);
  t.lse.clear();
  for (i64 b = 0; b < p_.batch; ++b)
    for (i64 h = 0; h < p_.heads; ++h) {
      const std::vector<float> one = gather_lse(b, h);
      t.lse.insert(t.lse.end(), one.begin(), one.end());
    }
  if (p_.backward()) {
    t.d_o = whole(kDO, p_.heads);
    t.dq = whole(kDQ, p_.heads);
    t.dk = whole(kDK, p_.h_kv());
    t.dv = whole(kDV, p_.h_kv());
  }
}

}  // namespace flashlab::kernels::ring
