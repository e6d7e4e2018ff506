// What the two FlashAttention backward rungs (fa2_bwd.cu, fa2_tc_bwd.cu) share
// around their main kernel: the pre-pass (D_i = rowsum(dO_i ∘ O_i), L_i·log2 e,
// dQaccum = 0) and the last kernel (dQ = τ·dQaccum in the problem dtype), and the
// checks every backward launch makes. FlashAttention-2's backward (Dao 2023,
// Algorithm 2) computes D_i in line 4 inside its loop; computing it once per
// row beforehand is what its implementation does too.
#pragma once

#include <string>

#include "common.cuh"
#include "flashlab/kernels/launch/layouts.hpp"

namespace flashlab::kernels::detail {

// The workspace of layout::fa_bwd_workspace_bytes, carved.
struct FaBwdWorkspace {
  float* dq_accum = nullptr;  // [B·H, N_q, d] fp32
  float* l_log2 = nullptr;    // [B·H, stat_rows] L_i·log2 e, +inf past N_q
  float* d_row = nullptr;     // [B·H, stat_rows] D_i, 0 past N_q
  unsigned* head_done = nullptr;  // [B·H] blocks of each head that are done, zeroed by the pre-pass
  i64 stat_rows = 0;
};

// Refuses (Unsupported, naming the rung and what is missing) a launch without
// Q, K, V, O, the logsumexp, dO, dQ, dK, dV (or their fp32 accumulators,
// BackwardTensors::dq_accum, ...), or with a workspace too small;
// causal needs N_q = N_kv, τ must be positive. Returns the carved workspace.
FaBwdWorkspace check_fa_bwd_args(const LaunchArgs& a, const char* rung);

// Where a tensor-core backward kernel adds its gradients. dQ: into the
// caller's fp32 accumulator (the ring; the kernel adds τ·dS K) or into the
// workspace's dQaccum (converted to dQ afterwards). dK, dV: written in the
// problem dtype, or added in fp32 into the caller's accumulators, or — grouped
// K/V heads on one GPU, where a group's query heads add into one K/V head —
// into the rung's own dKaccum, dVaccum after the workspace
// (layout::fa2_tc_bwd_workspace_bytes), converted afterwards.
struct FaBwdTargets {
  i64 kv_group = 1;           // H / H_kv
  float* dq_accum = nullptr;  // the caller's or the workspace's
  bool dq_scaled = false;     // the caller's: the kernel adds τ·dS K, nothing is converted here
  float* dk_accum = nullptr;  // null: the kernel writes dK, dV
  float* dv_accum = nullptr;
  bool own_dkv = false;       // dk_accum, dv_accum are the rung's own, converted afterwards
};

// Checks what the kernel around the targets needs (no running output, the
// accumulators in pairs), zeroes the rung's own dKaccum, dVaccum, and runs the
// pre-pass (dQaccum zeroed unless it is the caller's). `who` names the rung and
// its configuration in messages.
FaBwdTargets begin_fa_bwd(const LaunchArgs& a, const FaBwdWorkspace& w, const std::string& who, const char* rung);

// After the kernel: dQ = τ·dQaccum (unless the caller's), the own dK, dV converted.
// `programmatic`: the kernel lets its dependents launch early (sm_90, its blocks
// call let_next_grid_launch): the first convert is launched programmatically and
// waits for the kernel's results in its blocks instead of in the stream.
// `blocks_per_head` > 0: the kernel's blocks count
// themselves done in w.head_done once every write of theirs is visible, that many
// per head; dQ's convert then takes each head once its count is complete, on the
// SMs the kernel's last wave leaves idle, instead of waiting for the whole kernel.
void end_fa_bwd(const LaunchArgs& a, const FaBwdWorkspace& w, const FaBwdTargets& t, bool programmatic = false,
                i64 blocks_per_head = 0);

// D_i and L_i·log2 e for every padded row, the heads' counters = 0, and dQaccum = 0
// unless the caller brings its own accumulator (a group of lanes per row, 16-byte loads where
// the rows allow them).
void fa_bwd_preprocess(const LaunchArgs& a, const FaBwdWorkspace& w, bool zero_dq_accum = true);

// dQ = τ·dQaccum, rounded to the problem dtype.
void fa_bwd_convert_dq(const LaunchArgs& a, const FaBwdWorkspace& w, bool programmatic = false);

// out = scale·acc for `count` elements (a multiple of 4), rounded to the
// problem dtype, on a.stream: the convert kernel of dQ, and of dK, dV when a
// rung added them in fp32.
void fa_bwd_convert(const LaunchArgs& a, const float* acc, void* out, i64 count, float scale,
                    bool programmatic = false);

}  // namespace flashlab::kernels::detail
