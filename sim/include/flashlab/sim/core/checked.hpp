// 64-bit arithmetic that refuses to wrap: every count the model reports is
// exact or it is an error naming the quantity that overflowed.
#pragma once

#include <stdexcept>
#include <string>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::sim {

class OverflowError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

inline i64 checked_mul(i64 a, i64 b, const char* what = "count") {
  i64 r = 0;
  if (__builtin_mul_overflow(a, b, &r))
    throw OverflowError(std::string(what) + " overflows a 64-bit counter");
  return r;
}
inline i64 checked_add(i64 a, i64 b, const char* what = "count") {
  i64 r = 0;
  if (__builtin_add_overflow(a, b, &r))
    throw OverflowError(std::string(what) + " overflows a 64-bit counter");
  return r;
}
inline i64 ceil_div(i64 a, i64 b) { return (a + b - 1) / b; }

}  // namespace flashlab::sim
