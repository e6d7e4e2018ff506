#include "flashlab/sim/problem/attention_models.hpp"

#include <cctype>

namespace flashlab::sim {

const std::vector<AttentionModel>& attention_models() {
  static const std::vector<AttentionModel> models = {
      {"llama2-7b", "LLaMA-2-7B", 32, 32, 128, 32,
       "Touvron et al. 2023, Llama 2 (Table 1 and the released config: hidden 4096, 32 heads, 32 layers)"},
      {"llama3.2-3b", "Llama-3.2-3B", 24, 8, 128, 28,
       "meta-llama/Llama-3.2-3B config.json: hidden 3072, 24 heads, 8 key/value heads, 28 layers"},
      {"llama3.2-1b", "Llama-3.2-1B", 32, 8, 64, 16,
       "meta-llama/Llama-3.2-1B config.json: hidden 2048, 32 heads, 8 key/value heads, 16 layers"},
  };
  return models;
}

namespace {
bool same_text(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i)
    if (std::tolower(static_cast<unsigned char>(a[i])) != std::tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}
}  // namespace

const AttentionModel* find_attention_model(std::string_view id_or_label) {
  for (const auto& m : attention_models())
    if (same_text(m.id, id_or_label) || same_text(m.label, id_or_label)) return &m;
  return nullptr;
}

std::string attention_model_ids(std::string_view separator) {
  std::string s;
  for (const AttentionModel& m : attention_models()) s += (s.empty() ? "" : std::string(separator)) + std::string(m.id);
  return s;
}

}  // namespace flashlab::sim
