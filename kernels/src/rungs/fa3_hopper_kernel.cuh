// fa3_hopper: FlashAttention forward on Hopper (sm_90a) — the kernel template.
//
// What changed from fa2_tc: the two products run on wgmma (warpgroup MMA,
// m64nNk16, fp32 accumulation) reading K_j and V_j straight from shared memory
// through matrix descriptors instead of ldmatrix + mma.sync; Q_i, K_j, V_j are
// copied by the tensor memory accelerator (cp.async.bulk.tensor, 128-byte
// swizzle, out-of-bounds rows zero-filled) into a ring of kStages stages that
// completes on mbarriers; one producer warp issues every copy while two
// consumer warpgroups (64 rows of Q_i each) compute, so K_{j+1}, V_{j+1} land
// while block j is computed (warp specialisation, setmaxnreg moves registers
// from the producer to the consumers). P_ij is still fed to the second product
// from registers (wgmma's A-from-registers form). HBM traffic is FlashAttention-2's.
// Expected bottleneck: the softmax between the two products (exp2, row max)
// serialises with wgmma inside a warpgroup; the consumer warpgroups take turns
// (ping-pong) so that one's softmax runs under another's products, and each
// runs the softmax of S_{i,j+1} under its own P_ij V_j (K_j's stage is freed
// once S_ij is done, so that K_{j+2} lands meanwhile). The measured
// figures, the tuning steps and the counters are in kernels/README.md.
//
// This header holds the configurable kernel; kernels/src/rungs/fa3_hopper.cu instantiates
// the compiled configurations and makes the tensor maps on the host.
#pragma once

#include <cuda.h>  // CUtensorMap (the type only; the driver is reached through the runtime)
#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <cstring>

#include "ptx_hopper.cuh"  // mbarriers, TMA, wgmma, descriptors, setmaxnreg, exp2
#include "running_output.cuh"

namespace flashlab::kernels::fa3_hopper_detail {

using hopper_ptx::exp2_approx;
using hopper_ptx::exp2_poly;
using hopper_ptx::fence_regs;
using hopper_ptx::make_desc;
using hopper_ptx::mbar_arrive;
using hopper_ptx::mbar_arrive_expect_tx;
using hopper_ptx::mbar_init;
using hopper_ptx::mbar_wait;
using hopper_ptx::named_bar_arrive;
using hopper_ptx::named_bar_sync;
using hopper_ptx::pack2;
using hopper_ptx::prefetch_tensormap;
using hopper_ptx::setmaxnreg_dec;
using hopper_ptx::setmaxnreg_inc;
using hopper_ptx::smem_addr;
using hopper_ptx::bulk_commit;
using hopper_ptx::bulk_wait_read;
using hopper_ptx::fence_proxy_async_smem;
using hopper_ptx::tma_load_3d;
using hopper_ptx::tma_store_3d;
using hopper_ptx::warpgroup_sync;
using hopper_ptx::Wgmma;
using hopper_ptx::wgmma_commit;
using hopper_ptx::wgmma_fence;
using hopper_ptx::wgmma_wait;

using kernels::detail::fold_row;
using kernels::detail::load_running_row;
using kernels::detail::FoldedRow;
using kernels::detail::kFoldFinish;
using kernels::detail::kFoldNone;
using kernels::detail::kFoldStart;

// ---------------------------------------------------------------------------
// Compile-time configuration.
// ---------------------------------------------------------------------------
// kHeadDim     d ∈ {64, 128}
// kConsumers   consumer warpgroups (1-4); B_r = 64 · kConsumers rows of Q_i per block
// kBc          B_c rows of K_j, V_j per step
// kStages      depth of the K_j/V_j ring in shared memory
// kOverlap     software pipeline inside a warpgroup: the softmax of S_{i,j+1}
//              runs while P_ij V_j is on the tensor cores
// kPingPong    the consumer warpgroups take turns to issue their products
//              (named barriers in a ring): while one warpgroup's S_ij and
//              P_ij V_j run on the tensor cores the others run their softmax
// kPersistent  one block per SM walks the tiles (row block i, head) with a
//              stride of the grid: the next tile's K_j, V_j and Q_i copies
//              start while this one finishes; O goes from registers to HBM
// kExpPoly     0, or k: one column group of 8 in every k takes its exp2 from a
//              polynomial on the FMA pipe instead of MUFU (ex2.approx), which
//              at d = 64 is as busy as the tensor cores
template <int D, int CONSUMERS, int BC, int STAGES, bool OVERLAP, bool PINGPONG = (CONSUMERS >= 2),
          bool PERSISTENT = false, int EXP_POLY = 0>
struct Config {
  static constexpr int kHeadDim = D;
  static constexpr int kConsumers = CONSUMERS;
  static constexpr int kBr = 64 * kConsumers;          // B_r
  static constexpr int kBc = BC;                       // B_c
  static constexpr int kStages = STAGES;
  static constexpr bool kOverlap = OVERLAP;
  static constexpr bool kPingPong = PINGPONG;
  static constexpr bool kPersistent = PERSISTENT;
  static constexpr int kExpPoly = EXP_POLY;
  static constexpr int kExpPolyEvery = EXP_POLY > 0 ? EXP_POLY : 1;  // a modulus, never 0
  static constexpr int kThreads = 128 * (kConsumers + 1);  // producer warpgroup first
  // Shared tiles are stored as d/64 panels of 64 columns (128 bytes a row, the
  // width of the 128-byte swizzle and of one TMA box row); panel p of a tile of
  // R rows holds columns [64p, 64p + 64) of every row, R·128 bytes.
  static constexpr int kPanels = D / 64;
  static constexpr int kQBytes = kBr * D * 2;          // (B_r, d) Q_i
  // A persistent block holds two Q_i tiles: the next tile's lands while this
  // one runs and while this one's O_i leaves through its own.
  static constexpr int kQBuffers = kPersistent ? 2 : 1;
  static constexpr int kKVBytes = kBc * D * 2;         // (B_c, d) K_j or V_j
  static constexpr int kBarrierBytes = 1024;           // mbarriers, after the tiles
  static constexpr std::size_t kSmemBytes =
      1024 /* alignment slack: the swizzle pattern repeats every 1024 bytes */ +
      static_cast<std::size_t>(kQBuffers) * kQBytes + 2ull * kStages * kKVBytes + kBarrierBytes;

  static_assert(D == 64 || D == 128, "d must be 64 or 128 (whole 128-byte panels, O accumulator in registers)");
  static_assert(BC % 16 == 0 && BC >= 16 && BC <= 256, "B_c: a wgmma N of S_ij and a whole number of k-steps of P_ij V_j");
  static_assert(kBc * 128 % 1024 == 0, "every panel starts on a 1024-byte swizzle atom");
  static_assert(kStages >= 2, "at least two stages: K_{j+1}, V_{j+1} arrive while block j is computed");
  static_assert(kConsumers >= 1 && kConsumers <= 4 && kBr <= 256, "a TMA box has at most 256 rows");
  static_assert(!kPingPong || kConsumers >= 2, "ping-pong needs two to four consumer warpgroups");
  // Registers per thread after setmaxnreg: the producer keeps kProducerRegs, the
  // consumers share the rest of what the launch allocated (a multiple of 8 a
  // thread: at four consumers 96 · 640 of the 64K-register file; setmaxnreg.inc
  // waits for registers that were never allocated, so the split must not exceed it).
  static constexpr int kProducerRegs = kConsumers == 4 ? 24 : kConsumers == 3 ? 32 : 40;
  static constexpr int kLaunchRegs = 65536 / kThreads / 8 * 8;
  static constexpr int kConsumerRegs = ((kLaunchRegs * kThreads - kProducerRegs * 128) / (128 * kConsumers)) / 8 * 8;
  static_assert(kConsumerRegs <= 256 && kConsumerRegs >= kLaunchRegs, "setmaxnreg only raises the consumers");
};

// Kernel arguments: one block per (row block i, head); heads = B·H.
struct Params {
  void* o;
  float* lse;        // [B·H, N_q] or null; the running logsumexp when folding
  int n_q;           // N_q
  int n_kv;          // N_kv
  int T_r;           // ⌈N_q / B_r⌉
  int num_tiles;     // T_r · B·H: tiles (row block i, head), one per block unless persistent
  float scale_log2;  // τ·log2(e): the softmax runs in base 2
  int causal;        // key c is visible to query r iff c ≤ r (top-left aligned)
  int kv_group;      // H / H_kv: query head h reads K/V head h / kv_group (flat indices); 0 or 1: H_kv = H
  int fold;          // kFoldNone, or how this launch folds into the running output
  float* o_run;      // [B·H, N_q, d] fp32, the running output (fold ≠ kFoldNone)
};

// ---------------------------------------------------------------------------
// The kernel. Grid: T_r · (B·H) blocks, 1-D, one tile (row block i, head) each,
// or (kPersistent) one block per SM taking tiles blockIdx.x, + gridDim.x, ...;
// block = 1 + kConsumers warpgroups:
//   warpgroup 0      producer: one thread issues every TMA copy (Q_i once per
//                    tile, then K_j and V_j into the ring when the consumers
//                    have released a stage; the ring runs on across tiles;
//                    the first tile's Q_i, K_0, V_0 before the block's barrier)
//   warpgroups 1..  consumers: rows [64c, 64c + 64) of Q_i each; S_ij = Q_i K_jᵀ
//                    (wgmma, both from shared memory), online softmax in
//                    registers, O_i += P_ij V_j (wgmma, P_ij from registers);
//                    under the causal mask a warpgroup skips the key blocks
//                    its own 64 rows cannot see (and rows past N_q see none);
//                    O_i leaves staged in its Q_i rows by a TMA copy per panel
// Shared memory: Q_i, then kStages × K_j, then kStages × V_j, then mbarriers:
//   bar_q          Q_i has landed (one phase per tile)
//   full_k[s]      K_j has landed in stage s      (producer's expect_tx + TMA bytes)
//   full_v[s]      V_j has landed in stage s
//   empty_k[s]     every consumer warp is done with K_j of stage s (its S_ij is
//                  done; 4 · kConsumers arrivals), so K_{j+kStages} may land while
//                  P_ij V_j still reads V_j
//   empty_v[s]     every consumer warp is done with V_j of stage s
//   q_empty        every consumer warp is done with Q_i (and its O staging)
// Named barriers: 1 + c, warpgroup c alone (the O staging); kTurnBarrier + c,
// the ping-pong ring (warpgroup c waits for its turn, c − 1 signals it).
// ---------------------------------------------------------------------------
namespace {

constexpr int kTurnBarrier = 5;  // named barriers 5, 6, 7, 8: the consumers' turns

template <class Cfg, typename T>
__global__ void __launch_bounds__(Cfg::kThreads, 1)
    fa3_hopper_forward_kernel(const __grid_constant__ CUtensorMap tm_q, const __grid_constant__ CUtensorMap tm_k,
                              const __grid_constant__ CUtensorMap tm_v, const __grid_constant__ CUtensorMap tm_o,
                              const Params p) {
#if defined(__CUDA_ARCH__)
#if defined(__CUDA_ARCH_FEAT_SM90_ALL)
  constexpr int d = Cfg::kHeadDim;
  constexpr int B_r = Cfg::kBr;
  constexpr int B_c = Cfg::kBc;
  constexpr int kStages = Cfg::kStages;
  constexpr int kPanels = Cfg::kPanels;
  constexpr int kConsumers = Cfg::kConsumers;
  constexpr int kSRegs = B_c / 2;  // S_ij accumulators per thread: (64, B_c) over 128 threads
  constexpr int kORegs = d / 2;    // O_i accumulators per thread: (64, d) over 128 threads

  extern __shared__ unsigned char smem_raw[];
  // The 128-byte swizzle repeats every 1024 bytes: tiles start on that boundary.
  const uint32_t raw = smem_addr(smem_raw);
  const uint32_t base = (raw + 1023u) & ~1023u;
  unsigned char* smem = smem_raw + (base - raw);  // generic pointer to the same byte
  const uint32_t sQ = base;                                      // (B_r, d) Q_i, kPanels × (B_r, 64)
  const uint32_t sK = sQ + Cfg::kQBuffers * Cfg::kQBytes;        // kStages × (B_c, d) K_j
  const uint32_t sV = sK + kStages * Cfg::kKVBytes;              // kStages × (B_c, d) V_j
  const uint32_t bars = sV + kStages * Cfg::kKVBytes;            // mbarriers, 8 bytes each
  // Q_i's buffer b (tile n in buffer n mod kQBuffers): landed; and free again
  // (each consumer warpgroup's copy of its O_i has read its rows).
  auto bar_q = [&](int b) { return b == 0 ? bars : bars + 8u * (2 + 4 * kStages); };
  auto full_k = [&](int s) { return bars + 8u * (1 + s); };
  auto full_v = [&](int s) { return bars + 8u * (1 + kStages + s); };
  auto empty_k = [&](int s) { return bars + 8u * (1 + 2 * kStages + s); };
  auto empty_v = [&](int s) { return bars + 8u * (1 + 3 * kStages + s); };
  auto q_empty = [&](int b) { return b == 0 ? bars + 8u * (1 + 4 * kStages) : bars + 8u * (3 + 4 * kStages); };
  static_assert(8 * (4 + 4 * kStages) <= Cfg::kBarrierBytes, "the mbarriers fit their kilobyte");

  // Tile → (head, first row q0, key blocks T_c). Head-major order, heaviest
  // row block of a head first (as fa2_tc).
  struct Tile {
    int head, q0, T_c;
  };
  auto tile_at = [&](int tile) {
    Tile tl;
    if (Cfg::kPersistent && p.causal) {
      // A persistent block takes every gridDim.x-th tile: head-major, block b
      // would get row block b mod T_r every time. In sections of gridDim.x heads,
      // row-block-major (heaviest first), block b gets one row block of each
      // rank per section instead.
      const int sms = static_cast<int>(gridDim.x);
      const int per = sms * p.T_r;
      const int sec = tile / per;
      const int heads = min(sms, p.num_tiles / p.T_r - sec * sms);  // this section's
      const int idx = tile - sec * per;
      tl.head = sec * sms + idx % heads;
      tl.q0 = (p.T_r - 1 - idx / heads) * B_r;
    } else {
      tl.head = tile / p.T_r;
      tl.q0 = (p.T_r - 1 - tile % p.T_r) * B_r;
    }
    // Key blocks this row block visits: causal never loads a block above the diagonal.
    const int q_last = min(tl.q0 + B_r, p.n_q) - 1;
    const int kv_end = p.causal ? min(p.n_kv, q_last + 1) : p.n_kv;
    tl.T_c = (kv_end + B_c - 1) / B_c;  // ≥ 1: key 0 is visible to every row
    return tl;
  };

  // A (rows, d) tile of a map at (row0, head) into shared memory at dst, one
  // copy per 64-column panel, completing on mbarrier `bar`.
  auto copy_in = [&](uint32_t dst, const CUtensorMap* map, uint32_t bar, int rows, int row0, int head) {
    mbar_arrive_expect_tx(bar, rows * d * 2);
#pragma unroll
    for (int pn = 0; pn < kPanels; ++pn) tma_load_3d(dst + pn * rows * 128, map, bar, pn * 64, row0, head);
  };

  const int warpgroup = threadIdx.x / 128;
  if (threadIdx.x == 0) {
    for (int b = 0; b < Cfg::kQBuffers; ++b) {
      mbar_init(bar_q(b), 1);
      mbar_init(q_empty(b), kConsumers);
    }
    for (int s = 0; s < kStages; ++s) {
      mbar_init(full_k(s), 1);
      mbar_init(full_v(s), 1);
      mbar_init(empty_k(s), kConsumers * 4);
      mbar_init(empty_v(s), kConsumers * 4);
    }
    // The barriers are read next by the copy engine (async proxy).
    asm volatile("fence.mbarrier_init.release.cluster;\n" ::: "memory");
    asm volatile("fence.proxy.async.shared::cta;\n" ::: "memory");
    // The first tile's Q_i, K_0 and V_0 go out before the block's barrier: their
    // latency runs under the other warps' start (the producer's loop skips them).
    {
      const Tile tl = tile_at(blockIdx.x);
      const int kv_head = p.kv_group > 1 ? tl.head / p.kv_group : tl.head;
      copy_in(sQ, &tm_q, bar_q(0), B_r, tl.q0, tl.head);
      copy_in(sK, &tm_k, full_k(0), B_c, 0, kv_head);
      copy_in(sV, &tm_v, full_v(0), B_c, 0, kv_head);
    }
  }
  __syncthreads();

  if (warpgroup == 0) {
    // ---------------- producer ----------------
    setmaxnreg_dec<Cfg::kProducerRegs>();
    if (threadIdx.x == 0) {
      prefetch_tensormap(&tm_q);
      prefetch_tensormap(&tm_k);
      prefetch_tensormap(&tm_v);
      prefetch_tensormap(&tm_o);
      int kv = 0;  // K_j, V_j blocks this block has issued: the ring's position
      int n = 0;   // tiles this block has started
      for (int tile = blockIdx.x; tile < p.num_tiles; tile += gridDim.x, ++n) {
        const Tile tl = tile_at(tile);
        const int kv_head = p.kv_group > 1 ? tl.head / p.kv_group : tl.head;  // grouped-query attention
        // Q_i: rows past N_q are zero-filled by the copy engine. From the second
        // tile on, its buffer is free once every consumer warpgroup released it:
        // with one buffer K_0, V_0 of the tile go first (they land while the
        // consumers finish the last tile), with two Q_i goes first (its buffer
        // was released a tile ago).
        auto load_Q = [&] {
          const int b = n % Cfg::kQBuffers;
          const int use = n / Cfg::kQBuffers;  // earlier tiles of this buffer
          if (use > 0) mbar_wait(q_empty(b), (use - 1) & 1);
          copy_in(sQ + b * Cfg::kQBytes, &tm_q, bar_q(b), B_r, tl.q0, tl.head);
        };
        if (n > 0 && Cfg::kQBuffers == 2) load_Q();
        for (int j = 0; j < tl.T_c; ++j, ++kv) {
          if (n == 0 && j == 0) continue;  // issued before the block's barrier
          const int s = kv % kStages;
          const int round = kv / kStages;
          // Stage s held the block kStages before: K_j goes in once every consumer
          // warp is done with that block's K (its S), V_j once done with its V.
          const uint32_t sK_j = sK + s * Cfg::kKVBytes;
          const uint32_t sV_j = sV + s * Cfg::kKVBytes;
          if (round > 0) mbar_wait(empty_k(s), (round - 1) & 1);
          copy_in(sK_j, &tm_k, full_k(s), B_c, j * B_c, kv_head);
          if (round > 0) mbar_wait(empty_v(s), (round - 1) & 1);
          copy_in(sV_j, &tm_v, full_v(s), B_c, j * B_c, kv_head);
          if (j == 0 && n > 0 && Cfg::kQBuffers == 1) load_Q();
        }
        if constexpr (!Cfg::kPersistent) break;
      }
    }
    return;
  }

  // ---------------- consumers ----------------
  setmaxnreg_inc<Cfg::kConsumerRegs>();
  using Mma_S = Wgmma<B_c, T>;  // S_ij: (64, B_c)
  using Mma_O = Wgmma<d, T>;    // O_i:  (64, d)
  const int c = warpgroup - 1;         // consumer index: rows [64c, 64c + 64) of Q_i
  const int tid = threadIdx.x % 128;   // thread in the warpgroup
  const int warp = tid / 32;
  const int lane = tid % 32;
  const int g = lane >> 2;  // accumulator rows g and g + 8 of the warp's 16
  const int t = lane & 3;   // accumulator columns 2t, 2t + 1 of every 8

  float o_acc[kORegs];  // (64, d) of O_i, fp32, unnormalised
  float m_i[2];         // running row max of S (unscaled)
  float l_i[2];         // running row sum, this thread's columns only
  float s_acc[kSRegs];  // S_ij: (64, B_c) per warpgroup, fp32
  uint32_t p_frag[B_c / 16][4];  // P_ij (16-bit) as wgmma's A operand: (64, 16 keys) per k-step

  int kv = 0;  // K_j, V_j blocks of earlier tiles: the ring's position
  int n = 0;   // tiles this block has done
  for (int tile = blockIdx.x; tile < p.num_tiles; tile += gridDim.x, ++n) {
    const Tile tl = tile_at(tile);
    const int T_c = tl.T_c;
    const bool last_tile = !Cfg::kPersistent || tile + static_cast<int>(gridDim.x) >= p.num_tiles;
    const int wg_row0 = tl.q0 + 64 * c;           // first row of Q_i this warpgroup owns
    const int row_a = wg_row0 + warp * 16 + g;    // this thread's two rows
    const int row_b = row_a + 8;
    // Key blocks this warpgroup computes: its own rows see fewer keys than the
    // tile's last row under the causal mask; rows past N_q compute nothing. The
    // blocks past it are only released (the others still read them).
    const int wg_last = min(wg_row0 + 64, p.n_q) - 1;
    const int T_c_wg =
        wg_row0 >= p.n_q ? 0 : (p.causal ? (min(p.n_kv, wg_last + 1) + B_c - 1) / B_c : T_c);

#pragma unroll
    for (int k = 0; k < kORegs; ++k) o_acc[k] = 0.f;
    m_i[0] = m_i[1] = -INFINITY;
    l_i[0] = l_i[1] = 0.f;

    const int q_buf = n % Cfg::kQBuffers;
    const uint32_t sQ_t = sQ + q_buf * Cfg::kQBytes;   // this tile's Q_i
    const uint32_t sQ_c = sQ_t + 64 * c * 128;         // this warpgroup's 64 rows in panel 0
    mbar_wait(bar_q(q_buf), (n / Cfg::kQBuffers) & 1);

    // Key block j's place in the ring: its stage and the parity of that stage's
    // round. A block of one tile (kv = 0) takes it from j; a persistent block
    // counts it on block by block in a Slot (dead code in the other), which ran
    // its loop 8 % faster at d = 64, N = 1K than the same arithmetic on
    // (kv + j) — and the Slot as the one-tile blocks' index ran theirs 5 % slower.
    struct Slot {
      int s, ph;
    };
    auto next = [](Slot x) { return x.s + 1 == kStages ? Slot{0, x.ph ^ 1} : Slot{x.s + 1, x.ph}; };
    auto at = [&](int j, Slot x) {
      if constexpr (Cfg::kPersistent) return x;
      else return Slot{(kv + j) % kStages, ((kv + j) / kStages) & 1};
    };
    const Slot slot0{kv % kStages, (kv / kStages) & 1};  // block 0's
    // Waits for block j of this tile, in slot x, to land (K_j for S_ij, V_j for P_ij V_j).
    auto wait_K = [&](int j, Slot x) { mbar_wait(full_k(at(j, x).s), at(j, x).ph); };
    auto wait_V = [&](int j, Slot x) { mbar_wait(full_v(at(j, x).s), at(j, x).ph); };
    // S_ij = Q_i K_jᵀ, issued (not waited for).
    auto issue_S = [&](int j, Slot x) {
      const uint32_t sK_j = sK + at(j, x).s * Cfg::kKVBytes;
#pragma unroll
      for (int kk = 0; kk < d / 16; ++kk) {
        // k-step kk: columns [16kk, 16kk + 16) of d, 32 bytes into a 128-byte panel row.
        const uint32_t off = (kk % 4) * 32;
        const uint64_t desc_q = make_desc(sQ_c + (kk / 4) * B_r * 128 + off, 16, 1024);
        const uint64_t desc_k = make_desc(sK_j + (kk / 4) * B_c * 128 + off, 16, 1024);
        Mma_S::ss(s_acc, desc_q, desc_k, kk > 0 ? 1 : 0);
      }
      wgmma_commit();
    };
    // O_i += P_ij V_j, issued (not waited for).
    auto issue_PV = [&](int j, Slot x) {
      const uint32_t sV_j = sV + at(j, x).s * Cfg::kKVBytes;
#pragma unroll
      for (int kk = 0; kk < B_c / 16; ++kk) {
        // k-step kk: keys [16kk, 16kk + 16), 16 rows of 128 bytes; the next 64 of d one panel on.
        const uint64_t desc_v = make_desc(sV_j + kk * 16 * 128, B_c * 128, 1024);
        Mma_O::rs(o_acc, p_frag[kk], desc_v, 1);
      }
      wgmma_commit();
    };
    // K_j (V_j) of stage j is free for the block kStages later once this warp's
    // S_ij (P_ij V_j) is done: one arrival per consumer warp.
    auto release_K = [&](int j, Slot x) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty_k(at(j, x).s));
    };
    auto release_V = [&](int j, Slot x) {
      __syncwarp();
      if (lane == 0) mbar_arrive(empty_v(at(j, x).s));
    };
    // This tile's Q_i buffer (its rows of Q_i, then of O_i) is no longer read by
    // this warpgroup: one arrival, by the thread that waited for the copy's reads.
    auto release_Q = [&] {
      if (tid == 0) mbar_arrive(q_empty(q_buf));
    };
    // Ping-pong: turn j of this warpgroup comes after turn j of the one before
    // (warpgroup 0: after turn j − 1 of the last); the ring runs on across tiles,
    // so only the block's very first wait and very last signal are left out.
    auto turn_begin = [&](int j) {
      if constexpr (Cfg::kPingPong) {
        if (!(c == 0 && n == 0 && j == 0)) named_bar_sync(kTurnBarrier + c, 256);
      }
    };
    auto turn_end = [&](int j) {
      if constexpr (Cfg::kPingPong) {
        if (!(c == kConsumers - 1 && last_tile && j == T_c - 1))
          named_bar_arrive(kTurnBarrier + (c + 1) % kConsumers, 256);
      }
    };
    // Mask and online softmax of S_ij in base 2, in place: m_i ← max(m_i, rowmax S_ij),
    // S_ij ← 2^(S·τlog2e − m·τlog2e), ℓ_i ← α ℓ_i + rowsum; returns α per row.
    auto softmax = [&](int j, float (&alpha)[2]) {
      const int kv0 = j * B_c;
      const bool need_mask = (kv0 + B_c > p.n_kv) || (p.causal && kv0 + B_c - 1 > wg_row0);
      if (need_mask) {
#pragma unroll
        for (int nn = 0; nn < B_c / 8; ++nn)
#pragma unroll
          for (int e = 0; e < 4; ++e) {
            const int row = (e < 2) ? row_a : row_b;
            const int col = kv0 + nn * 8 + 2 * t + (e & 1);
            if (col >= p.n_kv || (p.causal && col > row)) s_acc[4 * nn + e] = -INFINITY;
          }
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float mx = m_i[r];
#pragma unroll
        for (int nn = 0; nn < B_c / 8; ++nn) mx = fmaxf(mx, fmaxf(s_acc[4 * nn + 2 * r], s_acc[4 * nn + 2 * r + 1]));
        // The 4 threads of a quad hold the B_c columns of one row.
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 1));
        mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 2));
        const float m_scaled = (mx == -INFINITY) ? 0.f : mx * p.scale_log2;
        alpha[r] = exp2_approx(m_i[r] * p.scale_log2 - m_scaled);  // 0 on the first block
        m_i[r] = mx;
        float rowsum = 0.f;
#pragma unroll
        for (int nn = 0; nn < B_c / 8; ++nn)
#pragma unroll
          for (int e = 2 * r; e < 2 * r + 2; ++e) {
            const float x = fmaf(s_acc[4 * nn + e], p.scale_log2, -m_scaled);
            const float pe = (Cfg::kExpPoly > 0 && nn % Cfg::kExpPolyEvery == Cfg::kExpPoly - 1) ? exp2_poly(x) : exp2_approx(x);
            s_acc[4 * nn + e] = pe;
            rowsum += pe;
          }
        l_i[r] = l_i[r] * alpha[r] + rowsum;
      }
    };
    auto rescale_O = [&](const float (&alpha)[2]) {
#pragma unroll
      for (int nn = 0; nn < d / 8; ++nn) {
        o_acc[4 * nn + 0] *= alpha[0];
        o_acc[4 * nn + 1] *= alpha[0];
        o_acc[4 * nn + 2] *= alpha[1];
        o_acc[4 * nn + 3] *= alpha[1];
      }
    };
    auto pack_P = [&] {
#pragma unroll
      for (int kk = 0; kk < B_c / 16; ++kk) {
        p_frag[kk][0] = pack2<T>(s_acc[8 * kk + 0], s_acc[8 * kk + 1]);  // row g,     keys 2t..
        p_frag[kk][1] = pack2<T>(s_acc[8 * kk + 2], s_acc[8 * kk + 3]);  // row g + 8, keys 2t..
        p_frag[kk][2] = pack2<T>(s_acc[8 * kk + 4], s_acc[8 * kk + 5]);  // row g,     keys 2t + 8..
        p_frag[kk][3] = pack2<T>(s_acc[8 * kk + 6], s_acc[8 * kk + 7]);  // row g + 8, keys 2t + 8..
      }
    };

    float alpha[2];
    Slot rest = slot0;  // block T_c_wg's: the first this warpgroup's rows cannot see
    if (T_c_wg > 0) {
      if constexpr (Cfg::kOverlap) {
        // Software pipeline inside the warpgroup: while the tensor cores run
        // S_{i,j+1} = Q_i K_{j+1}ᵀ and O_i += P_ij V_j, the warpgroup's own threads
        // compute the softmax of S_{i,j+1}. O_i is rescaled only once P_ij V_j is done.
        Slot sj = slot0;  // block j's
        wait_K(0, sj);
        turn_begin(0);
        wgmma_fence();
        issue_S(0, sj);
        turn_end(0);
        wgmma_wait<0>();
        fence_regs(s_acc);
        release_K(0, sj);
        softmax(0, alpha);
        pack_P();
        for (int j = 1; j < T_c_wg; ++j) {
          const Slot sp = sj;  // block j − 1's
          sj = next(sj);
          wait_K(j, sj);
          wait_V(j - 1, sp);
          turn_begin(j);
          fence_regs(o_acc);
          wgmma_fence();
          issue_S(j, sj);       // S_{i,j}
          issue_PV(j - 1, sp);  // O_i += P_{i,j−1} V_{j−1}
          turn_end(j);
          wgmma_wait<1>();  // S_{i,j} is done; P V may still run
          fence_regs(s_acc);
          release_K(j, sj);
          softmax(j, alpha);  // overlaps P_{i,j−1} V_{j−1} on the tensor cores
          wgmma_wait<0>();
          fence_regs(o_acc);
          release_V(j - 1, sp);
          rescale_O(alpha);
          pack_P();
        }
        wait_V(T_c_wg - 1, sj);
        fence_regs(o_acc);
        wgmma_fence();
        issue_PV(T_c_wg - 1, sj);
        wgmma_wait<0>();
        fence_regs(o_acc);
        release_V(T_c_wg - 1, sj);
        rest = next(sj);
      } else {
        // In order: S_ij, softmax, P_ij V_j; the other consumer warpgroups' products
        // fill the tensor cores while this one runs its softmax.
        for (int j = 0; j < T_c_wg; ++j, rest = next(rest)) {
          wait_K(j, rest);
          turn_begin(j);
          wgmma_fence();
          issue_S(j, rest);
          turn_end(j);
          wgmma_wait<0>();
          fence_regs(s_acc);
          release_K(j, rest);
          softmax(j, alpha);
          rescale_O(alpha);
          pack_P();
          wait_V(j, rest);
          fence_regs(o_acc);
          wgmma_fence();
          issue_PV(j, rest);
          wgmma_wait<0>();
          fence_regs(o_acc);
          release_V(j, rest);
        }
      }
    }
    // Blocks this warpgroup's rows cannot see: released once landed, turns passed
    // on. Waiting on both copies keeps every phase of every barrier waited in
    // order (a parity wait can only tell the current phase from the one before)
    // and orders the arrival after the stage's previous round.
    for (int j = T_c_wg; j < T_c; ++j, rest = next(rest)) {
      wait_K(j, rest);
      wait_V(j, rest);
      release_K(j, rest);
      release_V(j, rest);
      turn_begin(j);
      turn_end(j);
    }

    // ---- epilogue: O_i = diag(ℓ_i)⁻¹ O_i, L_i = m_i τ + ln ℓ_i ----
    constexpr float kLn2 = 0.693147180559945309f;
    if (p.fold != kFoldNone) {
      // The ring's running output: O_i and L_i fold into O_run and the running
      // logsumexp (running_output.cuh) from registers. Every lane reads its rows'
      // running L before the quad's first lane writes the new one.
      FoldedRow f[2];
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        float l = l_i[r];
        l += __shfl_xor_sync(0xffffffffu, l, 1);
        l += __shfl_xor_sync(0xffffffffu, l, 2);
        const float inv = l > 0.f ? 1.f / l : 0.f;
        const float m_scaled = m_i[r] == -INFINITY ? 0.f : m_i[r] * p.scale_log2;
        const float lse_part = (m_scaled + __log2f(l)) * kLn2;
        const int row = r == 0 ? row_a : row_b;
        const float lse_run =
            p.fold != kFoldStart && row < p.n_q ? p.lse[static_cast<int64_t>(tl.head) * p.n_q + row] : 0.f;
        f[r] = fold_row(p.fold, lse_run, lse_part, inv);
      }
      __syncwarp();
      T* __restrict__ O = static_cast<T*>(p.o) + static_cast<int64_t>(tl.head) * p.n_q * d;  // (N_q, d)
      const bool first = p.fold == kFoldStart;
      auto run_of = [&](int row) { return p.o_run + (static_cast<int64_t>(tl.head) * p.n_q + row) * d; };  // (d) fp32
      float prev[2][d / 4];  // both rows' O_run, loaded before anything is stored
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = r == 0 ? row_a : row_b;
        load_running_row<d / 8>(run_of(row), t, first || row >= p.n_q, prev[r]);
      }
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int row = r == 0 ? row_a : row_b;
        if (row >= p.n_q) continue;
        if (t == 0) p.lse[static_cast<int64_t>(tl.head) * p.n_q + row] = f[r].lse;
        float* run = run_of(row);
#pragma unroll
        for (int nn = 0; nn < d / 8; ++nn) {
          const int col = 8 * nn + 2 * t;
          const float x = f[r].w_run * prev[r][2 * nn] + f[r].w_part * o_acc[4 * nn + 2 * r];
          const float y = f[r].w_run * prev[r][2 * nn + 1] + f[r].w_part * o_acc[4 * nn + 2 * r + 1];
          if (p.fold == kFoldFinish)
            *reinterpret_cast<uint32_t*>(O + static_cast<int64_t>(row) * d + col) = pack2<T>(x, y);
          else
            *reinterpret_cast<float2*>(run + col) = make_float2(x, y);
        }
      }
      if constexpr (Cfg::kPersistent) {
        warpgroup_sync(1 + c);  // every warp of this warpgroup is past its last read of Q_i
        release_Q();
        kv += T_c;
        continue;
      }
      break;  // one tile per block
    }
    float inv_l[2];
#pragma unroll
    for (int r = 0; r < 2; ++r) {
      float l = l_i[r];
      l += __shfl_xor_sync(0xffffffffu, l, 1);
      l += __shfl_xor_sync(0xffffffffu, l, 2);
      inv_l[r] = l > 0.f ? 1.f / l : 0.f;
      const int row = r == 0 ? row_a : row_b;
      if (p.lse != nullptr && t == 0 && row < p.n_q) {
        const float m_scaled = m_i[r] == -INFINITY ? 0.f : m_i[r] * p.scale_log2;
        p.lse[static_cast<int64_t>(tl.head) * p.n_q + row] = (m_scaled + __log2f(l)) * kLn2;  // natural log
      }
    }
    // This warpgroup's own rows of Q_i in shared memory become its O staging
    // buffer (the swizzled layout a copy of Q_i by the map lays down: rows of
    // one 8-row group hit distinct banks), then one copy per 64 columns.
    warpgroup_sync(1 + c);  // every warp of this warpgroup is past its last read of Q_i
    // Byte offset of (row rl of this warpgroup, column col) in this tile's swizzled Q_i.
    auto staged = [&](int rl, int col) {
      const int row = 64 * c + rl;
      return q_buf * Cfg::kQBytes + (col / 64) * B_r * 128 + row * 128 + ((((col % 64) / 8) ^ (row % 8)) * 16) +
             (col % 8) * 2;
    };
#pragma unroll
    for (int nn = 0; nn < d / 8; ++nn)
#pragma unroll
      for (int r = 0; r < 2; ++r) {
        const int rl = warp * 16 + g + 8 * r;
        *reinterpret_cast<uint32_t*>(smem + staged(rl, 8 * nn + 2 * t)) =
            pack2<T>(o_acc[4 * nn + 2 * r] * inv_l[r], o_acc[4 * nn + 2 * r + 1] * inv_l[r]);
      }
    // The copy engine takes the staged rows to HBM (rows past N_q are not
    // written); the buffer is free again once it has read them.
    fence_proxy_async_smem();
    warpgroup_sync(1 + c);
    if (tid == 0) {
#pragma unroll
      for (int pn = 0; pn < kPanels; ++pn) tma_store_3d(&tm_o, sQ_c + pn * B_r * 128, pn * 64, wg_row0, tl.head);
      bulk_commit();
      bulk_wait_read<0>();
    }
    if (!last_tile) release_Q();  // a persistent block's Q_i of two tiles on may land
    kv += T_c;
    if constexpr (!Cfg::kPersistent) break;  // one tile per block
  }
#else
  __trap();  // built without the sm_90a target: the host refuses to launch this
#endif
#endif
}

}  // namespace
}  // namespace flashlab::kernels::fa3_hopper_detail
