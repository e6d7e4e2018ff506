// What the tensor-core rungs (fa2_tc, fa2_tc_bwd) are compiled for, read from the
// simulator's tables (sim/problem/tensor_core_configs.hpp) in every build: the rungs
// launch those rows, a build without CUDA lists the same head dims and tiles.
#include <optional>
#include <string>
#include <vector>

#include "flashlab/kernels/rungs/fa2_tc.hpp"
#include "flashlab/kernels/rungs/fa2_tc_bwd.hpp"

namespace flashlab::kernels {

namespace {

template <class Config, std::size_t N>
std::vector<int> head_dims_of(const Config (&table)[N]) {
  std::vector<int> dims;
  for (const Config& c : table) dims.push_back(c.head_dim);
  return dims;
}

// The table's row for d, or Unsupported naming the head dims the rung is compiled for.
template <class Config>
Config compiled_or_throw(const std::optional<Config>& row, const char* rung, std::string (*compiled)(), int d) {
  if (row) return *row;
  throw Unsupported(std::string(rung) + " is compiled for head dims " + compiled() + "; got d=" + std::to_string(d));
}

}  // namespace

std::vector<int> fa2_tc_head_dims() { return head_dims_of(sim::kFa2TcConfigs); }

sim::Fa2TcConfig fa2_tc_config(int head_dim) {
  return compiled_or_throw(sim::fa2_tc_config(head_dim), "fa2_tc", &sim::fa2_tc_head_dims_text, head_dim);
}

sim::TileShape fa2_tc_tiles(int head_dim) { return sim::tiles_of(fa2_tc_config(head_dim)); }

std::size_t fa2_tc_smem_bytes(int head_dim) { return sim::fa2_tc_smem_bytes(fa2_tc_config(head_dim)); }

std::vector<int> fa2_tc_bwd_head_dims() { return head_dims_of(sim::kFa2TcBwdConfigs); }

sim::Fa2TcBwdConfig fa2_tc_bwd_config(int head_dim) {
  return compiled_or_throw(sim::fa2_tc_bwd_config(head_dim), "fa2_tc_bwd", &sim::fa2_tc_bwd_head_dims_text, head_dim);
}

sim::TileShape fa2_tc_bwd_tiles(int head_dim) { return sim::tiles_of(fa2_tc_bwd_config(head_dim)); }

std::size_t fa2_tc_bwd_smem_bytes(int head_dim) { return sim::fa2_tc_bwd_smem_bytes(fa2_tc_bwd_config(head_dim)); }

}  // namespace flashlab::kernels
