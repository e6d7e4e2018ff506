// Device memory of one benchmark case: every buffer goes through an arena that
// tracks what is in use, honours an allocation limit (so the out-of-memory path
// can be shown and tested without filling a GPU) and frees everything when the
// case ends, whether it finished, ran out of memory or failed.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "flashlab/sim/core/types.hpp"

namespace flashlab::kernels {

using sim::i64;

// A case asked for more memory than it could get. The runner turns it into an
// "OOM" row with this message (the bytes asked for) and goes on.
class OutOfMemory : public std::runtime_error {
 public:
  OutOfMemory(const std::string& message, i64 asked, i64 in_use)
      : std::runtime_error(message), bytes_asked(asked), bytes_in_use(in_use) {}
  i64 bytes_asked;
  i64 bytes_in_use;
};

// Where bytes come from: cudaMalloc on the device, host memory in tests.
class DeviceAllocator {
 public:
  virtual ~DeviceAllocator() = default;
  // nullptr when the memory is not there; other failures throw (CudaError).
  virtual void* allocate(i64 bytes) = 0;
  virtual void release(void* p) noexcept = 0;
};

class DeviceArena {
 public:
  // limit_bytes = 0: no limit beyond the device's.
  explicit DeviceArena(DeviceAllocator& allocator, i64 limit_bytes = 0)
      : allocator_(allocator), limit_(limit_bytes) {}
  ~DeviceArena() { release_all(); }
  DeviceArena(const DeviceArena&) = delete;
  DeviceArena& operator=(const DeviceArena&) = delete;

  // Throws OutOfMemory naming `what`, the bytes asked for and the bytes already
  // in use. A zero-byte request returns nullptr.
  void* allocate(i64 bytes, const std::string& what);
  void release_all() noexcept;

  i64 in_use_bytes() const { return in_use_; }
  i64 peak_bytes() const { return peak_; }
  i64 limit_bytes() const { return limit_; }
  std::size_t buffers() const { return blocks_.size(); }

 private:
  DeviceAllocator& allocator_;
  i64 limit_ = 0, in_use_ = 0, peak_ = 0;
  std::vector<std::pair<void*, i64>> blocks_;
};

}  // namespace flashlab::kernels
