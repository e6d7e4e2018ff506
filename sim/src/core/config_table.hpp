// A compiled-configuration table (a row per head dim: sim::kFa2TcConfigs, ...)
// looked up once for every table: the row for a head dim, and the table's head
// dims as text for messages (each once: the Hopper tables may have a row per
// mask or per sequence length, and pick theirs with the rows' serves()).
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

// The index of the first row of a Hopper table that serves a problem of head dim
// d under the mask at sequence length `seq` (each row's serves()).
template <class Config, std::size_t N>
std::optional<std::size_t> row_serving(const Config (&table)[N], i64 head_dim, bool causal, i64 seq) {
  for (std::size_t k = 0; k < N; ++k)
    if (table[k].serves(head_dim, causal, seq)) return k;
  return std::nullopt;
}

template <class Config, std::size_t N>
std::string head_dims_text(const Config (&table)[N]) {
  std::string s;
  for (std::size_t k = 0; k < N; ++k) {
    bool seen = false;  // a head dim with a row per mask is listed once
    for (std::size_t e = 0; e < k; ++e) seen = seen || table[e].head_dim == table[k].head_dim;
    if (!seen) s += (s.empty() ? "" : ", ") + std::to_string(table[k].head_dim);
  }
  return s;
}

}  // namespace flashlab::sim::detail
