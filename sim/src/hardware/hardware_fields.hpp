// Internal: the fields of a hardware preset and of a measured profile (which
// starts with a preset's fields), read in one wording with one error type.
#pragma once

#include <string>

#include "flashlab/sim/core/json_fields.hpp"
#include "flashlab/sim/hardware/hardware.hpp"

namespace flashlab::sim::detail {

using HardwareFields = JsonFields<HardwareError>;
inline HardwareFields hardware_fields(const std::string& origin) { return HardwareFields(origin, FieldWording::quoted); }
[[noreturn]] inline void hardware_fail(const std::string& origin, const std::string& msg) {
  hardware_fields(origin).fail(msg);
}

}  // namespace flashlab::sim::detail
