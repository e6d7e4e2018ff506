// An enum's names as one table of {value, name} rows, read by its printer and
// its parser alike, so that a name is written once. A value's first row is
// the name it is printed with; later rows of the same value are other names
// the parser accepts ("forward" for fwd, "half" for fp16).
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace flashlab::sim::detail {

template <class E>
struct EnumName {
  E value;
  std::string_view name;
};

// The name `v` is printed with; `absent` for a value the table lacks (which
// lists_through keeps from happening).
template <class E, std::size_t N>
constexpr std::string_view name_of(const EnumName<E> (&table)[N], E v, std::string_view absent = "?") {
  for (const EnumName<E>& row : table)
    if (row.value == v) return row.name;
  return absent;
}

// The value named `name` (exactly, any of its rows); nullopt for another name.
template <class E, std::size_t N>
constexpr std::optional<E> value_named(const EnumName<E> (&table)[N], std::string_view name) {
  for (const EnumName<E>& row : table)
    if (row.name == name) return row.value;
  return std::nullopt;
}

// Whether the table names every value from the first enumerator to `last`:
// a table's file asserts it, as a switch's warning would for a missed case.
template <class E, std::size_t N>
constexpr bool lists_through(const EnumName<E> (&table)[N], E last) {
  for (int v = 0; v <= static_cast<int>(last); ++v) {
    bool found = false;
    for (const EnumName<E>& row : table) found = found || static_cast<int>(row.value) == v;
    if (!found) return false;
  }
  return true;
}

}  // namespace flashlab::sim::detail
