// A build without CUDA: a kernel file still reads and compiles (NVRTC is
// opened at run time), but nothing launches it; the runner skips its rows
// saying this build has no CUDA.
#include "driver.hpp"

namespace flashlab::kernels::student::detail {

LaunchFn driver_launch(std::shared_ptr<const KernelFile>, std::vector<CompiledVersion>) { return {}; }

namespace {
class Passthrough final : public Backend {
 public:
  explicit Passthrough(Backend& inner) : inner_(&inner) {}
  const DeviceInfo& device() const override { return inner_->device(); }
  DeviceAllocator& allocator() override { return inner_->allocator(); }
  i64 device_used_bytes() override { return inner_->device_used_bytes(); }
  Measurement measure(const Case& c, const CaseBuffers& b, const RunOptions& o) override {
    return inner_->measure(c, b, o);
  }
  double observe_sm_clock_mhz() override { return inner_->observe_sm_clock_mhz(); }
  std::string sticky_error() override { return inner_->sticky_error(); }

 private:
  Backend* inner_;
};
}  // namespace

std::unique_ptr<Backend> diagnosing_backend(Backend& inner, std::shared_ptr<const KernelFile>) {
  return std::make_unique<Passthrough>(inner);
}

}  // namespace flashlab::kernels::student::detail
