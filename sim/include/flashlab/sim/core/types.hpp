// Vocabulary of the model: element types, tensors, memory levels, event kinds.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

namespace flashlab::sim {

using i64 = std::int64_t;

enum class DType : std::uint8_t { fp32, fp16, bf16 };
inline constexpr int kDTypeCount = 3;

constexpr i64 dtype_bytes(DType t) { return t == DType::fp32 ? 4 : 2; }
std::string_view to_string(DType t);
std::optional<DType> parse_dtype(std::string_view s);

// Every tensor the algorithms name. Q..dVaccum may live in global memory:
// the forward's Q, K, V, S, P, O, ℓ, m and the logsumexp, and the backward's
// gradients dO, dQ, dK, dV, dS = ∂L/∂S, dP = ∂L/∂P, D = rowsum(dO ∘ O),
// dQaccum, the buffer a kernel adds dQ into when it accumulates in another
// type than the problem's (FlashAttention-2's fp32 dQaccum; StorageTypes),
// and dKaccum, dVaccum, the buffers the query heads of a group add their
// dK_j, dV_j into when a kernel runs them in separate blocks.
// The rest are on-chip statistics of online softmax (m̃_ij, ℓ̃_ij, m_i^new,
// ℓ_i^new). The global tensors come first: the L2 model keys a line by a
// tensor index below kGlobalTensorCount.
enum class Tensor : std::uint8_t {
  Q, K, V, S, P, O, l, m, LSE,
  dO, dQ, dK, dV, dS, dP, D, dQaccum, dKaccum, dVaccum,
  m_tilde, l_tilde, m_new, l_new
};
inline constexpr int kTensorCount = 23;
inline constexpr int kGlobalTensorCount = 19;  // Q .. dVaccum

std::string_view to_string(Tensor t);        // ASCII: "Q", "l", "m_tilde", ...
std::string_view display_name(Tensor t);     // paper notation: "ℓ", "m̃", ...

// Statistics (ℓ, m, LSE, D and the on-chip variants) are fp32 whatever the
// problem dtype; Q, K, V, S, P, O and the gradients are in the problem dtype.
constexpr bool is_statistic(Tensor t) {
  return t == Tensor::l || t == Tensor::m || t == Tensor::LSE || t == Tensor::D || t == Tensor::m_tilde ||
         t == Tensor::l_tilde || t == Tensor::m_new || t == Tensor::l_new;
}
// The tensors only the backward pass has.
constexpr bool is_gradient(Tensor t) {
  return t == Tensor::dO || t == Tensor::dQ || t == Tensor::dK || t == Tensor::dV || t == Tensor::dS ||
         t == Tensor::dP || t == Tensor::D || t == Tensor::dQaccum || t == Tensor::dKaccum || t == Tensor::dVaccum;
}
// An accumulator's element is its type (StorageTypes::dq_accumulator,
// dkv_accumulator), which the Emitter gives it; by default it would be the problem's.
constexpr i64 element_bytes(Tensor t, DType d) { return is_statistic(t) ? 4 : dtype_bytes(d); }

// What a kernel keeps in global memory in another element type than the
// paper's. FlashAttention-1 reads and writes O_i at every step of its outer
// loop; the paper keeps O in the problem's dtype there, a kernel may keep the
// running O in fp32 (ours does) and write the problem's dtype at its last step.
// The backward passes of FlashAttention add into dQ_i in global memory from
// every K_j, V_j block; a kernel accumulates them in fp32 (FlashAttention-2's
// dQaccum, Tensor::dQaccum) and converts once at the end, in a pass of its own.
// With grouped K/V heads (H_kv < H) the query heads of a group add into one
// dK_j, dV_j; a kernel that runs them in separate blocks adds in fp32 apart
// (Tensor::dKaccum, dVaccum: B·H_kv heads, zeroed before, converted after) —
// memory the backward holds throughout, and traffic the loop nest counts.
struct StorageTypes {
  std::optional<DType> o_accumulator;   // unset: the problem's dtype
  std::optional<DType> dq_accumulator;  // unset: the problem's dtype
  std::optional<DType> dkv_accumulator; // grouped heads only; unset: a group's sum stays on chip
  bool operator==(const StorageTypes& o) const {
    return o_accumulator == o.o_accumulator && dq_accumulator == o.dq_accumulator &&
           dkv_accumulator == o.dkv_accumulator;
  }
  bool operator!=(const StorageTypes& o) const { return !(*this == o); }
};

// Where bytes live. `none` is the register file / a constant: an initialisation
// written straight to HBM reads nothing that is counted.
enum class Level : std::uint8_t { HBM, L2, SRAM, none };
inline constexpr int kLevelCount = 3;  // counted levels: HBM, L2, SRAM
std::string_view to_string(Level l);

enum class EventKind : std::uint8_t { load, store, compute, free };
std::string_view to_string(EventKind k);

}  // namespace flashlab::sim
