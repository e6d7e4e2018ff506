// The ring's device memory as typed buffers: each knows its element type and
// count, so a size is written once (at the allocation) and a float sum is never
// passed where a tensor of the problem's dtype is expected.
#pragma once

#include <string>

#include "flashlab/kernels/device/memory.hpp"
#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels::ring {

using sim::i64;

// Elements of the problem's dtype (fp16, bf16) on one device: Q, K, V, O and
// their gradients, the K/V packages, a rung's partial outputs.
struct DtypeBuffer {
  void* data = nullptr;
  i64 elems = 0;
  i64 elem_bytes = 0;
  i64 bytes() const { return elems * elem_bytes; }
  // The address of element e (a chunk's K or V inside a package).
  void* at(i64 e) const { return static_cast<char*>(data) + e * elem_bytes; }
  explicit operator bool() const { return data != nullptr; }
};

// fp32 elements on one device: the logsumexps, the running sums of O and dQ,
// the travelling dK, dV packages.
struct F32Buffer {
  float* data = nullptr;
  i64 elems = 0;
  i64 bytes() const { return elems * 4; }
  float* at(i64 e) const { return data + e; }
  explicit operator bool() const { return data != nullptr; }
};

// Bytes a rung asks for as its workspace.
struct Workspace {
  void* data = nullptr;
  i64 bytes = 0;
};

// Throw OutOfMemory naming `what` (DeviceArena::allocate).
inline DtypeBuffer allocate_dtype(DeviceArena& a, i64 elems, sim::DType t, const std::string& what) {
  DtypeBuffer b;
  b.elems = elems;
  b.elem_bytes = sim::dtype_bytes(t);
  b.data = a.allocate(b.bytes(), what);
  return b;
}

inline F32Buffer allocate_f32(DeviceArena& a, i64 elems, const std::string& what) {
  F32Buffer b;
  b.elems = elems;
  b.data = static_cast<float*>(a.allocate(b.bytes(), what));
  return b;
}

inline Workspace allocate_workspace(DeviceArena& a, i64 bytes, const std::string& what) {
  return Workspace{a.allocate(bytes, what), bytes};
}

}  // namespace flashlab::kernels::ring
