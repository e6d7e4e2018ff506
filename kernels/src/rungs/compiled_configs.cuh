// The rungs compiled per head dim (fa2_tc, fa2_tc_bwd, fa3_hopper,
// fa3_hopper_bwd): from a table of rows (sim::kFa2TcConfigs, ...) and the
// kernel template's Config of row I (CfgAt<I>), the checks that the two agree
// and the step from a problem's runtime head dim and dtype to the template
// instance, written once.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstddef>
#include <iterator>
#include <string>
#include <utility>

#include "flashlab/kernels/launch/launch.hpp"
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

// launch(TypeTag<CfgAt<row>>{}, TypeTag<T>{}), T the 16-bit type of `dtype`
// (the caller has refused fp32); nothing when `row` is past the table.
template <template <std::size_t> class CfgAt, class Launch, std::size_t... I>
void launch_row(std::size_t row, sim::DType dtype, Launch&& launch, std::index_sequence<I...>) {
  auto with_dtype = [&](auto cfg) {
    if (dtype == sim::DType::bf16)
      launch(cfg, TypeTag<__nv_bfloat16>{});
    else
      launch(cfg, TypeTag<__half>{});
  };
  (void)((row == I ? (with_dtype(TypeTag<CfgAt<I>>{}), true) : false) || ...);
}

// launch_row for the first row whose head dim is `head_dim`; false when no row has it.
template <template <std::size_t> class CfgAt, class Row, std::size_t N, class Launch, std::size_t... I>
bool launch_compiled(const Row (&table)[N], long long head_dim, sim::DType dtype, Launch&& launch,
                     std::index_sequence<I...> rows) {
  for (std::size_t k = 0; k < N; ++k)
    if (table[k].head_dim == head_dim) {
      launch_row<CfgAt>(k, dtype, launch, rows);
      return true;
    }
  return false;
}

// The entry point of an mma.sync rung compiled per head dim (fa2_tc,
// fa2_tc_bwd) from its table kTable and the table's shared-memory formula
// (checked against every Config at compile time): fp32 refused first, whatever
// the head dim, then launch(cfg, t) as launch_compiled calls it; when no row
// has the problem's head dim, row_of(d) throws Unsupported naming the compiled ones.
template <template <std::size_t> class CfgAt, const auto& kTable, auto kSmemBytes, class Launch, class RowOf>
void launch_mma_sync_rung(const LaunchArgs& a, const char* rung, Launch&& launch, RowOf row_of) {
  constexpr auto kRows = std::make_index_sequence<std::size(kTable)>{};
  static_assert(smem_agrees<CfgAt>(kTable, kSmemBytes, kRows), "a Config's shared memory differs from its table's");
  if (a.problem.dtype == sim::DType::fp32)
    throw Unsupported(std::string(rung) + " runs fp16 and bf16 only (mma.sync.m16n8k16 takes 16-bit inputs); got fp32");
  if (!launch_compiled<CfgAt>(kTable, a.problem.head_dim, a.problem.dtype, launch, kRows))
    (void)row_of(static_cast<int>(a.problem.head_dim));
}

}  // namespace flashlab::kernels::detail
