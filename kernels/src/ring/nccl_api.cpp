#include "nccl_api.hpp"

#include <dlfcn.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "flashlab/kernels/launch/launch.hpp"
#include "device/shared_library.hpp"

namespace flashlab::kernels::detail {

void keep_nvlink_multicast_off() {
  ::setenv("NCCL_NVLS_ENABLE", "0", 1);
  ::setenv("TORCH_SYMM_MEM_DISABLE_MULTICAST", "1", 1);
  ::setenv("NVSHMEM_DISABLE_NVLS", "1", 1);
}

std::vector<std::string> nccl_environment() {
  std::vector<std::string> out;
  for (const char* var : {"NCCL_NVLS_ENABLE", "TORCH_SYMM_MEM_DISABLE_MULTICAST", "NVSHMEM_DISABLE_NVLS",
                          "NCCL_P2P_LEVEL", "NCCL_PROTO", "NCCL_ALGO", "NCCL_DEBUG", "CUDA_VISIBLE_DEVICES"})
    if (const char* v = std::getenv(var)) out.push_back(std::string(var) + "=" + v);
  return out;
}

#ifdef FLASHLAB_HAVE_NCCL
namespace {

bool load(NcclApi& api, std::string& why_not) {
  const std::vector<std::string> candidates =
      library_candidates("FLASHLAB_NCCL", {"libnccl.so.2", "libnccl.so"}, {"/lib64/libnccl.so.2"});
  void* lib = open_first_library(candidates, "NCCL", "FLASHLAB_NCCL", api.path, why_not);
  if (!lib) return false;
#define FLASHLAB_BIND(name)                                                   \
  api.name = reinterpret_cast<decltype(api.name)>(dlsym(lib, #name));         \
  if (!api.name) {                                                            \
    why_not = api.path + " lacks " #name " (the ring needs NCCL 2.7 or newer: point-to-point send/recv)"; \
    return false;                                                             \
  }
  FLASHLAB_BIND(ncclGetVersion)
  FLASHLAB_BIND(ncclCommInitAll)
  FLASHLAB_BIND(ncclGetUniqueId)
  FLASHLAB_BIND(ncclCommInitRank)
  FLASHLAB_BIND(ncclCommDestroy)
  FLASHLAB_BIND(ncclGroupStart)
  FLASHLAB_BIND(ncclGroupEnd)
  FLASHLAB_BIND(ncclSend)
  FLASHLAB_BIND(ncclRecv)
  FLASHLAB_BIND(ncclGetErrorString)
#undef FLASHLAB_BIND
  api.ncclGetLastError = reinterpret_cast<decltype(api.ncclGetLastError)>(dlsym(lib, "ncclGetLastError"));
  if (api.ncclGetVersion(&api.version) != ncclSuccess) {
    why_not = api.path + ": ncclGetVersion failed";
    return false;
  }
  return true;
}

}  // namespace

const NcclApi* nccl_api(std::string* why_not) {
  static std::once_flag once;
  static NcclApi api;
  static bool ok = false;
  static std::string why;
  std::call_once(once, [] {
    keep_nvlink_multicast_off();
    ok = load(api, why);
  });
  if (!ok && why_not) *why_not = why;
  return ok ? &api : nullptr;
}

std::string nccl_version_string(int v) {
  // NCCL_VERSION(X,Y,Z): X*10000 + Y*100 + Z from 2.9 on, X*1000 + Y*100 + Z before.
  const int major = v >= 10000 ? v / 10000 : v / 1000;
  const int minor = v >= 10000 ? (v / 100) % 100 : (v / 100) % 10;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(v % 100);
}

void check_nccl(const NcclApi& api, ncclResult_t r, const char* call, const char* file, int line) {
  if (r == ncclSuccess || r == ncclInProgress) return;
  std::string f(file);
  if (const auto pos = f.rfind("kernels/"); pos != std::string::npos) f = f.substr(pos);
  std::string what = api.ncclGetErrorString ? api.ncclGetErrorString(r) : "NCCL error";
  if (api.ncclGetLastError)
    if (const char* last = api.ncclGetLastError(nullptr); last && *last) what += "; " + std::string(last);
  throw CudaError(f + ":" + std::to_string(line) + ": " + call + " failed: NCCL error " + std::to_string(r) + " (" +
                  what + ")");
}
#endif

}  // namespace flashlab::kernels::detail
