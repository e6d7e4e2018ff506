// Number formatting shared by every front end: digit grouping, SI and binary
// prefixes, and parsing of sizes with suffixes.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

std::string group_digits(i64 v);             // 1234567 -> "1,234,567"
std::string fixed(double v, int decimals);   // printf("%.*f"): (3.14159, 2) -> "3.14"
std::string si(double v, int digits = 3);    // 1.5e9 -> "1.50G"
std::string si_unit(double v, const char* unit);  // (1.5e9, "B") -> "1.50 GB", (0, "B") -> "0 B"
std::string bytes_iec(double bytes);         // 196608 -> "192 KiB"
// A duration in the unit that keeps it readable: 9000 -> "2.5 h", 300 ->
// "5 min", 2.5 -> "2.50 s", 0.0123 -> "12.30 ms", 1.61e-6 -> "1.6 µs",
// 8.76e-7 -> "876 ns".
std::string duration(double seconds);
// The shortest decimal that reads back to the same double (at most 17 digits):
// 0.1 -> "0.1"; "nan", "inf", "-inf" for the values JSON cannot hold.
std::string shortest(double v);

// "4096", "16K" (= 16·1024), "100KiB", "1.5MB" (= 1.5e6), "2G". K/M/G and
// KiB/MiB/GiB are powers of 1024; KB/MB/GB are powers of 1000. Integers only:
// a fractional result, a negative value, junk or an overflow gives nullopt.
std::optional<i64> parse_size(std::string_view s);

// The whole text as one integer, as std::stoll reads it (leading white space
// and a sign taken): "64", "-3", " 7"; nullopt for junk, trailing characters
// ("64x", "1.5"), an empty text or a value out of range.
std::optional<i64> parse_whole(const std::string& text);

}  // namespace flashlab::sim
