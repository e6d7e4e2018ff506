// A kernel file compiled at run time by NVRTC, once for each dtype and head
// dim a run needs, for the GPU at hand. NVRTC runs on the CPU: a file is
// compiled (and its mistakes found) without a GPU. libnvrtc is opened at run
// time, so every binary starts without it and says why it cannot compile.
#pragma once

#include <stdexcept>
#include <string>
#include <vector>

#include "flashlab/kernels/student/declaration.hpp"

namespace flashlab::kernels::student {

// The kernel does not compile, or FlashLab cannot use what it compiled to:
// `what()` is NVRTC's log with the file's own name and line in front of each
// message ("my_fa1.cu:42: error: ..."), `first_error` its first error alone.
class CompileError : public std::runtime_error {
 public:
  CompileError(const std::string& log, std::string first_error)
      : std::runtime_error(log), first_error_(std::move(first_error)) {}
  const std::string& first_error() const { return first_error_; }

 private:
  std::string first_error_;
};

// Empty when libnvrtc can be opened; else one sentence saying why not.
// $FLASHLAB_NVRTC may name the library.
std::string nvrtc_unavailable_reason();
// "NVRTC 13.0 (/usr/local/cuda/lib64/libnvrtc.so)", or the reason it is missing.
std::string nvrtc_description();

// The text of flashlab.cuh, the header every kernel file is compiled with.
const std::string& flashlab_header();

// The name FlashLab launches: extern "C" __global__ void flashlab_attention(FlashLabArgs args).
inline constexpr const char* kEntryPoint = "flashlab_attention";

// One compiled version of a kernel file.
struct CompiledVersion {
  sim::DType dtype = sim::DType::fp16;
  i64 head_dim = 0;
  std::string target;      // "sm_90" (a cubin), or "compute_90" (PTX the driver compiles)
  std::string image;       // what cuModuleLoadData takes
  BlockShape block;        // threads and dynamic shared memory the declaration gives this version
  std::string warnings;    // NVRTC's log of a successful compile, names substituted
};

// Compiles `f` for one dtype and head dim, for compute capability `cc` (90 for
// sm_90). Throws CompileError (the file's errors, a missing or wrong entry
// point, a compute capability NVRTC cannot target) or std::runtime_error
// (NVRTC missing).
CompiledVersion compile_version(const KernelFile& f, sim::DType dtype, i64 head_dim, int cc);

// The size of the arguments' struct as the host packs it: flashlab.cuh
// checks its own against it when a kernel compiles.
std::size_t host_args_bytes();

}  // namespace flashlab::kernels::student
