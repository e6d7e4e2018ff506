// CPU emulation of the fa2_tc kernel, for machines without a GPU (CI).
//
// The kernel body of kernels/fa2_tc_kernel.cuh is compiled here with plain C++
// (FA2_TC_EMULATE): every CUDA thread of a block is a fiber (ucontext), and the
// warp-level instructions the kernel uses are emulated from the PTX ISA text:
//   ldmatrix.m8n8.x4[.trans]: lane l receives, from matrix m (row addresses given
//     by lanes 8m..8m+7), row l/4, columns 2(l%4), 2(l%4)+1 (.trans: rows
//     2(l%4), 2(l%4)+1 of column l/4);
//   mma.m16n8k16 (f32 += f16/bf16): the A/B/C fragment tables ("Matrix Fragments
//     for mma.m16n8k16 with floating point type"), products summed in fp32;
//   shfl.xor, bar.sync (__syncthreads), bar.warp.sync (__syncwarp);
//   cp.async: the copy lands at issue (mode 0, exposes a stage overwritten while
//     still read) or at cp.async.wait_group (mode 1, exposes a read before the wait).
// Shared memory starts as NaN, so a read of anything not copied shows up.
// What it cannot see: timing, bank conflicts, the real hardware rounding of
// ex2.approx and of the tensor-core adder tree. compute-sanitizer and the
// device checker (scripts/fa2_tc_check.sh) cover the hardware side.
//
// Build and run (g++ ≥ 12 or clang ≥ 15 on x86-64, for _Float16):
//   g++ -std=c++17 -O2 -Ikernels -Ikernels/include -Isim/include tests/kernels/fa2_tc_emulate.cpp -o fa2_tc_emulate
//   ./fa2_tc_emulate [defaults|variants|all]
// "defaults" (the compiled configurations) takes about 15 s on 2 cores.
// The last line is "N passed, N failed"; the exit status is 0 when all pass.
#include <ucontext.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "flashlab/kernels/attention_reference.hpp"

// ---------------------------------------------------------------------------
// Fibers and barriers
// ---------------------------------------------------------------------------
namespace emu {
struct Barrier {
  int count = 0;
  std::uint64_t gen = 0;
  int expected = 0;
};
struct Fiber {
  ucontext_t ctx;
  std::vector<char> stack;
  bool done = false;
  Barrier* waiting = nullptr;
  std::uint64_t wait_gen = 0;
  int tid = 0;
  int coll = 0;  // collectives executed (mailbox parity)
  // cp.async groups: pending copies
  struct Copy { std::uint32_t dst; const void* src; bool valid; };
  std::vector<Copy> open;
  std::deque<std::vector<Copy>> groups;
};
ucontext_t sched;
std::vector<Fiber> fibers;
int cur = 0;
int block_idx = 0;
Barrier block_bar;
Barrier warp_bar[32];
std::uint64_t progress = 0;
int copy_mode = 0;
alignas(128) unsigned char smem[256 * 1024];
// mailboxes: [warp][parity][lane][16 words]
std::uint32_t mbox[32][2][32][16];

inline Fiber& me() { return fibers[cur]; }

void wait(Barrier& b) {
  ++progress;
  const std::uint64_t my = b.gen;
  if (++b.count == b.expected) {
    b.count = 0;
    ++b.gen;
    return;
  }
  me().waiting = &b;
  me().wait_gen = my;
  swapcontext(&me().ctx, &sched);
  me().waiting = nullptr;
}

struct Dim3 { unsigned x, y, z; };
inline Dim3 thread_idx() { return {unsigned(me().tid), 0, 0}; }
inline Dim3 block_idx_() { return {unsigned(block_idx), 0, 0}; }

inline int lane() { return me().tid % 32; }
inline int warp() { return me().tid / 32; }
inline int parity() { return me().coll++ & 1; }

void land(const Fiber::Copy& c) {
  if (c.valid) std::memcpy(smem + c.dst, c.src, 16);
  else std::memset(smem + c.dst, 0, 16);
}
}  // namespace emu

// CUDA spellings used by the kernel body.
#define __global__
#define __device__
#define __forceinline__ inline
#define __launch_bounds__(...)
#define threadIdx (emu::thread_idx())
#define blockIdx (emu::block_idx_())
struct uint4 { std::uint32_t x, y, z, w; };
inline int min(int a, int b) { return a < b ? a : b; }
inline float __log2f(float x) { return std::log2(x); }
inline void __syncthreads() { emu::wait(emu::block_bar); }
inline void __syncwarp() { emu::wait(emu::warp_bar[emu::warp()]); }
inline float __shfl_xor_sync(unsigned, float v, int m) {
  const int w = emu::warp(), l = emu::lane(), par = emu::parity();
  std::memcpy(&emu::mbox[w][par][l][0], &v, 4);
  emu::wait(emu::warp_bar[w]);
  float r;
  std::memcpy(&r, &emu::mbox[w][par][l ^ m][0], 4);
  return r;
}
inline unsigned char* emu_smem_base() { return emu::smem; }

struct emu_f16 { std::uint16_t bits; };
struct emu_bf16 { std::uint16_t bits; };
inline float f16_to_float(std::uint16_t b) { _Float16 h; std::memcpy(&h, &b, 2); return float(h); }
inline std::uint16_t float_to_f16(float x) { _Float16 h = _Float16(x); std::uint16_t b; std::memcpy(&b, &h, 2); return b; }
inline float bf16_to_float(std::uint16_t b) { std::uint32_t u = std::uint32_t(b) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline std::uint16_t float_to_bf16(float x) {
  std::uint32_t u; std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return std::uint16_t(u >> 16);
}

#include "flashlab/kernels/launch.hpp"

namespace flashlab::kernels::fa2_tc_detail {
inline std::uint32_t smem_addr(const void* p) {
  return std::uint32_t(static_cast<const unsigned char*>(p) - emu::smem);
}
inline void cp_async_16(std::uint32_t dst, const void* src, bool valid) {
  emu::Fiber::Copy c{dst, src, valid};
  if (emu::copy_mode == 0) emu::land(c);
  else emu::me().open.push_back(c);
}
inline void cp_async_commit() {
  emu::me().groups.push_back(std::move(emu::me().open));
  emu::me().open.clear();
}
template <int N>
inline void cp_async_wait() {
  auto& gs = emu::me().groups;
  while (int(gs.size()) > N) {
    for (auto& c : gs.front()) emu::land(c);
    gs.pop_front();
  }
}
inline void ldsm_impl(std::uint32_t (&r)[4], std::uint32_t addr, bool trans) {
  const int w = emu::warp(), l = emu::lane(), par = emu::parity();
  emu::mbox[w][par][l][0] = addr;
  emu::wait(emu::warp_bar[w]);
  for (int m = 0; m < 4; ++m) {
    std::uint16_t lo, hi;
    if (!trans) {
      const std::uint32_t row = emu::mbox[w][par][8 * m + l / 4][0];
      std::memcpy(&lo, emu::smem + row + (2 * (l % 4)) * 2, 2);
      std::memcpy(&hi, emu::smem + row + (2 * (l % 4) + 1) * 2, 2);
    } else {
      const std::uint32_t row0 = emu::mbox[w][par][8 * m + 2 * (l % 4)][0];
      const std::uint32_t row1 = emu::mbox[w][par][8 * m + 2 * (l % 4) + 1][0];
      std::memcpy(&lo, emu::smem + row0 + (l / 4) * 2, 2);
      std::memcpy(&hi, emu::smem + row1 + (l / 4) * 2, 2);
    }
    r[m] = std::uint32_t(lo) | (std::uint32_t(hi) << 16);
  }
}
inline void ldsm_x4(std::uint32_t (&r)[4], std::uint32_t addr) { ldsm_impl(r, addr, false); }
inline void ldsm_x4_trans(std::uint32_t (&r)[4], std::uint32_t addr) { ldsm_impl(r, addr, true); }
inline float exp2_approx(float x) { return std::exp2(x); }

template <typename T> struct Dtype;
template <float (*ToF)(std::uint16_t), std::uint16_t (*FromF)(float)>
struct EmuOps {
  static void mma(float (&c)[4], const std::uint32_t (&a)[4], std::uint32_t b0, std::uint32_t b1) {
    const int w = emu::warp(), l = emu::lane(), par = emu::parity();
    auto* box = emu::mbox[w][par][l];
    for (int e = 0; e < 4; ++e) box[e] = a[e];
    box[4] = b0; box[5] = b1;
    for (int e = 0; e < 4; ++e) std::memcpy(&box[6 + e], &c[e], 4);
    emu::wait(emu::warp_bar[w]);
    auto half_of = [](std::uint32_t reg, int h) { return ToF(std::uint16_t(h ? reg >> 16 : reg & 0xffff)); };
    auto A = [&](int row, int k) {
      const int ln = (row % 8) * 4 + (k % 8) / 2, reg = (row >= 8 ? 1 : 0) + (k >= 8 ? 2 : 0);
      return half_of(emu::mbox[w][par][ln][reg], k % 2);
    };
    auto B = [&](int k, int n) {
      const int ln = n * 4 + (k % 8) / 2, reg = 4 + (k >= 8 ? 1 : 0);
      return half_of(emu::mbox[w][par][ln][reg], k % 2);
    };
    auto C = [&](int row, int col) {
      const int ln = (row % 8) * 4 + col / 2, reg = 6 + (row >= 8 ? 2 : 0) + col % 2;
      float f; std::memcpy(&f, &emu::mbox[w][par][ln][reg], 4); return f;
    };
    const int g = l / 4, t = l % 4;
    for (int e = 0; e < 4; ++e) {
      const int row = g + (e >= 2 ? 8 : 0), col = 2 * t + (e & 1);
      float acc = C(row, col);
      for (int k = 0; k < 16; ++k) acc += A(row, k) * B(k, col);
      c[e] = acc;
    }
  }
  static std::uint32_t pack(float lo, float hi) { return std::uint32_t(FromF(lo)) | (std::uint32_t(FromF(hi)) << 16); }
};
template <> struct Dtype<emu_f16> : EmuOps<f16_to_float, float_to_f16> {};
template <> struct Dtype<emu_bf16> : EmuOps<bf16_to_float, float_to_bf16> {};
}  // namespace flashlab::kernels::fa2_tc_detail

#define FA2_TC_EMULATE 1
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wunknown-pragmas"  // #pragma unroll is for nvcc
#include "fa2_tc_kernel.cuh"
#pragma GCC diagnostic pop

namespace D = flashlab::kernels::fa2_tc_detail;

namespace emu {
D::Params g_params;
template <class Cfg, typename T>
void trampoline_fn() {
  D::fa2_tc_forward_kernel<Cfg, T>(g_params);
  me().done = true;
  ++progress;
}
}  // namespace emu

// Runs every fiber of the current block until all have returned. A pass over
// the fibers in which none arrives at a barrier or returns is a deadlock (a
// barrier that not every thread reaches). Kept apart from the loop over blocks:
// swapcontext, like setjmp, may clobber the caller's locals.
__attribute__((noinline)) bool run_fibers() {
  for (;;) {
    bool all_done = true;
    const std::uint64_t before = emu::progress;
    for (std::size_t t = 0; t < emu::fibers.size(); ++t) {
      auto& f = emu::fibers[t];
      if (f.done) continue;
      all_done = false;
      if (f.waiting && f.waiting->gen == f.wait_gen) continue;
      emu::cur = static_cast<int>(t);
      swapcontext(&emu::sched, &f.ctx);
    }
    if (all_done) return true;
    if (emu::progress == before) return false;
  }
}

__attribute__((noinline)) void make_fiber(int t, void (*entry)()) {
  auto& f = emu::fibers[t];
  f.tid = t;
  f.stack.resize(256 * 1024);
  getcontext(&f.ctx);
  f.ctx.uc_stack.ss_sp = f.stack.data();
  f.ctx.uc_stack.ss_size = f.stack.size();
  f.ctx.uc_link = &emu::sched;
  makecontext(&f.ctx, entry, 0);
}

// The grid, one block after another (blocks share nothing but global memory).
template <class Cfg, typename T>
bool emulate_grid(const D::Params& p, int grid) {
  emu::g_params = p;
  for (int b = 0; b < grid; ++b) {
    emu::block_idx = b;
    std::memset(emu::smem, 0xFF, sizeof(emu::smem));  // NaN everywhere not copied
    emu::block_bar = {0, 0, Cfg::kThreads};
    for (int w = 0; w < 32; ++w) emu::warp_bar[w] = {0, 0, 32};
    emu::fibers.clear();
    emu::fibers.resize(Cfg::kThreads);
    for (int t = 0; t < Cfg::kThreads; ++t) make_fiber(t, &emu::trampoline_fn<Cfg, T>);
    if (!run_fibers()) {
      std::printf("DEADLOCK in block %d\n", b);
      return false;
    }
  }
  return true;
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

int g_pass = 0, g_fail = 0;

template <class Cfg, typename T>
void run_case(const char* name, int BH, int nq, int nkv, bool causal, float scale, unsigned seed) {
  constexpr int d = Cfg::kHeadDim;
  const bool bf = std::is_same<T, emu_bf16>::value;
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd(0.f, 1.f);
  auto make = [&](size_t n, std::vector<T>& dev, std::vector<float>& ref) {
    dev.resize(n); ref.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const float x = nd(rng) * scale;
      dev[i].bits = bf ? float_to_bf16(x) : float_to_f16(x);
      ref[i] = bf ? bf16_to_float(dev[i].bits) : f16_to_float(dev[i].bits);
    }
  };
  std::vector<T> q, k, v; std::vector<float> qr, kr, vr;
  make(size_t(BH) * nq * d, q, qr); make(size_t(BH) * nkv * d, k, kr); make(size_t(BH) * nkv * d, v, vr);
  std::vector<T> o(size_t(BH) * nq * d); for (auto& x : o) x.bits = 0xFFFF;
  std::vector<float> lse(size_t(BH) * nq, NAN);
  D::Params p{};
  p.q = q.data(); p.k = k.data(); p.v = v.data(); p.o = o.data(); p.lse = lse.data();
  p.n_q = nq; p.n_kv = nkv; p.T_r = (nq + Cfg::kBr - 1) / Cfg::kBr;
  const double tau = 1.0 / std::sqrt(double(d));
  p.scale_log2 = float(tau * 1.4426950408889634);
  p.causal = causal;
  bool ok = emulate_grid<Cfg, T>(p, p.T_r * BH);
  double num = 0, den = 0, lerr = 0; size_t bad = 0;
  std::vector<double> oref(size_t(nq) * d), lref(nq);
  for (int h = 0; h < BH; ++h) {
    reference_head(qr.data() + size_t(h) * nq * d, kr.data() + size_t(h) * nkv * d, vr.data() + size_t(h) * nkv * d,
                   nq, nkv, d, causal, tau, oref.data(), lref.data());
    for (size_t i = 0; i < oref.size(); ++i) {
      const float got = bf ? bf16_to_float(o[size_t(h) * nq * d + i].bits) : f16_to_float(o[size_t(h) * nq * d + i].bits);
      if (!std::isfinite(got)) ++bad;
      num += (got - oref[i]) * (got - oref[i]); den += oref[i] * oref[i];
    }
    for (int r = 0; r < nq; ++r) {
      const double g = lse[size_t(h) * nq + r];
      if (!std::isfinite(g)) ++bad;
      lerr = std::max(lerr, std::fabs(g - lref[r]) / std::max(1.0, std::fabs(lref[r])));
    }
  }
  const double err = std::sqrt(num / den);
  ok = ok && bad == 0 && err < 2e-2 && lerr < 1e-3;
  ok ? ++g_pass : ++g_fail;
  std::printf("%s %-26s %s mode=%d BH=%d N_q=%d N_kv=%d causal=%d x%g err_O=%.3e err_LSE=%.3e nonfinite=%zu\n",
              ok ? "PASS" : "FAIL", name, bf ? "bf16" : "fp16", emu::copy_mode, BH, nq, nkv, int(causal), scale, err,
              lerr, bad);
  std::fflush(stdout);
}

template <class Cfg>
void suite(const char* name, bool full) {
  unsigned seed = 1;
  for (int mode = 0; mode < 2; ++mode) {
    emu::copy_mode = mode;
    const std::vector<int> ns = full ? std::vector<int>{1, 17, 64, 65, 129, 200} : std::vector<int>{17, 129};
    for (int causal = 0; causal < 2; ++causal)
      for (int n : ns) run_case<Cfg, emu_f16>(name, 2, n, n, causal, 1.f, seed++);
    run_case<Cfg, emu_bf16>(name, 2, 129, 129, true, 1.f, seed++);
    run_case<Cfg, emu_bf16>(name, 1, 70, 70, false, 1.f, seed++);
    if (full) {
      run_case<Cfg, emu_f16>(name, 1, 1, 150, false, 1.f, seed++);
      run_case<Cfg, emu_f16>(name, 1, 130, 33, false, 1.f, seed++);
      run_case<Cfg, emu_f16>(name, 1, 40, 300, true, 1.f, seed++);
      run_case<Cfg, emu_f16>(name, 1, 300, 40, true, 1.f, seed++);
      run_case<Cfg, emu_f16>(name, 1, 150, 150, true, 30.f, seed++);
      run_case<Cfg, emu_bf16>(name, 1, 150, 150, false, 30.f, seed++);
    }
  }
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
  std::printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
