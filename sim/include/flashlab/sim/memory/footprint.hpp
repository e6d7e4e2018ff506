// What an algorithm keeps in device memory for one pass: every tensor its
// loop nest reads or writes in HBM, at full size, for all B·H heads. The set
// of tensors comes from the emission itself (S and P for the materialising
// algorithms, ℓ and m for FlashAttention-1, the logsumexp for -2; dO, the
// gradients, D, dQaccum, dP and dS for the backward ones), never from a list
// kept beside it. And what a training step holds between its forward and its
// backward, derived the same way from the two loop nests.
#pragma once

#include <string>
#include <vector>

#include "flashlab/sim/problem/algorithm.hpp"
#include "flashlab/sim/problem/problem.hpp"

namespace flashlab::sim {

// Rows × columns of a whole tensor of one head: Q, O, dO, dQ, dQaccum (N_q × d),
// K, V, dK, dV (N_kv × d), S, P, dS, dP (N_q × N_kv), ℓ, m, LSE, D (N_q × 1);
// 0 × 0 for the on-chip statistics.
struct TensorExtent {
  i64 rows = 0, cols = 0;
};
TensorExtent tensor_extent(Tensor t, const AttentionProblem& p);

// The tensors of the key/value heads: K, V and their gradients dK, dV. With
// grouped-query attention they hold B·H_kv heads, the others B·H.
bool kv_tensor(Tensor t);
// The heads a whole tensor holds: B·H_kv for the K/V tensors, B·H otherwise.
// Throws OverflowError.
i64 tensor_heads(Tensor t, const AttentionProblem& p);
// The head of tensor t's memory that query head `flat_head` (b·H + h) reads
// or writes: its K/V head flat_head / G (b·H_kv + h / G) for the K/V
// tensors, its own for the others.
i64 memory_head(Tensor t, const AttentionProblem& p, i64 flat_head);

// One whole tensor, all its heads (tensor_heads), each element in its own type
// (element_bytes: statistics fp32, the rest the problem's dtype). Throws
// OverflowError.
i64 tensor_bytes(Tensor t, const AttentionProblem& p);

// The arguments and results of a pass, whatever computes it: the forward reads
// Q, K, V and writes O; the backward reads Q, K, V, O, dO and writes dQ, dK,
// dV. Any implementation moves each of them at least once and holds them all
// at once: the pass's compulsory HBM traffic and the least device memory it
// can run in. Statistics (the logsumexp, D) are left out: an implementation's
// choice, and at N·4 bytes a head small beside N·d.
const std::vector<Tensor>& pass_tensors(Pass pass);
// Σ tensor_bytes over pass_tensors(pass). Throws OverflowError.
i64 pass_tensor_bytes(const AttentionProblem& p, Pass pass);

// The tensors the algorithm reads or writes in HBM, in Tensor order.
// `storage`: a kernel's storage types (an fp32 dQ accumulator adds dQaccum).
std::vector<Tensor> hbm_tensors(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});

// One tensor at full size, all B·H heads (B·H_kv for K, V and their
// gradients). `accumulator`: the copy a kernel keeps in another type while it
// accumulates (StorageTypes::o_accumulator: FlashAttention-1's O_i in fp32
// between its launches), beside the tensor itself in the problem's dtype.
struct TensorMemory {
  Tensor tensor = Tensor::Q;
  i64 bytes = 0;
  bool accumulator = false;
};

// The buffers of hbm_tensors, each at full size in the type it is stored in
// (dQaccum, dKaccum, dVaccum in theirs; O in the problem's dtype). An
// accumulator StorageTypes names is a buffer of its own beside the tensor,
// whatever its type: O's (FlashAttention-1's O_i between its launches), dQ's.
// A tensor the loop nest writes over another (LoopNest::stored_over:
// standard_bwd's dS over dP) has no buffer of its own. Throws OverflowError.
std::vector<TensorMemory> hbm_buffers(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});
// Σ hbm_buffers: what the pass holds in device memory. Throws OverflowError.
i64 hbm_footprint_bytes(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});

// What one run of a pass holds on the device, every buffer from its first
// launch to its last — how a caller runs a kernel (PyTorch's op, our bench
// runner): the buffers are allocated before the launch and freed after it.
// A forward: hbm_buffers. A backward: what its forward's run left (hbm_buffers
// of the forward: O and its statistics, and S and P for the materialising
// pair) and the backward's own buffers (dO, the gradients, D, dQaccum, dP, ...),
// each tensor once. `storage`: the rung's (KernelInfo::storage), for both
// passes. The liveness over a backward's phases is training_step_memory's.
// Throws OverflowError.
std::vector<TensorMemory> run_buffers(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});

// The driver's allocation granule for cudaMalloc on current NVIDIA GPUs (an
// assumption, measured on an H200 with driver 580: device memory in use grows
// in steps of 2 MiB). An allocation of a granule or more takes whole granules;
// a smaller one is carved out of a granule the process already holds (the
// runner's own small buffers open one before any case), so it adds nothing.
inline constexpr i64 kAllocationGranuleBytes = i64{2} << 20;

// The device memory a set of cudaMalloc'd buffers takes as the bench runner
// measures it: the larger of the driver's growth (each buffer of a granule or
// more rounded up to whole granules, the smaller ones none) and the bytes the
// buffers ask for. Throws OverflowError.
i64 allocation_device_bytes(const std::vector<i64>& buffer_bytes);

// The buffers a run allocates, as the bench runner does (kernels::case_buffers):
// each argument and result of a pass (Q, K, V, O, dO, dQ, dK, dV) and the
// logsumexp a buffer of its own; everything else a pass keeps in HBM (S and P,
// FlashAttention-1's O accumulator with ℓ and m, D and dQaccum, dP) in one
// workspace per pass. A backward: its forward's buffers, then its own.
// Σ run_allocations = Σ run_buffers. Throws OverflowError.
std::vector<i64> run_allocations(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});
// allocation_device_bytes(run_allocations): the run's peak device memory, the bench's
// predicted_memory_bytes. Throws OverflowError.
i64 run_memory_bytes(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});

// What a training step keeps in HBM between its forward and its backward, and
// what the backward holds at its peak. Every set comes from the two loop
// nests' emissions: a tensor the backward reads and never writes is either
// saved by the forward (it wrote it: P for standard attention and eager
// PyTorch, O and ℓ, m for FlashAttention-1, O and the logsumexp L for -2), an
// input of the forward (Q, K, V, which the layer holds anyway) or the incoming
// gradient dO; what the backward writes is its own.
struct TrainingStepMemory {
  Algorithm forward = Algorithm::fa2, backward = Algorithm::fa2_bwd;  // the pair
  std::vector<TensorMemory> saved;     // written by the forward, read by the backward
  std::vector<TensorMemory> inputs;    // the forward's inputs the backward reads again (Q, K, V)
  std::vector<TensorMemory> own;       // dO and what the backward writes: dQ, dK, dV, D, dQaccum, dP, dS
  // The most the backward holds at once: over its phases (its passes, pre- and
  // post-passes), the saved tensors, the inputs and dO throughout; a tensor it
  // writes from the phase that first touches it — to the end for the
  // gradients dQ, dK, dV, to its last use for the others (dP, dS, D, dQaccum);
  // a tensor written over another (LoopNest::stored_over) lives in that one's
  // memory, which is held until the later of their last uses.
  // Included in the peak: dKaccum and dVaccum of a grouped problem whose
  // backward adds apart (StorageTypes::dkv_accumulator), live throughout.
  i64 kv_accumulator_bytes = 0;
  i64 backward_peak_bytes = 0;

  i64 saved_bytes() const;
  i64 inputs_bytes() const;
  i64 own_bytes() const;
};

// `a`: a forward algorithm or its backward (either names the pair). Throws
// std::invalid_argument when the table has no backward for it, OverflowError
// when a size does not fit in 64 bits.
TrainingStepMemory training_step_memory(Algorithm a, const AttentionProblem& p, StorageTypes storage = {});

}  // namespace flashlab::sim
