// What the student concept does on the device: the launch of a compiled
// kernel file through the driver API (driver_launch.cpp, CUDA builds), and
// the check that says where a wrong output is wrong (diagnose.cpp). Without
// CUDA (no_cuda.cpp) the launch is empty and the backend is left as it is.
#pragma once

#include <memory>
#include <vector>

#include "flashlab/kernels/runner/runner.hpp"
#include "flashlab/kernels/student/compile.hpp"

namespace flashlab::kernels::student::detail {

// The launch of `versions` (one per dtype and head dim) of the kernel file.
LaunchFn driver_launch(std::shared_ptr<const KernelFile> file, std::vector<CompiledVersion> versions);

// `inner` (kept by the caller, used for as long as the result), with a measurement that went wrong (elements not written or not
// finite, an error above the bound) looked at again before its buffers go:
// the first (b, h, row) that is wrong and by how much, added to the check's
// note. `file` gives the tiles a hint names.
std::unique_ptr<Backend> diagnosing_backend(Backend& inner, std::shared_ptr<const KernelFile> file);

}  // namespace flashlab::kernels::student::detail
