#include <algorithm>
#include <cctype>
#include <string>

#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

std::string_view to_string(DType t) {
  switch (t) {
    case DType::fp32: return "fp32";
    case DType::fp16: return "fp16";
    case DType::bf16: return "bf16";
  }
  return "?";
}

std::optional<DType> parse_dtype(std::string_view s) {
  const std::string l = lower(s);
  if (l == "fp32" || l == "float32" || l == "float") return DType::fp32;
  if (l == "fp16" || l == "float16" || l == "half") return DType::fp16;
  if (l == "bf16" || l == "bfloat16") return DType::bf16;
  return std::nullopt;
}

std::string_view to_string(Tensor t) {
  static constexpr std::string_view names[kTensorCount] = {
      "Q",  "K",  "V",  "S",  "P",  "O", "l",       "m",       "LSE",   "dO",
      "dQ", "dK", "dV", "dS", "dP", "D", "dQaccum", "dKaccum", "dVaccum", "m_tilde", "l_tilde", "m_new", "l_new"};
  return names[static_cast<int>(t)];
}

std::string_view display_name(Tensor t) {
  static constexpr std::string_view names[kTensorCount] = {
      "Q",  "K",  "V",  "S",  "P",  "O", "ℓ",  "m",  "LSE",   "dO",
      "dQ", "dK", "dV", "dS", "dP", "D", "dQaccum", "dKaccum", "dVaccum", "m̃", "ℓ̃", "m_new", "ℓ_new"};
  return names[static_cast<int>(t)];
}

std::string_view to_string(Level l) {
  switch (l) {
    case Level::HBM: return "HBM";
    case Level::L2: return "L2";
    case Level::SRAM: return "SRAM";
    case Level::none: return "none";
  }
  return "?";
}

std::string_view to_string(EventKind k) {
  switch (k) {
    case EventKind::load: return "load";
    case EventKind::store: return "store";
    case EventKind::compute: return "compute";
    case EventKind::free: return "free";
  }
  return "?";
}

}  // namespace flashlab::sim
