#include "flashlab/kernels/device/memory.hpp"

#include "flashlab/sim/core/format.hpp"

namespace flashlab::kernels {

void* DeviceArena::allocate(i64 bytes, const std::string& what) {
  if (bytes <= 0) return nullptr;
  using sim::bytes_iec;
  using sim::group_digits;
  const i64 after = in_use_ + bytes;
  if (limit_ > 0 && after > limit_)
    throw OutOfMemory("out of memory: " + what + " needs " + group_digits(bytes) + " B (" +
                          bytes_iec(static_cast<double>(bytes)) + ") with " + bytes_iec(static_cast<double>(in_use_)) +
                          " already in use, over the allocation limit of " + bytes_iec(static_cast<double>(limit_)),
                      bytes, in_use_);
  // Reserve the slot first so that a failing push_back cannot leak the block.
  blocks_.reserve(blocks_.size() + 1);
  void* p = allocator_.allocate(bytes);
  if (p == nullptr)
    throw OutOfMemory("out of memory: " + what + " needs " + group_digits(bytes) + " B (" +
                          bytes_iec(static_cast<double>(bytes)) + ") with " + bytes_iec(static_cast<double>(in_use_)) +
                          " already in use by this case; the device has no more",
                      bytes, in_use_);
  blocks_.emplace_back(p, bytes);
  in_use_ = after;
  if (in_use_ > peak_) peak_ = in_use_;
  return p;
}

void DeviceArena::release_all() noexcept {
  for (auto it = blocks_.rbegin(); it != blocks_.rend(); ++it) allocator_.release(it->first);
  blocks_.clear();
  in_use_ = 0;
}

}  // namespace flashlab::kernels
