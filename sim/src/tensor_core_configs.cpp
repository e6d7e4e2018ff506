#include "flashlab/sim/tensor_core_configs.hpp"

namespace flashlab::sim {

namespace {

template <class Config, std::size_t N>
std::optional<Config> config_for(const Config (&table)[N], i64 head_dim) {
  for (const Config& c : table)
    if (c.head_dim == head_dim) return c;
  return std::nullopt;
}

template <class Config, std::size_t N>
std::string head_dims_text(const Config (&table)[N]) {
  std::string s;
  for (const Config& c : table) s += (s.empty() ? "" : ", ") + std::to_string(c.head_dim);
  return s;
}

}  // namespace

std::optional<Fa2TcConfig> fa2_tc_config(i64 head_dim) { return config_for(kFa2TcConfigs, head_dim); }
std::optional<Fa2TcBwdConfig> fa2_tc_bwd_config(i64 head_dim) { return config_for(kFa2TcBwdConfigs, head_dim); }
std::string fa2_tc_head_dims_text() { return head_dims_text(kFa2TcConfigs); }
std::string fa2_tc_bwd_head_dims_text() { return head_dims_text(kFa2TcBwdConfigs); }

}  // namespace flashlab::sim
