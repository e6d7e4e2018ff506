// Builders shared by the kernel tests: problems, and a fake backend that runs
// the runner's bookkeeping on host memory (no GPU).
#pragma once

#include <cstdlib>
#include <map>
#include <vector>

#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/kernels/runner/runner.hpp"
#include "../support/problems.hpp"

namespace flashlab::kernels::test {

using flashlab::test::problem;

// An H100-like device as the runner sees it.
inline DeviceInfo fake_h100() {
  DeviceInfo d;
  d.name = "Fake H100 (host memory)";
  d.compute_capability = 90;
  d.sm_count = 132;
  d.max_threads_per_block = 1024;
  d.smem_optin_bytes = 232448;
  d.smem_per_sm_bytes = 233472;
  d.l2_bytes = 50 << 20;
  d.total_memory_bytes = 80ll << 30;
  d.driver = "13.0";
  d.runtime = "13.0";
  return d;
}

// Host memory with a capacity, counting what is outstanding.
class FakeAllocator final : public DeviceAllocator {
 public:
  explicit FakeAllocator(i64 capacity) : capacity_(capacity) {}
  void* allocate(i64 bytes) override {
    if (used_ + bytes > capacity_) return nullptr;
    // Never touch the bytes: a "device" buffer of gigabytes costs nothing until written.
    void* p = std::malloc(1);
    sizes_[p] = bytes;
    used_ += bytes;
    ++allocations_;
    return p;
  }
  void release(void* p) noexcept override {
    auto it = sizes_.find(p);
    if (it == sizes_.end()) return;
    used_ -= it->second;
    sizes_.erase(it);
    std::free(p);
  }
  i64 used() const { return used_; }
  std::size_t outstanding() const { return sizes_.size(); }
  int allocations() const { return allocations_; }

 private:
  i64 capacity_, used_ = 0;
  int allocations_ = 0;
  std::map<void*, i64> sizes_;
};

// Runs nothing; returns what the test sets, and records what it was asked.
class FakeBackend final : public Backend {
 public:
  explicit FakeBackend(i64 capacity = 80ll << 30) : info_(fake_h100()), alloc_(capacity) {}
  const DeviceInfo& device() const override { return info_; }
  DeviceAllocator& allocator() override { return alloc_; }
  i64 device_used_bytes() override { return alloc_.used() + extra_used; }
  Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
    cases.push_back(c);
    buffers.push_back(b);
    used_during.push_back(alloc_.used());
    if (throw_unsupported) throw Unsupported("fake refusal: the launch found a limit");
    Measurement m = next;
    if (o.repeats == 0) m.times_ms.clear();
    m.output_elements = c.problem.head_count() * c.problem.n_q() * c.problem.head_dim;
    return m;
  }
  std::string sticky_error() override { return sticky; }
  double observe_sm_clock_mhz() override { return 1755; }

  FakeAllocator& fake_allocator() { return alloc_; }
  DeviceInfo& info() { return info_; }

  Measurement next;             // what measure() returns
  bool throw_unsupported = false;
  std::string sticky;           // what sticky_error() returns
  i64 extra_used = 0;           // memory "a library" holds beyond the arena
  std::vector<Case> cases;
  std::vector<CaseBuffers> buffers;
  std::vector<i64> used_during;

 private:
  DeviceInfo info_;
  FakeAllocator alloc_;
};

inline void no_launch(const LaunchArgs&) {}

// A registry entry that "is built" even in a build without CUDA: the fake
// backend never calls launch.
inline KernelInfo runnable(const std::string& id) {
  const KernelInfo* k = find_kernel(id);
  if (k == nullptr) std::abort();
  KernelInfo copy = *k;
  copy.launch = &no_launch;
  return copy;
}

}  // namespace flashlab::kernels::test
