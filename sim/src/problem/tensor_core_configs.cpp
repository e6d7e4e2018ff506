#include "flashlab/sim/problem/tensor_core_configs.hpp"

#include "core/config_table.hpp"

namespace flashlab::sim {

std::optional<Fa2TcConfig> fa2_tc_config(i64 head_dim) { return detail::config_for(kFa2TcConfigs, head_dim); }
std::optional<Fa2TcBwdConfig> fa2_tc_bwd_config(i64 head_dim) { return detail::config_for(kFa2TcBwdConfigs, head_dim); }
std::string fa2_tc_head_dims_text() { return detail::head_dims_text(kFa2TcConfigs); }
std::string fa2_tc_bwd_head_dims_text() { return detail::head_dims_text(kFa2TcBwdConfigs); }

}  // namespace flashlab::sim
