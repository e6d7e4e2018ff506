// A kernel file's launch through the CUDA driver API: the module loaded into
// the context the runtime made current (cuModuleLoadData), the kernel found by
// its plain name, and every launch checked against the device and the
// compiled kernel before cuLaunchKernel sees it. The driver's entry points
// come through the runtime (cudaGetDriverEntryPointByVersion), as the tensor
// maps' do: the static cudart needs no -lcuda.
#include <cuda.h>  // the driver's types and enums only
#include <cuda_runtime.h>

#include <map>
#include <tuple>
#include <mutex>
#include <string>

#include "args.hpp"
#include "device/cuda_check.hpp"
#include "driver.hpp"
#include "flashlab/sim/core/checked.hpp"
#include "flashlab/sim/core/format.hpp"

namespace flashlab::kernels::student::detail {

namespace {

struct Driver {
  CUresult (*module_load_data)(CUmodule*, const void*) = nullptr;
  CUresult (*module_get_function)(CUfunction*, CUmodule, const char*) = nullptr;
  CUresult (*module_unload)(CUmodule) = nullptr;
  CUresult (*launch_kernel)(CUfunction, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, CUstream,
                            void**, void**) = nullptr;
  CUresult (*func_get_attribute)(int*, CUfunction_attribute, CUfunction) = nullptr;
  CUresult (*func_set_attribute)(CUfunction, CUfunction_attribute, int) = nullptr;
  CUresult (*occupancy)(int*, CUfunction, int, std::size_t) = nullptr;
  CUresult (*error_name)(CUresult, const char**) = nullptr;
  CUresult (*error_string)(CUresult, const char**) = nullptr;
};

template <class Fn>
void entry(Fn& fn, const char* name) {
  void* f = nullptr;
  cudaDriverEntryPointQueryResult q{};
  FLASHLAB_CUDA_CHECK(cudaGetDriverEntryPointByVersion(name, &f, 12000, cudaEnableDefault, &q));
  if (q != cudaDriverEntryPointSuccess || f == nullptr)
    throw CudaError(std::string("the CUDA driver does not provide ") + name + " (a kernel file needs CUDA 12.0+)");
  fn = reinterpret_cast<Fn>(f);
}

const Driver& driver() {
  static const Driver d = [] {
    Driver x;
    entry(x.module_load_data, "cuModuleLoadData");
    entry(x.module_get_function, "cuModuleGetFunction");
    entry(x.module_unload, "cuModuleUnload");
    entry(x.launch_kernel, "cuLaunchKernel");
    entry(x.func_get_attribute, "cuFuncGetAttribute");
    entry(x.func_set_attribute, "cuFuncSetAttribute");
    entry(x.occupancy, "cuOccupancyMaxActiveBlocksPerMultiprocessor");
    entry(x.error_name, "cuGetErrorName");
    entry(x.error_string, "cuGetErrorString");
    return x;
  }();
  return d;
}

std::string result_text(CUresult r) {
  const char* name = nullptr;
  const char* text = nullptr;
  driver().error_name(r, &name);
  driver().error_string(r, &text);
  return std::string(name ? name : "CUresult " + std::to_string(static_cast<int>(r))) + " (" +
         (text ? text : "no description") + ")";
}

void check(CUresult r, const std::string& call) {
  if (r != CUDA_SUCCESS) throw CudaError(call + " failed: " + result_text(r));
}

// One loaded version: its module on one device, the kernel, what it compiled to.
struct Loaded {
  CUmodule module = nullptr;
  CUfunction function = nullptr;
  int max_threads = 0;     // CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK: the registers' limit
  int registers = 0;
  int static_smem = 0;
  int dynamic_smem_granted = 48 * 1024;  // what a launch may ask for without opting in
};

class Launcher {
 public:
  Launcher(std::shared_ptr<const KernelFile> file, std::vector<CompiledVersion> versions)
      : file_(std::move(file)), versions_(std::move(versions)) {}

  ~Launcher() {
    for (auto& [key, l] : loaded_) (void)driver().module_unload(l.module);  // a context already gone answers an error
  }

  void operator()(const LaunchArgs& a) {
    const sim::AttentionProblem& p = a.problem;
    const CompiledVersion* v = nullptr;
    for (const CompiledVersion& c : versions_)
      if (c.dtype == p.dtype && c.head_dim == p.head_dim) v = &c;
    if (v == nullptr)
      throw Unsupported(file_->path + " was not compiled for " + std::string(sim::to_string(p.dtype)) +
                        ", d = " + std::to_string(p.head_dim));
    Loaded& l = load(*v);
    const KernelDeclaration& d = file_->declaration;

    LaunchShape shape;
    try {
      shape = launch_shape(d, p);
    } catch (const std::domain_error& e) {
      throw CudaError(refused(std::string(e.what()) + " at " + sim::describe(p)));
    }
    refuse_what_the_gpu_would(shape, l, a);
    if (shape.block.smem_bytes > l.dynamic_smem_granted) {
      check(driver().func_set_attribute(l.function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES,
                                        static_cast<int>(shape.block.smem_bytes)),
            "cuFuncSetAttribute(MAX_DYNAMIC_SHARED_SIZE_BYTES, " + std::to_string(shape.block.smem_bytes) + ")");
      l.dynamic_smem_granted = static_cast<int>(shape.block.smem_bytes);
    }
    if (a.ctas_per_sm != nullptr) {
      int blocks = 0;
      if (driver().occupancy(&blocks, l.function, static_cast<int>(shape.block.threads),
                             static_cast<std::size_t>(shape.block.smem_bytes)) == CUDA_SUCCESS)
        *a.ctas_per_sm = blocks;
    }

    HostArgs args{};
    args.q = a.q;
    args.k = a.k;
    args.v = a.v;
    args.o = a.o;
    args.workspace = a.workspace;
    args.workspace_bytes = static_cast<long long>(a.workspace_bytes);
    args.q_stride_n = p.head_dim;
    args.q_stride_h = p.n_q() * p.head_dim;
    args.q_stride_b = p.heads * args.q_stride_h;
    args.kv_stride_n = p.head_dim;
    args.kv_stride_h = p.n_kv() * p.head_dim;
    args.kv_stride_b = p.h_kv() * args.kv_stride_h;
    args.B = static_cast<int>(p.batch);
    args.H = static_cast<int>(p.heads);
    args.H_kv = static_cast<int>(p.h_kv());
    args.N_q = static_cast<int>(p.n_q());
    args.N_kv = static_cast<int>(p.n_kv());
    args.d = static_cast<int>(p.head_dim);
    args.causal = p.causal ? 1 : 0;
    args.Br = static_cast<int>(d.tiles.Br);
    args.Bc = static_cast<int>(d.tiles.Bc);
    args.T_r = static_cast<int>(sim::ceil_div(p.n_q(), d.tiles.Br > 0 ? d.tiles.Br : 1));
    args.T_c = static_cast<int>(sim::ceil_div(p.n_kv(), d.tiles.Bc > 0 ? d.tiles.Bc : 1));
    args.scale = a.softmax_scale;
    void* params[] = {&args};
    for (i64 i = 0; i < shape.launches; ++i) {
      args.launch = static_cast<int>(i);
      const CUresult r = driver().launch_kernel(
          l.function, static_cast<unsigned>(shape.grid[0]), static_cast<unsigned>(shape.grid[1]),
          static_cast<unsigned>(shape.grid[2]), static_cast<unsigned>(shape.block.threads), 1, 1,
          static_cast<unsigned>(shape.block.smem_bytes), static_cast<CUstream>(a.stream), params, nullptr);
      if (r != CUDA_SUCCESS)
        throw CudaError("cuLaunchKernel of " + file_->path + " (launch " + std::to_string(i) + " of " +
                        std::to_string(shape.launches) + ", grid " + grid_text(shape) + ", " +
                        std::to_string(shape.block.threads) + " threads, " +
                        sim::group_digits(shape.block.smem_bytes) + " B dynamic shared memory) failed: " +
                        result_text(r));
    }
  }

 private:
  std::string refused(const std::string& why) const { return "launch refused: " + why; }

  static std::string grid_text(const LaunchShape& s) {
    return "(" + sim::group_digits(s.grid[0]) + ", " + sim::group_digits(s.grid[1]) + ", " +
           sim::group_digits(s.grid[2]) + ")";
  }

  // What cuLaunchKernel would refuse with a bare CUDA_ERROR_INVALID_VALUE,
  // each said with the declaration's line that made it.
  void refuse_what_the_gpu_would(const LaunchShape& s, const Loaded& l, const LaunchArgs& a) const {
    const KernelDeclaration& d = file_->declaration;
    const std::string at = " at " + sim::describe(a.problem);
    const char* axis[] = {"x", "y", "z"};
    const i64 limit[] = {2147483647, 65535, 65535};
    for (int i = 0; i < 3; ++i) {
      if (s.grid[i] < 1)
        throw CudaError(refused("grid " + grid_text(s) + " from \"grid: " + d.grid[0].text() + ", " +
                                d.grid[1].text() + ", " + d.grid[2].text() + "\" has " + axis[i] + " = " +
                                std::to_string(s.grid[i]) + at + ": every size must be at least 1"));
      if (s.grid[i] > limit[i])
        throw CudaError(refused("grid " + grid_text(s) + " has " + axis[i] + " = " + sim::group_digits(s.grid[i]) +
                                at + ", above the GPU's " + sim::group_digits(limit[i]) +
                                (i > 0 ? " (y and z are limited to 65,535: put the largest count in x)" : "")));
    }
    if (s.launches < 1 || s.launches > 1'000'000)
      throw CudaError(refused("launches: " + d.launches.text() + " = " + sim::group_digits(s.launches) + at +
                              " (expected 1 to 1,000,000)"));
    if (s.block.threads < 1 || s.block.threads > l.max_threads)
      throw CudaError(refused(
          std::to_string(s.block.threads) + " threads per block; " + kEntryPoint + " compiled to " +
          std::to_string(l.registers) + " registers per thread runs at most " + std::to_string(l.max_threads) +
          " (the registers of one SM): declare fewer threads, or use fewer registers (smaller per-thread arrays)"));
    const i64 smem = static_cast<i64>(l.static_smem) + s.block.smem_bytes;
    if (s.block.smem_bytes < 0)
      throw CudaError(refused("smem: " + d.smem.text() + " = " + std::to_string(s.block.smem_bytes) + " is negative"));
    if (a.device_smem_optin > 0 && smem > a.device_smem_optin)
      throw CudaError(refused("shared memory " + sim::group_digits(l.static_smem) + " B static (__shared__ arrays) + " +
                              sim::group_digits(s.block.smem_bytes) + " B dynamic (smem: " + d.smem.text() + ") = " +
                              sim::group_digits(smem) + " B per block; this GPU allows " +
                              sim::group_digits(a.device_smem_optin) +
                              " B (cudaDevAttrMaxSharedMemoryPerBlockOptin): smaller tiles, or fp16 tiles"));
    if (s.workspace_bytes != static_cast<i64>(a.workspace_bytes))
      throw CudaError(refused("the workspace changed between allocation and launch"));
  }

  Loaded& load(const CompiledVersion& v) {
    int device = 0;
    FLASHLAB_CUDA_CHECK(cudaGetDevice(&device));
    const auto key = std::make_tuple(device, v.dtype, v.head_dim);
    std::lock_guard<std::mutex> lock(mutex_);
    if (auto it = loaded_.find(key); it != loaded_.end()) return it->second;
    // The runtime's primary context becomes current with its first call; the
    // module is loaded into it, once per device and version.
    FLASHLAB_CUDA_CHECK(cudaFree(nullptr));
    Loaded l;
    check(driver().module_load_data(&l.module, v.image.data()),
          "cuModuleLoadData of " + file_->path + " (" + v.target + ")");
    const CUresult r = driver().module_get_function(&l.function, l.module, kEntryPoint);
    if (r != CUDA_SUCCESS) {
      (void)driver().module_unload(l.module);
      throw CudaError(file_->path + ": the compiled module has no kernel named " + kEntryPoint + " (" +
                      result_text(r) + "); declare it extern \"C\" __global__");
    }
    check(driver().func_get_attribute(&l.max_threads, CU_FUNC_ATTRIBUTE_MAX_THREADS_PER_BLOCK, l.function),
          "cuFuncGetAttribute(MAX_THREADS_PER_BLOCK)");
    check(driver().func_get_attribute(&l.registers, CU_FUNC_ATTRIBUTE_NUM_REGS, l.function),
          "cuFuncGetAttribute(NUM_REGS)");
    check(driver().func_get_attribute(&l.static_smem, CU_FUNC_ATTRIBUTE_SHARED_SIZE_BYTES, l.function),
          "cuFuncGetAttribute(SHARED_SIZE_BYTES)");
    return loaded_.emplace(key, l).first->second;
  }

  std::shared_ptr<const KernelFile> file_;
  std::vector<CompiledVersion> versions_;
  std::mutex mutex_;
  std::map<std::tuple<int, sim::DType, i64>, Loaded> loaded_;
};

}  // namespace

LaunchFn driver_launch(std::shared_ptr<const KernelFile> file, std::vector<CompiledVersion> versions) {
  auto launcher = std::make_shared<Launcher>(std::move(file), std::move(versions));
  return [launcher](const LaunchArgs& a) { (*launcher)(a); };
}

}  // namespace flashlab::kernels::student::detail
