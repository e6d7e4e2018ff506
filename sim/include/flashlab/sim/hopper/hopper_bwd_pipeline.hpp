// The Hopper backward's schedule inside one thread block (CTA):
// FlashAttention-2's backward loop nest (fa2_bwd) — one CTA per K_j, V_j
// streaming the row blocks Q_i, dO_i, L_i, D_i — run as the rung
// fa3_hopper_bwd runs it (configurations: kHopperBwdConfigs):
//
//   a producer thread copies K_j and V_j once, then per row block i Q_i, dO_i
//   and L_i, D_i by TMA into stage (step mod s) of a ring of s stages, each
//   waiting until both consumers released the block that held the stage;
//   two consumer warpgroups (64 keys of K_j, V_j each, their rows of dK_j and
//   dV_j in registers) compute per step S_ijᵀ = K_j Q_iᵀ and dP_ijᵀ = V_j dO_iᵀ
//   on the tensor cores; P_ijᵀ on the CUDA cores and exponential units as soon
//   as S_ijᵀ is in registers, while dP_ijᵀ runs; then dS_ijᵀ, written to shared
//   memory (the same warps' stores, drawn on the softmax units' lane); issue
//   dV_j += P_ijᵀ dO_i, meet at a named barrier (both halves of dS_ijᵀ are
//   needed by either's block of dQ_i), issue a 64 × 64 block of
//   dQ_i = dS_ij K_j and dK_j += dS_ijᵀ Q_i back to back, store the block of
//   dQ_i in fp32 into its shared-memory buffer while dK_j runs (waiting only
//   when the writer has not yet read the buffer it reuses, that of step
//   k − dq_buffers), and release the stage once dK_j is done (during the next
//   step's S_ijᵀ and dP_ijᵀ where HopperBwdConfig::dk_overlaps_next_step says
//   so); at the end each writes its rows of dK_j, dV_j;
//   the dQ writer, a thread of the producer warpgroup, adds each stored block
//   into dQaccum_i by TMA tensor reductions in the L2, one block at a time in
//   the order they were stored, and gives a buffer back once its reduction has
//   read it — while the warpgroups go on with the next step.
// With dq_buffers = 0 (an A/B build) the warpgroups add their blocks themselves
// by vector reductions while dK_j runs; these queue on the load/store path.
//
// Nothing in the loop staggers the two warpgroups (the forward's schedule
// alternates them: one's products while another's softmax runs): both wait for the same stage, so they issue their products
// at once and the tensor cores, the CUDA cores and exponential units, and the
// load/store path each serve both at once, at half the rate each (pipe_builder.hpp's
// shared groups). Both reach dS_ijᵀ together and the tensor cores wait while
// it is computed and stored (P_ijᵀ hides under dP_ijᵀ); the barrier renews the
// lockstep every step. That is what Nsight Compute showed on an H200
// (kernels/src/rungs/fa3_hopper_bwd_kernel.cuh). dQ_i's reductions leave the SM
// while the next products run: the writer's lane carries them, as many bytes
// as the warpgroups' own reductions would (the adds are the L2's).
//
// The times are a model, as the forward's (hopper_pipeline.hpp): each op's
// work comes from fa2_bwd's own emission of one full B_r × B_c block with dQ
// accumulated in fp32, divided by the rates of one SM (pipeline_rates).
// docs/model.md ("The Hopper backward inside a CTA") says what it assumes.
#pragma once

#include <vector>

#include "flashlab/sim/schedule/event.hpp"
#include "flashlab/sim/hardware/hardware.hpp"
#include "flashlab/sim/hopper/hopper_pipeline.hpp"
#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::sim {

// One use of a ring stage: row block i's Q_i, dO_i, L_i, D_i copied in, read, released.
struct BwdStageUse {
  int stage = 0;
  i64 i = 0;
  i64 step = 0;             // the CTA's step: i − first_row(j)
  double issued_ns = 0;     // the producer issues Q_i's copy
  double q_arrived_ns = 0;  // Q_i has landed
  double do_arrived_ns = 0; // dO_i has landed
  double arrived_ns = 0;    // L_i, D_i too: the stage is full
  double released_ns = 0;   // both warpgroups' dQ_i blocks are computed
};

// The ring and the units at one moment.
struct BwdPipelineState {
  double t_ns = 0;
  struct Stage {
    i64 i = -1;  // the row block it holds or loads
    StageStatus Q = StageStatus::empty, dO = StageStatus::empty, LD = StageStatus::empty;
  };
  std::vector<Stage> stages;
  StageStatus K = StageStatus::empty, V = StageStatus::empty;  // K_j, V_j: held for the whole CTA
  // Every op that runs at t (indices into HopperBwdPipeline::intervals): the
  // shared units may run one op of each warpgroup at once.
  std::vector<int> running;
  std::vector<int> warpgroup_op;      // per warpgroup: its op at t (what its threads compute first, then its reductions, then its products), −1 waiting
  std::vector<bool> at_barrier;       // per warpgroup: its dS_ijᵀ is stored, the other's not yet
  i64 step = -1;                      // the latest step a consumer warpgroup has begun by t (−1: none yet)
};

struct HopperBwdPipeline : CtaPipeline<HopperBwdConfig, &PipeInterval::i> {
  i64 j = 0;         // the column block this CTA owns
  i64 first_i = 0;   // the first row block it visits (first_row(j) under causal masking, else 0)
  i64 visits = 0;    // row blocks it visits: T_r − first_i
  std::vector<BwdStageUse> stage_uses;  // one per step, in i order
  std::vector<double> barrier_ns;       // per step: both halves of dS_ijᵀ are stored, dQ_i may start
  double kv_arrived_ns = 0;             // K_j and V_j have landed
  // The time the tensor cores are idle while the softmax units run.
  double tensor_wait_in_softmax_ns = 0;
  // Per step, for one warpgroup at the units' full rate: the five products,
  // the softmax backward, the store of dS_ijᵀ, the store of its block of dQ_i to
  // shared memory (with the writer; else 0) and that block's reductions (the
  // writer's TMA reductions, or the warpgroup's own).
  double gemm_ns_per_step = 0, softmax_ns_per_step = 0, store_ns_per_step = 0, dq_store_ns_per_step = 0,
         reduce_ns_per_step = 0;

  BwdPipelineState state_at(double t_ns) const;
  // find(op, i, w): K_j's and V_j's copies are row block −1's.
  // The moment the step-through's event of fa2_bwd's main loop happens in this
  // schedule, for the first warpgroup: K_j, V_j's loads when they land; a
  // step's loads and S_ij when S_ijᵀ starts, P_ij when the softmax backward
  // starts, dS_ij when its store to shared memory starts, dV_j, dP_ij, dK_j
  // and dQ_i when their products
  // start, dQ_i's store when its reductions start (the writer's, or the
  // warpgroup's own), the free of the stage when it is released; dK_j, dV_j's
  // stores at the epilogue. The kernel computes dP_ij before P_ij's dV_j, so the
  // moment steps back at the paper's line 13; with the writer dK_j's product
  // starts before dQ_i is added, a step back at line 16 (and a step's first
  // events may come before the last step's reductions).
  // Another column block, the pre-pass or the
  // conversion of dQaccum: −1.
  double time_of(const TileEvent& e) const;
};

// The schedule of column block j of `p` under configuration `c` on `hw`.
// Throws std::invalid_argument for a head dim other than c's, a column block
// out of range, a configuration other than two warpgroups of 64 keys, or a
// hardware model without the rates.
HopperBwdPipeline simulate_hopper_bwd_pipeline(const AttentionProblem& p, i64 j, const HopperBwdConfig& c,
                                               const HardwareModel& hw);

}  // namespace flashlab::sim
