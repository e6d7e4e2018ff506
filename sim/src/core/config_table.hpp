// A compiled-configuration table (one row per head dim: sim::kFa2TcConfigs,
// sim::kHopperConfigs, ...) looked up once for every table: the row for a head
// dim, and the table's head dims as text for messages.
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim::detail {

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

}  // namespace flashlab::sim::detail
