// A build without CUDA: the same API, and every entry point says why it
// cannot measure (`flashlab ceilings` prints that line and exits 2).
#include "flashlab/ceilings/ceilings.hpp"

namespace flashlab::ceilings {

namespace {
const char* const kNoCuda =
    "this build has no CUDA support, so it cannot measure the GPU's ceilings (configure with nvcc installed, "
    "e.g. -DFLASHLAB_CUDA=ON); the datasheet presets (flashlab hw list) still work";
}

struct Session::Impl {
  sim::DeviceFacts facts;
};

bool built_with_cuda() { return false; }
std::string unavailable_reason() { return kNoCuda; }

Session::Session(const Options&) { throw Unavailable(kNoCuda); }
Session::~Session() = default;
const sim::DeviceFacts& Session::device() const { return impl_->facts; }
int Session::repeats() const { return 0; }
sim::CeilingFigure Session::measure(const std::string&) { throw Unavailable(kNoCuda); }
std::string Session::reason_not_measured(const std::string&) const { return kNoCuda; }
sim::SweepSeries Session::sweep(const std::string&) { throw Unavailable(kNoCuda); }
double Session::nvml_sm_clock_mhz() { return 0; }

sim::MeasuredProfile measure_all(const Options&, const Progress&) { throw Unavailable(kNoCuda); }

}  // namespace flashlab::ceilings
