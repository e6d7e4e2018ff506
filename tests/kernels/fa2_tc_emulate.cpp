// CPU emulation of the fa2_tc kernel, for machines without a GPU (CI).
//
// The kernel body of kernels/src/rungs/fa2_tc_kernel.cuh is compiled here with plain C++
// (FA2_TC_EMULATE) and run on the emulated GPU of tc_emulator.hpp: every CUDA
// thread a fiber; ldmatrix, mma.m16n8k16, shuffles, barriers and cp.async
// emulated from the PTX ISA text. Shared memory starts as NaN, so a read of
// anything not copied shows up.
// What it cannot see: timing, bank conflicts, the real hardware rounding of
// ex2.approx and of the tensor-core adder tree. compute-sanitizer and the
// device checker (scripts/fa2_tc_check.sh) cover the hardware side.
//
// Build and run (g++ ≥ 12 or clang ≥ 15 on x86-64, for _Float16):
//   g++ -std=c++17 -O2 -Ikernels -Ikernels/include -Isim/include tests/kernels/fa2_tc_emulate.cpp -o fa2_tc_emulate
//   ./fa2_tc_emulate [defaults|variants|all]
// "defaults" (the compiled configurations) takes about 15 s on 2 cores.
// The last line is "N passed, N failed"; the exit status is 0 when all pass.
#include "tc_emulator.hpp"

#define FA2_TC_EMULATE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // #pragma unroll is for nvcc
#include "rungs/fa2_tc_kernel.cuh"
#pragma GCC diagnostic pop

namespace D = flashlab::kernels::fa2_tc_detail;

// The grid, one block after another.
template <class Cfg, typename T>
bool emulate_grid(const D::Params& p, int grid) {
  return emulate_blocks(Cfg::kThreads, grid, [&p] { D::fa2_tc_forward_kernel<Cfg, T>(p); });
}

// ---------------------------------------------------------------------------
// Reference and cases
// ---------------------------------------------------------------------------
// Every row of one head through the fp64 reference the runner checks against.
void reference_head(const float* q, const float* k, const float* v, int nq, int nkv, int d, bool causal, double tau,
                    double* o, double* lse) {
  const flashlab::kernels::HeadReference head(k, v, nkv, d);
  for (int r = 0; r < nq; ++r) lse[r] = head.row(q + size_t(r) * d, r, tau, causal, o + size_t(r) * d);
}

// O and the logsumexp of `heads` query heads against fp64: query head h reads
// K/V head h / group of kr, vr ([H_kv, N_kv, d]). The relative Frobenius error
// of O, the worst relative error of the logsumexp, the non-finite outputs.
struct OutputErrors {
  double o = 0, lse = 0;
  std::size_t nonfinite = 0;
  bool within(double o_tol, double lse_tol) const { return nonfinite == 0 && o < o_tol && lse < lse_tol; }
};
template <typename T>
OutputErrors check_output(const std::vector<T>& o, const std::vector<float>& lse, const std::vector<float>& qr,
                          const std::vector<float>& kr, const std::vector<float>& vr, int heads, int group, int nq,
                          int nkv, int d, bool causal, double tau) {
  const bool bf = std::is_same<T, emu_bf16>::value;
  double num = 0, den = 0;
  OutputErrors e;
  std::vector<double> oref(size_t(nq) * d), lref(nq);
  for (int h = 0; h < heads; ++h) {
    const int hk = h / group;
    reference_head(qr.data() + size_t(h) * nq * d, kr.data() + size_t(hk) * nkv * d, vr.data() + size_t(hk) * nkv * d,
                   nq, nkv, d, causal, tau, oref.data(), lref.data());
    for (size_t i = 0; i < oref.size(); ++i) {
      const float got = bf ? bf16_to_float(o[size_t(h) * nq * d + i].bits) : f16_to_float(o[size_t(h) * nq * d + i].bits);
      if (!std::isfinite(got)) ++e.nonfinite;
      num += (got - oref[i]) * (got - oref[i]); den += oref[i] * oref[i];
    }
    for (int r = 0; r < nq; ++r) {
      const double g = lse[size_t(h) * nq + r];
      if (!std::isfinite(g)) ++e.nonfinite;
      e.lse = std::max(e.lse, std::fabs(g - lref[r]) / std::max(1.0, std::fabs(lref[r])));
    }
  }
  e.o = std::sqrt(num / den);
  return e;
}

template <class Cfg, typename T>
void run_case(const char* name, int BH, int nq, int nkv, bool causal, float scale, unsigned seed) {
  constexpr int d = Cfg::kHeadDim;
  const bool bf = std::is_same<T, emu_bf16>::value;
  RoundedInputs in(seed);
  std::vector<T> q, k, v; std::vector<float> qr, kr, vr;
  in.fill(size_t(BH) * nq * d, scale, q, qr);
  in.fill(size_t(BH) * nkv * d, scale, k, kr);
  in.fill(size_t(BH) * nkv * d, scale, v, vr);
  std::vector<T> o(size_t(BH) * nq * d); for (auto& x : o) x.bits = 0xFFFF;
  std::vector<float> lse(size_t(BH) * nq, NAN);
  D::Params p{};
  p.q = q.data(); p.k = k.data(); p.v = v.data(); p.o = o.data(); p.lse = lse.data();
  p.n_q = nq; p.n_kv = nkv; p.T_r = (nq + Cfg::kBr - 1) / Cfg::kBr;
  const double tau = 1.0 / std::sqrt(double(d));
  p.scale_log2 = float(tau * 1.4426950408889634);
  p.causal = causal;
  bool ok = emulate_grid<Cfg, T>(p, p.T_r * BH);
  const OutputErrors e = check_output(o, lse, qr, kr, vr, BH, 1, nq, nkv, d, causal, tau);
  ok = ok && e.within(2e-2, 1e-3);
  tally(ok);
  std::printf("%s %-26s %s mode=%d BH=%d N_q=%d N_kv=%d causal=%d x%g err_O=%.3e err_LSE=%.3e nonfinite=%zu\n",
              ok ? "PASS" : "FAIL", name, bf ? "bf16" : "fp16", emu::copy_mode, BH, nq, nkv, int(causal), scale, e.o,
              e.lse, e.nonfinite);
  std::fflush(stdout);
}

// The ring's use of the kernel: H query heads over H_kv K/V heads read in
// place (kv_group), and the keys in `parts` chunks, one launch each, folding
// into a running output (start, fold…, finish) instead of writing O alone.
// The result is the attention of Q over all the keys (non-causal), as one
// launch over the concatenated K, V would give.
template <class Cfg, typename T>
void run_ring_case(const char* name, int heads, int kv_heads, int nq, const std::vector<int>& parts, unsigned seed) {
  constexpr int d = Cfg::kHeadDim;
  const bool bf = std::is_same<T, emu_bf16>::value;
  const int group = heads / kv_heads;
  RoundedInputs in(seed);
  int nkv = 0;
  for (int n : parts) nkv += n;
  std::vector<T> q; std::vector<float> qr;
  in.fill(size_t(heads) * nq * d, 1.f, q, qr);
  // Each chunk of keys its own [H_kv, n, d] tensors, as the ring's packages hold them.
  std::vector<std::vector<T>> kc(parts.size()), vc(parts.size());
  std::vector<float> kr(size_t(kv_heads) * nkv * d), vr(kr.size());  // the whole K, V per head, for the reference
  int begin = 0;
  for (size_t c = 0; c < parts.size(); ++c) {
    std::vector<float> kf, vf;
    in.fill(size_t(kv_heads) * parts[c] * d, 1.f, kc[c], kf);
    in.fill(size_t(kv_heads) * parts[c] * d, 1.f, vc[c], vf);
    for (int h = 0; h < kv_heads; ++h)
      for (int r = 0; r < parts[c]; ++r)
        for (int x = 0; x < d; ++x) {
          kr[(size_t(h) * nkv + begin + r) * d + x] = kf[(size_t(h) * parts[c] + r) * d + x];
          vr[(size_t(h) * nkv + begin + r) * d + x] = vf[(size_t(h) * parts[c] + r) * d + x];
        }
    begin += parts[c];
  }
  std::vector<T> o(size_t(heads) * nq * d); for (auto& x : o) x.bits = 0xFFFF;
  std::vector<float> lse(size_t(heads) * nq, NAN), o_run(size_t(heads) * nq * d, NAN);
  const double tau = 1.0 / std::sqrt(double(d));
  bool ok = true;
  for (size_t c = 0; c < parts.size(); ++c) {
    D::Params p{};
    p.q = q.data(); p.k = kc[c].data(); p.v = vc[c].data(); p.o = o.data(); p.lse = lse.data();
    p.n_q = nq; p.n_kv = parts[c]; p.T_r = (nq + Cfg::kBr - 1) / Cfg::kBr;
    p.scale_log2 = float(tau * 1.4426950408889634);
    p.causal = 0;
    p.kv_group = group;
    p.o_run = o_run.data();
    namespace K = flashlab::kernels::detail;
    p.fold = parts.size() == 1 ? K::kFoldNone
             : c == 0          ? K::kFoldStart
             : c + 1 == parts.size() ? K::kFoldFinish
                                     : K::kFoldFold;
    ok = ok && emulate_grid<Cfg, T>(p, p.T_r * heads);
  }
  const OutputErrors e = check_output(o, lse, qr, kr, vr, heads, group, nq, nkv, d, false, tau);
  ok = ok && e.within(2e-2, 1e-3);
  tally(ok);
  std::printf("%s %-26s %s ring H=%d H_kv=%d N_q=%d parts=%zu N_kv=%d err_O=%.3e err_LSE=%.3e nonfinite=%zu\n",
              ok ? "PASS" : "FAIL", name, bf ? "bf16" : "fp16", heads, kv_heads, nq, parts.size(), nkv, e.o, e.lse,
              e.nonfinite);
  std::fflush(stdout);
}

template <class Cfg>
void suite(const char* name, bool full) {
  unsigned seed = run_emulated_cases(full, true, [name](auto dtype, const EmuCase& c, unsigned case_seed) {
    run_case<Cfg, decltype(dtype)>(name, c.bh, c.nq, c.nkv, c.causal, c.scale, case_seed);
  });
  // Grouped K/V heads read in place, the running output folded over chunks of keys.
  emu::copy_mode = 1;
  run_ring_case<Cfg, emu_f16>(name, 4, 2, 70, {65}, seed++);             // one part: a plain launch
  run_ring_case<Cfg, emu_bf16>(name, 4, 1, 130, {64, 33}, seed++);       // start, finish
  run_ring_case<Cfg, emu_f16>(name, 2, 2, 17, {17, 100, 1, 40}, seed++);  // start, fold, fold, finish
}

int main(int argc, char** argv) {
  const std::string which = argc > 1 ? argv[1] : "defaults";
  if (which == "defaults" || which == "all") {
    suite<D::Config<64, 128, 64, 4, true, 2>>("d64_128x64_w4_qreg", true);
    suite<D::Config<96, 128, 64, 8, true, 1>>("d96_128x64_w8_qreg", false);
    suite<D::Config<128, 128, 64, 8, true, 1>>("d128_128x64_w8_qreg", true);
    suite<D::Config<256, 128, 64, 8, false, 1>>("d256_128x64_w8_qsmem", false);
  }
  if (which == "variants" || which == "all") {
    suite<D::Config<64, 128, 64, 8, true, 2>>("d64_128x64_w8_qreg", false);
    suite<D::Config<64, 128, 128, 8, true, 1>>("d64_128x128_w8_qreg", false);
    suite<D::Config<64, 128, 64, 4, false, 2>>("d64_128x64_w4_qsmem", false);
    suite<D::Config<64, 64, 64, 4, true, 3>>("d64_64x64_w4_qreg", false);
    suite<D::Config<128, 128, 64, 8, false, 2>>("d128_128x64_w8_qsmem", false);
    suite<D::Config<128, 128, 32, 4, false, 2>>("d128_128x32_w4_qsmem", false);
    suite<D::Config<128, 64, 64, 4, true, 2>>("d128_64x64_w4_qreg", false);
    suite<D::Config<128, 128, 64, 4, false, 2>>("d128_128x64_w4_qsmem", false);
  }
  return finish();
}
