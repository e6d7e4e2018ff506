// The ring's element-wise kernels (ring_merge.cu): what happens between the
// rung's launches on a GPU of the ring. Plain declarations so that the host
// orchestration (src/ring/ring_runner.cpp) calls them. Every tensor is
// [B, heads, n, d] row-major (lse: [B, heads, n]); T is the problem's dtype.
#pragma once

#include <cstdint>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels::ring {

using sim::i64;

// A chunk of a whole [B, heads, N, d] tensor: tokens [begin, begin + n) of
// every (b, h), stored contiguously as [B, heads, n, d]. Element (b, h, t, x)
// gets the value fill_normal(seed) gives element ((b·heads + h)·N + begin + t)·d + x
// of the whole tensor, so a chunked run sees exactly the single-GPU inputs.
void fill_chunk_normal(void* dst, sim::DType t, i64 batch, i64 heads, i64 n, i64 d, i64 seq, i64 begin,
                       std::uint64_t seed, float scale, void* stream);

// Grouped-query attention: dst [B, H, n, d] from src [B, H_kv, n, d], query
// head h reading K/V head h / (H / H_kv).
void expand_heads(void* dst, const void* src, sim::DType t, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 d,
                  void* stream);

// The online-softmax merge of a partial result (O_part, L_part: the rung's
// output for one K/V chunk, normalised, and its logsumexp) into the running
// one (O_acc fp32, L_acc): L = log(e^{L_acc} + e^{L_part}),
// O_acc = e^{L_acc − L}·O_acc + e^{L_part − L}·O_part. `first`: O_acc, L_acc
// are taken from the partial (no read of the running state).
void merge_partial(float* o_acc, float* lse_acc, const void* o_part, const float* lse_part, sim::DType t, i64 rows,
                   i64 d, bool first, void* stream);

// dst (dtype) = src (fp32), n elements.
void convert_from_f32(void* dst, const float* src, sim::DType t, i64 n, void* stream);

// acc (fp32) += part (dtype), n elements.
void accumulate(float* acc, const void* part, sim::DType t, i64 n, void* stream);

// acc [B, H_kv, n, d] (fp32) += Σ over each group of H / H_kv query heads of
// part [B, H, n, d] (dtype): dK, dV of grouped-query attention.
void accumulate_grouped(float* acc, const void* part, sim::DType t, i64 batch, i64 heads, i64 kv_heads, i64 n, i64 d,
                        void* stream);

// acc (fp32) += add (fp32), n elements.
void add_f32(float* acc, const float* add, i64 n, void* stream);

}  // namespace flashlab::kernels::ring
