// What the ranks of a ring hand each other (a process per GPU): plain values
// to bytes and back, for the same program on the same kind of host.
#pragma once

#include <cstring>
#include <stdexcept>
#include <string>

namespace flashlab::kernels::ring {

// Plain values to bytes and back, for what the ranks hand each other (the
// same program on the same kind of host: native layout).
struct Bytes {
  std::string data;
  std::size_t at = 0;
  template <class T>
  void put(const T& v) {
    data.append(reinterpret_cast<const char*>(&v), sizeof v);
  }
  template <class T>
  T take() {
    if (at + sizeof(T) > data.size()) throw std::runtime_error("a rank's message to the ring is cut short");
    T v;
    std::memcpy(&v, data.data() + at, sizeof v);
    at += sizeof v;
    return v;
  }
};

}  // namespace flashlab::kernels::ring
