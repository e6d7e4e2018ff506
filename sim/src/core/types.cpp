#include <algorithm>
#include <cctype>
#include <string>

#include "core/enum_names.hpp"
#include "flashlab/sim/core/assets.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

namespace {

using detail::EnumName;

constexpr EnumName<DType> kDTypeNames[] = {
    {DType::fp32, "fp32"},    {DType::fp16, "fp16"},    {DType::bf16, "bf16"}, {DType::fp32, "float32"},
    {DType::fp32, "float"},   {DType::fp16, "float16"}, {DType::fp16, "half"}, {DType::bf16, "bfloat16"}};
static_assert(detail::lists_through(kDTypeNames, DType::bf16));

constexpr EnumName<Level> kLevelNames[] = {
    {Level::HBM, "HBM"}, {Level::L2, "L2"}, {Level::SRAM, "SRAM"}, {Level::none, "none"}};
static_assert(detail::lists_through(kLevelNames, Level::none));

constexpr EnumName<EventKind> kEventKindNames[] = {
    {EventKind::load, "load"}, {EventKind::store, "store"}, {EventKind::compute, "compute"}, {EventKind::free, "free"}};
static_assert(detail::lists_through(kEventKindNames, EventKind::free));

}  // namespace

std::string_view to_string(DType t) { return detail::name_of(kDTypeNames, t); }

// Any case: "FP16", "Half".
std::optional<DType> parse_dtype(std::string_view s) { return detail::value_named(kDTypeNames, lower(s)); }

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

std::string_view to_string(Level l) { return detail::name_of(kLevelNames, l); }

std::string_view to_string(EventKind k) { return detail::name_of(kEventKindNames, k); }

}  // namespace flashlab::sim
