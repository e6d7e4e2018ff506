// The rungs compiled per head dim (fa2_tc, fa2_tc_bwd, fa3_hopper,
// fa3_hopper_bwd): from a table of rows (sim::kFa2TcConfigs, ...) and the
// kernel template's Config of row I (CfgAt<I>), the checks that the two agree
// and the step from a problem's runtime head dim and dtype to the template
// instance, written once.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <utility>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels::detail {

// A type carried as a value, for a generic lambda to take a template argument.
template <class T>
struct TypeTag {
  using type = T;
};

// Every row's shared memory, as the table's formula gives it, is what its Config allocates.
template <template <std::size_t> class CfgAt, class Row, std::size_t N, class SmemBytes, std::size_t... I>
constexpr bool smem_agrees(const Row (&table)[N], SmemBytes smem_bytes, std::index_sequence<I...>) {
  return ((CfgAt<I>::kSmemBytes == smem_bytes(table[I])) && ...);
}

// launch(TypeTag<CfgAt<I>>{}, TypeTag<T>{}) for the row I whose head dim is
// `head_dim`, T the 16-bit type of `dtype` (the caller has refused fp32);
// false when no row has that head dim.
template <template <std::size_t> class CfgAt, class Row, std::size_t N, class Launch, std::size_t... I>
bool launch_compiled(const Row (&table)[N], long long head_dim, sim::DType dtype, Launch&& launch,
                     std::index_sequence<I...>) {
  auto with_dtype = [&](auto cfg) {
    if (dtype == sim::DType::bf16)
      launch(cfg, TypeTag<__nv_bfloat16>{});
    else
      launch(cfg, TypeTag<__half>{});
  };
  return ((table[I].head_dim == head_dim ? (with_dtype(TypeTag<CfgAt<I>>{}), true) : false) || ...);
}

}  // namespace flashlab::kernels::detail
