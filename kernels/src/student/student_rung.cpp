// A kernel file as a KernelInfo, and a failed case said in a student's words.
// The launch itself is the driver's (driver_launch.cpp); this part builds
// without CUDA.
#include "flashlab/kernels/student/student_rung.hpp"

#include <algorithm>
#include <memory>

#include "driver.hpp"

namespace flashlab::kernels::student {

namespace {

i64 zero_shape(const sim::AttentionProblem&, sim::TileShape) { return 0; }

}  // namespace

KernelInfo student_rung(const KernelFile& f, std::vector<CompiledVersion> versions) {
  auto file = std::make_shared<const KernelFile>(f);
  const KernelDeclaration& d = file->declaration;
  KernelInfo k;
  k.id = file->id();
  k.name = d.name + " (" + file->label + ")";
  const sim::TileShape tiles = model_tiles(d);
  k.summary = "your kernel, " + file->label + ": " + std::string(sim::algorithm_info(d.algorithm).title) +
              (tiles.Br > 0 ? ", B_r × B_c = " + std::to_string(tiles.Br) + " × " + std::to_string(tiles.Bc) : "") +
              " as it declares";
  k.model = d.algorithm;
  k.dtypes = d.dtypes;
  k.head_dims = d.head_dims;
  k.min_sm = 0;  // what NVRTC can target decides (compile_version)
  k.tile_source = TileSource::compiled;
  k.default_tiles = [tiles](const sim::AttentionProblem&) { return tiles; };
  // Threads and shared memory are checked by the launch itself, against the
  // compiled kernel (its registers, its static shared memory) and the device:
  // a declaration that asks too much is the kernel's failure, not a skip.
  k.smem_bytes = zero_shape;
  k.threads_per_block = zero_shape;
  k.workspace_bytes = [file](const sim::AttentionProblem& p, sim::TileShape) {
    try {
      const i64 bytes = launch_shape(file->declaration, p).workspace_bytes;
      if (bytes < 0) throw std::domain_error("workspace: " + file->declaration.workspace.text() + " is negative");
      return bytes;
    } catch (const std::domain_error& e) {
      throw std::runtime_error(file->path + ": " + e.what() + " at " + sim::describe(p));
    }
  };
  k.workspace_holds = "the workspace " + file->label + " declares";
  k.storage.o_accumulator = d.o_accumulator;
  if (!versions.empty()) k.launch = detail::driver_launch(file, std::move(versions));
  return k;
}

namespace {

struct KnownFailure {
  const char* runtime_name;  // cudaError_t's name, as the runner's checks write it
  const char* driver_name;   // CUresult's name, as a launch writes it
  const char* what;
  const char* tool;          // the compute-sanitizer tool that finds the line ("" for none)
};

const KnownFailure kFailures[] = {
    {"cudaErrorIllegalAddress", "CUDA_ERROR_ILLEGAL_ADDRESS",
     "your kernel read or wrote outside its buffers (an illegal memory access: an index past N, d or the last head?)",
     "memcheck"},
    {"cudaErrorMisalignedAddress", "CUDA_ERROR_MISALIGNED_ADDRESS",
     "your kernel loaded or stored at an address its type may not use (a vector load, float4 or 16 B, at an address "
     "that is not a multiple of its size?)",
     "memcheck"},
    {"cudaErrorAssert", "CUDA_ERROR_ASSERT", "an assert() in your kernel failed (its message is printed above)",
     "memcheck"},
    {"cudaErrorIllegalInstruction", "CUDA_ERROR_ILLEGAL_INSTRUCTION",
     "your kernel stopped at a trap (__trap(), or an instruction this GPU cannot run)", "memcheck"},
    {"cudaErrorLaunchFailure", "CUDA_ERROR_LAUNCH_FAILED",
     "your kernel stopped with an unspecified launch failure (a trap, or a fault the GPU does not name)", "memcheck"},
    {"cudaErrorInvalidPc", "CUDA_ERROR_INVALID_PC", "your kernel jumped to an invalid instruction address", "memcheck"},
    {"cudaErrorHardwareStackError", "CUDA_ERROR_HARDWARE_STACK_ERROR",
     "your kernel overflowed its stack (deep recursion, or a large local array)", "memcheck"},
    {"cudaErrorInvalidAddressSpace", "CUDA_ERROR_INVALID_ADDRESS_SPACE",
     "your kernel used a pointer in the wrong memory space (a shared-memory address read as global?)", "memcheck"},
    {"cudaErrorLaunchOutOfResources", "CUDA_ERROR_LAUNCH_OUT_OF_RESOURCES",
     "the GPU has not the registers for this many threads of your kernel: declare fewer threads per block, or use "
     "fewer registers",
     ""},
    {"cudaErrorLaunchTimeout", "CUDA_ERROR_LAUNCH_TIMEOUT",
     "your kernel ran longer than the display's watchdog allows (an endless loop?)", "racecheck"},
};

}  // namespace

std::string explain_failure(const std::string& reason, const std::string& rerun) {
  for (const KnownFailure& k : kFailures) {
    if (reason.find(k.runtime_name) == std::string::npos && reason.find(k.driver_name) == std::string::npos) continue;
    std::string s = std::string(k.what) + " [" + k.runtime_name + "]";
    if (*k.tool) s += "; find the line: compute-sanitizer --tool " + std::string(k.tool) + " " + rerun;
    return s;
  }
  return reason;
}

std::string rerun_command(const std::string& kernel_path, const sim::AttentionProblem& p) {
  std::string s = "flashlab bench --kernel-file " + kernel_path + " --no-isolation --kernels none -b " +
                  std::to_string(p.batch) + " --heads " + std::to_string(p.heads);
  if (p.h_kv() != p.heads) s += " --kv-heads " + std::to_string(p.h_kv());
  s += " -n " + std::to_string(p.n_q());
  if (p.n_kv() != p.n_q()) s += " --seq-kv " + std::to_string(p.n_kv());
  s += " -d " + std::to_string(p.head_dim) + " --causal " + (p.causal ? "yes" : "no") + " --dtype " +
       std::string(sim::to_string(p.dtype)) + " --check-only";
  return s;
}

}  // namespace flashlab::kernels::student
