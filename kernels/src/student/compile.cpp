// NVRTC, opened at run time, compiling a kernel file for one dtype and head
// dim. The NVRTC entry points are declared here (a pointer and an int where
// nvrtc.h has its types), so that this file builds without the CUDA toolkit:
// a machine without a GPU, or without CUDA at build time, still checks that a
// kernel compiles.
#include "flashlab/kernels/student/compile.hpp"

#include <algorithm>
#include <filesystem>
#include <mutex>
#include <sstream>

#include "args.hpp"
#include "device/shared_library.hpp"

namespace flashlab::kernels::student {

namespace detail {
extern const char kFlashlabHeader[];  // flashlab.cuh, embedded by CMake (flashlab_header.cpp.in)
}

namespace {

using Program = struct OpaqueProgram*;

struct Nvrtc {
  std::string path;
  int major = 0, minor = 0;
  std::vector<int> archs;  // compute capabilities it targets, ×10
  int (*version)(int*, int*) = nullptr;
  int (*num_archs)(int*) = nullptr;
  int (*supported_archs)(int*) = nullptr;
  int (*create)(Program*, const char*, const char*, int, const char* const*, const char* const*) = nullptr;
  int (*compile)(Program, int, const char* const*) = nullptr;
  int (*log_size)(Program, std::size_t*) = nullptr;
  int (*log)(Program, char*) = nullptr;
  int (*cubin_size)(Program, std::size_t*) = nullptr;
  int (*cubin)(Program, char*) = nullptr;
  int (*ptx_size)(Program, std::size_t*) = nullptr;
  int (*ptx)(Program, char*) = nullptr;
  int (*destroy)(Program*) = nullptr;
  const char* (*error_string)(int) = nullptr;
};

const Nvrtc* nvrtc(std::string* why_not) {
  static std::mutex mutex;
  static std::unique_ptr<Nvrtc> api;
  static std::string reason;
  std::lock_guard<std::mutex> lock(mutex);
  if (!api && reason.empty()) {
    const auto candidates = kernels::detail::library_candidates(
        "FLASHLAB_NVRTC", {"libnvrtc.so", "libnvrtc.so.13", "libnvrtc.so.12"},
        {"/lib64/libnvrtc.so", "/targets/x86_64-linux/lib/libnvrtc.so"});
    std::string path;
    void* lib = kernels::detail::open_first_library(candidates, "NVRTC (libnvrtc, the CUDA toolkit's run-time compiler)",
                                                    "FLASHLAB_NVRTC", path, reason);
    if (lib != nullptr) {
      auto a = std::make_unique<Nvrtc>();
      a->path = path;
      bool ok = true;
      auto get = [&](auto& fn, const char* name) {
        fn = reinterpret_cast<std::remove_reference_t<decltype(fn)>>(dlsym(lib, name));
        if (fn == nullptr && ok) {
          ok = false;
          reason = path + " has no " + name + " (an NVRTC older than CUDA 11.2)";
        }
      };
      get(a->version, "nvrtcVersion");
      get(a->num_archs, "nvrtcGetNumSupportedArchs");
      get(a->supported_archs, "nvrtcGetSupportedArchs");
      get(a->create, "nvrtcCreateProgram");
      get(a->compile, "nvrtcCompileProgram");
      get(a->log_size, "nvrtcGetProgramLogSize");
      get(a->log, "nvrtcGetProgramLog");
      get(a->cubin_size, "nvrtcGetCUBINSize");
      get(a->cubin, "nvrtcGetCUBIN");
      get(a->ptx_size, "nvrtcGetPTXSize");
      get(a->ptx, "nvrtcGetPTX");
      get(a->destroy, "nvrtcDestroyProgram");
      get(a->error_string, "nvrtcGetErrorString");
      if (ok) {
        a->version(&a->major, &a->minor);
        int n = 0;
        if (a->num_archs(&n) == 0 && n > 0) {
          a->archs.resize(static_cast<std::size_t>(n));
          a->supported_archs(a->archs.data());
        }
        api = std::move(a);
      }
    }
  }
  if (!api && why_not) *why_not = reason;
  return api.get();
}

// Where the toolkit's headers are, so that a kernel may include cuda_fp16.h
// and the others: beside the library NVRTC came from, else the usual roots.
std::string toolkit_include_dir(const std::string& nvrtc_path) {
  namespace fs = std::filesystem;
  std::vector<fs::path> roots;
  for (const char* var : {"CUDA_HOME", "CUDA_PATH"})
    if (const char* r = std::getenv(var); r && *r) roots.emplace_back(r);
  if (!nvrtc_path.empty() && nvrtc_path.find('/') != std::string::npos)
    roots.push_back(fs::path(nvrtc_path).parent_path().parent_path());
  roots.emplace_back("/usr/local/cuda");
  std::error_code ec;
  for (const fs::path& r : roots)
    if (fs::exists(r / "include" / "cuda_fp16.h", ec)) return (r / "include").string();
  return {};
}

// "my.cu(42): error: ..." → "path/my.cu:42: error: ...", for the file and for
// flashlab.cuh; the entry-point check's messages become one sentence.
struct Log {
  std::string text;
  std::string first_error;
};

constexpr const char* kEntryCheck = "flashlab-entry-check";

// The entry point's check failed: the name is undefined, or it has another type.
std::string entry_message(const std::string& path, bool undefined) {
  const std::string want = std::string("extern \"C\" __global__ void ") + kEntryPoint + "(FlashLabArgs args)";
  return undefined ? path + ": no kernel named " + kEntryPoint + ": FlashLab launches " + want +
                         " (see assets/kernels/naive.cu)"
                   : path + ": " + kEntryPoint + " takes other arguments than FlashLab passes: declare it " + want;
}

Log rewrite_log(const std::string& raw, const KernelFile& f) {
  Log out;
  std::istringstream in(raw);
  std::string entry;  // the entry point's one sentence, when its check failed
  std::vector<std::string> lines;
  bool quoting_check = false;
  for (std::string line; std::getline(in, line);) {
    for (const auto& [name, shown] : {std::pair<std::string, std::string>{f.label, f.path},
                                      std::pair<std::string, std::string>{"flashlab.cuh", "flashlab.cuh"}}) {
      if (line.rfind(name + "(", 0) == 0) {
        const std::size_t close = line.find("): ", name.size());
        if (close != std::string::npos) {
          line = shown + ":" + line.substr(name.size() + 1, close - name.size() - 1) + ": " + line.substr(close + 3);
          break;
        }
      }
    }
    if (line.rfind(kEntryCheck, 0) == 0) {
      if (entry.empty() && line.find("error") != std::string::npos)
        entry = entry_message(f.path, line.find("undefined") != std::string::npos);
      quoting_check = true;  // NVRTC quotes the check's source line and a caret under it, then a blank line
      continue;
    }
    if (quoting_check) {
      quoting_check = !line.empty();
      continue;
    }
    // NVRTC's advice to pass -diag-suppress: a student passes no options.
    if (line.rfind("Remark: The warnings can be suppressed", 0) == 0) continue;
    lines.push_back(line);
  }
  if (!entry.empty()) {
    // NVRTC's count of errors counts the check's too.
    lines.erase(std::remove_if(lines.begin(), lines.end(),
                               [](const std::string& l) { return l.find(" detected in the compilation of ") != std::string::npos; }),
                lines.end());
    lines.insert(lines.begin(), entry);
  }
  bool blank = false;
  for (const std::string& l : lines) {
    // One blank line between messages, where dropping lines left two.
    if (l.find_first_not_of(' ') == std::string::npos) {
      if (blank) continue;
      blank = true;
    } else {
      blank = false;
    }
    out.text += l + "\n";
    if (out.first_error.empty() &&
        (l.find(": error") != std::string::npos || l.find("catastrophic error") != std::string::npos || l == entry))
      out.first_error = l;
  }
  while (!out.text.empty() && (out.text.back() == '\n' || out.text.back() == ' ')) out.text.pop_back();
  return out;
}

// What the image says of the entry point: a kernel named flashlab_attention
// (its .nv.info section), the same name mangled (not extern "C"), or none.
enum class Entry { kernel, mangled, missing };
Entry find_entry(const std::string& image) {
  const std::string name = kEntryPoint;
  if (image.find(std::string(".nv.info.") + name + '\0') != std::string::npos) return Entry::kernel;
  if (image.find(".entry " + name + "(") != std::string::npos) return Entry::kernel;  // PTX
  // A C++ name: _Z18flashlab_attention...
  if (image.find(std::to_string(name.size()) + name) != std::string::npos &&
      (image.find(".nv.info._Z") != std::string::npos || image.find(".entry _Z") != std::string::npos))
    return Entry::mangled;
  return Entry::missing;
}

std::string dtype_macro(sim::DType t) {
  switch (t) {
    case sim::DType::fp32: return "FLASHLAB_DTYPE_FP32";
    case sim::DType::fp16: return "FLASHLAB_DTYPE_FP16";
    case sim::DType::bf16: return "FLASHLAB_DTYPE_BF16";
  }
  return "FLASHLAB_DTYPE_FP32";
}

}  // namespace

std::string nvrtc_unavailable_reason() {
  std::string why;
  return nvrtc(&why) ? std::string() : why;
}

std::string nvrtc_description() {
  std::string why;
  const Nvrtc* a = nvrtc(&why);
  if (!a) return why;
  return "NVRTC " + std::to_string(a->major) + "." + std::to_string(a->minor) + " (" + a->path + ")";
}

const std::string& flashlab_header() {
  static const std::string h = detail::kFlashlabHeader;
  return h;
}

std::size_t host_args_bytes() { return sizeof(detail::HostArgs); }

CompiledVersion compile_version(const KernelFile& f, sim::DType dtype, i64 head_dim, int cc) {
  std::string why;
  const Nvrtc* api = nvrtc(&why);
  if (!api) throw std::runtime_error(why);
  const KernelDeclaration& k = f.declaration;
  const std::string version = std::string(sim::to_string(dtype)) + ", d = " + std::to_string(head_dim);

  CompiledVersion out;
  out.dtype = dtype;
  out.head_dim = head_dim;
  try {
    out.block = block_shape(k, head_dim, dtype);
  } catch (const std::domain_error& e) {
    const std::string line = f.path + ":" + std::to_string(k.line) + ": " + e.what() + " (" + version + ")";
    throw CompileError(line, line);
  }

  // The target: the device's own SASS when NVRTC knows it, else PTX of the
  // newest architecture below it (the driver compiles that for the device).
  int target = 0;
  for (int a : api->archs)
    if (a <= cc) target = std::max(target, a);
  if (target == 0) {
    const std::string line = "NVRTC " + std::to_string(api->major) + "." + std::to_string(api->minor) +
                             " cannot compile for compute capability " + std::to_string(cc / 10) + "." +
                             std::to_string(cc % 10) + " (its oldest target is " +
                             (api->archs.empty() ? std::string("unknown") : std::to_string(api->archs.front())) + ")";
    throw CompileError(line, line);
  }
  const bool sass = target == cc;
  out.target = (sass ? "sm_" : "compute_") + std::to_string(target);

  // The source, then the entry point's check; #line keeps the file's own
  // line numbers and names the check's lines apart.
  std::string source = f.source;
  if (!source.empty() && source.back() != '\n') source += '\n';
  source += std::string("#line 1 \"") + kEntryCheck + "\"\n"
            "namespace flashlab_check {\n"
            "template <class A, class B> struct same { static constexpr bool value = false; };\n"
            "template <class A> struct same<A, A> { static constexpr bool value = true; };\n"
            "}\n"
            "static_assert(flashlab_check::same<decltype(&" + std::string(kEntryPoint) +
            "), void (*)(FlashLabArgs)>::value, \"the entry point's signature\");\n";

  std::vector<std::string> options{
      "-arch=" + out.target,
      "-std=c++17",
      "-lineinfo",
      "-default-device",
      "--pre-include=flashlab.cuh",
      "-D" + dtype_macro(dtype),
      "-DFLASHLAB_HEAD_DIM=" + std::to_string(head_dim),
      "-DFLASHLAB_BR=" + std::to_string(k.tiles.Br),
      "-DFLASHLAB_BC=" + std::to_string(k.tiles.Bc),
      "-DFLASHLAB_THREADS=" + std::to_string(out.block.threads),
      "-DFLASHLAB_SMEM_BYTES=" + std::to_string(out.block.smem_bytes),
      "-DFLASHLAB_ARGS_BYTES=" + std::to_string(host_args_bytes()),
  };
  if (const std::string inc = toolkit_include_dir(api->path); !inc.empty()) options.push_back("-I" + inc);
  std::vector<const char*> opts;
  for (const std::string& o : options) opts.push_back(o.c_str());

  const char* header = detail::kFlashlabHeader;
  const char* header_name = "flashlab.cuh";
  Program prog = nullptr;
  if (const int r = api->create(&prog, source.c_str(), f.label.c_str(), 1, &header, &header_name); r != 0)
    throw std::runtime_error(std::string("nvrtcCreateProgram failed: ") + api->error_string(r));
  struct Destroy {
    const Nvrtc* api;
    Program* p;
    ~Destroy() { api->destroy(p); }
  } destroy{api, &prog};

  const int result = api->compile(prog, static_cast<int>(opts.size()), opts.data());
  std::size_t log_size = 0;
  api->log_size(prog, &log_size);
  std::string raw(log_size, '\0');
  if (log_size > 0) api->log(prog, raw.data());
  while (!raw.empty() && raw.back() == '\0') raw.pop_back();
  const Log log = rewrite_log(raw, f);
  const std::string context = " (compiled for " + version + ", " + out.target + ")";
  if (result != 0) {
    const std::string first = log.first_error.empty() ? f.path + ": " + api->error_string(result) : log.first_error;
    throw CompileError(f.path + " does not compile" + context + ":\n" + log.text, first + context);
  }
  out.warnings = log.text;

  std::size_t size = 0;
  if (sass) {
    api->cubin_size(prog, &size);
    out.image.resize(size);
    api->cubin(prog, out.image.data());
  } else {
    api->ptx_size(prog, &size);
    out.image.resize(size);
    api->ptx(prog, out.image.data());
  }
  switch (find_entry(out.image)) {
    case Entry::kernel:
      break;
    case Entry::mangled: {
      const std::string line = f.path + ": " + kEntryPoint + " is not extern \"C\": FlashLab looks the kernel up by "
                               "its plain name; declare it extern \"C\" __global__ void " + kEntryPoint +
                               "(FlashLabArgs args)";
      throw CompileError(line, line);
    }
    case Entry::missing: {
      const std::string line = f.path + ": " + kEntryPoint + " is not a kernel: declare it extern \"C\" __global__ "
                               "void " + kEntryPoint + "(FlashLabArgs args) (a __device__ function cannot be launched)";
      throw CompileError(line, line);
    }
  }
  return out;
}

}  // namespace flashlab::kernels::student
