// The emulated GPU that the tensor-core kernels' CPU checks run on
// (fa2_tc_emulate.cpp, fa2_tc_bwd_emulate.cpp): every CUDA thread of a block is
// a fiber, and the warp-level instructions the kernels use are
// emulated from the PTX ISA text:
//   ldmatrix.m8n8.x4[.trans]: lane l receives, from matrix m (row addresses given
//     by lanes 8m..8m+7), row l/4, columns 2(l%4), 2(l%4)+1 (.trans: rows
//     2(l%4), 2(l%4)+1 of column l/4);
//   mma.m16n8k16 (f32 += f16/bf16): the A/B/C fragment tables ("Matrix Fragments
//     for mma.m16n8k16 with floating point type"), products summed in fp32;
//   shfl.xor, bar.sync (__syncthreads), bar.warp.sync (__syncwarp);
//   cp.async: the copy lands at issue (mode 0, exposes a stage overwritten while
//     still read) or at cp.async.wait_group (mode 1, exposes a read before the wait).
// Shared memory starts as NaN, so a read of anything not copied shows up.
// Include it, then define FA2_TC_EMULATE and include the kernel header.
#pragma once

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "flashlab/kernels/runner/attention_reference.hpp"

// ---------------------------------------------------------------------------
// Fibers and barriers
// ---------------------------------------------------------------------------
// A fiber switch saves only what the x86-64 System V ABI makes a callee keep
// (rbx, rbp, r12–r15, the MXCSR and x87 control words) and swaps stacks.
// swapcontext also saves the signal mask, a system call at every switch: with
// a switch at every barrier, shuffle and mma, that call was most of the run.
extern "C" void flashlab_emu_switch(void** save_sp, void* load_sp);
asm(R"(
  .text
  .weak flashlab_emu_switch
  .type flashlab_emu_switch, @function
flashlab_emu_switch:
  pushq %rbp
  pushq %rbx
  pushq %r12
  pushq %r13
  pushq %r14
  pushq %r15
  subq $8, %rsp
  stmxcsr (%rsp)
  fnstcw 4(%rsp)
  movq %rsp, (%rdi)
  movq %rsi, %rsp
  ldmxcsr (%rsp)
  fldcw 4(%rsp)
  addq $8, %rsp
  popq %r15
  popq %r14
  popq %r13
  popq %r12
  popq %rbx
  popq %rbp
  ret
  .size flashlab_emu_switch, .-flashlab_emu_switch
)");

namespace emu {
struct Barrier {
  int count = 0;
  std::uint64_t gen = 0;
  int expected = 0;
};
struct Fiber {
  void* sp = nullptr;  // the saved stack pointer while switched out
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
inline void* sched_sp = nullptr;
inline std::vector<Fiber> fibers;
// One stack per thread of a block, kept from block to block: allocating (and
// zeroing) 256 KiB per fiber per block cost more than the kernel's own work.
constexpr std::size_t kStackBytes = 256 * 1024;
inline std::vector<std::unique_ptr<unsigned char[]>> stacks;
inline int cur = 0;
inline int block_idx = 0;
inline Barrier block_bar;
inline Barrier warp_bar[32];
inline std::uint64_t progress = 0;
inline int copy_mode = 0;
alignas(128) inline unsigned char smem[256 * 1024];
// mailboxes: [warp][parity][lane][16 words]
inline std::uint32_t mbox[32][2][32][16];

inline Fiber& me() { return fibers[cur]; }

inline void wait(Barrier& b) {
  ++progress;
  const std::uint64_t my = b.gen;
  if (++b.count == b.expected) {
    b.count = 0;
    ++b.gen;
    return;
  }
  me().waiting = &b;
  me().wait_gen = my;
  flashlab_emu_switch(&me().sp, sched_sp);
  me().waiting = nullptr;
}

struct Dim3 { unsigned x, y, z; };
inline Dim3 thread_idx() { return {unsigned(me().tid), 0, 0}; }
inline Dim3 block_idx_() { return {unsigned(block_idx), 0, 0}; }

inline int lane() { return me().tid % 32; }
inline int warp() { return me().tid / 32; }
inline int parity() { return me().coll++ & 1; }

inline void land(const Fiber::Copy& c) {
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
// Every half's float, converted once: the conversion is a libgcc call on a CPU
// without F16C instructions in the build, and the emulated MMAs make billions.
struct F16Floats {
  float value[65536];
  F16Floats() {
    for (std::uint32_t b = 0; b < 65536; ++b) {
      const std::uint16_t bits = std::uint16_t(b);
      _Float16 h;
      std::memcpy(&h, &bits, 2);
      value[b] = float(h);
    }
  }
};
inline const F16Floats kF16Floats;
inline float f16_to_float(std::uint16_t b) { return kF16Floats.value[b]; }
inline std::uint16_t float_to_f16(float x) { _Float16 h = _Float16(x); std::uint16_t b; std::memcpy(&b, &h, 2); return b; }
inline float bf16_to_float(std::uint16_t b) { std::uint32_t u = std::uint32_t(b) << 16; float f; std::memcpy(&f, &u, 4); return f; }
inline std::uint16_t float_to_bf16(float x) {
  std::uint32_t u; std::memcpy(&u, &x, 4);
  if ((u & 0x7fffffff) > 0x7f800000) return 0x7fc0;
  u += 0x7fff + ((u >> 16) & 1);
  return std::uint16_t(u >> 16);
}
inline bool is_bf16(const emu_bf16*) { return true; }
inline bool is_bf16(const void*) { return false; }
template <typename T>
float from_dtype(T v) { return is_bf16(&v) ? bf16_to_float(v.bits) : f16_to_float(v.bits); }
template <typename T>
T to_dtype(float x) {
  T v;
  v.bits = is_bf16(&v) ? float_to_bf16(x) : float_to_f16(x);
  return v;
}

#include "flashlab/kernels/launch/launch.hpp"

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

#include <functional>

namespace emu {
// The kernel body every fiber of a block runs (a lambda calling the kernel).
inline std::function<void()> g_body;
[[noreturn]] inline void trampoline() {
  g_body();
  me().done = true;
  ++progress;
  void* unused = nullptr;
  flashlab_emu_switch(&unused, sched_sp);  // never resumed: run_fibers skips a fiber that is done
  std::abort();
}
}  // namespace emu

// Runs every fiber of the current block until all have returned. A pass over
// the fibers in which none arrives at a barrier or returns is a deadlock (a
// barrier that not every thread reaches).
__attribute__((noinline)) inline bool run_fibers() {
  for (;;) {
    bool all_done = true;
    const std::uint64_t before = emu::progress;
    for (std::size_t t = 0; t < emu::fibers.size(); ++t) {
      auto& f = emu::fibers[t];
      if (f.done) continue;
      all_done = false;
      if (f.waiting && f.waiting->gen == f.wait_gen) continue;
      emu::cur = static_cast<int>(t);
      flashlab_emu_switch(&emu::sched_sp, f.sp);
    }
    if (all_done) return true;
    if (emu::progress == before) return false;
  }
}

// A fresh fiber's stack, as flashlab_emu_switch leaves one it switches out of:
// the control words, six registers, then `entry` as the return address, with
// the stack 16-byte aligned at entry's first instruction as after a call.
inline void make_fiber(int t, void (*entry)()) {
  auto& f = emu::fibers[t];
  f.tid = t;
  if (emu::stacks.size() <= static_cast<std::size_t>(t)) emu::stacks.resize(t + 1);
  if (!emu::stacks[t]) emu::stacks[t].reset(new unsigned char[emu::kStackBytes]);
  auto top = reinterpret_cast<std::uintptr_t>(emu::stacks[t].get() + emu::kStackBytes) & ~std::uintptr_t(15);
  auto* slot = reinterpret_cast<std::uint64_t*>(top);
  *--slot = 0;                                        // entry's own return address: it never returns
  *--slot = reinterpret_cast<std::uint64_t>(entry);   // where the first switch "returns"
  for (int r = 0; r < 6; ++r) *--slot = 0;            // rbp, rbx, r12–r15
  std::uint32_t mxcsr = 0;
  std::uint16_t fcw = 0;
  asm volatile("stmxcsr %0" : "=m"(mxcsr));
  asm volatile("fnstcw %0" : "=m"(fcw));
  *--slot = std::uint64_t(mxcsr) | std::uint64_t(fcw) << 32;
  f.sp = slot;
}

// The grid, one block after another (blocks share nothing but global memory):
// `threads` fibers per block run `body`. False on a deadlock.
inline bool emulate_blocks(int threads, int grid, std::function<void()> body) {
  emu::g_body = std::move(body);
  for (int b = 0; b < grid; ++b) {
    emu::block_idx = b;
    std::memset(emu::smem, 0xFF, sizeof(emu::smem));  // NaN everywhere not copied
    emu::block_bar = {0, 0, threads};
    for (int w = 0; w < 32; ++w) emu::warp_bar[w] = {0, 0, 32};
    emu::fibers.clear();
    emu::fibers.resize(threads);
    for (int t = 0; t < threads; ++t) make_fiber(t, &emu::trampoline);
    if (!run_fibers()) {
      std::printf("DEADLOCK in block %d\n", b);
      return false;
    }
  }
  return true;
}

// ---------------------------------------------------------------------------
// What the emulated kernels' checks share: their inputs, their cases, the tally
// ---------------------------------------------------------------------------
// A case's inputs: N(0, scale²) draws from one generator per case, rounded to
// the dtype, beside the floats they round to (what the fp64 reference reads).
struct RoundedInputs {
  std::mt19937 rng;
  std::normal_distribution<float> nd{0.f, 1.f};
  explicit RoundedInputs(unsigned seed) : rng(seed) {}
  template <typename T>
  void fill(size_t n, float scale, std::vector<T>& dev, std::vector<float>& ref) {
    dev.resize(n);
    ref.resize(n);
    for (size_t i = 0; i < n; ++i) {
      dev[i] = to_dtype<T>(nd(rng) * scale);
      ref[i] = from_dtype(dev[i]);
    }
  }
};

// One problem of a configuration's suite: B·H heads of N_q queries over N_kv
// keys, the inputs drawn ×scale.
struct EmuCase {
  bool bf16;
  int bh, nq, nkv;
  bool causal;
  float scale;
};

// The problems every configuration is checked on, under both copy modes: N
// not a multiple of any tile and N = 1, causal or not, bf16, N_q ≠ N_kv, and
// inputs ×30 (the softmax nearly one-hot). `full` adds N = 1, 64, 65, 200 and
// the ragged and ×30 cases; `causal_ragged` the causal ones with N_q ≠ N_kv
// (the forward's: the backward rung runs causal attention on N_q = N_kv).
// `run(dtype, case, seed)` runs one (dtype: an emu_f16 or emu_bf16 value, for
// its type), each with its own seed from 1 on; returns the next seed, for the
// caller's own cases.
template <class Run>
unsigned run_emulated_cases(bool full, bool causal_ragged, Run run) {
  unsigned seed = 1;
  for (int mode = 0; mode < 2; ++mode) {
    emu::copy_mode = mode;
    std::vector<EmuCase> cases;
    const std::vector<int> ns = full ? std::vector<int>{1, 17, 64, 65, 129, 200} : std::vector<int>{17, 129};
    for (bool causal : {false, true})
      for (int n : ns) cases.push_back({false, 2, n, n, causal, 1.f});
    cases.push_back({true, 2, 129, 129, true, 1.f});
    cases.push_back({true, 1, 70, 70, false, 1.f});
    if (full) {
      cases.push_back({false, 1, 1, 150, false, 1.f});
      cases.push_back({false, 1, 130, 33, false, 1.f});
      if (causal_ragged) {
        cases.push_back({false, 1, 40, 300, true, 1.f});
        cases.push_back({false, 1, 300, 40, true, 1.f});
      }
      cases.push_back({false, 1, 150, 150, true, 30.f});
      cases.push_back({true, 1, 150, 150, false, 30.f});
    }
    for (const EmuCase& c : cases) {
      if (c.bf16) run(emu_bf16{}, c, seed++);
      else run(emu_f16{}, c, seed++);
    }
  }
  return seed;
}

inline int g_pass = 0, g_fail = 0;
inline void tally(bool ok) { ok ? ++g_pass : ++g_fail; }
// The last line, "N passed, N failed", and the exit status: 0 when all pass.
inline int finish() {
  std::printf("%d passed, %d failed\n", g_pass, g_fail);
  return g_fail ? 1 : 0;
}
