// The attention layers of the models the multi-GPU sweeps are named after.
// One table: the ring's simulator, the CLI, the bench sweeps and the GUI read it.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

struct AttentionModel {
  std::string_view id;      // "llama2-7b": what the CLI and sweeps take
  std::string_view label;   // "LLaMA-2-7B"
  i64 heads = 0;            // H: query heads
  i64 kv_heads = 0;         // H_kv: key/value heads (grouped-query attention when < H)
  i64 head_dim = 0;         // d
  i64 layers = 0;           // attention layers in the model (a step's attention is layers × one layer)
  std::string_view source;  // where the shape comes from
};

// LLaMA-2-7B: 32 heads, d 128 (hidden 4096), 32 layers;
// Llama-3.2-3B: 24 heads, 8 KV heads, d 128 (hidden 3072), 28 layers;
// Llama-3.2-1B: 32 heads, 8 KV heads, d 64 (hidden 2048), 16 layers.
const std::vector<AttentionModel>& attention_models();
// By id (case-insensitive; also the label); nullptr when unknown.
const AttentionModel* find_attention_model(std::string_view id_or_label);
// The ids in the table's order, joined by `separator`: "llama2-7b, llama3.2-3b, llama3.2-1b".
std::string attention_model_ids(std::string_view separator = ", ");

}  // namespace flashlab::sim
