// A compiled kernel file as a rung of the ladder: a KernelInfo that the runner
// runs like any registry rung (fresh random inputs, poisoned output, the fp64
// check, the timed loop, CUPTI's bytes). Its launch loads the version of the
// case's dtype and head dim into the current context (cuModuleLoadData, once)
// and launches it with the declared grid, threads, shared memory and launch
// count (cuLaunchKernel), after checking each against the device and the
// compiled kernel: a launch the GPU would refuse is refused first, in one
// sentence. Without CUDA in the build the rung has no launch, and the runner
// skips its rows saying so.
#pragma once

#include <string>
#include <vector>

#include "flashlab/kernels/rungs/registry.hpp"
#include "flashlab/kernels/student/compile.hpp"

namespace flashlab::kernels::student {

KernelInfo student_rung(const KernelFile& f, std::vector<CompiledVersion> versions);

// The one sentence a student reads for a failed case of their kernel: a CUDA
// error of the runner (an illegal address, a trap, a misaligned access, an
// assert, ...) named in the student's words, with the command that finds the
// line (`rerun`: the flashlab command that runs this case alone). Other
// reasons come back unchanged.
std::string explain_failure(const std::string& reason, const std::string& rerun);

// The flashlab command line that runs one case of a kernel file alone:
// "flashlab bench --kernel-file my.cu --kernels none -b 1 --heads 2 -n 1000 -d 64 --dtype fp16 --check-only".
std::string rerun_command(const std::string& kernel_path, const sim::AttentionProblem& p);

}  // namespace flashlab::kernels::student
