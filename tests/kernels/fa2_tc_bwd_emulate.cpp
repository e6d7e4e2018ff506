// CPU emulation of the fa2_tc_bwd kernel, for machines without a GPU (CI).
//
// The kernel body of kernels/src/rungs/fa2_tc_bwd_kernel.cuh is compiled here with plain
// C++ (FA2_TC_EMULATE) and run on the emulated GPU of tc_emulator.hpp (every
// thread a fiber; ldmatrix, mma.m16n8k16, barriers and cp.async from the PTX
// ISA text; shared memory starts as NaN). The pre-pass (D_i, L_i) and the
// convert kernel are done here on the host from the fp64 forward, as
// fa_bwd_common.cu does them on the device; red.global.add is a plain add
// (blocks run one after another). dQ, dK and dV are checked against the fp64
// gradients of attention_reference.hpp.
// What it cannot see: timing, races between blocks on dQaccum, the hardware's
// rounding. compute-sanitizer and the GPU tests cover those.
//
//   g++ -std=c++17 -O2 -Ikernels -Ikernels/include -Isim/include tests/kernels/fa2_tc_bwd_emulate.cpp -o e && ./e [defaults|variants|all]
// The last line is "N passed, N failed"; the exit status is 0 when all pass.
#include "tc_emulator.hpp"

struct float2 {
  float x, y;
};

namespace flashlab::kernels::fa2_tc_bwd_detail {
inline void red_add_f32x2(float* addr, float x, float y) {
  addr[0] += x;
  addr[1] += y;
}
inline void cp_async_stats_16(std::uint32_t dst, const float* src) {
  flashlab::kernels::fa2_tc_detail::cp_async_16(dst, src, true);
}
}  // namespace flashlab::kernels::fa2_tc_bwd_detail

#define FA2_TC_EMULATE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // #pragma unroll is for nvcc
#include "rungs/fa2_tc_bwd_kernel.cuh"
#pragma GCC diagnostic pop

namespace B = flashlab::kernels::fa2_tc_bwd_detail;

double rel(const std::vector<double>& got, const std::vector<double>& ref, size_t* bad) {
  double num = 0, den = 0;
  for (size_t i = 0; i < ref.size(); ++i) {
    if (!std::isfinite(got[i])) ++*bad;
    num += (got[i] - ref[i]) * (got[i] - ref[i]);
    den += ref[i] * ref[i];
  }
  return den > 0 ? std::sqrt(num / den) : std::sqrt(num);
}

// Q, K, V, dO drawn N(0, scale²) (dO N(0, 1): the scale stresses the softmax)
// in the dtype and as the floats they round to; then the forward as fa2_tc would
// leave it (O rounded to the dtype, the logsumexp in fp32) and the pre-pass:
// D_r = dO_r · O_r, L_r·log2 e. `heads` query heads over `kv_heads` K/V heads.
template <typename T>
struct BwdInputs {
  std::vector<T> q, k, v, dO;
  std::vector<float> qr, kr, vr, dOr;
  std::vector<float> l_log2, d_row;  // [heads, stat_rows]
  int stat_rows = 0;
};
template <typename T>
BwdInputs<T> make_bwd_inputs(int heads, int kv_heads, int nq, int nkv, int d, bool causal, float scale, unsigned seed) {
  BwdInputs<T> in;
  RoundedInputs draw(seed);
  draw.fill(size_t(heads) * nq * d, scale, in.q, in.qr);
  draw.fill(size_t(kv_heads) * nkv * d, scale, in.k, in.kr);
  draw.fill(size_t(kv_heads) * nkv * d, scale, in.v, in.vr);
  draw.fill(size_t(heads) * nq * d, 1.f, in.dO, in.dOr);
  const double tau = 1.0 / std::sqrt(double(d));
  const int group = heads / kv_heads;
  in.stat_rows = (nq + 127) / 128 * 128;
  in.l_log2.assign(size_t(heads) * in.stat_rows, INFINITY);
  in.d_row.assign(size_t(heads) * in.stat_rows, 0.f);
  std::vector<double> orow(d);
  for (int h = 0; h < heads; ++h) {
    const int hk = h / group;
    const flashlab::kernels::HeadReference ref(in.kr.data() + size_t(hk) * nkv * d, in.vr.data() + size_t(hk) * nkv * d,
                                               nkv, d);
    for (int r = 0; r < nq; ++r) {
      const double lse = ref.row(in.qr.data() + (size_t(h) * nq + r) * d, r, tau, causal, orow.data());
      double D = 0;
      for (int x = 0; x < d; ++x) D += double(in.dOr[(size_t(h) * nq + r) * d + x]) * from_dtype(to_dtype<T>(float(orow[x])));
      in.d_row[size_t(h) * in.stat_rows + r] = float(D);
      in.l_log2[size_t(h) * in.stat_rows + r] = float(lse) * 1.4426950408889634f;
    }
  }
  return in;
}

// The kernel's arguments over `in`: Q, K, V, dO and the pre-pass's L, D; the
// caller sets where dQ, dK, dV go.
template <class Cfg, typename T>
B::Params params_over(const BwdInputs<T>& in, int nq, int nkv, bool causal) {
  const double tau = 1.0 / std::sqrt(double(Cfg::kHeadDim));
  B::Params p{};
  p.q = in.q.data();
  p.k = in.k.data();
  p.v = in.v.data();
  p.d_o = in.dO.data();
  p.l_log2 = in.l_log2.data();
  p.d_row = in.d_row.data();
  p.n_q = nq;
  p.n_kv = nkv;
  p.stat_rows = in.stat_rows;
  p.T_c = (nkv + Cfg::kBc - 1) / Cfg::kBc;
  p.scale = float(tau);
  p.scale_log2 = float(tau * 1.4426950408889634);
  p.causal = causal;
  return p;
}

template <class Cfg, typename T>
void run_case(const char* name, int BH, int nq, int nkv, bool causal, float scale, unsigned seed) {
  constexpr int d = Cfg::kHeadDim;
  const bool bf = std::is_same<T, emu_bf16>::value;
  auto from_t = [](T v) { return from_dtype(v); };
  auto to_t = [](float x) { return to_dtype<T>(x); };
  const BwdInputs<T> in = make_bwd_inputs<T>(BH, BH, nq, nkv, d, causal, scale, seed);
  const std::vector<float>&qr = in.qr, &kr = in.kr, &vr = in.vr, &dOr = in.dOr;
  const double tau = 1.0 / std::sqrt(double(d));
  std::vector<float> dq_acc(size_t(BH) * nq * d, 0.f);
  std::vector<T> dk(size_t(BH) * nkv * d), dv(size_t(BH) * nkv * d);
  for (auto& x : dk) x.bits = 0xFFFF;  // NaN: an element never written stays NaN
  for (auto& x : dv) x.bits = 0xFFFF;
  B::Params p = params_over<Cfg>(in, nq, nkv, causal);
  p.dq_accum = dq_acc.data();
  p.dk = dk.data();
  p.dv = dv.data();
  p.causal = causal;
  bool ok = emulate_blocks(Cfg::kThreads, p.T_c * BH, [&p] { B::fa2_tc_backward_kernel<Cfg, T>(p); });

  size_t bad = 0;
  double eq = 0, ek = 0, ev = 0;
  std::vector<double> gq(size_t(nq) * d), gk(size_t(nkv) * d), gv(size_t(nkv) * d);
  std::vector<double> rq, rk, rv;
  for (int h = 0; h < BH; ++h) {
    const auto g = flashlab::kernels::head_gradients(qr.data() + size_t(h) * nq * d, kr.data() + size_t(h) * nkv * d,
                                                     vr.data() + size_t(h) * nkv * d, dOr.data() + size_t(h) * nq * d,
                                                     nq, nkv, d, tau, causal);
    for (size_t i = 0; i < gq.size(); ++i) gq[i] = from_t(to_t(dq_acc[size_t(h) * nq * d + i] * float(tau)));
    for (size_t i = 0; i < gk.size(); ++i) {
      gk[i] = from_t(dk[size_t(h) * nkv * d + i]);
      gv[i] = from_t(dv[size_t(h) * nkv * d + i]);
    }
    rq.insert(rq.end(), g.dq.begin(), g.dq.end());
    rk.insert(rk.end(), g.dk.begin(), g.dk.end());
    rv.insert(rv.end(), g.dv.begin(), g.dv.end());
    static std::vector<double> aq, ak, av;
    if (h == 0) aq.clear(), ak.clear(), av.clear();
    aq.insert(aq.end(), gq.begin(), gq.end());
    ak.insert(ak.end(), gk.begin(), gk.end());
    av.insert(av.end(), gv.begin(), gv.end());
    if (h == BH - 1) {
      eq = rel(aq, rq, &bad);
      ek = rel(ak, rk, &bad);
      ev = rel(av, rv, &bad);
    }
  }
  // Inputs ×30 make the softmax nearly one-hot: dP_rc − D_r then cancels, and
  // D_r = dO_r · O_r inherits the rounding of O to the dtype (FlashAttention's
  // D, computed from the O the forward stored). Emulating D from the unrounded O
  // gives 6e-4 there; the ×30 cases are held to finiteness and a loose bound.
  const double tol = scale > 1.f ? 1e-1 : bf ? 3e-2 : 5e-3;
  ok = ok && bad == 0 && eq < tol && ek < tol && ev < tol;
  tally(ok);
  std::printf("%s %-24s %s mode=%d BH=%d N_q=%d N_kv=%d causal=%d x%g err dQ=%.2e dK=%.2e dV=%.2e nonfinite=%zu\n",
              ok ? "PASS" : "FAIL", name, bf ? "bf16" : "fp16", emu::copy_mode, BH, nq, nkv, int(causal), scale, eq, ek,
              ev, bad);
  std::fflush(stdout);
}

// The ring's use of the kernel: H query heads over H_kv K/V heads read in
// place (kv_group), dQ added into the caller's fp32 accumulator with τ
// applied (no convert), τ·dK and dV added into fp32 accumulators of the K/V
// heads, where the query heads of a group all add. The accumulators start
// non-zero, as a running sum does: the kernel must add, not store.
template <class Cfg, typename T>
void run_ring_case(const char* name, int heads, int kv_heads, int nq, int nkv, bool causal, unsigned seed) {
  constexpr int d = Cfg::kHeadDim;
  const bool bf = std::is_same<T, emu_bf16>::value;
  const int group = heads / kv_heads;
  const BwdInputs<T> in = make_bwd_inputs<T>(heads, kv_heads, nq, nkv, d, causal, 1.f, seed);
  const double tau = 1.0 / std::sqrt(double(d));
  // The running sums start at 1: what the kernel adds is the sum minus 1.
  std::vector<float> dq_acc(size_t(heads) * nq * d, 1.f), dk_acc(size_t(kv_heads) * nkv * d, 1.f), dv_acc(dk_acc);
  B::Params p = params_over<Cfg>(in, nq, nkv, causal);
  p.dq_accum = dq_acc.data();
  p.dq_scaled = 1;
  p.dk_accum = dk_acc.data();
  p.dv_accum = dv_acc.data();
  p.kv_group = group;
  bool ok = emulate_blocks(Cfg::kThreads, p.T_c * heads, [&p] { B::fa2_tc_backward_kernel<Cfg, T>(p); });

  std::vector<double> rq, gq, rk(size_t(kv_heads) * nkv * d, 0.0), rv(rk), gk, gv;
  for (int h = 0; h < heads; ++h) {
    const int hk = h / group;
    const auto g = flashlab::kernels::head_gradients(
        in.qr.data() + size_t(h) * nq * d, in.kr.data() + size_t(hk) * nkv * d, in.vr.data() + size_t(hk) * nkv * d,
        in.dOr.data() + size_t(h) * nq * d, nq, nkv, d, tau, causal);
    rq.insert(rq.end(), g.dq.begin(), g.dq.end());
    for (size_t i = 0; i < g.dk.size(); ++i) {
      rk[size_t(hk) * nkv * d + i] += g.dk[i];
      rv[size_t(hk) * nkv * d + i] += g.dv[i];
    }
  }
  for (float x : dq_acc) gq.push_back(double(x) - 1.0);
  for (float x : dk_acc) gk.push_back(double(x) - 1.0);
  for (float x : dv_acc) gv.push_back(double(x) - 1.0);
  size_t bad = 0;
  const double eq = rel(gq, rq, &bad), ek = rel(gk, rk, &bad), ev = rel(gv, rv, &bad);
  const double tol = bf ? 3e-2 : 5e-3;
  ok = ok && bad == 0 && eq < tol && ek < tol && ev < tol;
  tally(ok);
  std::printf("%s %-24s %s ring H=%d H_kv=%d N_q=%d N_kv=%d causal=%d err dQ=%.2e dK=%.2e dV=%.2e nonfinite=%zu\n",
              ok ? "PASS" : "FAIL", name, bf ? "bf16" : "fp16", heads, kv_heads, nq, nkv, int(causal), eq, ek, ev, bad);
  std::fflush(stdout);
}

template <class Cfg>
void suite(const char* name, bool full) {
  unsigned seed = run_emulated_cases(full, false, [name](auto dtype, const EmuCase& c, unsigned case_seed) {
    run_case<Cfg, decltype(dtype)>(name, c.bh, c.nq, c.nkv, c.causal, c.scale, case_seed);
  });
  // Grouped K/V heads read in place; dQ, dK, dV added into running fp32 sums.
  emu::copy_mode = 1;
  run_ring_case<Cfg, emu_f16>(name, 4, 2, 129, 129, true, seed++);
  run_ring_case<Cfg, emu_bf16>(name, 4, 1, 70, 150, false, seed++);
  run_ring_case<Cfg, emu_f16>(name, 2, 2, 33, 33, false, seed++);
}

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "defaults";
  if (which == "defaults" || which == "all") {
    // The compiled configurations (kernels/src/rungs/fa2_tc_bwd.cu).
    suite<B::Config<64, 128, 32, 4, false, 2, true>>("d64_128x32_w4_m2_defer", true);
    suite<B::Config<128, 128, 64, 8, false, 1, true>>("d128_128x64_w8_defer", true);
  }
  if (which == "variants" || which == "all") {
    suite<B::Config<64, 128, 32, 4, false, 2>>("d64_128x32_w4_m2", false);
    suite<B::Config<128, 128, 64, 8, false, 1>>("d128_128x64_w8", false);
    suite<B::Config<64, 128, 64, 8, true, 1>>("d64_128x64_w8_kvreg", false);
    suite<B::Config<64, 128, 32, 8, false, 2>>("d64_128x32_w8", false);
    suite<B::Config<128, 64, 64, 4, false, 2>>("d128_64x64_w4", false);
    suite<B::Config<128, 128, 32, 8, false, 1>>("d128_128x32_w8", false);
  }
  return finish();
}
